"""Pause, resume and run-now for one task (seed 003 §4). A paused task does no work of its own: its steps, sends and
model decisions are held on its `TaskControl` exactly as a tenant's pause holds them (processors/handlers/pausing.py
`hold`), and resuming hands them back. Run-now files the task's step for now, ahead of its schedule: a task waiting
for its cadence's next touch has it fall due now."""

from __future__ import annotations

from datetime import datetime

from loopline.domain import ids
from loopline.domain.errors import DomainError
from loopline.domain.status import TaskStatus
from loopline.domain.task import Task, TaskClosed
from loopline.domain.task_control import TaskControl
from loopline.domain.timers import TimerKind
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.commands_task_controls import TaskControlCommand
from loopline.processors.handlers.loops_and_timers import load_task, set_timer
from loopline.processors.handlers.pausing import current_pause, release
from loopline.processors.messages import Message

BY_HAND = "by hand"


class TaskPaused(DomainError):
    """Run-now asked of a task that a pause holds: resuming comes first."""


def _open_task(uow: UnitOfWork, tenant: str, task_ref: str) -> Task:
    task = load_task(uow, tenant, task_ref)
    if task.is_closed:
        raise TaskClosed(f"task_id: task {task_ref} is {task.status}; only an open task can be paused, resumed or run")
    return task


def _control(uow: UnitOfWork, tenant: str, task_ref: str, now: datetime) -> TaskControl:
    control_id = ids.task_control_id(tenant, task_ref)
    return uow.get_or_create(control_id, TaskControl,
                             lambda: TaskControl.open(id=control_id, tenant=tenant, task_ref=task_ref, now=now))


def pause_task_now(uow: UnitOfWork, tenant: str, task_ref: str, *, reason: str, by: str, now: datetime) -> bool:
    """Pauses the task (False when it is paused already, so the first reason stays)."""
    return _control(uow, tenant, task_ref, now).pause(reason, by, now)


def resume_task_now(uow: UnitOfWork, tenant: str, task_ref: str, *, reason: str, by: str, now: datetime,
                    paused_by: str | None = None) -> int | None:
    """Resumes the task and hands its held work back; the number handed back, None when it was not paused. With
    `paused_by`, only a pause by them is lifted (the owner's own pause stays when the question that paused it too is
    answered)."""
    control = uow.get(ids.task_control_id(tenant, task_ref), TaskControl)
    if control is None or (paused_by is not None and (control.pause_record or {}).get("by") != paused_by):
        return None
    held = control.resume(reason, by, now)
    return None if held is None else release(uow, held, now)


def pause_task(uow: UnitOfWork, msg: Message, cmd: TaskControlCommand) -> str:
    task = _open_task(uow, msg.tenant, cmd.task_id)
    if not pause_task_now(uow, msg.tenant, task.ref, reason=cmd.reason or BY_HAND, by=cmd.by or "owner", now=msg.at):
        return f"task {task.ref} is already paused; nothing changed"
    return f"paused task {task.ref}: it sends nothing and asks no model until task.resume"


def resume_task(uow: UnitOfWork, msg: Message, cmd: TaskControlCommand) -> str:
    task = _open_task(uow, msg.tenant, cmd.task_id)
    released = resume_task_now(uow, msg.tenant, task.ref, reason=cmd.reason or BY_HAND, by=cmd.by or "owner",
                               now=msg.at)
    if released is None:
        return f"task {task.ref} is not paused; nothing changed"
    return f"resumed task {task.ref}: {released} held step(s) go on, under the same limits"


def run_task_now(uow: UnitOfWork, msg: Message, cmd: TaskControlCommand) -> str:
    task = _open_task(uow, msg.tenant, cmd.task_id)
    pause = current_pause(uow, msg.tenant, task.ref)
    if pause is not None:
        raise TaskPaused(f"task_id: {pause.says()}; resume it first (task.resume or tenant.resume)")
    reason, by = cmd.reason or BY_HAND, cmd.by or "owner"
    _control(uow, msg.tenant, task.ref, msg.at).run_now(reason, by, msg.at)
    if task.status is TaskStatus.WAITING and task.next_touch_at is not None and task.next_touch_at > msg.at:
        # Waiting for the cadence's next touch: it falls due now (the send checks still hold it where they would).
        task.schedule_next_touch(msg.at, reason=f"run-now by {by}: {reason}", now=msg.at)
    set_timer(uow, kind=TimerKind.TASK_STEP, target_id=task.id, due=msg.at, now=msg.at)
    return f"task {task.ref}: its next step runs at the next tick, ahead of its schedule"
