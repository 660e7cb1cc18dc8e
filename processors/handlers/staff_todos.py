"""Staff to-do tasks (seed 002 §31.3): a task of a `staff_todo` type is work for a person at the business, so when it
starts Loopline asks the action executor for its to-do (assigned as the type says, due after the type's first reminder
interval; the executor reminds until it is done), and the to-do marked done closes the task as the type's goal reached."""

from __future__ import annotations

from datetime import datetime, timedelta

from loopline.domain import ids
from loopline.domain.action_log import DONE, ActionLog
from loopline.domain.outreach import Close
from loopline.domain.status import TaskStatus
from loopline.domain.task import Task
from loopline.domain.task_types import task_type
from loopline.domain.timeutil import format_time
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.actions import ask_for_action, mark_todo_done
from loopline.processors.handlers.commands_actions import ActionDone
from loopline.processors.handlers.loops_and_timers import load_task
from loopline.processors.handlers.outreach import close
from loopline.processors.messages import Message

STAFF_TODO = "staff_todo"
"""Both the category and the action kind (`domain/actions.py`) of the work."""


def is_staff_todo(task: Task) -> bool:
    return task_type(task.task_type).category == STAFF_TODO and not task.is_acting


def todo_key(task: Task) -> str:
    return f"{task.ref}/todo"


def assign_todo(uow: UnitOfWork, task: Task, now: datetime) -> str:
    kind = task_type(task.task_type)
    due = now + timedelta(days=kind.cadence.intervals[0] if kind.cadence.intervals else 0)
    return ask_for_action(uow, task, action=STAFF_TODO, key=todo_key(task), requested_by="loopline", now=now,
                          params={"title": task.title, "assigned_to": kind.assignment, "due_at": format_time(due)})


def mark_done(uow: UnitOfWork, msg: Message, cmd: ActionDone) -> str:
    """`action.done`: the to-do is done (the executor's `mark_todo_done`); the task's own to-do done closes the task
    with its type's first positive outcome, another to-do leaves it open."""
    said = mark_todo_done(uow, msg, cmd)
    task = load_task(uow, msg.tenant, cmd.task_id)
    log = uow.get(ids.action_log_id(task.tenant, task.ref), ActionLog)
    own = log.actions.get(todo_key(task)) if log is not None else None
    if task.is_closed or not is_staff_todo(task) or own is None or own["state"] != DONE:
        return said
    outcome = next(o.code for o in task_type(task.task_type).goal.outcomes if o.kind == "positive")
    note = f": {cmd.note}" if cmd.note else ""
    return f"{said}; {close(uow, task, Close(outcome, TaskStatus.COMPLETED, f'its to-do was marked done{note}'), msg.at)}"
