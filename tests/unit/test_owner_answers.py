"""The owner answers (issue 18, item 3) on the in-memory store: an approved or edited draft, the owner's own
words through the same send checks, a takeover, and the next step a conversion names."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from loopline.adapters.embedded_log import EmbeddedLog
from loopline.adapters.messages import parse_message
from loopline.domain import ids
from loopline.domain.conversation import conversation_of
from loopline.domain.task import Task
from loopline.domain.timeutil import format_time
from loopline.processors.application import Loopline, UnitOfWork
from loopline.processors.bus import Outcome
from loopline.processors.followers.agent import Agent
from loopline.processors.followers.router import Router
from loopline.processors.followers.scheduler import Scheduler
from loopline.processors.handlers.table import build_bus
from tests.conftest import command, signal
from tests.unit.fakes import RecordingDrafter, ScriptedModel

GYM = "gym"
ANN = "ann@example.com"
DAY0 = datetime(2026, 5, 4, 9, 0, tzinfo=timezone.utc)
UNSURE_REPLY = {"decision": "reply", "reply_body": "Maybe the discount, I'll ask.", "confidence": 0.3, "reasoning": "unsure"}
ASKS_OWNER = {"decision": "escalate", "confidence": 0.85, "reasoning": "she asks about the discount"}


def at(days: float) -> str:
    return format_time(DAY0 + timedelta(days=days))


@dataclass
class Gym:
    """One tenant on eventsourcing's in-memory store, with the scheduler and the agent on a scripted model."""

    model: ScriptedModel = field(default_factory=ScriptedModel)
    app: Loopline = field(default_factory=lambda: Loopline(env={"PERSISTENCE_MODULE": "eventsourcing.popo"}))
    count: int = 0

    def publish(self, kind: str, type_: str, days: float, **data: Any) -> Outcome[Any]:
        self.count += 1
        make = command if kind == "command" else signal
        message = make(f"m{self.count}", type_, at(days), GYM, **data)
        EmbeddedLog(self.app).append([parse_message(json.dumps(message))], "test")
        [outcome] = Router(build_bus(self.app, RecordingDrafter())).run_once()
        self.agent()
        return outcome

    def command(self, type_: str, days: float, **data: Any) -> Outcome[Any]:
        return self.publish("command", type_, days, **data)

    def reply(self, days: float, body: str) -> None:
        assert self.publish("signal", "email.received", days, sender=ANN, subject="Re: Checking in", body=body).accepted

    def tick(self, days: float) -> None:
        Scheduler(build_bus(self.app, RecordingDrafter())).tick(DAY0 + timedelta(days=days))
        self.agent()

    def agent(self) -> None:
        Agent(build_bus(self.app, RecordingDrafter()), self.model).run_once()

    def task(self, ref: str = "ann") -> Task:
        task = UnitOfWork(self.app).get(ids.task_id(GYM, ref), Task)
        assert task is not None
        return task

    def events(self, ref: str = "ann") -> list[Any]:
        return list(self.app.events.get(ids.task_id(GYM, ref)))

    def sent(self, ref: str = "ann") -> list[Task.ActionRecorded]:
        """What went to the contact (delivery sends these), oldest first."""
        return [e for e in self.events(ref) if isinstance(e, Task.ActionRecorded) and e.sent_by_loopline]


def gym(confidence: float = 0.9, task_type: str = "churn_risk", **settings: Any) -> Gym:
    world = Gym()
    assert world.command("tenant.configure", 0, execution_mode="limited_auto", **settings).accepted
    assert world.command("task.create", 0, task_id="ann", title="Bring Ann back", task_type=task_type, contact=ANN,
                         to_name="Ann", confidence=confidence).accepted
    return world


def escalated_after_her_reply(evaluation: dict[str, Any], **settings: Any) -> Gym:
    world = gym(**settings)
    world.tick(0.01)  # touch 1
    world.model.evaluation = evaluation
    world.reply(1, "I'd love to come back... is the discount still on?")
    assert world.task().status == "escalated"
    return world


def test_an_approved_proposal_sends_the_owners_edited_draft_as_its_first_touch() -> None:
    world = gym(confidence=0.5)  # below churn_risk's 0.75: pending_review
    outcome = world.command("task.approve", 0.1, task_id="ann",
                            draft={"subject": "Saturday 9am?", "body": "Hi Ann, your spot on Saturday is saved. Sam"})
    assert outcome.accepted and "your draft is its first message" in outcome.detail
    world.tick(0.11)

    [first] = world.sent()
    assert (first.details["subject"], first.details["body"]) == ("Saturday 9am?", "Hi Ann, your spot on Saturday is saved. Sam")
    assert (first.performed_by, first.details["touch"]) == ("owner", 1)
    assert world.model.requests == []  # the agent wrote nothing
    assert world.task().status == "waiting" and world.task().touch == 1


