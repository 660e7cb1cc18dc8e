"""The brain's model calls that are not a task's decision (a synthesis turn, a debate role), one row per call kind.

An aggregate records a request event (`requested`, carrying `request_ref` and `kind`); the brain follower
(processors/followers/brain.py) asks `pending` whether it still waits, builds the call with `prompt` outside any
transaction, asks the model (`DecisionModel.converse`) and hands the answer to the bus as `BrainAnswered`;
`record` records it (and its effects) in a transaction. An answer to a request no longer pending records nothing,
so a request gets at most one answer. Adding a call kind is adding a row here and the offline policy's answer to it
(adapters/offline_brain.py OFFLINE_ANSWERS).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from loopline.domain.errors import DomainError
from loopline.domain.proactive_run import ProactiveRun
from loopline.domain.proposal import Proposal
from loopline.processors.application import UnitOfWork
from loopline.processors.bus import Fault, Handler
from loopline.processors.handlers.proactive import record_synthesis, synthesis_pending, synthesis_prompt
from loopline.processors.handlers.proposal_debate import debate_conversation, debate_pending, record_debate
from loopline.processors.messages import BrainAnswered
from loopline.processors.ports import Conversation


@dataclass(frozen=True)
class CallKind:
    aggregate: type
    requested: type
    """The aggregate's request event: it has `request_ref` and `kind`."""
    pending: Callable[[Any, str], bool]
    """Whether the aggregate still waits for the answer to this request ref."""
    prompt: Callable[[UnitOfWork, Any, Any], Conversation]
    """The call, built from a read-only unit of work, the aggregate and its request event."""
    record: Callable[[UnitOfWork, Any, BrainAnswered], str | None]
    """Records the answer (a `Reply`, or the error text when there is none) with its effects."""


CALL_KINDS: dict[str, CallKind] = {
    "synthesis": CallKind(ProactiveRun, ProactiveRun.SynthesisRequested, synthesis_pending, synthesis_prompt,
                          record_synthesis),
    "debate": CallKind(Proposal, Proposal.DebateRequested, debate_pending, debate_conversation, record_debate),
}


def _pending_aggregate(uow: UnitOfWork, answered: BrainAnswered) -> tuple[CallKind, Any] | None:
    row = CALL_KINDS[answered.kind]
    aggregate = uow.get(answered.aggregate_id, row.aggregate)
    if aggregate is None or not row.pending(aggregate, answered.request_ref):
        return None
    return row, aggregate


def apply(uow: UnitOfWork, answered: BrainAnswered) -> str | None:
    """The answer recorded by its call kind; one to a request no longer pending records nothing."""
    found = _pending_aggregate(uow, answered)
    return found[0].record(uow, found[1], answered) if found is not None else None


def _give_up(uow: UnitOfWork, answered: BrainAnswered, why: str) -> None:
    """Its effects were refused or kept failing: the request is answered with why, so the run goes on without it."""
    found = _pending_aggregate(uow, answered)
    if found is not None:
        found[0].record(uow, found[1], BrainAnswered(answered.kind, answered.aggregate_id, answered.request_ref,
                                                     answered.requested_at, f"its answer could not be recorded: {why}"))


def refuse(uow: UnitOfWork, answered: BrainAnswered, error: DomainError) -> None:
    _give_up(uow, answered, f"{type(error).__name__}: {error}")


def park(uow: UnitOfWork, answered: BrainAnswered, fault: Fault) -> None:
    _give_up(uow, answered, fault.reason)


BRAIN_ANSWERED: Handler[BrainAnswered] = Handler(apply=apply, refuse=refuse, park=park)
