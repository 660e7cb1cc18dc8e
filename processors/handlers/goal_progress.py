"""Goal progress inside a step (seed 002 §37): a goal signal's progress and the close §37.3 then recommends, the
model's judgment of a reply, and the owner's override, reopening and rating of an outcome."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from loopline.domain import ids
from loopline.domain.contact_index import ContactIndex
from loopline.domain.errors import DomainError
from loopline.domain.goal_progress import judgment_progress, signal_progress
from loopline.domain.outreach import Close
from loopline.domain.status import TaskStatus
from loopline.domain.task import Task
from loopline.domain.task_types import task_type
from loopline.domain.timers import TimerKind
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.attribution import attribute_value
from loopline.processors.handlers.commands_goals import TaskOverrideOutcome, TaskRate, TaskReopen
from loopline.processors.handlers.loops_and_timers import load_task, set_timer
from loopline.processors.handlers.outreach import close
from loopline.processors.handlers.suppression import ContactSuppressed, suppressed_why
from loopline.processors.messages import Message

CLOSABLE = (TaskStatus.EXECUTING, TaskStatus.WAITING, TaskStatus.DORMANT, TaskStatus.ESCALATED, TaskStatus.READY)
"""Where a goal reached closes an acting task: any status the agent has it in, and with the owner (the goal happened)."""


class Superseded(DomainError):
    """A closed task whose contact a newer task of the same type works now: reopening it would make two."""


def _budget_low(task: Task) -> bool:
    plan = task.outreach
    return plan is not None and task.messages_used >= plan["budget_messages"] - 1


def advance_goal(uow: UnitOfWork, task: Task, *, signal_type: str, signal_ref: str, now: datetime) -> str | None:
    """Records a goal signal's progress (a progressive goal's next milestone: onboarding's second checkin) and, when
    §37.3 says complete, closes an acting task with the goal's reached outcome; None when the goal does not count the
    signal. For the outcome-signal path: a signal mapped to its own outcome code closes the task there."""
    kind = task_type(task.task_type)
    progress = signal_progress(kind.goal, signal_type, milestones=task.milestones_reached, budget_low=_budget_low(task),
                               evidence=f"{signal_type} {signal_ref}")
    if progress is None or task.is_closed:
        return None
    task.record_progress(progress, source="signal", now=now)
    if progress.recommended != "complete" or progress.outcome is None or not task.is_acting or task.status not in CLOSABLE:
        return f"'{task.title}': goal progress {progress.score}% ({signal_type})"
    why = f"goal reached: {signal_type} {signal_ref}" + (f" ({', '.join(progress.milestones)})" if progress.milestones else "")
    return close(uow, task, Close(progress.outcome, TaskStatus.COMPLETED, why), now)


def record_judgment(task: Task, output: dict[str, Any], confidence: float, now: datetime) -> None:
    """The model's evaluation of a reply, when it judged how far the goal is (`goal_progress`), sets the progress."""
    progress = judgment_progress(task_type(task.task_type).goal, output, confidence,
                                 milestones=task.milestones_reached, budget_low=_budget_low(task))
    if progress is not None and not task.is_closed:
        task.record_progress(progress, source="model", now=now)


def override_outcome(uow: UnitOfWork, msg: Message, cmd: TaskOverrideOutcome) -> str:
    task = load_task(uow, msg.tenant, cmd.task_id)
    previous = task.outcome
    task.override_outcome(code=cmd.outcome, reason=cmd.reason, by=cmd.by, now=msg.at)
    attribute_value(uow, task, cmd.outcome, now=msg.at)  # the owner's outcome is what the task is credited with
    return f"{task.ref}: outcome {previous or 'none'} overridden with {cmd.outcome}"


def reopen_task(uow: UnitOfWork, msg: Message, cmd: TaskReopen) -> str:
    """Back to work: Loopline works an acting task again from the next tick (within the budgets it has left); a
    follow-through task is the outside agent's again. Its expiry restarts from now."""
    task = load_task(uow, msg.tenant, cmd.task_id)
    if task.is_acting and task.contact:
        why = suppressed_why(uow, task.tenant, task.contact)
        if why is not None:
            raise ContactSuppressed(f"task_id: {why}, so task {task.ref} cannot be worked again; if they opted back in, lift "
                             "it with contact.resubscribe first")
        index = uow.get(ids.contact_index_id(task.tenant, task.contact), ContactIndex)
        newer = index.tasks.get(task.task_type) if index is not None else None
        if newer not in (None, task.ref):
            raise Superseded(f"task_id: task {newer} works {task.contact} as {task.task_type} now; reopening "
                             f"{task.ref} would make two: add to {newer} instead")
    expires_at = msg.at + (task.expires_at - task.created_on) if task.expires_at else None
    task.reopen(reason=cmd.reason, by=cmd.by, expires_at=expires_at, now=msg.at)
    if expires_at is not None:
        set_timer(uow, kind=TimerKind.TASK_EXPIRY, target_id=task.id, due=expires_at, now=msg.at)
    if task.is_acting:
        set_timer(uow, kind=TimerKind.TASK_STEP, target_id=task.id, due=msg.at, now=msg.at)
    return f"reopened {task.ref} ({task.status})"


def rate_outcome(uow: UnitOfWork, msg: Message, cmd: TaskRate) -> str:
    task = load_task(uow, msg.tenant, cmd.task_id)
    task.rate_outcome(rating=cmd.rating, why=cmd.why, note=cmd.note, by=cmd.by, now=msg.at)
    return f"rated {task.ref}'s outcome {task.outcome or 'none'} {cmd.rating}"
