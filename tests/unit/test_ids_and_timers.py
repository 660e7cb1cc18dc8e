"""Deterministic ids and the hour-bucket timer wheel."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from loopline.domain import ids
from loopline.domain.timers import BucketClosed, TimerBucket, TimerWheel

NOW = datetime(2025, 3, 1, 9, 30, tzinfo=timezone.utc)
HOUR = timedelta(hours=1)


def test_same_reference_always_names_the_same_task():
    assert ids.task_id("u", "t1") == ids.task_id("u", "t1")
    assert ids.task_id("u", "t1") != ids.task_id("u", "t2")


def test_same_reference_in_another_tenant_is_another_task():
    assert ids.task_id("alice", "t1") != ids.task_id("bob", "t1")
    assert ids.loop_id("alice", "l1") != ids.loop_id("bob", "l1")


def test_task_and_loop_with_the_same_reference_get_different_ids():
    assert ids.task_id("u", "x") != ids.loop_id("u", "x")


def test_parts_cannot_run_into_each_other():
    assert ids.task_id("ab", "c") != ids.task_id("a", "bc")


def wheel(due: datetime) -> TimerWheel:
    return TimerWheel.start(id=ids.timer_wheel_id(), due=due, now=NOW)


def test_before_any_sweep_an_earlier_timer_moves_the_wheel_back():
    w = wheel(NOW + 5 * HOUR)
    hour = w.place(NOW + 2 * HOUR, now=NOW)
    assert hour == datetime(2025, 3, 1, 11, tzinfo=timezone.utc)
    assert w.first_unswept == hour


def test_timer_due_in_a_swept_hour_is_filed_in_the_first_unswept_hour():
    w = wheel(NOW)
    swept_to = datetime(2025, 3, 1, 12, tzinfo=timezone.utc)
    w.swept_until(swept_to, now=swept_to)
    assert w.place(NOW, now=swept_to) == swept_to
    assert w.first_unswept == swept_to


def test_timer_due_after_the_sweep_goes_in_its_own_hour():
    w = wheel(NOW)
    w.swept_until(datetime(2025, 3, 1, 12, tzinfo=timezone.utc), now=NOW)
    assert w.place(NOW + 5 * HOUR + timedelta(minutes=10), now=NOW) == datetime(2025, 3, 1, 14, tzinfo=timezone.utc)


def bucket() -> TimerBucket:
    hour = datetime(2025, 3, 1, 9, tzinfo=timezone.utc)
    return TimerBucket.open(id=ids.timer_bucket_id(hour, 0), hour=hour, shard=0, now=NOW)


def test_closed_bucket_refuses_new_timers():
    b = bucket()
    b.close(now=NOW)
    with pytest.raises(BucketClosed):
        b.set_timer(kind="loop_deadline", target_id=ids.loop_id("u", "l1"), due=NOW, now=NOW)
    assert b.size == 0


def test_only_timers_already_due_fire():
    b = bucket()
    early, late = ids.loop_id("u", "l1"), ids.task_id("u", "t1")
    b.set_timer(kind="task_expiry", target_id=late, due=NOW + timedelta(minutes=20), now=NOW)
    b.set_timer(kind="loop_deadline", target_id=early, due=NOW - timedelta(minutes=20), now=NOW)
    events = b.collect_events()
    assert [t[1] for t in TimerBucket.due(events, NOW)] == [early]
    assert [t[1] for t in TimerBucket.due(events, NOW + timedelta(minutes=20))] == [early, late]


def test_the_same_timer_filed_twice_fires_once():
    b = bucket()
    for _ in range(2):
        b.set_timer(kind="loop_deadline", target_id=ids.loop_id("u", "l1"), due=NOW, now=NOW)
    assert len(TimerBucket.due(b.collect_events(), NOW)) == 1
