"""Proposal handlers: offer an idea (or record it avoided), discovery from gaps, and turn the owner's approval into a
task or their rejection into what later offers avoid. The debate is in `proposal_debate.py`, the batches in
`proposal_batches.py`."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from loopline.domain import ids
from loopline.domain.proposal import OPEN_STATUSES, Proposal, ProposalError
from loopline.domain.proposal_gaps import Gap, discovery_picks
from loopline.domain.proposal_rules import COOLDOWNS, blocking_rejection
from loopline.domain.task import Task
from loopline.domain.task_provenance import Provenance
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.commands_proposals import ProposalApprove, ProposalReject
from loopline.processors.handlers.commands_types import TaskCreate
from loopline.processors.handlers.proposal_batches import load_proposal, proposal_book
from loopline.processors.handlers.proposal_debate import ask_debate_call
from loopline.processors.messages import Message

STILL_ANSWERED = OPEN_STATUSES | {"approved"}
"""A gap whose latest proposal is in one of these is not proposed again."""

DIED_IN_DEBATE = frozenset({"failed", "skipped"})
"""A gap whose latest proposal the debate failed or abandoned is proposed again only after the `not_now` cooldown
(domain/proposal_rules.py COOLDOWNS): the seeds say only "skip this gap" (seed 001 §3) and "don't show human"
(§4); the owner's own "try again later" is the nearest rule, and without one the gap is debated at every run."""


class CreateTask(Protocol):
    def __call__(self, uow: UnitOfWork, msg: Message, cmd: TaskCreate, *, provenance: Provenance) -> str: ...


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
    ask_debate_call(uow, proposal, now)
    return proposal


def propose_from_gaps(
    uow: UnitOfWork, *, tenant: str, gaps: list[Gap], last_seen_at: datetime | None, now: datetime,
) -> list[Proposal]:
    """Discovery: the gaps it may propose (at most three, only while the owner is present) become proposals,
    except a gap whose latest proposal is still open or was approved, or died in debate less than a cooldown ago."""
    book = proposal_book(uow, tenant, now)
    offered = []
    for gap in discovery_picks(gaps, last_seen_at=last_seen_at, now=now):
        latest = book.gap_proposals.get(gap.key)
        if latest is not None and _still_answers(load_proposal(uow, tenant, latest), now):
            continue
        proposal_ref = book.next_gap_ref(gap.key)
        offered.append(offer(uow, tenant=tenant, proposal_ref=proposal_ref, title=gap.suggested_action,
                             summary=gap.description, theme=gap.kind, impact=gap.impact, source="discovery", now=now))
        book.record_gap_offer(gap_key=gap.key, proposal_ref=proposal_ref, now=now)
    return offered


def _still_answers(proposal: Proposal, now: datetime) -> bool:
    """Whether the gap's latest proposal keeps it from being proposed again now."""
    if proposal.status in DIED_IN_DEBATE:
        # A failed or abandoned proposal changes no more: its last change is when the debate ended.
        cooldown = COOLDOWNS["not_now"]
        return cooldown is None or now < proposal.modified_on + cooldown
    return proposal.status in STILL_ANSWERED


def approve_proposal(uow: UnitOfWork, msg: Message, cmd: ProposalApprove, *, create: CreateTask) -> str:
    """`proposal.approve`: the proposal becomes a task named after it, which records where it came from. While a
    task-creation limit holds the task back, the approval is refused with the limit's reason: the proposal stays as
    it was, to be approved again once the limit frees up."""
    proposal_ref = cmd.proposal_id
    proposal = load_proposal(uow, msg.tenant, proposal_ref)
    task_ref, status = f"proposal-{proposal_ref}", proposal.status
    proposal.approve(task_ref=task_ref, now=msg.at)
    created = create(uow, msg, TaskCreate(
        task_id=task_ref, title=proposal.title, description=proposal.summary,
        context={"proposal": proposal_ref, "theme": proposal.theme},
    ), provenance=Provenance("proposal", proposal_ref, "owner"))
    if uow.get(ids.task_id(msg.tenant, task_ref), Task) is None:
        raise ProposalError(f"proposal {proposal_ref} stays {status}: {created}")
    return f"approved proposal {proposal_ref}: {created}"


def reject_proposal(uow: UnitOfWork, msg: Message, cmd: ProposalReject) -> str:
    """`proposal.reject`, with its type; the book remembers it so similar proposals are avoided for its cooldown."""
    proposal = load_proposal(uow, msg.tenant, cmd.proposal_id)
    proposal.reject(rejection_type=cmd.rejection_type, reason=cmd.reason or "", now=msg.at)
    proposal_book(uow, msg.tenant, msg.at).learn(proposal, msg.at)
    return f"rejected proposal {cmd.proposal_id} ({cmd.rejection_type})"
