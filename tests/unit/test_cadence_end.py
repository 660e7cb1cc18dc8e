"""How an unanswered task ends (README "Cadences"): a dormant cadence goes dormant on its budget's last day
and closes as unresponsive at the end of its dormant window; on the in-memory store with a scripted model."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from loopline.domain.task import Task
from loopline.domain.timeutil import format_time
from loopline.processors.followers.agent import Agent
from loopline.processors.followers.scheduler import Scheduler
from loopline.processors.handlers.table import build_bus
from tests.conftest import command, signal
from tests.unit.fakes import RecordingDrafter, ScriptedModel
from tests.unit.test_handlers_in_memory import _app, _publish, _task

DAY0 = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
CREATE = command("c1", "task.create", format_time(DAY0), task_id="back", title="Win Sam back", task_type="win_back",
                 contact="sam@example.com", to_name="Sam", confidence=0.9)


def test_win_back_with_no_reply_sends_three_touches_goes_dormant_on_day_30_and_closes_unresponsive_on_day_120() -> None:
    app = _app()
    _publish(
        app,
        command("cfg", "tenant.configure", format_time(DAY0), execution_mode="limited_auto"),
        CREATE,
    )
    bus = build_bus(app, RecordingDrafter())
    scheduler, agent = Scheduler(bus), Agent(bus, ScriptedModel())
    statuses: dict[int, str] = {}
    for day in (0, 3, 13, 29, 30, 119, 120):
        scheduler.tick(DAY0 + timedelta(days=day, hours=1))
        agent.run_once()
        statuses[day] = _task(app, "back").status

    events = list(app.events.get(_task(app, "back").id))
    assert [(e.timestamp - DAY0).days for e in events if isinstance(e, Task.TouchSent)] == [0, 3, 13]
    assert (statuses[29], statuses[30], statuses[119], statuses[120]) == ("waiting", "dormant", "dormant", "cancelled")
    [dormant] = [e for e in events if isinstance(e, Task.WentDormant)]
    assert "time budget ran out" in dormant.reason and dormant.until == dormant.timestamp + timedelta(days=90)
    closed = _task(app, "back")
    assert (closed.outcome, closed.messages_used) == ("unresponsive", 3)


def test_a_reply_on_day_45_wakes_the_dormant_win_back_and_closes_it_with_the_outcome_it_reached() -> None:
    app = _app()
    _publish(app, command("cfg", "tenant.configure", format_time(DAY0), execution_mode="limited_auto"), CREATE)
    bus = build_bus(app, RecordingDrafter())
    scheduler = Scheduler(bus)
    agent = Agent(bus, ScriptedModel(evaluation={"decision": "close", "outcome": "interested", "confidence": 0.9,
                                                 "reasoning": "back from travelling and wants to rejoin"}))
    for day in (0, 3, 13, 30):
        scheduler.tick(DAY0 + timedelta(days=day, hours=1))
        agent.run_once()
    assert _task(app, "back").status == "dormant"

    _publish(app, signal("s1", "email.received", format_time(DAY0 + timedelta(days=45)), sender="sam@example.com",
                         subject="Re: hi", body="Sorry, I was travelling. I'm back and want to rejoin."))
    agent.run_once()
    back = _task(app, "back")
    assert (back.status, back.outcome, back.turns_used) == ("completed", "interested", 1)
