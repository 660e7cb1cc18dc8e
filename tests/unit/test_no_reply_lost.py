"""No reply is lost (issue 18, item 1), as handler tests on the in-memory store: whatever a task's status and
whatever is in flight, a contact's message reaches a task's conversation or the owner."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any

from loopline.adapters.embedded_log import EmbeddedLog
from loopline.adapters.offline_policy import OfflinePolicy
from loopline.adapters.messages import parse_message
from loopline.domain import ids
from loopline.domain.open_loop import OpenLoop
from loopline.domain.task import Task
from loopline.domain.timeutil import format_time
from loopline.processors.application import Loopline, UnitOfWork
from loopline.processors.bus import Outcome
from loopline.processors.followers.agent import Agent
from loopline.processors.followers.router import Router
from loopline.processors.followers.scheduler import Scheduler
from loopline.processors.handlers.table import build_bus
from loopline.processors.model.prompts import next_request
from tests.conftest import ANY_HOUR, command, signal
from tests.unit.fakes import RecordingDrafter, ScriptedModel

GYM = "gym"
ANN, RAHUL = "ann@example.com", "rahul@company.com"
DAY0 = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
ESCALATE = {"decision": "escalate", "confidence": 0.85, "reasoning": "she asks about the discount"}
ANSWER = {"decision": "reply", "reply_body": "Yes Ann, the 20% discount runs until the 31st!", "confidence": 0.9,
          "reasoning": "the owner says the discount is on"}


def at(days: float) -> str:
    return format_time(DAY0 + timedelta(days=days))


class Gym:
    """One tenant on the in-memory store with a scripted model: publish drains the bus and the agent, as embedded."""

    def __init__(self, **settings: Any) -> None:
        self.app = Loopline(env={"PERSISTENCE_MODULE": "eventsourcing.popo", "IS_SNAPSHOTTING_ENABLED": "y"})
        self.model = ScriptedModel()
        self.bus = build_bus(self.app, RecordingDrafter())
        self.router, self.scheduler, self.agent = Router(self.bus), Scheduler(self.bus), Agent(self.bus, self.model)
        self.publish(command("cfg", "tenant.configure", at(-1), GYM, execution_mode="limited_auto",
                             **{**ANY_HOUR, **settings}))

    def publish(self, *messages: dict[str, Any]) -> list[Outcome[Any]]:
        EmbeddedLog(self.app).append([parse_message(json.dumps(m)) for m in messages], "test")
        outcomes = self.router.run_once()
        self._decide()
        return outcomes

    def tick(self, days: float) -> None:
        self.scheduler.tick(DAY0 + timedelta(days=days))
        self._decide()

    def _decide(self) -> None:
        while self.agent.run_once().read:
            self.router.run_once()

    def create(self, ref: str, contact: str = ANN, task_type: str = "win_back", confidence: float = 0.9) -> None:
        [created] = self.publish(command(f"create-{ref}", "task.create", at(0), GYM, task_id=ref, title=f"Win {ref} back",
                                         task_type=task_type, contact=contact, to_name="Ann", confidence=confidence))
        assert created.accepted, created.detail

    def reply(self, ref: str, days: float, body: str, sender: str = ANN, **data: Any) -> Outcome[Any]:
        [outcome] = self.publish(signal(ref, "email.received", at(days), GYM, sender=sender, body=body,
                                        **{"subject": "Re: hello", **data}))
        assert outcome.accepted, outcome.detail
        return outcome

    def task(self, ref: str) -> Task:
        task = UnitOfWork(self.app).get(ids.task_id(GYM, ref), Task)
        assert task is not None
        return task

    def events(self, ref: str, kind: type) -> list[Any]:
        return [e for e in self.app.events.get(ids.task_id(GYM, ref)) if isinstance(e, kind)]

    def notices(self, ref: str) -> list[str]:
        return [e.message for e in self.events(ref, Task.UserNotified)]

    def emails(self, ref: str) -> list[dict[str, Any]]:
        return [e.details for e in self.events(ref, Task.ActionRecorded) if e.performed_by == "loopline"]

    def heard(self, ref: str) -> list[str]:
        return [e.data["body"] for e in self.events(ref, Task.SignalReceived)]


def escalated_ann() -> Gym:
    """Ann's win_back task after touch 1 and her question, which the model hands to the owner."""
    gym = Gym()
    gym.create("ann")
    gym.tick(0.01)
    gym.model.evaluation = ESCALATE
    gym.reply("ann-1", 1, "I'd love to come back... is the discount still on?")
    assert gym.task("ann").status == "escalated"
    return gym


