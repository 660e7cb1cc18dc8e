"""Hands a task to the owner: the one way a step escalates (a rule, a failed model, a spent model budget)."""

from __future__ import annotations

from datetime import datetime

from loopline.domain.outreach import Escalate
from loopline.domain.task import Task
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.loops_and_timers import proactive_run


def escalate(uow: UnitOfWork, task: Task, action: Escalate, now: datetime, quote: str | None = None) -> str:
    """Hands the task to the owner with the reason and any draft that was held back (seed 002 §6.5), and tells
    them at once, quoting what the contact wrote; the proactive run then wakes the task with it."""
    reason = action.reason
    if action.draft:
        subject = f"Subject: {action.draft['subject']}\n" if action.draft.get("subject") else ""
        reason = f"{reason}\n\nDraft held back:\n{subject}{action.draft.get('body', '')}"
    task.escalate(reason=reason, cause=action.cause, now=now)
    task.notify_user(kind="escalation", message=f"'{task.title}' needs your decision: {action.reason}", now=now,
                     quote=quote, draft=action.draft)
    proactive_run(uow, task.tenant, now).queue_escalation(task_ref=task.ref, loop_ref=None, reason=action.reason, now=now)
    return f"'{task.title}': escalated to the owner ({action.reason})"
