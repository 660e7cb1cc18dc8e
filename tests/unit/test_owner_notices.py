"""Owner notices on the in-memory store: emitted by the step that causes them, with the contact's words, the
agent's draft and the commands, and withdrawn at delivery when the owner's action made them moot."""

from __future__ import annotations

import json
from datetime import datetime, timezone

from loopline.adapters.embedded_log import EmbeddedLog
from loopline.adapters.messages import parse_message
from loopline.domain import ids
from loopline.domain.notices import actions_for, render
from loopline.domain.task import Task
from loopline.processors.application import Loopline, UnitOfWork
from loopline.processors.followers.agent import Agent
from loopline.processors.followers.delivery import Delivery, is_owner_email
from loopline.processors.followers.router import Router
from loopline.processors.followers.scheduler import Scheduler
from loopline.processors.handlers.table import build_bus
from tests.conftest import command, signal
from tests.unit.fakes import FakeChannel, FakeClock, FakeLedger, RecordingDrafter, ScriptedModel

TENANT = "user_xyz"
ANN = "ann@example.com"
ANGRY = "I cancelled in March and you still charged me twice! Sort this out."


def _app() -> Loopline:
    return Loopline(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})


def _publish(app: Loopline, *messages: dict) -> None:
    EmbeddedLog(app).append([parse_message(json.dumps(m)) for m in messages], "test")
    assert all(outcome.accepted for outcome in Router(build_bus(app, RecordingDrafter())).run_once())


def _notices(app: Loopline, ref: str) -> list[Task.UserNotified]:
    task = UnitOfWork(app).get(ids.task_id(TENANT, ref), Task)
    assert task is not None
    return [event for event in app.events.get(task.id) if isinstance(event, Task.UserNotified)]


def _configure(mode: str = "limited_auto") -> dict:
    return command("g1", "tenant.configure", "2026-04-06T08:00:00Z", name="Iron Temple",
                   owner_email="sam@irontemple.example", execution_mode=mode)


def _win_back(confidence: float, **fields: object) -> dict:
    return command("c1", "task.create", "2026-04-06T09:00:00Z", task_id="ann", title="Win Ann back",
                   task_type="win_back", contact=ANN, to_name="Ann", confidence=confidence, **fields)


def test_a_task_created_in_review_tells_the_owner_at_once_with_its_draft_and_the_commands() -> None:
    app = _app()
    _publish(app, _configure(), _win_back(0.3, draft={"subject": "We miss you", "body": "Hi Ann, come back?"}))

    [notice] = _notices(app, "ann")
    assert notice.kind == "review" and notice.message.startswith("'Win Ann back' waits for your review: confidence 0.3")
    assert notice.draft == {"subject": "We miss you", "body": "Hi Ann, come back?"}
    assert [action["command"] for action in notice.actions] == ["task.approve", "task.reject"]
    assert notice.actions[0]["data"] == {"task_id": "ann"}


def test_an_angry_reply_escalates_and_tells_the_owner_in_the_same_step_with_her_words_and_the_held_back_draft() -> None:
    app, model = _app(), ScriptedModel(evaluation={"decision": "reply", "reply_body": "Sorry Ann, we'll refund you.",
                                                   "confidence": 0.3, "reasoning": "she is angry"})
    _publish(app, _configure(), _win_back(0.9))
    bus = build_bus(app, RecordingDrafter())
    Scheduler(bus).tick(datetime(2026, 4, 6, 9, 5, tzinfo=timezone.utc))
    agent = Agent(bus, model)
    agent.run_once()  # touch 1 is drafted and sent
    _publish(app, signal("r1", "email.received", "2026-04-07T18:10:00Z", sender=ANN, body=ANGRY))
    agent.run_once()  # the reply is evaluated: a draft below 0.5 goes to the owner

    [notice] = _notices(app, "ann")
    assert notice.kind == "escalation" and notice.message.startswith("'Win Ann back' needs your decision: the reply")
    assert notice.quote == ANGRY
    assert notice.draft == {"body": "Sorry Ann, we'll refund you."}
    assert [action["command"] for action in notice.actions] == [  # first: send the draft held back, or edit it
        "task.approve", "task.guidance", "task.reply", "task.takeover", "task.cancel"]
    assert notice.timestamp == datetime(2026, 4, 7, 18, 10, tzinfo=timezone.utc)  # the reply's step, not a later run


