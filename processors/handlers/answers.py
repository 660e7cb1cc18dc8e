"""What a model's answer means on the bus (`DecisionReturned`): `Task.DecisionRecorded` with its effects
(a send through the send checks, an escalation, a close, a wait), or `Task.DecisionFailed`. Refused or
parked, the request ends failed and the owner is told; a request no longer pending records nothing, so
a request gets at most one decision and a decision at most one send."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from loopline.domain import ids
from loopline.domain.errors import DomainError
from loopline.domain.open_loop import OpenLoop
from loopline.domain.outreach import (
    Escalate,
    SendReply,
    SendTouch,
    StepAction,
    WaitForContact,
    apply_draft,
    apply_evaluation,
)
from loopline.domain.task import Task
from loopline.domain.task_types import task_type
from loopline.domain.timers import TimerKind
from loopline.processors.application import UnitOfWork
from loopline.processors.bus import Fault, Handler
from loopline.processors.handlers.deadline_actions import send_followup
from loopline.processors.handlers.loops_and_timers import set_timer
from loopline.processors.messages import DecisionReturned, Pending
from loopline.processors.handlers.outreach import RETRY_DELAYS, act, escalate, plan_of, progress_of, send_message
from loopline.processors.ports import Decision, Draft


def apply(uow: UnitOfWork, returned: DecisionReturned) -> str | None:
    """The answer recorded with its effects, or its failure; a request no longer pending records nothing."""
    item = returned.pending
    task = uow.get(item.task_id, Task)
    if task is None or task.pending_decision(item.request_ref, item.attempt) is None:
        return None
    now = max(item.requested_at, task.modified_on)
    if isinstance(returned.answer, str):
        return _failed(uow, item, task, returned.answer, now)
    return _decided(uow, item, task, returned.answer, now)


def _failed(uow: UnitOfWork, item: Pending, task: Task, error: str, now: datetime) -> str:
    attempt = item.attempt
    retry_at = now + RETRY_DELAYS[attempt - 1] if attempt <= len(RETRY_DELAYS) else None
    task.fail_decision(request_ref=item.request_ref, attempt=attempt, error=error, retry_at=retry_at, now=now)
    if retry_at is not None:
        set_timer(uow, kind=TimerKind.TASK_STEP, target_id=task.id, due=retry_at, now=now)
        return f"'{task.title}': {error}; asking again at {retry_at.isoformat()}"
    return escalate(uow, task, Escalate(f"{error} (tried {attempt} times); nothing was sent", "model_unavailable"),
                    now)


def _decided(uow: UnitOfWork, item: Pending, task: Task, decision: Decision, now: datetime) -> str | None:
    output = decision.output
    task.record_decision(
        request_ref=item.request_ref, attempt=item.attempt, point=decision.point, adapter=decision.adapter,
        model=decision.model, decision=str(output.get("decision", "draft")), confidence=decision.confidence,
        reasoning=decision.reasoning, prompt_digest=decision.prompt_digest, input_tokens=decision.input_tokens,
        output_tokens=decision.output_tokens, output=output, now=now,
    )
    decided_by = f"{decision.adapter} {decision.model}"
    if item.purpose == "followup":
        loop = uow.get(ids.loop_id(task.tenant, str(item.loop_ref)), OpenLoop)
        assert loop is not None, f"follow-up decision {item.request_ref} names loop {item.loop_ref}, which does not exist"
        sent = send_followup(uow, loop, task, Draft(output["subject"], output["body"], decided_by), now)
        return f"'{task.title}': {sent}"
    if not task.is_acting:
        return None
    plan, progress = plan_of(task), progress_of(task)
    draft = {"decided_by": decided_by, "decision": item.request_ref, "confidence": decision.confidence}
    if item.point == "draft_message":
        action = apply_draft(output, decision.confidence, plan=plan, progress=progress)
        touch = item.touch or progress.touch + 1
        written = {**draft, "subject": output["subject"], "body": output["body"]}
        if isinstance(action, SendTouch):
            return send_message(uow, task, draft=written, touch=touch, now=now)
        return _act_holding(uow, task, action, {**written, "touch": touch}, now)
    action = apply_evaluation(output, decision.confidence, plan=plan, progress=progress,
                              outcomes=task_type(task.task_type).outcome_codes, now=now)
    if isinstance(action, SendReply):
        return send_message(uow, task, draft={**draft, "subject": item.reply_subject or "", "body": action.body},
                            touch=task.touch, now=now, reply=True)
    written = {**draft, "subject": item.reply_subject or "", "touch": task.touch, "reply": True}
    return _act_holding(uow, task, action, written, now, quote=item.request.reply_text)


def _act_holding(uow: UnitOfWork, task: Task, action: StepAction | WaitForContact, written: dict[str, Any],
                 now: datetime, quote: str | None = None) -> str | None:
    """Applies the action (`quote`: the reply it answers); an escalation with the agent's draft keeps that draft
    for the owner's `task.approve`."""
    said = act(uow, task, action, now, quote=quote)
    if isinstance(action, Escalate) and action.draft and not task.is_closed:
        task.hold_draft({**written, **action.draft}, now=now)
    return said


def refuse(uow: UnitOfWork, returned: DecisionReturned, error: DomainError) -> None:
    _give_up(uow, returned.pending, f"{type(error).__name__}: {error}")


def park(uow: UnitOfWork, returned: DecisionReturned, fault: Fault) -> None:
    _give_up(uow, returned.pending, fault.reason)


def _give_up(uow: UnitOfWork, item: Pending, why: str) -> None:
    """The decision's effects were refused (or kept failing): the request ends failed and the owner is told."""
    task = uow.get(item.task_id, Task)
    if task is None or task.pending_decision(item.request_ref, item.attempt) is None:
        return
    now = max(item.requested_at, task.modified_on)
    task.fail_decision(request_ref=item.request_ref, attempt=item.attempt, error=why, retry_at=None, now=now)
    task.notify_user(kind="decision_refused",
                     message=f"'{task.title}': the model's decision could not be carried out ({why}). "
                     "Nothing was sent; decide what should happen next.", now=now)


DECISION_RETURNED: Handler[DecisionReturned] = Handler(apply=apply, refuse=refuse, park=park)
