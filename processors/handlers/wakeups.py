"""Self-scheduling: a task asks to be woken at a time, on a condition, or both.

* time only — a `task_wakeup` timer on the task;
* condition only — a loop (origin `wakeup`) whose match wakes the task; its deadline and
  `if_unresolved` work like any loop's;
* both — one loop whose deadline is the wake-up time and whose deadline action is `wake_task`.
  A matching signal resolves the loop and wakes the task, so the deadline later finds the loop
  resolved and does nothing; or the deadline comes first, wakes the task and closes the loop,
  so a later signal no longer matches it. Whichever fires first wins and the other is void,
  through the same exactly-once machinery as every loop.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from uuid import UUID

from loopline.domain.expectations import WAKE_TASK, DeadlineAction
from loopline.domain.task import Task
from loopline.domain.timers import TimerKind
from loopline.domain.timeutil import format_time
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.commands_types import TaskWake
from loopline.processors.handlers.loops_and_timers import load_task, register_loop, set_timer
from loopline.processors.messages import Message

CONDITION_ONLY_DEADLINE = timedelta(days=30)
"""How long a condition-only wake-up waits when the task never expires and no deadline is given."""


def schedule_wakeup(uow: UnitOfWork, msg: Message, cmd: TaskWake) -> str:
    task = load_task(uow, msg.tenant, cmd.task_id)
    task.check_open()
    at, when = cmd.at, cmd.when
    wake_ref = cmd.wake_id or f"{task.ref}/wake/{task.version}"
    reason = cmd.reason or "self-scheduled wake-up"
    loop_ref = f"{wake_ref}/condition" if when else None
    # Filed before its loop, so a kept signal that resolves the loop at once also wakes the task.
    task.schedule_wakeup(wake_ref, at=at, loop_ref=loop_ref, reason=reason, now=msg.at)
    if when:
        if at is not None:
            deadline, if_unresolved = at, WAKE_TASK
        else:
            deadline = when.deadline or task.expires_at or msg.at + CONDITION_ONLY_DEADLINE
            if_unresolved = str(when.if_unresolved or DeadlineAction.NOTIFY_USER)
        register_loop(
            uow, task, loop_ref=loop_ref, channel=when.channel, watch=dict(when.watch), deadline=deadline,
            if_unresolved=if_unresolved, description=f"wake-up condition: {reason}", origin="wakeup", now=msg.at,
        )
    else:
        assert at is not None, "the message schema requires `at`, `when` or both"
        set_timer(uow, kind=TimerKind.TASK_WAKEUP, target_id=task.id, due=at, now=msg.at)
        task.start_waiting(reason=f"waiting for its wake-up at {format_time(at)} ({reason})", now=msg.at)
    parts = ([f"at {format_time(at)}"] if at else []) + ([f"when {when.channel} {loop_ref} matches"] if when else [])
    return f"{task.ref} will wake {' or '.join(parts)} ({wake_ref})"


def wake_due(uow: UnitOfWork, task_id: UUID, now: datetime) -> str | None:
    """The `task_wakeup` timer: wakes the task for each time-only wake-up that is due (none: already done)."""
    task = uow.get(task_id, Task)
    if task is None or task.is_closed:
        return None
    due = task.wakeups_due(now)
    for wake_ref in due:
        at = task.wakeups[wake_ref]["at"]
        task.wake(wake_ref, cause="time", reason=f"wake-up time {format_time(at)} reached", now=now)
    return f"{task.ref}: woke ({', '.join(due)})" if due else None


def wake_on_condition(task: Task, loop_ref: str, *, cause: str, reason: str, now: datetime) -> None:
    """A wake-up's condition loop was closed other than by a signal (deadline, by hand): wake the task."""
    wake_ref = task.wakeup_for_loop(loop_ref)
    if wake_ref is not None and not task.is_closed:
        task.wake(wake_ref, cause=cause, reason=reason, now=now)