def test_a_notice_the_owner_made_moot_is_withdrawn_on_every_channel_and_never_delivered() -> None:
    app = _app()
    _publish(app, _configure(), _win_back(0.3),
             command("c2", "task.approve", "2026-04-06T09:30:00Z", task_id="ann"))
    jsonl, smtp, ledger = FakeChannel("jsonl"), FakeChannel("smtp", accepts=is_owner_email), FakeLedger()

    Delivery(app, ledger, [jsonl, smtp], clock=FakeClock()).run_once()

    assert [m["kind"] for _, m in jsonl.sent if m["to"] == "user"] == [] and smtp.sent == []
    withdrawn = {channel: row["error"] for (_, channel), row in ledger.rows.items() if row["status"] == "withdrawn"}
    assert withdrawn == {"jsonl": "withdrawn: the task had Reviewed after this notice",
                         "smtp": "withdrawn: the task had Reviewed after this notice"}


def test_a_notice_that_still_stands_goes_to_the_owner_s_email_with_the_task_s_title() -> None:
    app = _app()
    _publish(app, _configure(), _win_back(0.3))
    smtp = FakeChannel("smtp", accepts=is_owner_email)

    Delivery(app, FakeLedger(), [smtp], clock=FakeClock()).run_once()

    [(_, message)] = smtp.sent
    assert (message["owner_email"], message["title"], message["kind"]) == ("sam@irontemple.example", "Win Ann back",
                                                                            "review")


def test_a_notice_reads_as_what_happened_the_contact_s_words_the_draft_and_the_commands() -> None:
    text = render(title="Win Ann back", message="'Win Ann back' needs your decision: she is angry", quote=ANGRY,
                  draft={"subject": "Sorry", "body": "We'll refund you."},
                  actions=[{"command": "task.guidance", "data": {"task_id": "ann"}, "does": "tell the agent"}])

    assert text == (
        "'Win Ann back' needs your decision: she is angry\n\n"
        f"They wrote:\n> {ANGRY}\n\n"
        "The agent's draft:\nSubject: Sorry\nWe'll refund you.\n\n"
        'What you can do (publish one of these commands):\n  task.guidance {"task_id": "ann"}: tell the agent\n\n'
        "(Task: Win Ann back)\n"
    )


def test_a_stall_notice_is_emitted_by_the_check_and_never_delivered_after_the_owner_acted() -> None:
    app = _app()
    _publish(app, command("c1", "task.create", "2026-04-06T09:00:00Z", task_id="t1", title="Sign the lease"))
    Scheduler(build_bus(app, RecordingDrafter())).tick(datetime(2026, 4, 9, 9, 0, tzinfo=timezone.utc))
    [stalled] = _notices(app, "t1")
    assert stalled.kind == "stalled" and stalled.timestamp == datetime(2026, 4, 9, 9, 0, tzinfo=timezone.utc)

    _publish(app, command("c2", "task.complete", "2026-04-09T10:00:00Z", task_id="t1", summary="signed at the desk"))
    jsonl = FakeChannel("jsonl")
    Delivery(app, FakeLedger(), [jsonl], clock=FakeClock()).run_once()

    assert [m["kind"] for _, m in jsonl.sent if m["to"] == "user"] == ["task_completed"]


def test_an_escalation_offers_task_reply_only_where_loopline_writes_to_the_contact() -> None:
    acting = [action["command"] for action in actions_for("escalation", "ann", acting=True)]
    following = [action["command"] for action in actions_for("escalation", "nda", acting=False)]

    assert acting == ["task.guidance", "task.reply", "task.takeover", "task.cancel"]
    assert following == ["task.guidance", "task.takeover", "task.cancel"]
