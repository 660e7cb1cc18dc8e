"""The Routine aggregate (seed 003): schedules, retry once then pause, notify modes, max_runs and compaction."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from uuid import uuid4

import pytest

from loopline.domain.routine import InvalidRoutine, Routine, result_hash, should_notify

NOW = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)
MIN = timedelta(minutes=1)


def every_30_minutes(**extra) -> Routine:
    return Routine.create(id=uuid4(), tenant="u", ref="ci", action="check_ci", kind="scheduled",
                          interval_minutes=30, owner_task_ref="t1", now=NOW, **extra)


def run(routine: Routine, at: datetime, outcome: str = "success", output: str = "green") -> None:
    routine.record_run(started_at=at, outcome=outcome, output=output, now=at + MIN)


def events(routine: Routine) -> list[str]:
    return [type(event).__name__ for event in routine.collect_events()]


def test_a_routine_every_30_minutes_is_due_every_30_minutes_after_its_runs():
    routine = every_30_minutes()
    assert not routine.is_due(NOW + 29 * MIN)
    assert routine.is_due(NOW + 30 * MIN)
    run(routine, NOW + 30 * MIN)
    assert routine.next_run_at == NOW + 61 * MIN
    assert routine.run_count == 1


def test_a_cron_routine_runs_at_its_next_firing_in_its_zone():
    routine = Routine.create(id=uuid4(), tenant="u", ref="r", action="a", kind="scheduled", cron="0 8 * * *",
                             zone="Europe/Paris", now=NOW)
    assert routine.next_run_at == datetime(2025, 3, 2, 7, 0, tzinfo=timezone.utc)


def test_a_failure_is_retried_once_and_a_second_failure_in_a_row_pauses():
    routine = every_30_minutes()
    run(routine, NOW + 30 * MIN, "failure", "ci unreachable")
    assert routine.status == "active"
    assert routine.next_run_at == NOW + 36 * MIN
    routine.collect_events()
    run(routine, NOW + 36 * MIN, "failure", "ci unreachable")
    assert events(routine) == ["RunRecorded", "Paused"]
    assert routine.status == "paused"
    assert not routine.is_due(NOW + timedelta(days=1))


def test_a_success_between_failures_resets_the_count():
    routine = every_30_minutes()
    run(routine, NOW + 30 * MIN, "failure")
    run(routine, NOW + 36 * MIN)
    run(routine, NOW + 67 * MIN, "failure")
    assert routine.status == "active"
    assert routine.consecutive_failures == 1


def test_a_run_longer_than_its_timeout_failed():
    routine = every_30_minutes(timeout=timedelta(minutes=2))
    routine.record_run(started_at=NOW, outcome="success", output="late", now=NOW + 3 * MIN)
    assert routine.history[-1]["outcome"] == "failure"
    assert "timed out" in routine.history[-1]["error"]


def test_on_change_notifies_only_when_the_result_changes():
    routine = every_30_minutes()
    told = []
    for minute, output in ((30, "green"), (61, "green "), (92, "red"), (123, "red")):
        run(routine, NOW + minute * MIN, output=output)
        told.append(list(routine.collect_events())[-1].notify_owner)
    assert told == [True, False, True, False]


@pytest.mark.parametrize(("notify", "outcome", "told"), [
    ("always", "success", True), ("always", "failure", True), ("on_failure", "success", False),
    ("on_failure", "failure", True), ("never", "failure", False), ("on_change", "failure", False),
])
def test_notify_modes(notify, outcome, told):
    assert should_notify(notify, outcome, result_hash("x") if outcome == "success" else None, None) is told


def test_max_runs_finishes_the_routine_and_a_oneshot_runs_once():
    limited = every_30_minutes(max_runs=2)
    run(limited, NOW + 30 * MIN)
    run(limited, NOW + 61 * MIN)
    assert (limited.status, limited.next_run_at) == ("done", None)
    once = Routine.create(id=uuid4(), tenant="u", ref="o", action="a", kind="oneshot", now=NOW)
    assert once.is_due(NOW)
    run(once, NOW)
    assert once.status == "done"


def test_a_failed_oneshot_is_still_retried_once():
    once = Routine.create(id=uuid4(), tenant="u", ref="o", action="a", kind="oneshot", now=NOW)
    run(once, NOW, "failure")
    assert once.next_run_at == NOW + 6 * MIN
    run(once, NOW + 6 * MIN)
    assert once.status == "done"


def test_an_event_routine_waits_for_a_matching_signal():
    routine = Routine.create(id=uuid4(), tenant="u", ref="e", action="a", kind="event", signal_pattern="github.*",
                             now=NOW)
    assert not routine.is_due(NOW + timedelta(days=3))
    assert routine.matches("github.push") and not routine.matches("calendar.event")


def test_pause_resume_and_run_now():
    routine = every_30_minutes()
    routine.run_now(reason="owner asked", now=NOW + 5 * MIN)
    assert routine.is_due(NOW + 5 * MIN)
    routine.pause(reason="owner asked", now=NOW + 6 * MIN)
    with pytest.raises(InvalidRoutine, match="only a active routine can run now"):
        routine.run_now(reason="x", now=NOW + 7 * MIN)
    routine.resume(now=NOW + 10 * MIN)
    assert routine.next_run_at == NOW + 40 * MIN


def test_disabling_is_final_and_idempotent():
    routine = every_30_minutes()
    routine.disable(reason="task t1 closed", now=NOW)
    routine.disable(reason="task t1 closed", now=NOW)
    assert events(routine) == ["Created", "Disabled"]
    assert not routine.is_due(NOW + timedelta(days=1))


def test_compaction_drops_old_runs_but_keeps_the_latest():
    routine = every_30_minutes()
    run(routine, NOW)
    run(routine, NOW + timedelta(days=1))
    routine.compact_history(now=NOW + timedelta(days=40))
    assert [entry["at"] for entry in routine.history] == [NOW + timedelta(days=1) + MIN]


@pytest.mark.parametrize(("fields", "message"), [
    ({"kind": "scheduled"}, "exactly one of interval_minutes or cron"),
    ({"kind": "event"}, "signal_pattern"),
    ({"kind": "weekly"}, "kind 'weekly'"),
    ({"kind": "oneshot", "notify": "sometimes"}, "notify 'sometimes'"),
    ({"kind": "scheduled", "cron": "0 8 * *"}, "5: minute hour"),
])
def test_invalid_routines_name_the_field(fields, message):
    with pytest.raises(Exception, match=message):
        Routine.create(id=uuid4(), tenant="u", ref="r", action="a", now=NOW, **fields)


def test_replaying_the_events_rebuilds_the_routine():
    routine = every_30_minutes()
    run(routine, NOW + 30 * MIN, "failure")
    run(routine, NOW + 36 * MIN, "failure")
    rebuilt = None
    for event in routine.collect_events():
        rebuilt = event.mutate(rebuilt)
    assert (rebuilt.status, rebuilt.run_count, rebuilt.history) == ("paused", 2, routine.history)
