"""A tenant's routines on the in-memory store: dispatched on the ticks to an external runner whose missing reports
fail and pause them, adopted by a task that runs them itself, reported through `workflow.output`, within limits."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from loopline.adapters.messages import InvalidMessage
from loopline.domain import ids
from loopline.domain.routine import Routine
from loopline.domain.safety_limits import ROUTINES_PER_TENANT
from loopline.domain.timeutil import format_time
from loopline.processors.application import UnitOfWork
from tests.conftest import command
from tests.unit.in_memory import InMemoryLoopline
from tests.unit.test_routine_commands import GYM, T0


@pytest.fixture
def loopline() -> Iterator[InMemoryLoopline]:
    running = InMemoryLoopline()
    running.publish(command("t", "task.create", format_time(T0), GYM, task_id="ci", title="Keep CI green"))
    running.publish(command("r", "routine.create", format_time(T0), GYM, routine_id="digest", action="call_webhook",
                            params={"event": "digest"}, kind="scheduled", interval_minutes=30))
    yield running
    running.close()


def publish(loopline: InMemoryLoopline, type_: str, minutes: int, **data: Any) -> tuple[bool, str]:
    at = format_time(T0 + timedelta(minutes=minutes))
    [outcome] = loopline.publish(command(f"m{type_}{minutes}{data.get('routine_id')}", type_, at, GYM, **data))
    return outcome.accepted, str(outcome.detail)


def routine(loopline: InMemoryLoopline, ref: str = "digest") -> Routine:
    found = UnitOfWork(loopline.app).get(ids.routine_id(GYM, ref), Routine)
    assert found is not None
    return found


def test_a_tenant_routine_nobody_runs_fails_at_its_timeout_and_pauses_after_two(loopline):
    assert any("digest: run 1 due for its runner" in a for a in loopline.tick(T0 + timedelta(minutes=30)))
    assert any("digest: run 1 failure" in a for a in loopline.tick(T0 + timedelta(minutes=35)))
    loopline.tick(T0 + timedelta(minutes=40))  # the retry, dispatched
    assert any("digest: run 2 failure, paused" in a for a in loopline.tick(T0 + timedelta(minutes=45)))
    assert routine(loopline).status == "paused"
    assert "no runner reported the run within 300 s" in routine(loopline).history[-1]["error"]


def test_a_tenant_routine_reported_in_time_runs_every_30_minutes(loopline):
    loopline.tick(T0 + timedelta(minutes=30))
    assert publish(loopline, "routine.report", 32, routine_id="digest", duration_seconds=60, outcome="success",
                   output="3 new members")[0]
    assert not any("digest" in a for a in loopline.tick(T0 + timedelta(minutes=40)))
    assert routine(loopline).next_run_at == T0 + timedelta(minutes=62)
    assert routine(loopline).consecutive_failures == 0


def test_an_adopted_routine_runs_through_its_task_and_stops_with_it(loopline):
    loopline.tick(T0 + timedelta(minutes=30))
    accepted, detail = publish(loopline, "routine.adopt", 31, routine_id="digest", task_id="ci")
    assert accepted, detail
    assert any("digest: run 1 success" in a for a in loopline.tick(T0 + timedelta(minutes=32)))
    assert loopline.task(GYM, "ci").workflows == {"digest": 1}
    accepted, detail = publish(loopline, "routine.adopt", 33, routine_id="digest", task_id="ci")
    assert not accepted and "owned by task 'ci'" in detail
    publish(loopline, "task.complete", 34, task_id="ci", summary="done")
    assert routine(loopline).status == "disabled"


def test_workflow_output_naming_a_routine_is_its_run_and_the_task_must_own_it(loopline):
    accepted, detail = publish(loopline, "workflow.output", 5, task_id="ci", workflow="digest", output={"new": 3},
                               routine_id="digest")
    assert not accepted and detail.startswith("routine_id:") and "routine.adopt" in detail
    publish(loopline, "routine.adopt", 6, routine_id="digest", task_id="ci")
    accepted, detail = publish(loopline, "workflow.output", 7, task_id="ci", workflow="digest", output={"new": 3},
                               routine_id="digest")
    assert accepted and "run 1 success" in detail and "stored for ci" in detail
    assert routine(loopline).last_run_notifies
    publish(loopline, "workflow.output", 8, task_id="ci", workflow="digest", output={"new": 3}, routine_id="digest")
    assert not routine(loopline).last_run_notifies  # the same result: on_change stays quiet
    assert loopline.task(GYM, "ci").workflows == {"digest": 2}


def test_a_routine_more_often_than_the_minimum_interval_is_refused_naming_the_field(loopline):
    with pytest.raises(InvalidMessage, match="data.interval_minutes: Input should be greater than or equal to 5"):
        publish(loopline, "routine.create", 1, routine_id="fast", action="call_webhook", params={"event": "x"},
                kind="scheduled", interval_minutes=1)


def test_a_tenant_at_its_routine_limit_must_disable_one_first(loopline):
    for n in range(1, ROUTINES_PER_TENANT):
        assert publish(loopline, "routine.create", 1, routine_id=f"r{n}", action="call_webhook",
                       params={"event": "x"}, kind="event", signal_pattern="x.*")[0]
    accepted, detail = publish(loopline, "routine.create", 2, routine_id="one-more", action="call_webhook",
                               params={"event": "x"}, kind="event", signal_pattern="x.*")
    assert not accepted and "routines_per_tenant" in detail
    publish(loopline, "routine.disable", 3, routine_id="r1", reason="not needed")
    assert publish(loopline, "routine.create", 4, routine_id="one-more", action="call_webhook",
                   params={"event": "x"}, kind="event", signal_pattern="x.*")[0]
