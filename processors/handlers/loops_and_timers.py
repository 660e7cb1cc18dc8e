"""Loops, timers and proactive runs as handlers change them: registering and closing a loop, filing a timer, starting a run."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from loopline.domain import ids
from loopline.domain.action_log import ActionLog
from loopline.domain.errors import DomainError
from loopline.domain.channels import channel_rule
from loopline.domain.notification_hold import NotificationHold
from loopline.domain.open_loop import OpenLoop
from loopline.domain.open_tasks import OpenTasks
from loopline.domain.proactive_run import ProactiveRun
from loopline.domain.routine import Routine
from loopline.domain.routine_index import RoutineIndex
from loopline.domain.task import Task
from loopline.domain.timers import BucketClosed, TimerBucket, TimerKind, TimerWheel, shard_of
from loopline.domain.timeutil import HOUR
from loopline.domain.watch_index import WatchIndex
from loopline.processors.application import UnitOfWork


class UnknownTask(DomainError):
    pass


class UnknownLoop(DomainError):
    pass


class DuplicateLoop(DomainError):
    pass


def load_task(uow: UnitOfWork, tenant: str, task_ref: str) -> Task:
    task = uow.get(ids.task_id(tenant, task_ref), Task)
    if task is None:
        raise UnknownTask(f"tenant {tenant!r} has no task {task_ref!r}; create it with task.create first")
    return task


def task_history(uow: UnitOfWork, task: Task) -> list[Any]:
    """The task's events, stored and not yet saved, earlier steps of the batch included (read for a step that needs
    the conversation: an expiry's reason, guidance, a reply's anomaly check)."""
    collected = uow.collected(task.id)
    stored = task.version - len(task.pending_events) - len(collected)
    return [*uow.app.events.get(task.id, lte=stored), *collected, *task.pending_events]


def set_timer(uow: UnitOfWork, *, kind: TimerKind, target_id: UUID, due: datetime, now: datetime) -> None:
    """Files a timer in the wheel; a bucket already swept and closed pushes it to the next hour."""
    wheel_id = ids.timer_wheel_id()
    wheel = uow.get_or_create(wheel_id, TimerWheel, lambda: TimerWheel.start(id=wheel_id, due=due, now=now))
    hour = wheel.place(due, now=now)
    shard = shard_of(target_id)
    while True:
        bucket_id = ids.timer_bucket_id(hour, shard)
        bucket = uow.get_or_create(
            bucket_id, TimerBucket, lambda: TimerBucket.open(id=bucket_id, hour=hour, shard=shard, now=now)
        )
        try:
            bucket.set_timer(kind=kind, target_id=target_id, due=due, now=now)
            return
        except BucketClosed:
            hour += HOUR


def schedule_stall_check(uow: UnitOfWork, task: Task, at: datetime, now: datetime) -> None:
    """Records when the task is next checked for stalling, and files the timer for it."""
    task.schedule_stall_check(at, now=now)
    set_timer(uow, kind=TimerKind.TASK_STALL_CHECK, target_id=task.id, due=at, now=now)


def register_loop(
    uow: UnitOfWork,
    task: Task,
    *,
    loop_ref: str,
    channel: str,
    watch: dict[str, Any],
    deadline: datetime,
    now: datetime,
    **details: Any,
) -> OpenLoop:
    """Registers a loop with its task link, match-index entry and deadline timer, all in one save;
    `details` are the loop's other fields as `OpenLoop.register` takes them (`if_unresolved`, `origin`, ...).

    A signal kept in the match index that would have resolved the loop, had it been processed
    after the registration, resolves it at once instead (see `domain/watch_index.py`).
    """
    task.check_open()
    loop_id = ids.loop_id(task.tenant, loop_ref)
    if uow.get(loop_id, OpenLoop) is not None:
        raise DuplicateLoop(f"loop {loop_ref!r} is already registered for tenant {task.tenant!r}")
    loop = uow.add(
        OpenLoop.register(
            id=loop_id, now=now, tenant=task.tenant, ref=loop_ref, task_ref=task.ref, channel=channel, watch=watch,
            deadline=deadline, **details,
        )
    )
    task.link_loop(loop_ref, now=now)
    index = watch_index(uow, task.tenant, channel, channel_rule(channel).watch_key(watch), now)
    kept = index.kept_match(watch, now)
    if kept is None:
        index.watch(loop_ref, now=now)
        set_timer(uow, kind=TimerKind.LOOP_DEADLINE, target_id=loop_id, due=deadline, now=now)
        task.start_waiting(reason=f"waiting for {loop.awaited()} (loop {loop_ref})", now=now)
        return loop
    # Everything is stamped with the signal's time, so the events are those of the other order.
    signal_ref, signal_type, at = kept["ref"], kept["type"], kept["at"]
    resolve_by_signal(loop, signal_ref=signal_ref, signal_type=signal_type, at=at)
    if task.ref in kept["tasks"]:
        task.close_loop_by_signal_in_inbox(loop_ref, signal_ref=signal_ref, signal_type=signal_type, now=at)
    else:
        task.receive_signal(
            signal_ref=signal_ref, signal_type=signal_type, data=dict(kept["data"]), resolved_loops=[loop_ref], now=at
        )
        index.mark_delivered(signal_ref, task.ref, now=at)
    return loop


def resolve_by_signal(loop: OpenLoop, *, signal_ref: str, signal_type: str, at: datetime) -> None:
    """The one way a signal resolves a loop, whether it came after the loop or was kept for it."""
    loop.resolve(
        resolved_by="signal_match", reason=f"{signal_type} {signal_ref} matched", signal_ref=signal_ref,
        rule=channel_rule(loop.channel).rule, now=at,
    )


def watch_index(uow: UnitOfWork, tenant: str, channel: str, key: tuple[str, ...], now: datetime) -> WatchIndex:
    index_id = ids.watch_index_id(tenant, channel, key)
    return uow.get_or_create(index_id, WatchIndex, lambda: WatchIndex.open(
        id=index_id, tenant=tenant, channel=channel, key=ids.composite(*key), now=now
    ))


def close_loop(uow: UnitOfWork, loop: OpenLoop, task: Task, *, resolved_by: str, reason: str, now: datetime) -> None:
    """Resolves a loop everywhere it is referenced: the loop, its task and the match index."""
    loop.resolve(resolved_by=resolved_by, reason=reason, now=now)
    task.close_loop(loop.ref, resolved_by=resolved_by, now=now)
    watch_index(uow, loop.tenant, loop.channel, channel_rule(loop.channel).watch_key(loop.watch), now).unwatch(
        loop.ref, now=now
    )


def close_task_loops(uow: UnitOfWork, task: Task, *, resolved_by: str, reason: str, now: datetime) -> None:
    """What a closing task owns closes with it: its open loops, and its routines are disabled (seed 000 Phase 2)."""
    for loop_ref in list(task.open_loops):
        loop = uow.get(ids.loop_id(task.tenant, loop_ref), OpenLoop)
        assert loop is not None, f"task {task.ref} links loop {loop_ref} that does not exist"
        close_loop(uow, loop, task, resolved_by=resolved_by, reason=reason, now=now)
    index = uow.get(ids.routine_index_id(task.tenant), RoutineIndex)
    for routine_ref in index.owned.get(task.ref, []) if index is not None else []:
        routine = uow.get(ids.routine_id(task.tenant, routine_ref), Routine)
        assert routine is not None, f"the routine index lists {routine_ref}, which does not exist"
        routine.disable(reason=f"its task {task.ref} closed: {reason}", now=now)


def proactive_run(uow: UnitOfWork, tenant: str, now: datetime) -> ProactiveRun:
    """The tenant's run, started (with its first wake-up timer) the first time the tenant is seen."""
    run_id = ids.run_id(tenant)
    run = uow.get(run_id, ProactiveRun)
    if run is None:
        run = uow.add(ProactiveRun.start(id=run_id, tenant=tenant, now=now))
        set_timer(uow, kind=TimerKind.PROACTIVE_RUN, target_id=run_id, due=run.next_run_at, now=now)
    return run


