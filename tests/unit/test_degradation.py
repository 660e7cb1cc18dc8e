"""Graceful degradation (seed 002 §34; issue 19 item 7): a model that fails again and again puts the tenant in
degraded mode: nothing is guessed or sent without a decision, no task is dropped or handed to the owner for it,
each waits and is asked again at the tick's pace, and the first answer ends the mode by itself."""

from __future__ import annotations

from datetime import timedelta

from loopline.domain.task import Task
from loopline.domain.timeutil import format_time, parse_time
from loopline.domain.safety_limits import UPSTREAM_FAILURES
from loopline.domain.upstream_health import UpstreamHealth
from tests.conftest import command
from tests.unit.fakes import ScriptedModel
from tests.unit.in_memory import InMemoryLoopline

GYM = "gym"
T0 = parse_time("2026-03-02T09:00:00Z")
MEMBERS = ("ann", "ben", "cat", "dan", "eve", "fay")


def notices(loopline: InMemoryLoopline, kind: str) -> list[str]:
    return [e.message for e in loopline.events() if isinstance(e, Task.UserNotified) and e.kind == kind]


def test_a_model_down_for_hours_degrades_the_tenant_and_its_return_sends_everything_that_waited() -> None:
    loopline = InMemoryLoopline(ScriptedModel(down=True))
    loopline.publish(command("cfg", "tenant.configure", format_time(T0), GYM, execution_mode="limited_auto"))
    loopline.publish(*[command(f"c-{name}", "task.create", format_time(T0), GYM, task_id=name, title=f"Win back {name}",
                               task_type="churn_risk", contact=f"{name}@example.com", confidence=0.95)
                       for name in MEMBERS])
    now = T0
    for _ in range(12):  # six hours, past every retry the tasks would get before the owner decided
        now += timedelta(minutes=30)
        loopline.tick(now)

    [degraded] = notices(loopline, "model_degraded")
    assert f"failed {UPSTREAM_FAILURES} times in a row" in degraded
    assert notices(loopline, "escalation") == [] and loopline.emails() == []
    assert all(loopline.task(GYM, name).pending_decisions for name in MEMBERS)
    degrading = [e.failures for e in loopline.events() if isinstance(e, UpstreamHealth.Failed) and e.degraded]
    assert degrading[0] == UPSTREAM_FAILURES

    loopline.model.down = False
    loopline.tick(now + timedelta(hours=1))

    assert len(notices(loopline, "model_recovered")) == 1
    assert sorted(message["to"] for _, message in loopline.emails()) == [f"{name}@example.com" for name in MEMBERS]
    loopline.close()


def test_a_model_that_fails_a_few_times_then_answers_degrades_nothing() -> None:
    loopline = InMemoryLoopline(ScriptedModel(down=True))
    loopline.publish(command("cfg", "tenant.configure", format_time(T0), GYM, execution_mode="limited_auto"),
                     command("c", "task.create", format_time(T0), GYM, task_id="ann", title="Win back Ann",
                             task_type="churn_risk", contact="ann@example.com", confidence=0.95))
    loopline.tick(T0 + timedelta(minutes=1))
    loopline.model.down = False
    loopline.tick(T0 + timedelta(minutes=10))

    assert [message["to"] for _, message in loopline.emails()] == ["ann@example.com"]
    assert notices(loopline, "model_degraded") == [] and notices(loopline, "model_recovered") == []
    assert [type(e).__name__ for e in loopline.events() if isinstance(e, UpstreamHealth.Event)] == [
        "Opened", "Failed", "Recovered"]
    loopline.close()