def test_a_reply_to_an_escalated_task_joins_the_escalation_and_the_owner_reads_her_words() -> None:
    gym = escalated_ann()
    gym.reply("ann-2", 2, "Also, can I bring my sister along?")

    task = gym.task("ann")
    assert task.status == "escalated" and "bring my sister" in str(task.escalation_reason)
    assert gym.heard("ann") == ["I'd love to come back... is the discount still on?", "Also, can I bring my sister along?"]
    assert any("bring my sister" in notice for notice in gym.notices("ann"))
    assert len(gym.model.requests) == 2  # touch 1 and the first evaluation: the owner has it now, no model call


def test_an_automatic_reply_to_an_escalated_task_joins_the_escalation_without_calling_the_owner() -> None:
    gym = escalated_ann()
    told = len(gym.notices("ann"))
    gym.reply("ann-2", 2, "I am out of the office until June 10 with limited access to email.", subject="Automatic reply")

    task = gym.task("ann")
    assert task.status == "escalated" and "is away" in str(task.escalation_reason)
    assert "out of the office" in gym.heard("ann")[-1]  # kept in her conversation
    assert len(gym.notices("ann")) == told  # an auto-responder's words call nobody


def test_an_automatic_reply_while_awaiting_review_reaches_the_inbox_only() -> None:
    gym = Gym()
    gym.create("ann", confidence=0.3)
    told = len(gym.notices("ann"))
    gym.reply("ann-1", 1, "Automatische Antwort: Ich bin bis zum 10. Juni nicht im Büro.", subject="Abwesenheitsnotiz")

    assert len(gym.heard("ann")) == 1 and len(gym.notices("ann")) == told


def test_guidance_after_a_reply_drafts_an_answer_with_it_in_her_thread_and_waits_for_her_again() -> None:
    gym = escalated_ann()
    gym.model.evaluation = ANSWER
    gym.publish(command("g1", "task.guidance", at(2), GYM, task_id="ann", text="Tell her yes: 20% off until the 31st"))

    guided = gym.model.requests[-1]
    prompt = guided.prompt.messages[0]["content"]
    assert guided.point == "evaluate_reply" and guided.purpose == "guidance"
    assert "20% off until the 31st" in prompt and "is the discount still on?" in prompt
    answer = gym.emails("ann")[-1]
    # In the task's one thread (issue 18 item 5): `Re:` the first touch's subject, whatever her reply's.
    assert answer["body"] == ANSWER["reply_body"] and answer["subject"] == "Re: Touch 1"
    task = gym.task("ann")
    assert task.status == "waiting" and [ref for ref in task.open_loops if "/reply/" in ref]
    gym.model.evaluation = ESCALATE
    gym.reply("ann-3", 3, "Brilliant, thanks!")
    assert gym.events("ann", Task.DecisionRequested)[-1].request_ref == "ann-3"  # her next reply is evaluated


def test_guidance_without_a_reply_to_answer_resumes_the_cadence_as_before() -> None:
    gym = Gym()
    gym.create("ann", confidence=0.3)
    gym.publish(command("g1", "task.guidance", at(0), GYM, task_id="ann", text="Mention the new spin class"))
    assert gym.events("ann", Task.DecisionRequested) == []


def test_a_reply_while_awaiting_review_reaches_the_inbox_and_the_owner() -> None:
    gym = Gym()
    gym.create("ann", confidence=0.3)
    assert gym.task("ann").status == "pending_review"
    gym.reply("ann-1", 1, "Hi, is the gym open on Sundays?")

    assert gym.heard("ann") == ["Hi, is the gym open on Sundays?"]
    assert any("open on Sundays" in notice for notice in gym.notices("ann"))
    assert gym.task("ann").status == "pending_review"


def test_a_reply_applied_before_its_tasks_creation_reaches_the_task_in_review_and_the_owner() -> None:
    """At scale a signal may overtake the command that created its task (they travel on different topics)."""
    gym = Gym()
    gym.reply("ann-1", 0.5, "Hi, is the gym open on Sundays?")  # written after the task below was created
    gym.create("ann", confidence=0.3)

    assert gym.heard("ann") == ["Hi, is the gym open on Sundays?"]
    assert any("open on Sundays" in notice for notice in gym.notices("ann"))


