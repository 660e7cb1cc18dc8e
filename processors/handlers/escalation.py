"""Hands a task to the owner: the one way a step escalates (a rule, a failed model, a spent model budget), with the
context the owner decides with, and the timeouts for an escalation nobody answers (seed 002 §17)."""

from __future__ import annotations

from datetime import datetime

from loopline.domain.notices import actions_for
from loopline.domain.outreach import Escalate
from loopline.domain.status import TaskStatus
from loopline.domain.task import Task
from loopline.domain.task_escalation import (
    REMINDER_KIND,
    UNRESOLVED,
    Timeouts,
    current_escalation,
    escalation_context,
    render_handoff,
)
from loopline.domain.task_types import task_type
from loopline.domain.timers import TimerKind
from loopline.domain.wording import count, when
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.loops_and_timers import close_task_loops, proactive_run, set_timer, task_history
from loopline.processors.handlers.tenants import tenant_settings


def escalate(uow: UnitOfWork, task: Task, action: Escalate, now: datetime, quote: str | None = None) -> str:
    """Hands the task to the owner with the reason and any draft that was held back (seed 002 §6.5), and tells
    them at once, quoting what the contact wrote; the proactive run then wakes the task with it. A task entering
    `escalated` records its handoff context and files the timers that remind the owner and then cancel it."""
    reason = action.reason
    if action.draft:
        subject = f"Subject: {action.draft['subject']}\n" if action.draft.get("subject") else ""
        reason = f"{reason}\n\nDraft held back:\n{subject}{action.draft.get('body', '')}"
    entering = task.status is not TaskStatus.ESCALATED
    task.escalate(reason=reason, cause=action.cause, now=now)
    message = f"'{task.title}' needs your decision: {action.reason}"
    if entering:
        message += "\n\n" + _hand_off(uow, task, action, quote, now)
    task.notify_user(kind="escalation", message=message, now=now, quote=quote, draft=action.draft)
    proactive_run(uow, task.tenant, now).queue_escalation(task_ref=task.ref, loop_ref=None, reason=action.reason, now=now)
    return f"'{task.title}': escalated to the owner ({action.reason})"


def _hand_off(uow: UnitOfWork, task: Task, action: Escalate, quote: str | None, now: datetime) -> str:
    """Records the escalation's context (§17.3) and files its timeouts (§17.5); returns it as the owner reads it."""
    settings = tenant_settings(uow, task.tenant)
    timeouts = Timeouts.starting(now, reminder_hours=settings.escalation_reminder_hours,
                                 cancel_days=settings.escalation_cancel_days)
    context = escalation_context(
        task, cause=action.cause, reason=action.reason, question=quote, history=task_history(uow, task),
        draft=action.draft, actions=actions_for("escalation", task.ref, acting=task.is_acting, held_draft=bool(action.draft)),
        timeouts=timeouts,
    )
    task.record_escalation_context(context, now=now)
    for due in timeouts.due:
        set_timer(uow, kind=TimerKind.ESCALATION_TIMEOUT, target_id=task.id, due=due, now=now)
    return render_handoff(context)


def escalation_timeout(uow: UnitOfWork, task: Task, now: datetime) -> str | None:
    """An escalation left alone: the owner is reminded once when its reminder is due, and the task is cancelled when
    its cancellation is; nothing once the owner answered (the task left `escalated`, even if it is back there
    since without a handoff of its own) or it escalated anew."""
    if task.status is not TaskStatus.ESCALATED:
        return None
    found = current_escalation(task_history(uow, task))
    if found is None:
        return None
    context, reminded = found
    if context.cancel_at is not None and context.cancel_at <= now:
        return _cancel_unanswered(uow, task, context, now)
    if context.remind_at is not None and context.remind_at <= now and not reminded:
        cancel = f" Left alone, it is cancelled {when(context.cancel_at)}." if context.cancel_at else ""
        task.notify_user(kind=REMINDER_KIND, message=f"Reminder: '{task.title}' has waited for your decision since "
                         f"{when(context.timestamp)}: {context.reason}.{cancel}", now=now, draft=task.held_draft)
        return f"'{task.title}': reminded the owner of its escalation"
    return None


def _cancel_unanswered(uow: UnitOfWork, task: Task, context: Task.EscalationContextRecorded, now: datetime) -> str:
    """Cancelled with `escalation_timeout` as its reason (§17.5), and the type's `escalated_unresolved` outcome."""
    days = (context.cancel_at - context.timestamp).days
    reason = (f"escalation_timeout: escalated {when(context.timestamp)} and not addressed within "
              f"{count(days, 'day')}")
    close_task_loops(uow, task, resolved_by="cancelled", reason=f"task cancelled: {reason}", now=now)
    outcome = task_type(task.task_type).outcome(UNRESOLVED)
    if outcome is not None:
        task.set_outcome(code=outcome.code, kind=outcome.kind, provisional=False, reason=reason, now=now)
    task.cancel(reason=reason, now=now)
    task.notify_user(kind="escalation_timeout", message=f"Stopped '{task.title}': it was escalated "
                     f"{when(context.timestamp)} ({context.reason}) and not addressed within {count(days, 'day')}.",
                     now=now)
    return f"'{task.title}': cancelled, its escalation not addressed within {count(days, 'day')}"
