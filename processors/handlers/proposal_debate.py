"""The debate's model calls (seed 001 §4), as the brain follower records them: an answer moves the debate to its next
role or round, a failure is asked again twice and then abandons the gap; an answer to a call no longer pending
records nothing. Each step ends like `record_debate_round`: a settled debate may send the owner their batch."""

from __future__ import annotations

from datetime import datetime

from loopline.domain import ids
from loopline.domain.proposal import Proposal
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.proposals import settle_debate


def pending_debate(uow: UnitOfWork, tenant: str, proposal_ref: str, request_ref: str) -> Proposal | None:
    """The proposal whose debate waits for this call, or None when the call was answered or the debate is over."""
    proposal = uow.get(ids.proposal_id(tenant, proposal_ref), Proposal)
    return proposal if proposal is not None and proposal.is_debate_pending(request_ref) else None


def record_debate_answer(
    uow: UnitOfWork, *, tenant: str, proposal_ref: str, request_ref: str, text: str, verdict: str | None,
    adapter: str, model: str, prompt_digest: str, input_tokens: int, output_tokens: int, now: datetime,
) -> bool:
    """Records one role's answer; False (nothing recorded) when the call is no longer pending."""
    proposal = pending_debate(uow, tenant, proposal_ref, request_ref)
    if proposal is None:
        return False
    proposal.answer_debate(request_ref=request_ref, text=text, verdict=verdict, adapter=adapter, model=model,
                           prompt_digest=prompt_digest, input_tokens=input_tokens, output_tokens=output_tokens,
                           now=now)
    settle_debate(uow, proposal, now)
    return True


def record_debate_failure(
    uow: UnitOfWork, *, tenant: str, proposal_ref: str, request_ref: str, error: str, now: datetime,
) -> bool:
    """Records a failed call (asked again, or the debate abandoned); False when the call is no longer pending."""
    proposal = pending_debate(uow, tenant, proposal_ref, request_ref)
    if proposal is None:
        return False
    proposal.fail_debate(request_ref=request_ref, error=error, now=now)
    settle_debate(uow, proposal, now)
    return True
