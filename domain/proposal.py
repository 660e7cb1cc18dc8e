"""The Proposal aggregate (seed 001 §3–§7): a noticed gap turned into an idea, debated, shown, then
approved into a task or rejected with a type; and the tenant's ProposalBook of rejections that teach."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from eventsourcing.domain import Aggregate

from loopline.domain.base import LooplineAggregate, TenantEvent
from loopline.domain.errors import DomainError
from loopline.domain.proposal_rules import (
    DEBATE_KIND,
    DEBATE_ROLES,
    REJECTION_TYPES,
    VERDICTS,
    PastRejection,
    RejectionType,
    Verdict,
    next_debate_step,
)
from loopline.domain.safety_limits import DEBATE_CALL_ATTEMPTS

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
            proposal.debate_request = None
            proposal.round_answers = {}

    class DebateRequested(TenantEvent):
        """One debate role's model call, asked for here and answered by a follower (replay never asks the model)."""

        proposal_ref: str
        request_ref: str
        kind: str
        role: str
        round_number: int
        attempt: int

        def apply(self, proposal: Proposal) -> None:
            proposal.debate_request = {"request_ref": self.request_ref, "role": self.role,
                                       "round": self.round_number, "attempt": self.attempt}
            proposal.calls_asked += 1

    class DebateAnswered(TenantEvent):
        """The model's answer for one role, with what the call cost, as the task decisions record theirs."""

        proposal_ref: str
        request_ref: str
        role: str
        text: str
        verdict: str | None
        adapter: str
        model: str
        prompt_digest: str
        input_tokens: int
        output_tokens: int

        def apply(self, proposal: Proposal) -> None:
            proposal.debate_request = None
            proposal.round_answers[self.role] = self.text
            proposal.next_attempt = 1

    class DebateAnswerUnused(TenantEvent):
        """A role's answer that could not be recorded (its effects were refused): who answered and at what cost."""

        proposal_ref: str
        request_ref: str
        role: str
        adapter: str
        model: str
        prompt_digest: str
        input_tokens: int
        output_tokens: int

    class DebateCallFailed(TenantEvent):
        proposal_ref: str
        request_ref: str
        role: str
        attempt: int
        error: str

        def apply(self, proposal: Proposal) -> None:
            proposal.debate_request = None
            proposal.next_attempt = self.attempt + 1

    class DebateAbandoned(TenantEvent):
        """The debate cannot go on (the model failed every try of one call, or a model-call limit holds it): the gap
        is skipped (seed 001 §3), and that is recorded."""

        proposal_ref: str
        reason: str

        def apply(self, proposal: Proposal) -> None:
            proposal.status = "skipped"
            proposal.debate_request = None

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
        self.debate_request: dict[str, Any] | None = None
        """The debate call waiting for its answer: request_ref, role, round, attempt."""
        self.round_answers: dict[str, str] = {}
        """This round's answers so far, by role."""
        self.next_attempt = 1
        self.calls_asked = 0

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

    def request_debate(self, now: datetime) -> None:
        """Asks for the next role's answer in this round (proposer, then critic, then arbiter), or for the one whose
        call just failed again."""
        self._check_status("debating")
        role = next(role for role in DEBATE_ROLES if role not in self.round_answers)
        round_number, attempt = len(self.rounds) + 1, self.next_attempt
        self.trigger_event(
            self.DebateRequested, timestamp=now, request_ref=f"{self.proposal_ref}/{round_number}/{role}/{attempt}",
            kind=DEBATE_KIND, role=role, round_number=round_number, attempt=attempt,
        )

    def is_debate_pending(self, request_ref: str) -> bool:
        return self.debate_request is not None and self.debate_request["request_ref"] == request_ref

    def answer_debate(
        self, *, request_ref: str, text: str, verdict: str | None, adapter: str, model: str, prompt_digest: str,
        input_tokens: int, output_tokens: int, now: datetime,
    ) -> None:
        """Records a role's answer; the arbiter's closes the round. An arbiter whose verdict is none the seed knows is
        undecided: the owner sees the proposal flagged."""
        assert self.debate_request is not None and self.is_debate_pending(request_ref)
        role = self.debate_request["role"]
        self.trigger_event(self.DebateAnswered, timestamp=now, request_ref=request_ref, role=role, text=text,
                           verdict=verdict, adapter=adapter, model=model, prompt_digest=prompt_digest,
                           input_tokens=input_tokens, output_tokens=output_tokens)
        if role == "arbiter":
            answers = self.round_answers
            self.record_round(proposer=answers["proposer"], critic=answers["critic"], now=now, arbiter=text,
                              verdict=verdict if verdict in VERDICTS else "undecided")  # type: ignore[arg-type]

    def note_unused_answer(self, *, request_ref: str, adapter: str, model: str, prompt_digest: str,
                           input_tokens: int, output_tokens: int, now: datetime) -> None:
        """Audits an answer that cannot be recorded, so every model call is accounted for; the call then fails."""
        assert self.debate_request is not None and self.is_debate_pending(request_ref)
        self.trigger_event(self.DebateAnswerUnused, timestamp=now, request_ref=request_ref,
                           role=self.debate_request["role"], adapter=adapter, model=model, prompt_digest=prompt_digest,
                           input_tokens=input_tokens, output_tokens=output_tokens)

    def fail_debate(self, *, request_ref: str, error: str, now: datetime) -> None:
        """A failed call may be asked again twice; the third failure abandons the debate (seed 001 §3)."""
        assert self.debate_request is not None and self.is_debate_pending(request_ref)
        role, attempt = self.debate_request["role"], self.debate_request["attempt"]
        self.trigger_event(self.DebateCallFailed, timestamp=now, request_ref=request_ref, role=role, attempt=attempt,
                           error=error)
        if attempt >= DEBATE_CALL_ATTEMPTS:
            self.abandon_debate(reason=f"the {role}'s model call failed {attempt} times: {error}", now=now)

    def abandon_debate(self, *, reason: str, now: datetime) -> None:
        self._check_status("debating")
        self.trigger_event(self.DebateAbandoned, timestamp=now, reason=reason)

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