def test_a_reply_applied_before_its_ready_tasks_creation_is_evaluated_and_touch_1_never_goes() -> None:
    gym = Gym()
    gym.reply("ann-1", 0.5, "Are you still doing the summer discount?")
    gym.create("ann")
    gym.tick(0.6)

    assert gym.heard("ann") == ["Are you still doing the summer discount?"]
    assert [email["body"] for email in gym.emails("ann")] == [gym.model.evaluation["reply_body"]]  # her answer only


def test_a_reply_written_before_a_task_existed_is_not_about_it() -> None:
    gym = Gym()
    gym.reply("ann-1", -0.5, "Thanks for the towel!")
    gym.create("ann")
    assert gym.heard("ann") == []


def test_a_second_reply_before_the_first_is_evaluated_is_evaluated_once_with_both() -> None:
    gym = Gym()
    gym.create("ann")
    gym.tick(0.01)
    gym.model.down = True  # the first evaluation fails and waits for its retry
    gym.reply("ann-1", 1, "Maybe next week")
    gym.model.down = False
    gym.reply("ann-2", 1.01, "Actually, see you Monday!")
    gym.tick(1.1)

    assert gym.heard("ann") == ["Maybe next week", "Actually, see you Monday!"]
    recorded = gym.events("ann", Task.DecisionRecorded)
    assert [d.request_ref for d in recorded if d.point == "evaluate_reply"] == ["ann-2"]
    assert len([e for e in gym.emails("ann") if e.get("touch") == 1]) == 2  # touch 1 and one answer


def test_one_contact_two_tasks_the_most_recently_touched_answers_and_the_other_only_sees_it() -> None:
    gym = Gym()
    gym.create("first")
    gym.tick(0.01)
    gym.create("second", task_type="churn_risk")
    gym.tick(1)
    gym.reply("ann-1", 2, "Thanks, see you Monday!")

    assert gym.events("first", Task.DecisionRequested)[-1].point == "draft_message"  # not asked about her reply
    assert gym.events("second", Task.DecisionRequested)[-1].request_ref == "ann-1"
    assert [e.signal_ref for e in gym.events("first", Task.ReplyNoted)] == ["ann-1"]
    assert gym.task("first").open_loops  # still waiting for an answer of its own
    asked = len(gym.model.requests)
    gym.tick(3.1)  # the first task's touch 2 is due, but Ann's weekly limit is spent: not drafted before it frees up
    assert len(gym.model.requests) == asked
    assert [e.rule for e in gym.events("first", Task.SendDeferred)] == ["member_weekly_limit"]
    gym.tick(7.1)  # then written knowing what she said, without answering it
    assert "another of their tasks answers it" in gym.model.requests[-1].prompt.messages[0]["content"]


def test_a_reply_naming_a_message_loopline_sent_goes_to_that_task() -> None:
    gym = Gym()
    gym.create("first")
    gym.tick(0.01)
    gym.create("second", task_type="churn_risk")
    gym.tick(1)
    first = gym.task("first")
    touch = next(e for e in gym.app.events.get(first.id) if isinstance(e, Task.ActionRecorded))
    gym.reply("ann-1", 2, "Sure, Monday works", in_reply_to=f"<loopline.{first.id}.{touch.originator_version}@gym.example>")

    assert gym.events("first", Task.DecisionRequested)[-1].request_ref == "ann-1"
    assert [e.signal_ref for e in gym.events("second", Task.ReplyNoted)] == ["ann-1"]


def followup_deferred() -> Gym:
    """Seed 000: the agent emailed Rahul; at the loop's deadline the follow-up is drafted and a limit holds it back."""
    gym = Gym(daily_send_limit=0)
    gym.publish(
        command("c1", "task.create", at(0), GYM, task_id="t1", title="Meet Rahul"),
        command("c2", "action.record", at(0), GYM, task_id="t1", action="send_email", to=RAHUL, subject="Meeting?"),
    )
    gym.tick(3.1)
    assert gym.task("t1").deferred is not None
    return gym


def test_a_reply_while_a_followup_is_deferred_is_kept_and_the_followup_is_not_sent() -> None:
    gym = followup_deferred()
    gym.reply("rahul-1", 3.5, "Thursday works for me", sender=RAHUL)
    gym.publish(command("cfg2", "tenant.configure", at(3.6), GYM, daily_send_limit=50))
    for day in (4.2, 5.2, 11):
        gym.tick(day)

    assert gym.heard("t1") == ["Thursday works for me"]
    assert gym.emails("t1") == []  # the follow-up never went out
    assert gym.task("t1").deferred is None


