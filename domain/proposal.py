"""The Proposal aggregate (seed 001 §3–§7): a noticed gap turned into an idea, debated, shown, then
approved into a task or rejected with a type; and the tenant's ProposalBook of rejections that teach."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from eventsourcing.domain import Aggregate

from loopline.domain.base import LooplineAggregate, TenantEvent
from loopline.domain.errors import DomainError
from loopline.domain.proposal_rules import (
    REJECTION_TYPES,
    VERDICTS,
    PastRejection,
    RejectionType,
    Verdict,
    next_debate_step,
)

OPEN_STATUSES = frozenset({"debating", "ready", "shown"})


class ProposalError(DomainError):
    """A command that the proposal's status or the command's values do not allow."""


class Proposal(LooplineAggregate):
    OWNER = {"tenant": "tenant", "proposal_ref": "proposal_ref"}

    class Proposed(Aggregate.Created):
        tenant: str
        proposal_ref: str
        title: str
        summary: str
        theme: str
        impact: str
        source: str

    class Avoided(Proposed):
        """A proposal never shown because a similar one was rejected and is still cooling down."""

        similar_to: str
        rejection_type: str

    class DebateRoundRecorded(TenantEvent):
        """One round's three model answers, recorded so replay never asks the model again."""

        proposal_ref: str
        round_number: int
        proposer: str
        critic: str
        verdict: str
        arbiter: str
        outcome: str
        flag: str | None

        def apply(self, proposal: Proposal) -> None:
            proposal.rounds.append({
                "round": self.round_number, "proposer": self.proposer, "critic": self.critic,
                "verdict": self.verdict, "arbiter": self.arbiter,
            })
            proposal.flag = self.flag
            proposal.status = {"ready": "ready", "owner": "ready", "failed": "failed"}.get(self.outcome, "debating")

    class Shown(TenantEvent):
        proposal_ref: str
        batch_ref: str
        position: int

        def apply(self, proposal: Proposal) -> None:
            proposal.status = "shown"
            proposal.batch_ref = self.batch_ref

    class Approved(TenantEvent):
        proposal_ref: str
        task_ref: str

        def apply(self, proposal: Proposal) -> None:
            proposal.status = "approved"
            proposal.task_ref = self.task_ref

    class Rejected(TenantEvent):
        proposal_ref: str
        rejection_type: str
        reason: str

        def apply(self, proposal: Proposal) -> None:
            proposal.status = "rejected"
            proposal.rejection_type = self.rejection_type

    def __init__(
        self, tenant: str, proposal_ref: str, title: str, summary: str, theme: str, impact: str, source: str,
        similar_to: str | None = None, rejection_type: str | None = None,
    ) -> None:
        self.tenant = tenant
        self.proposal_ref = proposal_ref
        self.title = title
        self.summary = summary
        self.theme = theme
        self.impact = impact
        self.source = source
        self.similar_to = similar_to
        self.status = "avoided" if similar_to else "debating"
        self.rounds: list[dict[str, Any]] = []
        self.flag: str | None = None
        self.batch_ref: str | None = None
        self.task_ref: str | None = None
        self.avoided_because = rejection_type
        self.rejection_type: str | None = None

    @property
    def text(self) -> str:
        """What similarity compares: the title and the summary."""
        return f"{self.title} {self.summary}"

    @classmethod
    def propose(
        cls, *, id: Any, tenant: str, proposal_ref: str, title: str, summary: str, theme: str,  # noqa: A002
        impact: str, source: str, now: datetime,
    ) -> Proposal:
        return cls._create(
            cls.Proposed, id=id, timestamp=now, tenant=tenant, proposal_ref=proposal_ref, title=title,
            summary=summary, theme=theme, impact=impact, source=source,
        )

    @classmethod
    def avoid(
        cls, *, id: Any, tenant: str, proposal_ref: str, title: str, summary: str, theme: str,  # noqa: A002
        impact: str, source: str, blocked_by: PastRejection, now: datetime,
    ) -> Proposal:
        return cls._create(
            cls.Avoided, id=id, timestamp=now, tenant=tenant, proposal_ref=proposal_ref, title=title,
            summary=summary, theme=theme, impact=impact, source=source, similar_to=blocked_by.proposal_ref,
            rejection_type=blocked_by.rejection_type,
        )

    def record_round(self, *, proposer: str, critic: str, verdict: Verdict, arbiter: str, now: datetime) -> None:
        """Records a debate round; the arbiter's verdict decides whether it is ready, failed or debated again."""
        self._check_status("debating")
        if verdict not in VERDICTS:
            raise ProposalError(f"verdict must be one of {', '.join(VERDICTS)}, not {verdict!r}")
        round_number = len(self.rounds) + 1
        step = next_debate_step(verdict, round_number)
        self.trigger_event(
            self.DebateRoundRecorded, timestamp=now, round_number=round_number, proposer=proposer, critic=critic,
            verdict=verdict, arbiter=arbiter, outcome=step.outcome, flag=step.flag,
        )

    def show(self, *, batch_ref: str, position: int, now: datetime) -> None:
        self._check_status("ready")
        self.trigger_event(self.Shown, timestamp=now, batch_ref=batch_ref, position=position)

    def approve(self, *, task_ref: str, now: datetime) -> None:
        self._check_status("ready", "shown")
        self.trigger_event(self.Approved, timestamp=now, task_ref=task_ref)

    def reject(self, *, rejection_type: RejectionType, reason: str, now: datetime) -> None:
        self._check_status("ready", "shown")
        if rejection_type not in REJECTION_TYPES:
            raise ProposalError(f"rejection type must be one of {', '.join(REJECTION_TYPES)}, not {rejection_type!r}")
        self.trigger_event(self.Rejected, timestamp=now, rejection_type=rejection_type, reason=reason)

    def _check_status(self, *allowed: str) -> None:
        if self.status not in allowed:
            raise ProposalError(
                f"proposal {self.proposal_ref} is {self.status}; this needs it {' or '.join(allowed)}"
            )


