"""The debate's model calls (seed 001 §4): each is asked for under the model-call checks (counted in the tenant's
model ledger like a task's decision) and answered by the brain follower. An answer moves the debate to its next role
or round, a failure is asked again twice and then abandons the gap (as a pause or a model-call limit does); an answer
to a call no longer pending records nothing. Each step ends with `settle_debate`: a settled debate may send the owner
their batch."""

from __future__ import annotations

from datetime import datetime

from loopline.domain import ids
from loopline.domain.proposal import Proposal
from loopline.domain.proposal_rules import DEBATE_KIND
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.model_calls import count_brain_call
from loopline.processors.handlers.pausing import current_pause
from loopline.processors.handlers.proposal_batches import settle_debate
from loopline.processors.messages import BrainAnswered
from loopline.processors.model.debate import DEBATE_TOOL, debate_answer, debate_facts, debate_prompt
from loopline.processors.ports import Conversation


def ask_debate_call(uow: UnitOfWork, proposal: Proposal, now: datetime) -> None:
    """Asks for the debate's next call while it still debates. A pause in force, or a model-call limit (the day's
    last call included, kept for the tasks), abandons the debate instead, with why: a held debate would keep its
    batch from the owner for as long as the pause lasts, and the gap is proposed again once it has cooled down."""
    if proposal.status != "debating":
        return
    pause = current_pause(uow, proposal.tenant)
    if pause is not None:
        proposal.abandon_debate(reason=f"paused: {pause.says()}", now=now)
        return
    caller = f"proposal {proposal.proposal_ref}"
    held = count_brain_call(uow, tenant=proposal.tenant, caller=caller, calls_so_far=proposal.calls_asked, now=now)
    if held is not None:
        proposal.abandon_debate(reason=held, now=now)
        return
    proposal.request_debate(now)


def pending_debate(uow: UnitOfWork, tenant: str, proposal_ref: str, request_ref: str) -> Proposal | None:
    """The proposal whose debate waits for this call, or None when the call was answered or the debate is over."""
    proposal = uow.get(ids.proposal_id(tenant, proposal_ref), Proposal)
    return proposal if proposal is not None and proposal.is_debate_pending(request_ref) else None


def record_debate_answer(
    uow: UnitOfWork, *, tenant: str, proposal_ref: str, request_ref: str, text: str, verdict: str | None,
    adapter: str, model: str, prompt_digest: str, input_tokens: int, output_tokens: int, now: datetime,
) -> bool:
    """Records one role's answer and asks for the next call; False (nothing recorded) when it is no longer pending."""
    proposal = pending_debate(uow, tenant, proposal_ref, request_ref)
    if proposal is None:
        return False
    proposal.answer_debate(request_ref=request_ref, text=text, verdict=verdict, adapter=adapter, model=model,
                           prompt_digest=prompt_digest, input_tokens=input_tokens, output_tokens=output_tokens,
                           now=now)
    ask_debate_call(uow, proposal, now)
    settle_debate(uow, proposal, now)
    return True


def record_debate_failure(
    uow: UnitOfWork, *, tenant: str, proposal_ref: str, request_ref: str, error: str, now: datetime,
) -> bool:
    """Records a failed call and asks again (or the debate is abandoned); False when it is no longer pending."""
    proposal = pending_debate(uow, tenant, proposal_ref, request_ref)
    if proposal is None:
        return False
    proposal.fail_debate(request_ref=request_ref, error=error, now=now)
    ask_debate_call(uow, proposal, now)
    settle_debate(uow, proposal, now)
    return True


def debate_pending(proposal: Proposal, request_ref: str) -> bool:
    return proposal.is_debate_pending(request_ref)


def debate_conversation(reader: UnitOfWork, proposal: Proposal, requested: Proposal.DebateRequested) -> Conversation:
    """The role's call: its prompt, the `debate_answer` tool, and the facts the offline policy answers from."""
    request = proposal.debate_request or {}
    return Conversation(kind=DEBATE_KIND, tenant=proposal.tenant, request_ref=requested.request_ref,
                        prompt=debate_prompt(proposal, request), tools=(DEBATE_TOOL,),
                        facts=debate_facts(proposal, request))


def record_debate(uow: UnitOfWork, proposal: Proposal, answered: BrainAnswered) -> str:
    """The brain follower's answer: the role's argument (and the arbiter's verdict), or a failure asked again."""
    now = max(answered.requested_at, proposal.modified_on)
    reply = answered.answer
    read = reply if isinstance(reply, str) else debate_answer(list(reply.content))
    ref = proposal.proposal_ref
    if isinstance(read, str):
        record_debate_failure(uow, tenant=proposal.tenant, proposal_ref=ref, request_ref=answered.request_ref,
                              error=read, now=now)
        return f"proposal {ref}: a debate call failed ({read}); the proposal is {proposal.status}"
    assert not isinstance(reply, str)
    record_debate_answer(uow, tenant=proposal.tenant, proposal_ref=ref, request_ref=answered.request_ref,
                         text=read[0], verdict=read[1], adapter=reply.adapter, model=reply.model,
                         prompt_digest=reply.prompt_digest, input_tokens=reply.input_tokens,
                         output_tokens=reply.output_tokens, now=now)
    return f"proposal {ref}: debate answered; the proposal is {proposal.status}"