def test_a_reply_while_the_followup_is_drafted_drops_the_draft() -> None:
    gym = Gym()
    gym.publish(
        command("c1", "task.create", at(0), GYM, task_id="t1", title="Meet Rahul"),
        command("c2", "action.record", at(0), GYM, task_id="t1", action="send_email", to=RAHUL, subject="Meeting?"),
    )
    gym.model.down = True
    gym.tick(3.1)
    gym.model.down = False
    gym.reply("rahul-1", 3.11, "Thursday works for me", sender=RAHUL)
    gym.tick(3.5)

    assert gym.heard("t1") == ["Thursday works for me"]
    assert gym.emails("t1") == []
    loop = UnitOfWork(gym.app).get(ids.loop_id(GYM, "t1/send_email/1"), OpenLoop)
    assert loop is not None and loop.resolved_by == "signal_match"


def test_loopline_prompt_shows_the_guided_answer_while_the_model_has_not_written_it() -> None:
    gym = escalated_ann()
    gym.model.down = True
    gym.publish(command("g1", "task.guidance", at(2), GYM, task_id="ann", text="Tell her yes: 20% off until the 31st"))

    request = next_request(gym.app, gym.task("ann"), DAY0 + timedelta(days=2))
    prompt = request.prompt.messages[0]["content"]
    assert (request.point, request.purpose) == ("evaluate_reply", "guidance")
    assert "The owner's guidance for your answer:\n\n> Tell her yes: 20% off until the 31st" in prompt
    assert "> I'd love to come back... is the discount still on?" in prompt


def test_a_reply_while_the_next_touch_is_drafted_is_evaluated_and_the_touch_is_dropped() -> None:
    gym = Gym()
    gym.create("ann")
    gym.tick(0.01)
    gym.model.down = True
    gym.tick(3.1)  # touch 2 is due: its draft fails and waits for a retry
    assert [p["purpose"] for p in gym.task("ann").pending_decisions.values()] == ["touch"]
    gym.model.down = False
    gym.reply("ann-1", 3.11, "Sorry, been away! See you Monday")
    gym.tick(3.5)

    assert gym.heard("ann") == ["Sorry, been away! See you Monday"]
    assert [e.get("touch") for e in gym.emails("ann")] == [1, 1]  # touch 1 and the answer to her, no touch 2


def test_a_contact_who_writes_before_touch_1_is_answered_and_touch_1_never_follows() -> None:
    gym = Gym()
    gym.create("ann")
    assert gym.task("ann").status == "ready"
    gym.reply("ann-1", 0.001, "Hi! Are you open on Sundays?")
    for day in (0.01, 1, 4):
        gym.tick(day)

    assert gym.heard("ann") == ["Hi! Are you open on Sundays?"]
    assert [e["body"] for e in gym.emails("ann")] == ["Great, see you then!"]  # her answer, and no cadence touch


def test_approving_a_task_whose_contact_wrote_during_review_answers_her_instead_of_touch_1() -> None:
    gym = Gym()
    gym.create("ann", confidence=0.3)
    gym.reply("ann-1", 0.5, "Hi, is the gym open on Sundays?")
    gym.publish(command("ok", "task.approve", at(1), GYM, task_id="ann"))
    for day in (1.01, 4):
        gym.tick(day)

    assert [d.request_ref for d in gym.events("ann", Task.DecisionRecorded)] == ["ann-1"]
    assert [e["body"] for e in gym.emails("ann")] == ["Great, see you then!"]


def test_an_email_written_before_the_task_existed_does_not_reach_it() -> None:
    gym = Gym()
    gym.create("ann")
    gym.reply("old", -2, "Please cancel my membership")

    assert gym.heard("ann") == [] and gym.events("ann", Task.DecisionRequested) == []


def test_the_offline_policy_hands_a_guided_answer_back_to_the_owner_naming_task_reply() -> None:
    gym = escalated_ann()
    gym.agent = Agent(gym.bus, OfflinePolicy())
    gym.publish(command("g1", "task.guidance", at(2), GYM, task_id="ann", text="Tell her yes: 20% off until the 31st"))

    task = gym.task("ann")
    assert task.status == "escalated" and "task.reply" in str(task.escalation_reason)
    assert len(gym.emails("ann")) == 1  # only touch 1: nothing made up from a template