class ProposalBook(LooplineAggregate):
    """One per tenant: the rejections later proposals are compared with (seed 001 §7 rejection learning)."""

    OWNER = {"tenant": "tenant"}

    class Opened(Aggregate.Created):
        tenant: str

    class RejectionLearned(TenantEvent):
        proposal_ref: str
        text: str
        rejection_type: str

        def apply(self, book: ProposalBook) -> None:
            book.rejections.append(PastRejection(self.proposal_ref, self.text, self.rejection_type, self.timestamp))

    class GapOffered(TenantEvent):
        """A gap turned into a proposal: the gap's latest proposal decides whether it is offered again."""

        gap_key: str
        proposal_ref: str

        def apply(self, book: ProposalBook) -> None:
            book.gap_offers[self.gap_key] = book.gap_offers.get(self.gap_key, 0) + 1
            book.gap_proposals[self.gap_key] = self.proposal_ref

    class DebateOpened(TenantEvent):
        """A proposal entered debate: the owner's next batch waits until every open debate has settled."""

        proposal_ref: str

        def apply(self, book: ProposalBook) -> None:
            book.debating.add(self.proposal_ref)

    class DebateSettled(TenantEvent):
        proposal_ref: str
        survived: bool

        def apply(self, book: ProposalBook) -> None:
            book.debating.discard(self.proposal_ref)
            if self.survived:
                book.awaiting.append(self.proposal_ref)

    class BatchesShown(TenantEvent):
        """The survivors went to the owner, in batches of at most five."""

        batches: list[list[str]]

        def apply(self, book: ProposalBook) -> None:
            book.awaiting.clear()
            book.batches_shown += len(self.batches)

    def __init__(self, tenant: str) -> None:
        self.tenant = tenant
        self.rejections: list[PastRejection] = []
        self.gap_offers: dict[str, int] = {}
        self.gap_proposals: dict[str, str] = {}
        """The latest proposal of each gap key."""
        self.debating: set[str] = set()
        self.awaiting: list[str] = []
        """Proposals that survived debate and wait for the batch that shows them."""
        self.batches_shown = 0

    @classmethod
    def open(cls, *, id: Any, tenant: str, now: datetime) -> ProposalBook:  # noqa: A002
        return cls._create(cls.Opened, id=id, timestamp=now, tenant=tenant)

    def next_gap_ref(self, gap_key: str) -> str:
        """The ref a new proposal of this gap gets: one more than it had, so a gap rejected for now returns anew."""
        return f"gap:{gap_key}:{self.gap_offers.get(gap_key, 0) + 1}"

    def record_gap_offer(self, *, gap_key: str, proposal_ref: str, now: datetime) -> None:
        self.trigger_event(self.GapOffered, timestamp=now, gap_key=gap_key, proposal_ref=proposal_ref)

    def open_debate(self, proposal_ref: str, now: datetime) -> None:
        self.trigger_event(self.DebateOpened, timestamp=now, proposal_ref=proposal_ref)

    def settle(self, proposal: Proposal, now: datetime) -> None:
        """Notes a debate that ended; a proposal that survived waits for the next batch."""
        if proposal.proposal_ref in self.debating and proposal.status != "debating":
            self.trigger_event(self.DebateSettled, timestamp=now, proposal_ref=proposal.proposal_ref,
                               survived=proposal.status == "ready")

    def record_batches(self, batches: list[list[str]], now: datetime) -> None:
        self.trigger_event(self.BatchesShown, timestamp=now, batches=batches)

    def learn(self, proposal: Proposal, now: datetime) -> None:
        """Remembers a rejected proposal so similar ones are avoided for its type's cooldown."""
        if proposal.status != "rejected" or proposal.rejection_type is None:
            raise ProposalError(f"proposal {proposal.proposal_ref} is {proposal.status}, not rejected")
        self.trigger_event(
            self.RejectionLearned, timestamp=now, proposal_ref=proposal.proposal_ref, text=proposal.text,
            rejection_type=proposal.rejection_type,
        )
