"""The creation limits of seed 002 §7.9 and §7.13: a `task.create` of a task Loopline works that a limit holds creates
nothing, is answered with the reason, and leaves a `TenantTasks.CreationHeld` with its rule."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from eventsourcing.persistence import IntegrityError

from loopline.domain import ids
from loopline.domain.safety_limits import TASKS_PER_SIGNAL
from loopline.domain.status import TaskStatus
from loopline.domain.task import Task
from loopline.domain.task_ledger import Origin, TenantTasks
from loopline.domain.tenant import TenantSettings
from loopline.domain.timeutil import format_time, parse_time
from loopline.processors.application import Loopline, UnitOfWork
from loopline.processors.handlers.task_limits import admit_task
from tests.conftest import command
from tests.unit.in_memory import InMemoryLoopline

GYM = "gym"
T0 = parse_time("2026-03-02T14:00:00Z")


@pytest.fixture
def loopline() -> Iterator[InMemoryLoopline]:
    running = InMemoryLoopline()
    yield running
    running.close()


def configure(loopline: InMemoryLoopline, **limits: Any) -> None:
    loopline.publish(command("cfg", "tenant.configure", format_time(T0 - timedelta(hours=1)), GYM,
                             execution_mode="limited_auto", timezone="America/New_York", **limits))


def create(loopline: InMemoryLoopline, n: int, *, at: Any = T0, **extra: Any) -> str | None:
    """Creates churn task `t{n}` for member n; returns the warning it was answered with, if any."""
    [outcome] = loopline.publish(command(
        f"c{n}", "task.create", format_time(at), GYM, task_id=f"t{n}", title=f"churn {n}", task_type="churn_risk",
        contact=f"member{n}@example.com", confidence=0.95, **extra,
    ))
    assert outcome.accepted
    return outcome.warning


def created(loopline: InMemoryLoopline) -> list[str]:
    return [event.ref for event in loopline.events() if isinstance(event, Task.Created)]


def held(loopline: InMemoryLoopline) -> list[tuple[str, str]]:
    return [(e.task_ref, e.rule) for e in loopline.events() if isinstance(e, TenantTasks.CreationHeld)]


def test_a_tenant_creates_at_most_its_daily_task_limit_in_a_local_day(loopline: InMemoryLoopline) -> None:
    configure(loopline, daily_task_limit=2)
    assert create(loopline, 1) is None and create(loopline, 2) is None

    warning = create(loopline, 3)

    assert warning is not None and "task t3 was not created" in warning and "limit 2 a day" in warning
    assert created(loopline) == ["t1", "t2"] and held(loopline) == [("t3", "daily_task_limit")]
    # 05:00 UTC is still the same day in New York; 06:00 the next day is a new one.
    assert create(loopline, 4, at=parse_time("2026-03-03T04:30:00Z")) is not None
    assert create(loopline, 5, at=parse_time("2026-03-03T06:00:00Z")) is None
    assert created(loopline) == ["t1", "t2", "t5"]


def test_an_open_task_limit_frees_up_when_a_task_closes(loopline: InMemoryLoopline) -> None:
    configure(loopline, active_task_limit=2)
    create(loopline, 1), create(loopline, 2)

    assert "one must close first" in (create(loopline, 3) or "")
    loopline.publish(command("x1", "task.cancel", format_time(T0 + timedelta(minutes=5)), GYM, task_id="t1",
                             reason="member came back"))
    assert create(loopline, 4, at=T0 + timedelta(minutes=10)) is None

    assert created(loopline) == ["t1", "t2", "t4"] and held(loopline) == [("t3", "active_task_limit")]
    ledger = UnitOfWork(loopline.app).get(ids.tenant_tasks_id(GYM), TenantTasks)
    assert ledger is not None and ledger.active == ["t2", "t4"]


def test_a_spawned_task_always_waits_for_review_and_a_tenant_spawns_at_most_its_limit(loopline: InMemoryLoopline) -> None:
    configure(loopline, daily_spawned_task_limit=1)
    create(loopline, 1)

    assert create(loopline, 2, origin={"kind": "task", "id": "t1"}) is None
    warning = create(loopline, 3, origin={"kind": "task", "id": "t1"})

    assert loopline.task(GYM, "t1").status is TaskStatus.READY
    spawned = loopline.task(GYM, "t2")
    assert spawned.status is TaskStatus.PENDING_REVIEW
    assert warning is not None and "spawned from other tasks' work" in warning
    assert held(loopline) == [("t3", "daily_spawned_task_limit")]


def test_one_signal_creates_at_most_five_tasks_and_another_signal_has_its_own(loopline: InMemoryLoopline) -> None:
    configure(loopline)
    warnings = [create(loopline, n, origin={"kind": "signal", "id": "webhook-1"}) for n in range(TASKS_PER_SIGNAL + 1)]

    assert warnings[:-1] == [None] * TASKS_PER_SIGNAL and "signal webhook-1 created 5 task(s)" in (warnings[-1] or "")
    assert create(loopline, 10, origin={"kind": "signal", "id": "webhook-2"}) is None
    assert held(loopline) == [(f"t{TASKS_PER_SIGNAL}", "signal_task_limit")]


def test_a_follow_through_task_is_not_counted(loopline: InMemoryLoopline) -> None:
    configure(loopline, daily_task_limit=0)
    [outcome] = loopline.publish(command("c1", "task.create", format_time(T0), GYM, task_id="f1", title="Send the deck"))

    assert outcome.warning is None and created(loopline) == ["f1"] and held(loopline) == []
    assert create(loopline, 2) is not None


def test_the_task_ledger_loads_from_its_snapshot_as_from_its_events() -> None:
    app = Loopline(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    uow = UnitOfWork(app)
    ledger = uow.add(TenantTasks.open(id=ids.tenant_tasks_id(GYM), tenant=GYM, now=T0))
    for n in range(120):  # over four days, so older days and origins are forgotten on the way
        at = T0 + timedelta(hours=n)
        ledger.count(task_ref=f"t{n}", day=at.date(), origin=Origin("run", f"run-{n // 30}") if n % 2 else None, now=at)
    uow.commit()

    assert app.snapshots is not None and list(app.snapshots.get(ledger.id))
    loaded = app.repository.get(ledger.id)
    replayed = None
    for event in app.events.get(ledger.id):
        replayed = event.mutate(replayed)
    state = ("created", "spawned", "origins", "active")
    assert {key: getattr(loaded, key) for key in state} == {key: getattr(replayed, key) for key in state}
    assert sorted(loaded.created) == ["2026-03-05", "2026-03-06", "2026-03-07"]  # the last day's and two before it


def test_two_creations_racing_past_the_daily_limit_meet_as_a_conflict_on_the_ledger(loopline: InMemoryLoopline) -> None:
    configure(loopline, daily_task_limit=2)
    create(loopline, 1)
    settings = TenantSettings(timezone="America/New_York", daily_task_limit=2)
    racing = [UnitOfWork(loopline.app), UnitOfWork(loopline.app)]
    for n, uow in enumerate(racing, start=2):  # each reads the ledger before either has saved
        assert admit_task(uow, tenant=GYM, task_ref=f"t{n}", task_type="churn_risk", contact=f"member{n}@example.com",
                          origin=None, settings=settings, now=T0) is None

    racing[0].commit()
    with pytest.raises(IntegrityError):  # the bus reads the batch again, and then the limit holds t3
        racing[1].commit()
