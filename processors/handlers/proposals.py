"""Proposal handlers: offer an idea (or record it avoided), record debate rounds, show ready ones in
batches, and turn the owner's approval into a task or their rejection into what later offers avoid."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from loopline.domain import ids
from loopline.domain.proposal import OPEN_STATUSES, Proposal, ProposalBook, ProposalError
from loopline.domain.proposal_gaps import Gap, discovery_picks
from loopline.domain.proposal_notice import ShownProposal, render_batch
from loopline.domain.proposal_rules import Candidate, Verdict, batches, blocking_rejection
from loopline.domain.task_provenance import Provenance
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.commands_proposals import ProposalApprove, ProposalReject
from loopline.processors.handlers.commands_types import TaskCreate
from loopline.processors.handlers.owner_notices import notify_owner
from loopline.processors.messages import Message

STILL_ANSWERED = OPEN_STATUSES | {"approved"}
"""A gap whose latest proposal is in one of these is not proposed again."""

class CreateTask(Protocol):
    def __call__(self, uow: UnitOfWork, msg: Message, cmd: TaskCreate, *, provenance: Provenance) -> str: ...


def proposal_book(uow: UnitOfWork, tenant: str, now: datetime) -> ProposalBook:
    return uow.get_or_create(
        ids.proposal_book_id(tenant), ProposalBook,
        lambda: ProposalBook.open(id=ids.proposal_book_id(tenant), tenant=tenant, now=now),
    )


def load_proposal(uow: UnitOfWork, tenant: str, proposal_ref: str) -> Proposal:
    proposal = uow.get(ids.proposal_id(tenant, proposal_ref), Proposal)
    if proposal is None:
        raise ProposalError(f"no proposal {proposal_ref} for tenant {tenant}; name one that was shown to the owner")
    return proposal


def offer(
    uow: UnitOfWork, *, tenant: str, proposal_ref: str, title: str, summary: str, theme: str, impact: str,
    source: str, now: datetime,
) -> Proposal:
    """A new proposal enters debate, unless one like it was rejected and still cools down: then it is recorded
    as avoided, with the rejection that kept it away (seed 001 §3 "similar to rejected")."""
    existing = uow.get(ids.proposal_id(tenant, proposal_ref), Proposal)
    if existing is not None:
        return existing
    fields: dict[str, Any] = dict(
        id=ids.proposal_id(tenant, proposal_ref), tenant=tenant, proposal_ref=proposal_ref, title=title,
        summary=summary, theme=theme, impact=impact, source=source, now=now,
    )
    blocked = blocking_rejection(f"{title} {summary}", proposal_book(uow, tenant, now).rejections, now)
    if blocked is not None:
        return uow.add(Proposal.avoid(**fields, blocked_by=blocked))
    proposal_book(uow, tenant, now).open_debate(proposal_ref, now)
    proposal = uow.add(Proposal.propose(**fields))
    proposal.request_debate(now)
    return proposal


def propose_from_gaps(
    uow: UnitOfWork, *, tenant: str, gaps: list[Gap], last_seen_at: datetime | None, now: datetime,
) -> list[Proposal]:
    """Discovery: the gaps it may propose (at most three, only while the owner is present) become proposals,
    except a gap whose latest proposal is still open or was approved."""
    book = proposal_book(uow, tenant, now)
    offered = []
    for gap in discovery_picks(gaps, last_seen_at=last_seen_at, now=now):
        latest = book.gap_proposals.get(gap.key)
        if latest is not None and load_proposal(uow, tenant, latest).status in STILL_ANSWERED:
            continue
        proposal_ref = book.next_gap_ref(gap.key)
        offered.append(offer(uow, tenant=tenant, proposal_ref=proposal_ref, title=gap.suggested_action,
                             summary=gap.description, theme=gap.kind, impact=gap.impact, source="discovery", now=now))
        book.record_gap_offer(gap_key=gap.key, proposal_ref=proposal_ref, now=now)
    return offered


def record_debate_round(
    uow: UnitOfWork, *, tenant: str, proposal_ref: str, proposer: str, critic: str, verdict: Verdict, arbiter: str,
    now: datetime,
) -> Proposal:
    """Records a round given its three answers (the debate's model calls record theirs through `proposal_debate`)."""
    proposal = load_proposal(uow, tenant, proposal_ref)
    proposal.record_round(proposer=proposer, critic=critic, verdict=verdict, arbiter=arbiter, now=now)
    settle_debate(uow, proposal, now)
    return proposal


def settle_debate(uow: UnitOfWork, proposal: Proposal, now: datetime) -> None:
    """After a debate step: a debate that ended leaves the book's open debates; when none is left, the survivors go
    to the owner in batches."""
    book = proposal_book(uow, proposal.tenant, now)
    book.settle(proposal, now)
    if not book.debating and book.awaiting:
        show_ready(uow, tenant=proposal.tenant, book=book, now=now)


def show_ready(uow: UnitOfWork, *, tenant: str, book: ProposalBook, now: datetime) -> list[list[str]]:
    """Shows the survivors waiting in the book, grouped by theme and impact, ≤ 5 a notice, each notice through the
    owner's notification hold; returns each batch's refs."""
    ready = [p for p in (load_proposal(uow, tenant, ref) for ref in book.awaiting) if p.status == "ready"]
    by_ref = {p.proposal_ref: p for p in ready}
    candidates = [Candidate(p.proposal_ref, p.theme, p.impact) for p in ready]  # type: ignore[arg-type]
    grouped = [[candidate.proposal_ref for candidate in batch] for batch in batches(candidates)]
    for number, refs in enumerate(grouped, start=book.batches_shown + 1):
        for position, ref in enumerate(refs, start=1):
            by_ref[ref].show(batch_ref=f"batch-{number}", position=position, now=now)
        shown = [ShownProposal(ref, by_ref[ref].title, by_ref[ref].summary, by_ref[ref].impact, by_ref[ref].flag)
                 for ref in refs]
        notify_owner(uow, tenant, render_batch(tenant, shown), now=now)
    book.record_batches(grouped, now)
    return grouped


def approve_proposal(uow: UnitOfWork, msg: Message, cmd: ProposalApprove, *, create: CreateTask) -> str:
    """`proposal.approve`: the proposal becomes a task named after it, which records where it came from."""
    proposal_ref = cmd.proposal_id
    proposal = load_proposal(uow, msg.tenant, proposal_ref)
    task_ref = f"proposal-{proposal_ref}"
    proposal.approve(task_ref=task_ref, now=msg.at)
    created = create(uow, msg, TaskCreate(
        task_id=task_ref, title=proposal.title, description=proposal.summary,
        context={"proposal": proposal_ref, "theme": proposal.theme},
    ), provenance=Provenance("proposal", proposal_ref, "owner"))
    return f"approved proposal {proposal_ref}: {created}"


def reject_proposal(uow: UnitOfWork, msg: Message, cmd: ProposalReject) -> str:
    """`proposal.reject`, with its type; the book remembers it so similar proposals are avoided for its cooldown."""
    proposal = load_proposal(uow, msg.tenant, cmd.proposal_id)
    proposal.reject(rejection_type=cmd.rejection_type, reason=cmd.reason or "", now=msg.at)
    proposal_book(uow, msg.tenant, msg.at).learn(proposal, msg.at)
    return f"rejected proposal {cmd.proposal_id} ({cmd.rejection_type})"
