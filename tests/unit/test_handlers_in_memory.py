"""Command handlers, matching and the tick on eventsourcing's in-memory persistence, with fake ports."""

from __future__ import annotations

import json
from datetime import datetime, timezone

from loopline.adapters.embedded_log import EmbeddedLog
from loopline.adapters.messages import parse_message
from loopline.domain import ids
from loopline.domain.task import Task
from loopline.processors.followers.agent import Agent
from loopline.processors.application import Loopline, UnitOfWork
from loopline.processors.handlers.table import build_bus
from loopline.processors.followers.router import Router
from loopline.processors.followers.scheduler import Scheduler
from tests.conftest import command, signal
from tests.unit.fakes import RecordingDrafter, ScriptedModel

TENANT = "user_xyz"


def _app() -> Loopline:
    return Loopline(env={"PERSISTENCE_MODULE": "eventsourcing.popo", "IS_SNAPSHOTTING_ENABLED": "y"})


def _publish(app: Loopline, *messages: dict) -> list:
    EmbeddedLog(app).append([parse_message(json.dumps(m)) for m in messages], "test")
    return Router(build_bus(app, RecordingDrafter())).run_once()


def _task(app: Loopline, ref: str) -> Task:
    task = UnitOfWork(app).get(ids.task_id(TENANT, ref), Task)
    assert task is not None
    return task


def test_unanswered_email_gets_one_followup_drafted_through_the_model_port() -> None:
    app, model = _app(), ScriptedModel()
    _publish(
        app,
        command("c1", "task.create", "2026-03-13T10:00:00Z", task_id="t1", title="Meet Rahul"),
        command("c2", "action.record", "2026-03-13T10:00:00Z", task_id="t1", action="send_email",
                to="rahul@company.com", to_name="Rahul", subject="Meeting next week?"),
    )
    bus = build_bus(app, RecordingDrafter())
    scheduler, agent = Scheduler(bus), Agent(bus, model)
    later = datetime(2026, 3, 16, 10, 0, 1, tzinfo=timezone.utc)
    first = scheduler.tick(later)
    agent.run_once()
    second = scheduler.tick(later)
    agent.run_once()

    assert [(r.purpose, r.contact, r.contact_name) for r in model.requests] == [("followup", "rahul@company.com", "Rahul")]
    assert any("drafting a follow-up to rahul@company.com" in action for action in first.actions)
    assert not any("follow-up" in action for action in second.actions)
    task = _task(app, "t1")
    assert task.actions_count == 2  # the agent's email and Loopline's follow-up
    assert task.open_loops == ["t1/send_email/1/followup"]  # waiting for a reply to the follow-up


def test_reply_resolves_the_loop_and_wakes_the_task() -> None:
    app = _app()
    outcomes = _publish(
        app,
        command("c1", "task.create", "2026-03-13T10:00:00Z", task_id="t1", title="Meet Rahul"),
        command("c2", "action.record", "2026-03-13T10:00:00Z", task_id="t1", action="send_email", to="rahul@company.com"),
        signal("s1", "email.received", "2026-03-14T09:00:00Z", sender="Rahul@Company.com"),
    )
    assert all(outcome.accepted for outcome in outcomes)
    task = _task(app, "t1")
    assert task.open_loops == [] and task.inbox_count == 1 and task.status == "executing"


def test_a_reply_from_another_spelling_of_the_mailbox_resolves_the_loop() -> None:
    app = _app()
    _publish(
        app,
        command("c1", "task.create", "2026-03-13T10:00:00Z", task_id="t1", title="Meet Rahul"),
        command("c2", "action.record", "2026-03-13T10:00:00Z", task_id="t1", action="send_email", to="rahul@company.com"),
        signal("s1", "email.received", "2026-03-14T09:00:00Z", sender='"Rahul K." <RAHUL@Company.com.> (work)'),
    )
    task = _task(app, "t1")
    assert task.open_loops == [] and task.inbox_count == 1


def test_command_for_unknown_task_is_refused_and_the_batch_goes_on() -> None:
    app = _app()
    outcomes = _publish(
        app,
        command("c1", "task.complete", "2026-03-13T10:00:00Z", task_id="nope", summary="done"),
        command("c2", "task.create", "2026-03-13T10:00:00Z", task_id="t1", title="Meet Rahul"),
    )
    assert [outcome.accepted for outcome in outcomes] == [False, True]
    assert "has no task 'nope'" in outcomes[0].detail
    assert _task(app, "t1").title == "Meet Rahul"


def test_a_task_given_a_wake_up_or_a_loop_waits_and_is_executing_again_when_it_fires() -> None:
    app = _app()
    _publish(
        app,
        command("c1", "task.create", "2026-03-13T10:00:00Z", task_id="t1", title="Check the invoice"),
        command("c2", "task.create", "2026-03-13T10:00:00Z", task_id="t2", title="Get the contract signed"),
        {**command("c3", "task.wake", "2026-03-13T10:00:00Z"), "data": {"task_id": "t1", "at": "2026-03-14T09:00:00Z"}},
        command("c4", "loop.register", "2026-03-13T10:00:00Z", task_id="t2", loop_id="signed", channel="webhook",
                watch={"source": "docusign", "trigger_name": "signed", "match_fields": {"doc": "d1"}},
                deadline="2026-03-20T10:00:00Z", if_unresolved="notify_user"),
    )
    assert (_task(app, "t1").status, _task(app, "t2").status) == ("waiting", "waiting")

    _publish(app, command("c5", "loop.resolve", "2026-03-13T11:00:00Z", loop_id="signed", reason="signed on paper"))
    Scheduler(build_bus(app, RecordingDrafter())).tick(datetime(2026, 3, 14, 9, 0, 1, tzinfo=timezone.utc))
    assert (_task(app, "t1").status, _task(app, "t2").status) == ("executing", "executing")
