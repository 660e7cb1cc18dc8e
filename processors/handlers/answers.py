"""What a model's answer means on the bus (`DecisionReturned`): `Task.DecisionRecorded` with its effects
(a send through the send checks, an escalation, a close, a wait), or `Task.DecisionFailed`. Refused or
parked, the request ends failed and the owner is told; a request no longer pending records nothing, so
a request gets at most one decision and a decision at most one send."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from loopline.domain import ids
from loopline.domain.completion import weigh_commitment
from loopline.domain.errors import DomainError
from loopline.domain.grey_area import SEND, resolve
from loopline.domain.open_loop import OpenLoop
from loopline.domain.outreach import (
    MIN_SEND_CONFIDENCE,
    Escalate,
    SendReply,
    SendTouch,
    StepAction,
    WaitForContact,
    apply_draft,
    apply_evaluation,
)
from loopline.domain.send_ledger import local_day
from loopline.domain.task import Task
from loopline.domain.task_priority import SCORE_URGENCY
from loopline.domain.safety_limits import DECISION_RETRY_DELAYS
from loopline.domain.task_types import task_type
from loopline.domain.timers import TimerKind
from loopline.domain.safety_limits import DEGRADED_RETRY, UPSTREAM_FAILURES
from loopline.domain.upstream_health import UpstreamHealth
from loopline.processors.application import UnitOfWork
from loopline.processors.bus import Fault, Handler
from loopline.processors.handlers.deadline_actions import send_followup
from loopline.processors.handlers.escalation import escalate
from loopline.processors.handlers.goal_progress import record_judgment
from loopline.processors.handlers.loops_and_timers import set_timer
from loopline.processors.handlers.pausing import hold_requested_decision
from loopline.processors.handlers.priority import rule_on_urgency
from loopline.processors.handlers.research import WRITE_REPORT, deliver_report
from loopline.processors.handlers.tenants import tenant_settings
from loopline.processors.messages import DecisionReturned, Held, Pending
from loopline.processors.model.prompts import missing_skill
from loopline.processors.model.tools import InvalidToolInput, check_bounds, is_confidence
from loopline.processors.handlers.outreach import (
    act,
    hold_for_owner,
    owner_approves,
    plan_of,
    progress_of,
    send_message,
)
from loopline.processors.ports import Decision, Draft

MODEL = "model"
"""The upstream whose health the decisions show (`domain/upstream_health.py`)."""


def apply(uow: UnitOfWork, returned: DecisionReturned) -> str | None:
    """The answer recorded with its effects, or its failure; a request no longer pending records nothing."""
    item = returned.pending
    task = uow.get(item.task_id, Task)
    if task is None or task.pending_decision(item.request_ref, item.attempt) is None:
        return None
    now = max(item.requested_at, task.modified_on)
    answer = returned.answer
    if isinstance(answer, Held):
        return hold_requested_decision(uow, task, item, now)
    if not isinstance(answer, str) and not is_confidence(answer.confidence):
        # Whichever adapter answered: a confidence that is no number from 0 to 1 gates nothing, so it is off-schema.
        answer = f"the model answered off its schema: confidence {answer.confidence!r} is not a number from 0 to 1"
    if not isinstance(answer, str):
        try:
            check_bounds(answer.point, answer.output)
        except InvalidToolInput as error:
            answer = f"the model answered off its schema: {error}"
    if not isinstance(answer, str) and answer.point == SCORE_URGENCY and not is_confidence(answer.output.get("urgency")):
        answer = f"the model answered off its schema: urgency {answer.output.get('urgency')!r} is not a number from 0 to 1"
    if isinstance(answer, str):
        return _failed(uow, item, task, answer, now)
    return _decided(uow, item, task, answer, now)


def model_health(uow: UnitOfWork, tenant: str, now: datetime) -> UpstreamHealth:
    health_id = ids.upstream_health_id(tenant, MODEL)
    return uow.get_or_create(health_id, UpstreamHealth,
                             lambda: UpstreamHealth.open(id=health_id, tenant=tenant, upstream=MODEL, now=now))


def _failed(uow: UnitOfWork, item: Pending, task: Task, error: str, now: datetime) -> str:
    """Asked again after a delay, then the owner decides; while the model is degraded (§34) it is asked again every
    `DEGRADED_RETRY` instead, with no escalation: the task waits for the model, nothing is sent meanwhile."""
    if item.point == SCORE_URGENCY:  # not asked again: the task goes on with the priority its rules gave it
        task.fail_decision(request_ref=item.request_ref, attempt=item.attempt, error=error, retry_at=None, now=now)
        return f"'{task.title}': no urgency score ({error}); the priority stays {task.priority or 'unset'}"
    attempt, health = item.attempt, model_health(uow, task.tenant, now)
    if health.failed(error, now):
        task.notify_user(kind="model_degraded", now=now, message=(
            f"The model failed {UPSTREAM_FAILURES} times in a row (last: {error}): Loopline works in degraded mode. "
            f"Nothing is sent without a decision; each waiting decision is asked again every "
            f"{DEGRADED_RETRY.seconds // 60} minutes, and you are told when the model answers again."))
    if health.degraded:
        retry_at: datetime | None = now + DEGRADED_RETRY
    else:
        retry_at = now + DECISION_RETRY_DELAYS[attempt - 1] if attempt <= len(DECISION_RETRY_DELAYS) else None
    task.fail_decision(request_ref=item.request_ref, attempt=attempt, error=error, retry_at=retry_at, now=now)
    if retry_at is not None:
        set_timer(uow, kind=TimerKind.TASK_STEP, target_id=task.id, due=retry_at, now=now)
        return f"'{task.title}': {error}; asking again at {retry_at.isoformat()}"
    return escalate(uow, task, Escalate(f"{error} (tried {attempt} times); nothing was sent", "model_unavailable"),
                    now)


def _decided(uow: UnitOfWork, item: Pending, task: Task, decision: Decision, now: datetime) -> str | None:
    health = uow.get(ids.upstream_health_id(task.tenant, MODEL), UpstreamHealth)
    if health is not None and health.succeeded(now):
        task.notify_user(kind="model_recovered", now=now, message=(
            "The model answers again: Loopline left degraded mode, and the decisions that waited are being made."))
    output = decision.output
    task.record_decision(
        request_ref=item.request_ref, attempt=item.attempt, point=decision.point, adapter=decision.adapter,
        model=decision.model, decision=str(output.get("decision", _decided_as(decision))),
        confidence=decision.confidence,
        reasoning=decision.reasoning, prompt_digest=decision.prompt_digest, input_tokens=decision.input_tokens,
        output_tokens=decision.output_tokens, output=output, now=now, cache_read_tokens=decision.cache_read_tokens,
        cache_write_tokens=decision.cache_write_tokens, day=local_day(now, tenant_settings(uow, task.tenant).timezone),
    )
    if decision.point == SCORE_URGENCY:
        return rule_on_urgency(uow, task, output["urgency"], now)
    if decision.point == "evaluate_reply":
        record_judgment(task, output, decision.confidence, now)
    decided_by = f"{decision.adapter} {decision.model}"
    held = _held_back(task, item, decision)
    if item.point == WRITE_REPORT:
        return escalate(uow, task, held, now) if held is not None else deliver_report(uow, task, output, decided_by, now)
    if item.purpose == "followup":
        if held is not None:
            return escalate(uow, task, held, now)
        loop = uow.get(ids.loop_id(task.tenant, str(item.loop_ref)), OpenLoop)
        assert loop is not None, f"follow-up decision {item.request_ref} names loop {item.loop_ref}, which does not exist"
        sent = send_followup(uow, loop, task, Draft(output["subject"], output["body"], decided_by), now)
        return f"'{task.title}': {sent}"
    if not task.is_acting:
        return None
    plan, progress = plan_of(task), progress_of(task)
    draft = {"decided_by": decided_by, "decision": item.request_ref, "confidence": decision.confidence}
    if item.point == "draft_message":
        touch = item.touch or progress.touch + 1
        written = {**draft, "subject": output["subject"], "body": output["body"]}
        action = held or apply_draft(output, decision.confidence, plan=plan, progress=progress,
                                     owner_approves=owner_approves(uow, task, touch))
        if isinstance(action, SendTouch):
            return send_message(uow, task, draft=written, touch=touch, now=now)
        return _act_holding(uow, task, action, {**written, "touch": touch}, now)
    kind = task_type(task.task_type)
    action = held or weigh_commitment(
        apply_evaluation(output, decision.confidence, plan=plan, progress=progress, outcomes=kind.outcome_codes, now=now,
                         provisional=tuple(o.code for o in kind.goal.outcomes if o.provisional)),
        item.request.reply_text, task_type=kind)
    if isinstance(action, SendReply):
        return send_message(uow, task, draft={**draft, "subject": item.reply_subject or "", "body": action.body},
                            touch=task.touch, now=now, reply=True)
    written = {**draft, "subject": item.reply_subject or "", "touch": task.touch, "reply": True}
    return _act_holding(uow, task, action, written, now, quote=item.request.reply_text)


def _decided_as(decision: Decision) -> str:
    """What the audit says was decided when the tool has no `decision` field: a draft, or the urgency score."""
    return f"urgency {decision.output['urgency']:g}" if decision.point == SCORE_URGENCY else "draft"


def _act_holding(uow: UnitOfWork, task: Task, action: StepAction | WaitForContact, written: dict[str, Any],
                 now: datetime, quote: str | None = None) -> str | None:
    """Applies the action (`quote`: the reply it answers); an escalation with the agent's draft keeps that draft
    for the owner's `task.approve`."""
    if isinstance(action, Escalate) and action.draft:
        return hold_for_owner(uow, task, action, written, now, quote=quote)
    return act(uow, task, action, now, quote=quote)


def _held_back(task: Task, item: Pending, decision: Decision) -> Escalate | None:
    """What goes to the owner instead of being acted on, before any rule of the task's cadence: every answer given
    without the type's skill file (seed 002 §36.5), and a follow-up drafted below the send confidence (§7.4)."""
    output = decision.output
    draft = {"subject": output["subject"], "body": output["body"]} if decision.point == "draft_message" else (
        {"body": output["reply_body"]} if output.get("reply_body") else None)
    missing = missing_skill(task_type(task.task_type))
    if missing is not None:
        return Escalate(f"the skill file {missing} is missing, so the model worked from the type's inline description "
                        f"(it answered {output.get('decision', 'with a draft')}): nothing is sent or closed without you",
                        "missing_skill", draft)
    if item.purpose == "followup" and resolve(SEND, decision.confidence) != "act":
        return Escalate(f"the follow-up drafted has confidence {decision.confidence:.2f}, below {MIN_SEND_CONFIDENCE}: "
                        "the draft is saved for you to review", "low_confidence", draft)
    return None


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
