"""A tick racing the filing of a timer: the filing read the timer wheel just before the tick swept past the
timer's hour, in a bucket that did not exist yet. The timer is still fired (by the next tick), never lost: at
scale, with workers killed at random, one run ended with 47 tasks that never sent anything this way."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta

import pytest

from loopline.domain import ids
from loopline.domain.timers import TimerWheel, shard_of
from loopline.domain.timeutil import format_time, parse_time
from tests.conftest import command
from tests.unit.in_memory import InMemoryLoopline

GYM = "gym"
T0 = parse_time("2026-03-02T14:00:00Z")
FILED_AT = T0 + timedelta(minutes=10)


def churn_task(ref: str, contact: str, at: datetime) -> dict:
    return command(f"c-{ref}", "task.create", format_time(at), GYM, task_id=ref, title=f"Churn {ref}",
                   task_type="churn_risk", contact=contact, confidence=0.95,
                   draft={"subject": "We miss you", "body": "Hi, see you soon."})


@pytest.fixture
def loopline() -> Iterator[InMemoryLoopline]:
    running = InMemoryLoopline()
    running.publish(command("cfg", "tenant.configure", format_time(T0 - timedelta(hours=1)), GYM,
                            execution_mode="limited_auto"))
    running.publish(churn_task("first", "ann@example.com", T0))
    running.tick(T0 + timedelta(minutes=5))  # the wheel has swept once: a late timer now goes in its first unswept hour
    yield running
    running.close()


def test_a_timer_filed_while_a_tick_sweeps_past_its_hour_still_fires(
    loopline: InMemoryLoopline, monkeypatch: pytest.MonkeyPatch
) -> None:
    first_shard = shard_of(ids.task_id(GYM, "first"))
    late = next(f"late{n}" for n in range(100) if shard_of(ids.task_id(GYM, f"late{n}")) != first_shard)
    place, ticked = TimerWheel.place, []

    def place_then_tick(wheel: TimerWheel, due: datetime, *, now: datetime) -> datetime:
        """The task's creation has read the wheel; before it commits, a tick sweeps two hours on."""
        hour = place(wheel, due, now=now)
        if now == FILED_AT and not ticked:
            ticked.append(loopline.scheduler.tick(T0 + timedelta(hours=2)))
        return hour

    with monkeypatch.context() as racing:
        racing.setattr(TimerWheel, "place", place_then_tick)
        loopline.publish(churn_task(late, "ben@example.com", FILED_AT))
    loopline.tick(T0 + timedelta(hours=3))

    assert ticked, "the tick ran while the task's timers were being filed"
    assert [message["to"] for _, message in loopline.emails()] == ["ann@example.com", "ben@example.com"]