def test_an_approved_proposal_without_a_draft_is_worked_as_before() -> None:
    world = gym(confidence=0.5)
    assert world.command("task.approve", 0.1, task_id="ann").detail == "approved ann"
    world.tick(0.11)
    [first] = world.sent()
    assert first.performed_by == "loopline" and first.details["subject"] == "Touch 1"


def test_approving_an_escalation_sends_the_held_back_draft_to_the_contact_at_once() -> None:
    world = escalated_after_her_reply(UNSURE_REPLY)
    assert world.task().held_draft["body"] == "Maybe the discount, I'll ask."

    assert world.command("task.approve", 1.1, task_id="ann").accepted
    touch, answer = world.sent()
    assert answer.details["body"] == "Maybe the discount, I'll ask." and answer.performed_by == "loopline"
    assert answer.details["decided_by"] == "fake scripted-v1, approved by the owner"
    task = world.task()
    assert (task.status, task.held_draft, task.escalation_reason, task.touch) == ("waiting", None, None, 1)
    assert [ref for ref in task.open_loops if "/reply/" in ref]  # the reply loop is open again


def test_an_edited_escalation_draft_is_what_the_contact_receives_as_the_owners() -> None:
    world = escalated_after_her_reply(UNSURE_REPLY)
    edited = {"subject": "About the discount", "body": "Hi Ann, yes: 20% off until June. Sam"}
    assert world.command("task.approve", 1.1, task_id="ann", draft=edited).accepted

    touch, answer = world.sent()
    assert (answer.details["body"], answer.performed_by) == ("Hi Ann, yes: 20% off until June. Sam", "owner")
    assert answer.details["subject"] == "Re: Touch 1"  # in the thread: its first subject, so it stays one conversation
    assert [e.how for e in world.events() if isinstance(e, Task.OwnerAnswered)] == ["edited"]


def test_approving_an_escalation_with_no_draft_held_back_is_refused_with_the_ways_to_answer() -> None:
    world = escalated_after_her_reply(ASKS_OWNER)
    outcome = world.command("task.approve", 1.1, task_id="ann")
    assert not outcome.accepted
    assert "no draft held back" in outcome.detail and "task.reply" in outcome.detail
    assert world.task().status == "escalated" and len(world.sent()) == 1


def test_the_owners_reply_goes_to_the_contact_as_theirs_and_the_reply_loop_opens_again() -> None:
    world = escalated_after_her_reply(ASKS_OWNER)
    outcome = world.command("task.reply", 1.1, task_id="ann", body="Yes Ann, the discount is on until June!")
    assert outcome.accepted and "sent a reply" in outcome.detail

    touch, answer = world.sent()
    assert (answer.performed_by, answer.details["body"], answer.details["to"]) == (
        "owner", "Yes Ann, the discount is on until June!", ANN)
    key = f"{ids.task_id(GYM, 'ann')}:{touch.originator_version}"
    assert answer.details["thread"] == {"references": [key]}  # it answers touch 1: In-Reply-To its Message-ID
    task = world.task()
    assert (task.status, task.escalation_reason, task.messages_used) == ("waiting", None, 2)
    owner_turns = [t.text for t in conversation_of(world.events()) if t.author == "owner"]
    assert owner_turns == [f"Wrote to {ANN}:\n\nSubject: Re: Touch 1\n\nYes Ann, the discount is on until June!"]

    world.model.evaluation = {"decision": "reply", "reply_body": "See you then!", "confidence": 0.9, "reasoning": "ok"}
    world.reply(2, "Great, see you Saturday")  # her next reply is the agent's again
    assert world.sent()[-1].details["body"] == "See you then!" and world.task().turns_used == 2


def test_the_owners_reply_drops_the_answer_the_model_was_writing() -> None:
    world = gym()
    world.tick(0.01)
    world.model.down = True  # her reply's evaluation fails and waits for its retry
    world.reply(1, "Is the discount still on?")
    assert world.task().pending_decisions
    assert world.command("task.reply", 1.001, task_id="ann", body="The owner's answer").accepted
    world.model.down = False
    world.tick(1.1)

    assert [e.details["body"] for e in world.sent()][1:] == ["The owner's answer"]  # her reply is answered once
    assert world.task().pending_decisions == {}


def test_the_owners_reply_held_by_a_send_limit_goes_out_as_theirs_when_it_frees_up() -> None:
    world = escalated_after_her_reply(ASKS_OWNER, member_weekly_limit=1)
    outcome = world.command("task.reply", 1.1, task_id="ann", body="Yes, still on!")
    assert outcome.accepted and "deferred until" in outcome.detail
    assert len(world.sent()) == 1 and world.task().status == "executing"

    world.tick(7.1)
    answer = world.sent()[-1]
    assert (answer.performed_by, answer.details["body"]) == ("owner", "Yes, still on!")
    assert world.model.requests[-1].point == "evaluate_reply"  # no touch was drafted in its place


