"""The one way a task asks for a model decision: the model-call checks, then the request and its ledger entry (the
brain's own calls, a synthesis turn or a debate role, are counted by `count_brain_call`).

Every `Task.request_decision` goes through `request_decision` here, in the caller's unit of work, so
the checks read the tenant's model-call ledger as the step's own transaction leaves it and the
request commits with the entry that counts it (as `sending.py` does for sends). A call a limit holds
back is kept on the task and asked for when the limit frees up; a task whose own budget is spent goes
to the owner instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from loopline.domain import ids
from loopline.domain.errors import DomainError
from loopline.domain.model_checks import ModelCallAttempt, first_model_deferral, reaches_warning
from loopline.domain.model_ledger import TenantModelCalls
from loopline.domain.outreach import Escalate
from loopline.domain.send_checks import Deferral
from loopline.domain.send_ledger import local_day
from loopline.domain.task import Task
from loopline.domain.task_priority import URGENCY
from loopline.domain.timers import TimerKind
from loopline.domain.wording import when
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.escalation import escalate
from loopline.processors.handlers.loops_and_timers import set_timer
from loopline.processors.handlers.tenants import tenant_settings


class ModelCallRefused(DomainError):
    """The owner asked for a model call (guidance) that a limit which never frees up holds back."""


def request_decision(
    uow: UnitOfWork, task: Task, *, request_ref: str, point: str, purpose: str, touch: int | None, tone: str | None,
    reason: str, now: datetime, attempt: int = 1, loop_ref: str | None = None,
) -> Deferral | None:
    """Asks for the model decision unless a check in `MODEL_CALL_CHECKS` holds it back (returned): held until the
    limit frees up, or, when it never does, the task goes to the owner (the owner's own guidance is refused)."""
    task.check_open()
    if task.is_asked(request_ref, attempt, now):
        return None
    settings = tenant_settings(uow, task.tenant)
    ledger_id = ids.tenant_model_calls_id(task.tenant)
    ledger = uow.get(ledger_id, TenantModelCalls) or TenantModelCalls.open(id=ledger_id, tenant=task.tenant, now=now)
    today = local_day(now, settings.timezone)
    deferral = first_model_deferral(ModelCallAttempt(
        task_ref=task.ref, task_calls=task.model_calls, tenant_calls=ledger, limits=settings, now=now,
    ))
    if deferral is None:
        task.request_decision(request_ref=request_ref, point=point, purpose=purpose, touch=touch, tone=tone,
                              reason=reason, now=now, attempt=attempt, loop_ref=loop_ref, day=today)
        uow.add(ledger).record(task_ref=task.ref, day=today, now=now)
        limit = settings.daily_model_call_limit
        if reaches_warning(ledger.calls_on(today), limit):
            task.notify_user(kind="model_calls_warning", now=now, message=(
                f"Loopline asked the model {ledger.calls_on(today)} times today for {task.tenant}, of a daily limit of "
                f"{limit}: at the limit, tasks wait for the next day (change it with tenant.configure "
                "daily_model_call_limit)."))
        return None
    if purpose == URGENCY:  # a score is worth asking for only now: held back, the task keeps its priority without one
        return deferral
    if deferral.until is None:
        if purpose == "guidance":
            raise ModelCallRefused(f"{deferral.reason}: the model is not asked again for this task; answer "
                                   f"{task.contact or 'the contact'} yourself with task.reply, or close it")
        escalate(uow, task, Escalate(f"{deferral.reason}; the model is not asked again for it", deferral.rule), now)
        return deferral
    task.hold_decision(request_ref=request_ref, point=point, purpose=purpose, touch=touch, tone=tone, reason=reason,
                       rule=deferral.rule, why=deferral.reason, until=deferral.until, day=today, now=now,
                       attempt=attempt, loop_ref=loop_ref)
    set_timer(uow, kind=TimerKind.TASK_STEP, target_id=task.id, due=deferral.until, now=now)
    return deferral


def held_reason(deferral: Deferral) -> str:
    """What a step whose model call a limit held back says, for the tick's lines and the audit."""
    if deferral.until is None:
        return f"the model is not asked ({deferral.reason}): the task went to the owner"
    return f"the model call waits until {when(deferral.until)} ({deferral.reason})"


def awaits_decision(pending_decisions: Mapping[str, Mapping[str, Any]]) -> bool:
    """Whether the task waits on a decision before its next step: a pending urgency score holds back none."""
    return any(pending["purpose"] != URGENCY for pending in pending_decisions.values())


def count_brain_call(uow: UnitOfWork, *, tenant: str, caller: str, calls_so_far: int, now: datetime) -> str | None:
    """Counts one of the brain's own model calls (a synthesis turn, a debate role) in the tenant's model ledger, as a
    task's decision; else why it is not asked: a check of MODEL_CALL_CHECKS holds it, or it would be the day's last
    call, which the brain never takes (that one is kept for the tasks' own work)."""
    settings = tenant_settings(uow, tenant)
    ledger_id = ids.tenant_model_calls_id(tenant)
    ledger = uow.get(ledger_id, TenantModelCalls) or TenantModelCalls.open(id=ledger_id, tenant=tenant, now=now)
    today = local_day(now, settings.timezone)
    limit = settings.daily_model_call_limit
    if ledger.calls_on(today) + 1 >= limit:
        return (f"daily_model_call_limit: {ledger.calls_on(today)} model call(s) were asked for on "
                f"{today.isoformat()} (limit {limit} a day); the day's last is kept for the tasks")
    deferral = first_model_deferral(ModelCallAttempt(task_ref=caller, task_calls=calls_so_far, tenant_calls=ledger,
                                                     limits=settings, now=now))
    if deferral is not None:
        return f"{deferral.rule}: {deferral.reason}"
    uow.add(ledger).record(task_ref=caller, day=today, now=now)
    return None
