"""Goal progress inside a step (seed 002 §37): a goal signal's progress and the close §37.3 then recommends, the
model's judgment of a reply, and the owner's override, reopening and rating of an outcome."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from loopline.domain import ids
from loopline.domain.contact_index import ContactIndex
from loopline.domain.errors import DomainError
from loopline.domain.goal_progress import judgment_progress, signal_progress
from loopline.domain.outreach import DEFAULT_WAIT_DAYS, Close, WaitForContact
from loopline.domain.status import TaskStatus
from loopline.domain.task import Task
from loopline.domain.task_types import task_type
from loopline.domain.timers import TimerKind
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.attribution import attribute_value
from loopline.processors.handlers.commands_goals import TaskOverrideOutcome, TaskRate, TaskReopen
from loopline.processors.handlers.loops_and_timers import load_task, set_timer
from loopline.processors.handlers.outreach import act, close, plan_of
from loopline.processors.handlers.suppression import ContactSuppressed, suppressed_why
from loopline.processors.messages import Message

CLOSABLE = (TaskStatus.EXECUTING, TaskStatus.WAITING, TaskStatus.DORMANT, TaskStatus.ESCALATED, TaskStatus.READY)
"""Where a goal reached closes an acting task: any status the agent has it in, and with the owner (the goal happened)."""


class Superseded(DomainError):
    """A closed task whose contact a newer task of the same type works now: reopening it would make two."""


class ParentClosed(DomainError):
    """A subtask whose parent is closed: reopened, it would be cancelled with its parent's other open subtasks."""


def _budget_low(task: Task) -> bool:
    plan = task.outreach
    return plan is not None and task.messages_used >= plan["budget_messages"] - 1


def advance_goal(uow: UnitOfWork, task: Task, *, signal_type: str, signal_ref: str, now: datetime) -> str | None:
    """Records a goal signal's progress (a progressive goal's next milestone: onboarding's second checkin) and, when
    §37.3 says complete, closes an acting task with the goal's reached outcome; None when the goal does not count the
    signal. `outcome_signals.py` asks it for a signal the type maps to no outcome (a mapped one closes the task there)."""
    kind = task_type(task.task_type)
    progress = signal_progress(kind.goal, signal_type, milestones=task.milestones_reached, budget_low=_budget_low(task),
                               evidence=f"{signal_type} {signal_ref}")
    if progress is None or task.is_closed:
        return None
    task.record_progress(progress, source="signal", now=now)
    if progress.recommended != "complete" or progress.outcome is None or not task.is_acting or task.status not in CLOSABLE:
        return f"'{task.title}': goal progress {progress.score}% ({signal_type})"
    why = f"goal reached: {signal_type} {signal_ref}" + (f" ({', '.join(progress.milestones)})" if progress.milestones else "")
    return close(uow, task, Close(progress.outcome, TaskStatus.COMPLETED, why), now, evidence=(signal_ref, None))


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
    follow-through task is the outside agent's again. Its expiry restarts from now. A subtask is reopened only
    under an open parent."""
    task = load_task(uow, msg.tenant, cmd.task_id)
    parent = load_task(uow, msg.tenant, task.subtask_of["ref"]) if task.subtask_of else None
    if parent is not None and parent.is_closed:
        raise ParentClosed(f"task_id: task {task.ref} is a subtask of {parent.ref}, which is {parent.status}: reopen "
                           f"{parent.ref} first")
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
        _resume_cadence(uow, task, msg.at)
    return f"reopened {task.ref} ({task.status})"


def _resume_cadence(uow: UnitOfWork, task: Task, now: datetime) -> None:
    """The cadence goes on where it stopped: a touch still planned goes at its time (at once if it fell due while the
    task was closed); after a reply that stopped it, the task waits for the contact the cadence's next interval."""
    if task.touch > 0 and task.next_touch_at is None and task.contact:
        intervals = plan_of(task).intervals
        days = intervals[task.touch - 1] if task.touch <= len(intervals) else DEFAULT_WAIT_DAYS
        act(uow, task, WaitForContact(now + timedelta(days=days), "reopened by the owner: the cadence goes on"), now)
        return
    set_timer(uow, kind=TimerKind.TASK_STEP, target_id=task.id, due=max(now, task.next_touch_at or now), now=now)


def rate_outcome(uow: UnitOfWork, msg: Message, cmd: TaskRate) -> str:
    task = load_task(uow, msg.tenant, cmd.task_id)
    task.rate_outcome(rating=cmd.rating, why=cmd.why, note=cmd.note, by=cmd.by, now=msg.at)
    return f"rated {task.ref}'s outcome {task.outcome or 'none'} {cmd.rating}"
