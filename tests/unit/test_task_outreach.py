"""Task version 2: the outreach plan and context merges, and version-1 snapshots loading with their defaults."""

from __future__ import annotations

from datetime import timedelta

import pytest

from loopline.domain.task import Task, TaskClosed
from tests.unit.test_task_lifecycle import NOW, make_task


def test_a_new_task_starts_without_a_plan_and_with_zero_counters() -> None:
    task = make_task()
    assert (task.outreach, task.messages_used, task.turns_used, task.touch, task.is_acting) == (None, 0, 0, 0, False)


def test_plan_outreach_records_the_types_numbers_on_the_task() -> None:
    task = make_task("ready")
    task.plan_outreach(budget_messages=3, budget_turns=6, ends_at=NOW + timedelta(days=14), cadence="standard",
                       intervals=[3, 5, 7], tones=["a", "b", "c"], on_exhaustion="cancel", dormant_check_days=None,
                       dormant_max_days=None, draft={"subject": "Hi", "body": "Hello"}, contact_name="Sam", now=NOW)
    assert task.is_acting
    assert task.outreach == {
        "budget_messages": 3, "budget_turns": 6, "ends_at": NOW + timedelta(days=14), "cadence": "standard",
        "intervals": [3, 5, 7], "tones": ["a", "b", "c"], "on_exhaustion": "cancel", "dormant_check_days": None,
        "dormant_max_days": None, "draft": {"subject": "Hi", "body": "Hello"}, "contact_name": "Sam",
    }
    assert task.status == "ready"


def test_merge_context_adds_keys_and_later_values_win() -> None:
    task = Task.create(id=make_task().id, now=NOW, tenant="u", ref="t1", title="t", description="", task_type="ad_hoc",
                       status="ready", expires_at=None, priority=None, contact="a@x.com", confidence=None,
                       context={"a": 1, "b": 1}, reason="r")
    task.merge_context({"b": 2, "c": 3}, source_ref="t2", now=NOW)
    assert task.context == {"a": 1, "b": 2, "c": 3}
    event = task.collect_events()[-1]
    assert isinstance(event, Task.ContextMerged) and event.source_ref == "t2" and event.task_ref == "t1"


def test_a_closed_task_takes_no_merge() -> None:
    task = make_task()
    task.complete(summary="done", now=NOW)
    with pytest.raises(TaskClosed):
        task.merge_context({"x": 1}, source_ref="t2", now=NOW)


def test_a_version_1_snapshot_loads_with_the_new_fields_defaulted() -> None:
    task = make_task()
    snapshot = Task.Snapshot.take(task)
    state = {k: v for k, v in snapshot.state.items() if k not in ("outreach", "messages_used", "turns_used", "touch",
                                                                  "class_version")}
    old = Task.Snapshot(originator_id=snapshot.originator_id, originator_version=snapshot.originator_version,
                        timestamp=snapshot.timestamp, topic=snapshot.topic, state=state)
    loaded = old.mutate(None)
    assert (loaded.outreach, loaded.messages_used, loaded.turns_used, loaded.touch) == (None, 0, 0, 0)
    assert loaded.last_wait_ended_at is None
    assert snapshot.state["class_version"] == 7


def test_a_version_2_snapshot_loads_with_no_wait_ended() -> None:
    """Version 3 added `last_wait_ended_at` (the stall check reads it); a version-2 snapshot loads with None."""
    snapshot = Task.Snapshot.take(make_task())
    state = {k: v for k, v in snapshot.state.items() if k != "last_wait_ended_at"} | {"class_version": 2}
    old = Task.Snapshot(originator_id=snapshot.originator_id, originator_version=snapshot.originator_version,
                        timestamp=snapshot.timestamp, topic=snapshot.topic, state=state)
    loaded = old.mutate(None)
    assert loaded.last_wait_ended_at is None and loaded.ref == snapshot.state["ref"]


def test_a_version_6_snapshot_loads_with_its_expired_loops_counted_from_then_on() -> None:
    """Version 7 added `loops_expired` (discovery reads it); a version-6 snapshot loads with 0."""
    snapshot = Task.Snapshot.take(make_task())
    state = {k: v for k, v in snapshot.state.items() if k != "loops_expired"} | {"class_version": 6}
    old = Task.Snapshot(originator_id=snapshot.originator_id, originator_version=snapshot.originator_version,
                        timestamp=snapshot.timestamp, topic=snapshot.topic, state=state)
    assert old.mutate(None).loops_expired == 0


def test_a_version_3_snapshot_loads_with_its_model_calls_counted_from_then_on() -> None:
    """Version 4 added `model_calls` (the task's model-call limit reads it); a version-3 snapshot loads with 0."""
    snapshot = Task.Snapshot.take(make_task())
    state = {k: v for k, v in snapshot.state.items() if k != "model_calls"} | {"class_version": 3}
    old = Task.Snapshot(originator_id=snapshot.originator_id, originator_version=snapshot.originator_version,
                        timestamp=snapshot.timestamp, topic=snapshot.topic, state=state)
    assert old.mutate(None).model_calls == 0