def test_the_owners_reply_is_refused_when_a_limit_would_never_let_it_go() -> None:
    world = escalated_after_her_reply(ASKS_OWNER)
    assert world.command("tenant.configure", 1.05, member_weekly_limit=0).accepted
    outcome = world.command("task.reply", 1.1, task_id="ann", body="Yes, still on!")
    assert not outcome.accepted
    assert "gets no email" in outcome.detail and "task.takeover" in outcome.detail
    assert world.task().status == "escalated"  # nothing half-applied


def test_a_reply_to_a_task_loopline_does_not_work_or_not_yet_approved_is_refused() -> None:
    world = gym(confidence=0.5)
    pending = world.command("task.reply", 0.1, task_id="ann", body="Hi")
    assert not pending.accepted and "approve it first" in pending.detail
    assert world.command("task.create", 0.1, task_id="notes", title="Follow through").accepted
    other = world.command("task.reply", 0.2, task_id="notes", body="Hi")
    assert not other.accepted and "no contact Loopline writes to" in other.detail


def test_takeover_closes_the_agents_part_as_owner_handled() -> None:
    world = escalated_after_her_reply(ASKS_OWNER)
    outcome = world.command("task.takeover", 1.1, task_id="ann", reason="called her, booked Saturday")
    assert outcome.accepted and outcome.detail == "took over ann: closed as owner_handled"
    task = world.task()
    assert (task.status, task.outcome, task.open_loops) == ("completed", "owner_handled", [])
    world.tick(30)
    assert len(world.sent()) == 1  # nothing more goes to Ann


def test_takeover_of_a_task_the_agent_has_not_started_is_refused_naming_what_stops_it() -> None:
    world = gym(confidence=0.5)
    outcome = world.command("task.takeover", 0.1, task_id="ann")
    assert not outcome.accepted and "task.reject" in outcome.detail


def test_a_conversion_tells_the_owner_to_book_the_class() -> None:
    world = gym(task_type="lead_followup", confidence=0.8)
    world.tick(0.01)
    world.model.evaluation = {"decision": "close", "outcome": "converted", "confidence": 0.9,
                              "reasoning": "he asked to be signed up for Saturday"}
    world.reply(1, "Sign me up for Saturday!")

    [notice] = [e for e in world.events() if isinstance(e, Task.UserNotified)]
    assert "closed as converted" in notice.message
    assert "Next: Book them into the class or trial they asked for" in notice.message


def test_the_owners_words_before_the_first_touch_are_touch_1_and_the_cadence_follows_them() -> None:
    world = gym()  # ready: the next tick would draft touch 1
    assert world.command("task.reply", 0.001, task_id="ann", subject="Hello from Sam", body="Hi Ann, Sam here.").accepted
    world.tick(0.01)

    [first] = world.sent()
    assert (first.performed_by, first.details["subject"], first.details["touch"]) == ("owner", "Hello from Sam", 1)
    assert world.task().next_touch_at == DAY0 + timedelta(days=3.001)  # standard cadence: touch 2 three days on
    world.tick(3.01)
    assert [e.details["subject"] for e in world.sent()] == ["Hello from Sam", "Re: Hello from Sam"]


def test_a_closed_task_takes_no_reply() -> None:
    world = escalated_after_her_reply(ASKS_OWNER)
    assert world.command("task.takeover", 1.1, task_id="ann").accepted
    refused = world.command("task.reply", 1.2, task_id="ann", body="One more thing")
    assert not refused.accepted and "completed" in refused.detail


def test_a_draft_for_a_task_loopline_sends_nothing_for_is_refused_naming_the_field() -> None:
    world = Gym()
    assert world.command("task.create", 0, task_id="notes", title="Follow through", confidence=0.2).accepted
    refused = world.command("task.approve", 0.1, task_id="notes", draft={"subject": "Hi", "body": "Hello"})
    assert not refused.accepted and refused.detail.startswith("draft: task notes")
    assert world.task("notes").status == "pending_review"  # nothing half-applied: not approved either


def test_the_owners_words_while_the_contact_is_silent_are_the_next_touch_and_the_cadence_goes_on() -> None:
    world = gym()
    world.tick(0.01)  # touch 1; touch 2 is due on day 3
    assert world.command("task.reply", 1, task_id="ann", body="Hi Ann, Sam here: we miss you!").accepted
    world.tick(3.02)  # touch 2 was the owner's: nothing more is due yet
    assert [(e.performed_by, e.details["touch"]) for e in world.sent()] == [("loopline", 1), ("owner", 2)]
    world.tick(6.01)  # standard cadence: touch 3 five days after touch 2
    assert [(e.performed_by, e.details["touch"]) for e in world.sent()] == [("loopline", 1), ("owner", 2),
                                                                            ("loopline", 3)]
