"""A task, a routine and a tenant's brain (its proactive run and notification hold), loaded from its snapshot, is the
one replayed from all its events."""

from __future__ import annotations

from datetime import timedelta
from typing import TypeVar
from uuid import UUID

from loopline.domain import ids
from loopline.domain.notification_hold import NotificationHold
from loopline.domain.proactive_run import ProactiveRun
from loopline.domain.routine import Routine
from loopline.domain.status import TaskStatus
from loopline.domain.task import Task
from loopline.domain.timeutil import format_time, parse_time
from loopline.processors.application import UnitOfWork
from loopline.runtime.system import System
from tests.conftest import command, publish, signal
from tests.integration.helpers import CREATE_TASK, TENANT

T0 = parse_time("2026-03-13T10:00:00Z")
TASK = ids.task_id(TENANT, "task_abc")
A = TypeVar("A", Task, Routine, ProactiveRun, NotificationHold)


def loaded_as_replayed(system: System, aggregate_id: UUID, cls: type[A]) -> A:
    """The aggregate loaded afresh (from its snapshot), checked to be the one its events replay into."""
    system.app.cache.clear()
    from_snapshot = UnitOfWork(system.app).get(aggregate_id, cls)
    replayed = None
    for event in system.app.events.get(aggregate_id):
        replayed = event.mutate(replayed)
    assert from_snapshot is not None and replayed is not None
    assert vars(from_snapshot) == {k: v for k, v in vars(replayed).items() if k != "_trigger_order"}
    return from_snapshot


def test_a_snapshotted_task_loads_with_the_same_state_as_its_replayed_events(system: System) -> None:
    notes = [
        command(f"n{i}", "task.update", format_time(T0 + timedelta(minutes=i)), task_id="task_abc", notes=f"{i}")
        for i in range(1, 60)
    ]
    wake = command("w", "task.wake", format_time(T0 + timedelta(hours=2)), task_id="task_abc")
    wake["data"]["at"] = "2026-03-20T10:00:00Z"
    publish(system, CREATE_TASK, *notes)
    publish(system, wake)  # events after the snapshot, replayed on top of it
    assert system.app.snapshots is not None
    [snapshot] = list(system.app.snapshots.get(TASK))  # taken by the commit that passed version 50, as it ended
    assert 50 <= snapshot.originator_version <= 61  # created, first stall check, 59 notes

    from_snapshot = loaded_as_replayed(system, TASK, Task)
    assert from_snapshot.status is TaskStatus.WAITING  # a pending wake-up is something to wait on
    assert from_snapshot.wakeups_due(parse_time("2026-03-20T10:00:00Z")) != []


def test_a_snapshotted_routine_loads_with_the_same_state_as_its_replayed_events(system: System) -> None:
    create = command("r", "routine.create", format_time(T0), routine_id="digest", action="call_webhook",
                     params={"event": "digest"}, kind="scheduled", interval_minutes=30)
    reports = [
        command(f"p{i}", "routine.report", format_time(T0 + timedelta(minutes=30 * i)), routine_id="digest",
                duration_seconds=60, outcome="success", output=f"{i % 3} new members")
        for i in range(1, 57)
    ]
    publish(system, create, *reports[:-1])
    publish(system, reports[-1])  # a run after the snapshot, replayed on top of it
    routine_id = ids.routine_id(TENANT, "digest")
    assert system.app.snapshots is not None
    [snapshot] = list(system.app.snapshots.get(routine_id))  # taken by the commit that passed version 50, as it ended
    assert snapshot.originator_version == 56  # created, 55 runs

    from_snapshot = loaded_as_replayed(system, routine_id, Routine)
    assert from_snapshot.run_count == 56 and from_snapshot.history[-1]["result_hash"] is not None


def test_a_snapshotted_proactive_run_and_notification_hold_load_as_their_replayed_events(system: System) -> None:
    notes = [command(f"m{i}", "tenant.memory", format_time(T0 + timedelta(minutes=i)), key=f"k{i % 7}",
                     note=f"note {i}") for i in range(1, 56)]
    goal = command("g", "tenant.goal", format_time(T0 + timedelta(hours=2)), key="renewals", goal="Renew every lease")
    seen = [signal(f"s{i}", "user.seen", format_time(T0 + timedelta(hours=i)), TENANT) for i in range(1, 56)]
    publish(system, *notes, *seen)
    publish(system, goal)  # an event after the run's snapshot, replayed on top of it
    assert system.app.snapshots is not None
    for aggregate_id, cls in ((ids.run_id(TENANT), ProactiveRun), (ids.notification_hold_id(TENANT), NotificationHold)):
        assert list(system.app.snapshots.get(aggregate_id)), f"no snapshot of the {cls.__name__}"
        loaded_as_replayed(system, aggregate_id, cls)
    run = loaded_as_replayed(system, ids.run_id(TENANT), ProactiveRun)
    assert run.goals == {"renewals": "Renew every lease"} and len(run.memory) == 7