def note_open_task(uow: UnitOfWork, tenant: str, task_ref: str, now: datetime) -> None:
    """Notes a created task for the synthesis run's context (`domain/open_tasks.py`)."""
    index_id = ids.open_tasks_id(tenant)
    index = uow.get(index_id, OpenTasks) or uow.add(OpenTasks.open(id=index_id, tenant=tenant, now=now))
    index.note(task_ref=task_ref, now=now)


def owner_seen(uow: UnitOfWork, tenant: str, now: datetime) -> None:
    """Notes the owner's presence; an owner back after a day or more away gets a run now (the return digest)."""
    hold_id = ids.notification_hold_id(tenant)
    hold = uow.get(hold_id, NotificationHold) or uow.add(NotificationHold.open(id=hold_id, tenant=tenant, now=now))
    last_seen_at = hold.last_seen_at
    run = proactive_run(uow, tenant, now)
    if hold.seen(now):
        assert last_seen_at is not None, "a return needs an earlier sighting"
        run.run_on_return(last_seen_at=last_seen_at, now=now)
        set_timer(uow, kind=TimerKind.PROACTIVE_RUN, target_id=run.id, due=now, now=now)


def schedule_run(uow: UnitOfWork, run: ProactiveRun, *, requested_at: datetime, reason: str, now: datetime) -> None:
    run.schedule_next(requested_at=requested_at, reason=reason, now=now)
    set_timer(uow, kind=TimerKind.PROACTIVE_RUN, target_id=run.id, due=run.next_run_at, now=now)


def hand_back_actions(uow: UnitOfWork, task: Task, now: datetime) -> None:
    """A task free to act again (back from the owner, its subtask no longer held) looks at its deferred actions now:
    the ones held while it could not act wait for no time of their own."""
    log = uow.get(ids.action_log_id(task.tenant, task.ref), ActionLog)
    due = log.next_due() if log is not None else None
    if due is not None:
        set_timer(uow, kind=TimerKind.TASK_ACTIONS, target_id=task.id, due=max(due, now), now=now)
