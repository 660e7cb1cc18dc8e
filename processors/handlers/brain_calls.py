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
from datetime import datetime
from typing import Any

from loopline.domain.errors import DomainError
from loopline.domain.proactive_run import ProactiveRun
from loopline.domain.proposal import Proposal
from loopline.processors.application import UnitOfWork
from loopline.processors.bus import Fault, Handler
from loopline.processors.handlers.proactive import record_synthesis, synthesis_pending, synthesis_prompt
from loopline.processors.handlers.proposal_debate import debate_conversation, debate_pending, record_debate
from loopline.processors.messages import BrainAnswered
from loopline.processors.ports import Conversation, Reply


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
    unused: Callable[[Any, str, Reply, datetime], None]
    """Records who answered the request and at what cost, when the answer itself cannot be recorded."""


def _unused_synthesis(run: ProactiveRun, request_ref: str, reply: Reply, now: datetime) -> None:
    """The model did answer the turn: its answer is recorded as any other, then the turn fails with why."""
    run.record_synthesis(request_ref=request_ref, adapter=reply.adapter, model=reply.model, content=list(reply.content),
                         prompt_digest=reply.prompt_digest, input_tokens=reply.input_tokens,
                         output_tokens=reply.output_tokens, now=now)


def _unused_debate(proposal: Proposal, request_ref: str, reply: Reply, now: datetime) -> None:
    proposal.note_unused_answer(request_ref=request_ref, adapter=reply.adapter, model=reply.model,
                                prompt_digest=reply.prompt_digest, input_tokens=reply.input_tokens,
                                output_tokens=reply.output_tokens, now=now)


CALL_KINDS: dict[str, CallKind] = {
    "synthesis": CallKind(ProactiveRun, ProactiveRun.SynthesisRequested, synthesis_pending, synthesis_prompt,
                          record_synthesis, _unused_synthesis),
    "debate": CallKind(Proposal, Proposal.DebateRequested, debate_pending, debate_conversation, record_debate,
                       _unused_debate),
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
    """Its effects were refused or kept failing: who answered and at what cost is recorded (every model call is
    audited), then the request is answered with why, so the run goes on without it."""
    found = _pending_aggregate(uow, answered)
    if found is None:
        return
    row, aggregate = found
    if not isinstance(answered.answer, str):
        row.unused(aggregate, answered.request_ref, answered.answer, max(answered.requested_at, aggregate.modified_on))
    row.record(uow, aggregate, BrainAnswered(answered.kind, answered.aggregate_id, answered.request_ref,
                                             answered.requested_at, f"its answer could not be recorded: {why}"))


def refuse(uow: UnitOfWork, answered: BrainAnswered, error: DomainError) -> None:
    _give_up(uow, answered, f"{type(error).__name__}: {error}")


def park(uow: UnitOfWork, answered: BrainAnswered, fault: Fault) -> None:
    _give_up(uow, answered, fault.reason)


BRAIN_ANSWERED: Handler[BrainAnswered] = Handler(apply=apply, refuse=refuse, park=park)
