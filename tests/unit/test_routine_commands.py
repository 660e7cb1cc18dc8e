"""The routine commands on the in-memory store: a task's routine every 30 minutes reports its runs, stores its
outputs in the task's workflow memory, notifies only on change, pauses after two failures, and stops with its task."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from loopline.domain import ids
from loopline.domain.notification_hold import NotificationHold
from loopline.domain.routine import Routine, RoutineEvent
from loopline.domain.timeutil import format_time
from loopline.processors.application import UnitOfWork
from loopline.projections.timeline import DESCRIPTIONS
from tests.conftest import command, signal
from tests.unit.in_memory import InMemoryLoopline

GYM = "gym"
T0 = datetime(2026, 5, 4, 9, 0, tzinfo=timezone.utc)


@pytest.fixture
def loopline() -> Iterator[InMemoryLoopline]:
    running = InMemoryLoopline()
    running.publish(command("t", "task.create", format_time(T0), GYM, task_id="ci", title="Keep CI green"))
    running.publish(command("r", "routine.create", format_time(T0), GYM, routine_id="ci-check", action="call_webhook",
                            params={"event": "ci.check"}, kind="scheduled", task_id="ci", interval_minutes=30))
    yield running
    running.close()


def send(loopline: InMemoryLoopline, type_: str, minutes: int, **data: Any) -> str:
    [outcome] = loopline.publish(command(f"m{type_}{minutes}", type_, format_time(T0 + timedelta(minutes=minutes)),
                                         GYM, routine_id="ci-check", **data))
    assert outcome.accepted, outcome.detail
    return str(outcome.detail)


def report(loopline: InMemoryLoopline, minutes: int, outcome: str, output: str) -> str:
    return send(loopline, "routine.report", minutes, duration_seconds=60, outcome=outcome, output=output)


def routine(loopline: InMemoryLoopline) -> Routine:
    found = UnitOfWork(loopline.app).get(ids.routine_id(GYM, "ci-check"), Routine)
    assert found is not None
    return found


def told(loopline: InMemoryLoopline) -> list[bool]:
    return [event.notify_owner for event in loopline.events() if isinstance(event, Routine.RunRecorded)]


def test_runs_store_their_outputs_notify_on_change_and_pause_after_two_failures(loopline):
    assert routine(loopline).next_run_at == T0 + timedelta(minutes=30)
    assert "stored for ci" in report(loopline, 30, "success", "212 green")
    report(loopline, 60, "success", "212 green")
    report(loopline, 90, "failure", "CI unreachable")
    assert routine(loopline).next_run_at == T0 + timedelta(minutes=95)
    assert "paused" in report(loopline, 95, "failure", "CI unreachable")
    assert told(loopline) == [True, False, False, False]
    assert notices(loopline) == ["routine_result", "routine_paused"]
    assert loopline.task(GYM, "ci").workflows == {"ci-check": 2}
    send(loopline, "routine.resume", 100)
    send(loopline, "routine.run_now", 101, reason="fixed")
    assert routine(loopline).is_due(T0 + timedelta(minutes=101))


def test_closing_the_task_disables_its_routines(loopline):
    loopline.publish(command("c", "task.complete", format_time(T0 + timedelta(minutes=10)), GYM, task_id="ci",
                             summary="done"))
    assert routine(loopline).status == "disabled"
    assert not any("ci-check" in action for action in loopline.tick(T0 + timedelta(minutes=30)))
    assert "closed" in report(loopline, 31, "success", "212 green")


def test_an_unknown_routine_is_refused_naming_the_field(loopline):
    [outcome] = loopline.publish(command("x", "routine.pause", format_time(T0), GYM, routine_id="nope", reason="x"))
    assert not outcome.accepted
    assert "routine_id" in str(outcome.detail)


def test_a_routine_every_30_minutes_runs_on_the_ticks(loopline):
    first = loopline.tick(T0 + timedelta(minutes=30))
    second = loopline.tick(T0 + timedelta(minutes=61))
    assert any("routine ci-check: run 1 success" in action for action in first)
    assert any("routine ci-check: run 2 success" in action for action in second)
    assert loopline.task(GYM, "ci").workflows == {"ci-check": 2}
    assert told(loopline) == [True, False]
    assert notices(loopline) == ["routine_result"]
    audit = [DESCRIPTIONS[type(e)](e)[0] for e in loopline.events() if isinstance(e, (Routine.Created, RoutineEvent))]
    assert audit == ["routine ci-check: scheduled call_webhook for task ci; the first run 4 May 2026 09:30 UTC",
                     "routine run success; the owner is told; the next 4 May 2026 10:00 UTC",
                     "routine run success; the next 4 May 2026 10:31 UTC"]


def notices(loopline: InMemoryLoopline) -> list[str]:
    return [event.kind for event in loopline.events()
            if type(event).__name__ == "UserNotified" and event.kind.startswith("routine_")]


def test_an_event_routine_runs_at_the_tick_after_a_matching_signal(loopline):
    loopline.publish(command("e", "routine.create", format_time(T0), GYM, routine_id="on-push", action="call_webhook",
                             params={"event": "ci.check"}, kind="event", task_id="ci", signal_pattern="github.*"))
    loopline.publish(signal("s1", "linear.event", format_time(T0 + timedelta(minutes=5)), GYM, event_type="issue_status_changed",
                            issue_id="L-1", status="done"))
    assert not any("on-push" in action for action in loopline.tick(T0 + timedelta(minutes=10)))
    loopline.publish(signal("s2", "github.event", format_time(T0 + timedelta(minutes=11)), GYM, event_type="pull_request_merged",
                            repo="gym/app", resource_id="42"))
    assert any("routine on-push: run 1 success" in action for action in loopline.tick(T0 + timedelta(minutes=12)))


def test_a_tenant_routines_changes_and_pause_reach_the_owner_through_the_hold():
    running = InMemoryLoopline()
    running.publish(signal("seen", "user.seen", format_time(T0), GYM))
    running.publish(command("r", "routine.create", format_time(T0), GYM, routine_id="ci-check", action="call_webhook",
                            params={"event": "ci.check"}, kind="scheduled", interval_minutes=30))
    report(running, 30, "success", "212 green")
    report(running, 60, "success", "212 green")
    report(running, 90, "failure", "CI unreachable")
    report(running, 120, "failure", "CI unreachable")
    sent = [e.text for e in running.events() if isinstance(e, NotificationHold.Sent)]
    assert sent == ["routine ci-check success: 212 green", "routine ci-check paused after two failed runs in a row "
                    "(CI unreachable); resume it with routine.resume"]
