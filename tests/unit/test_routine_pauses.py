"""Pauses hold routines and actions on the in-memory store: a task's routine and a tenant's routine run nothing while
the system, the tenant or the owning task is paused, a runner's report falling due meanwhile is not a failure, and
the resume runs them again; a webhook call asked for while paused waits for the resume."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from loopline.domain.pause import SystemSwitch
from loopline.domain.routine import Routine
from loopline.domain.task import Task
from loopline.domain.tenant import Tenant
from loopline.domain.timeutil import format_time
from loopline.projections.timeline import DESCRIPTIONS
from tests.conftest import command
from tests.unit.in_memory import InMemoryLoopline
from tests.unit.test_routine_commands import GYM, T0, notices

PAUSES = {"system": ("system.pause", "system.resume", {}), "tenant": ("tenant.pause", "tenant.resume", {}),
          "task": ("task.pause", "task.resume", {"task_id": "ci"})}


@pytest.fixture
def loopline() -> Iterator[InMemoryLoopline]:
    running = InMemoryLoopline()
    publish(running, "tenant.configure", 0, execution_mode="limited_auto")
    publish(running, "task.create", 0, task_id="ci", title="Keep CI green")
    publish(running, "routine.create", 0, routine_id="ci-check", action="call_webhook", params={"event": "ci.check"},
            kind="scheduled", task_id="ci", interval_minutes=30)
    publish(running, "routine.create", 0, routine_id="digest", action="call_webhook", params={"event": "digest"},
            kind="scheduled", interval_minutes=30)
    yield running
    running.close()


def publish(loopline: InMemoryLoopline, type_: str, minutes: int, **data: Any) -> str:
    at = format_time(T0 + timedelta(minutes=minutes))
    [outcome] = loopline.publish(command(f"m{type_}{minutes}{data.get('routine_id')}", type_, at, GYM, **data))
    assert outcome.accepted, outcome.detail
    return str(outcome.detail)


def tick(loopline: InMemoryLoopline, minutes: int) -> list[str]:
    return loopline.tick(T0 + timedelta(minutes=minutes))


def webhook_calls(loopline: InMemoryLoopline) -> list[str]:
    return [event.details["event"] for event in loopline.events()
            if isinstance(event, Task.ActionRecorded) and event.action == "call_webhook"]


def runs(loopline: InMemoryLoopline, ref: str) -> list[str]:
    return [event.outcome for event in loopline.events()
            if isinstance(event, Routine.RunRecorded) and event.routine_ref == ref]


@pytest.mark.parametrize("whose", ["system", "tenant", "task"])
def test_a_task_routine_runs_nothing_while_paused_and_runs_again_at_resume(loopline, whose):
    pause, resume, data = PAUSES[whose]
    publish(loopline, pause, 10, reason="new CI vendor", **data)
    held = tick(loopline, 30) + tick(loopline, 60)
    assert webhook_calls(loopline) == [] and runs(loopline, "ci-check") == [] and notices(loopline) == []
    assert any("routine ci-check: held" in said for said in held)
    publish(loopline, resume, 70, reason="vendor live", **data)
    tick(loopline, 70)
    assert webhook_calls(loopline).count("ci.check") == 1
    assert runs(loopline, "ci-check") == ["success"]


@pytest.mark.parametrize("whose", ["system", "tenant"])
def test_a_tenant_routine_is_not_dispatched_while_paused_and_is_at_resume(loopline, whose):
    pause, resume, data = PAUSES[whose]
    publish(loopline, pause, 10, reason="new CI vendor", **data)
    held = tick(loopline, 30) + tick(loopline, 60)
    assert not any(isinstance(event, Routine.Dispatched) for event in loopline.events())
    assert any("routine digest: held" in said for said in held)
    [work] = [event for event in loopline.events() if isinstance(event, (Tenant.WorkHeld, SystemSwitch.WorkHeld))
              and event.work["task_ref"] is None]
    assert DESCRIPTIONS[type(work)](work)[0].endswith("paused: the run of routine digest")
    publish(loopline, resume, 70, reason="vendor live", **data)
    assert any("digest: run 1 due for its runner" in said for said in tick(loopline, 70))


def test_a_task_pause_does_not_hold_the_tenants_own_routine(loopline):
    publish(loopline, "task.pause", 10, reason="new CI vendor", task_id="ci")
    assert any("digest: run 1 due for its runner" in said for said in tick(loopline, 30))


@pytest.mark.parametrize("whose", ["system", "tenant"])
def test_a_report_falling_due_while_paused_is_no_failure_and_the_run_is_dispatched_again(loopline, whose):
    pause, resume, data = PAUSES[whose]
    tick(loopline, 30)  # dispatched: the runner reports by 09:35
    publish(loopline, pause, 31, reason="new CI vendor", **data)
    tick(loopline, 35)
    tick(loopline, 45)
    assert runs(loopline, "digest") == []
    [held] = [event for event in loopline.events() if isinstance(event, Routine.RunHeld)]
    assert DESCRIPTIONS[Routine.RunHeld](held)[0].startswith("routine run held")
    publish(loopline, resume, 50, reason="vendor live", **data)
    assert any("digest: run 1 due for its runner" in said for said in tick(loopline, 50))
    assert any("digest: run 1 failure" in said for said in tick(loopline, 55))  # its runner still has to report


@pytest.mark.parametrize("whose", ["system", "tenant", "task"])
def test_a_webhook_call_asked_for_while_paused_waits_for_the_resume(loopline, whose):
    pause, resume, data = PAUSES[whose]
    publish(loopline, pause, 10, reason="new CI vendor", **data)
    said = publish(loopline, "action.request", 11, task_id="ci", action="call_webhook", params={"event": "deploy"},
                   key="deploy-1")
    assert "waits for the pause to end" in said and webhook_calls(loopline) == []
    publish(loopline, resume, 20, reason="vendor live", **data)
    tick(loopline, 20)
    assert webhook_calls(loopline) == ["deploy"]
