"""The escalation handoff (issue 20, item 5; seed 002 §17) on the in-memory store: the context an escalation
carries, the pause it puts on the pipeline under it, and the timeouts that remind the owner and then cancel."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any
from uuid import uuid4

from loopline.domain.task import Task
from loopline.domain.task_escalation import pipeline_paused
from loopline.domain.timeutil import format_time
from tests.conftest import command, signal
from tests.unit.in_memory import InMemoryLoopline

DAY0 = datetime(2026, 5, 4, 9, 0, tzinfo=timezone.utc)


def a_task(ref: str, status: str = "executing") -> Task:
    return Task.create(id=uuid4(), now=DAY0, tenant="gym", ref=ref, title=ref, description="", task_type="churn_risk",
                       status=status, expires_at=None, priority=None, contact=None, confidence=None, context={},
                       reason="")


def test_an_escalated_parent_pauses_the_whole_pipeline_under_it() -> None:
    parent, child, grandchild = a_task("parent"), a_task("child"), a_task("grandchild", status="waiting")
    assert pipeline_paused(grandchild, child, parent) is None
    parent.escalate(reason="she asks about the discount", cause="model_escalated", now=DAY0)
    assert pipeline_paused(grandchild, child, parent) is parent
    assert pipeline_paused(child, parent) is parent
    assert pipeline_paused(parent) is parent


def test_a_subtask_of_a_parent_not_escalated_acts() -> None:
    parent, child = a_task("parent"), a_task("child")
    child.escalate(reason="needs the owner", cause="model_escalated", now=DAY0)
    assert pipeline_paused(parent) is None
    assert pipeline_paused(child, parent) is child


GYM = "gym"
ANN = "ann@example.com"
SHE_ASKS = "I'd love to come back... is the discount still on?"
ASKS_OWNER = {"decision": "escalate", "confidence": 0.85, "reasoning": "she asks about the discount"}


def at(days: float) -> datetime:
    return DAY0 + timedelta(days=days)


class Gym:
    """Ann's churn_risk task on the in-memory store, escalated on day 1 when she asks about a discount."""

    def __init__(self, task_type: str = "churn_risk", **settings: Any) -> None:
        self.loopline, self.sent = InMemoryLoopline(), 0
        self.command("tenant.configure", 0, execution_mode="limited_auto", **settings)
        self.command("task.create", 0, task_id="ann", title="Bring Ann back", task_type=task_type, contact=ANN,
                     to_name="Ann", confidence=0.9)
        self.loopline.tick(at(0.01))  # touch 1
        self.loopline.model.evaluation = ASKS_OWNER
        self.publish(signal, "email.received", 1, sender=ANN, subject="Re: Checking in", body=SHE_ASKS)
        assert self.task.status == "escalated"

    def publish(self, make: Any, type_: str, days: float, **data: Any) -> None:
        self.sent += 1
        [outcome] = self.loopline.publish(make(f"m{self.sent}", type_, format_time(at(days)), GYM, **data))
        assert outcome.accepted, outcome.detail

    def command(self, type_: str, days: float, **data: Any) -> None:
        self.publish(command, type_, days, **data)

    def tick(self, days: float) -> None:
        self.loopline.tick(at(days))

    @property
    def task(self) -> Task:
        return self.loopline.task(GYM, "ann")

    def events(self, kind: type) -> list[Any]:
        return [e for e in self.loopline.app.events.get(self.task.id) if isinstance(e, kind)]

    def notices(self, kind: str) -> list[Task.UserNotified]:
        return [e for e in self.events(Task.UserNotified) if e.kind == kind]


def test_an_escalation_hands_the_owner_her_question_what_was_tried_the_last_messages_and_its_timeouts() -> None:
    gym = Gym()
    [context] = gym.events(Task.EscalationContextRecorded)
    assert (context.blocked_by, context.cause, context.reason) == ("agent", "model_escalated", "she asks about the discount")
    assert context.question == SHE_ASKS
    assert context.tried["touches"] == 1 and context.tried["messages_used"] == 1
    assert [(d["point"], d["decision"]) for d in context.tried["decisions"]][-1] == ("evaluate_reply", "escalate")
    assert [(turn["author"], turn["text"]) for turn in context.conversation][-1] == ("contact", SHE_ASKS)
    assert context.conversation[0]["author"] == "agent"
    assert "task.guidance" in [action["command"] for action in context.suggested_actions]
    assert (context.remind_at, context.cancel_at) == (at(1) + timedelta(hours=48), at(8))

    [notice] = gym.notices("escalation")
    assert notice.message.startswith("'Bring Ann back' needs your decision: she asks about the discount")
    assert "Blocked by the agent (model_escalated). Tried so far: 1 touch, 1 message" in notice.message
    assert "evaluate_reply: decided escalate (0.85): she asks about the discount" in notice.message
    assert f"contact, 5 May 2026 09:00 UTC: {SHE_ASKS}" in notice.message
    assert "Left alone, you are reminded 7 May 2026 09:00 UTC and it is cancelled 12 May 2026 09:00 UTC." in notice.message


def test_an_escalation_left_alone_reminds_the_owner_after_48_hours_once_and_is_cancelled_at_7_days() -> None:
    gym = Gym()
    gym.tick(2.9)
    assert gym.notices("escalation_reminder") == []
    gym.tick(3)
    gym.tick(3.5)
    [reminder] = gym.notices("escalation_reminder")
    assert reminder.message.startswith("Reminder: 'Bring Ann back' has waited for your decision since 5 May 2026")
    assert "task.guidance" in [action["command"] for action in reminder.actions]
    assert gym.task.status == "escalated"

    gym.tick(7.9)
    assert gym.task.status == "escalated"
    gym.tick(8)
    task = gym.task
    assert (task.status, task.outcome) == ("cancelled", "escalated_unresolved")
    [cancelled] = gym.events(Task.Cancelled)
    assert cancelled.reason.startswith("escalation_timeout: escalated 5 May 2026 09:00 UTC and not addressed within 7 days")
    [told] = gym.notices("escalation_timeout")
    assert told.message.startswith("Stopped 'Bring Ann back': it was escalated 5 May 2026 09:00 UTC")
    assert len(gym.notices("escalation_reminder")) == 1


def test_guidance_before_the_timeouts_stops_both() -> None:
    gym = Gym()
    gym.loopline.model.evaluation = {"decision": "wait", "confidence": 0.9, "reasoning": "she will come"}
    gym.command("task.guidance", 1.5, task_id="ann", text="Yes, 20% off until Friday")
    gym.tick(9)
    assert gym.notices("escalation_reminder") == [] and gym.events(Task.Cancelled) == []
    assert gym.task.status != "cancelled"


def test_an_escalation_after_guidance_keeps_its_own_timeouts_not_the_first_ones() -> None:
    gym = Gym()
    gym.loopline.model.evaluation = {"decision": "reply", "reply_body": "Yes, 20% off until Friday!", "confidence": 0.9,
                                     "reasoning": "the owner said so"}
    gym.command("task.guidance", 1.2, task_id="ann", text="Yes, 20% off until Friday")
    assert gym.task.status == "waiting"  # her answer went out
    gym.loopline.model.evaluation = ASKS_OWNER
    gym.publish(signal, "email.received", 2, sender=ANN, subject="Re: Checking in", body="And the kids' class?")
    assert gym.task.status == "escalated"
    gym.tick(3.5)  # past the first escalation's reminder time: this one is a day younger
    assert gym.notices("escalation_reminder") == []
    gym.tick(4)
    assert len(gym.notices("escalation_reminder")) == 1
    gym.tick(8.5)  # the first escalation's cancellation time
    assert gym.task.status == "escalated"
    gym.tick(9)
    assert gym.task.status == "cancelled"


def test_an_answered_escalation_neither_reminds_nor_cancels_once_the_task_is_escalated_again_without_a_handoff() -> None:
    gym = Gym()  # limited_auto: an agent's calendar invite waits for the owner's approval
    gym.loopline.model.evaluation = {"decision": "wait", "confidence": 0.9, "reasoning": "she will come"}
    gym.command("task.guidance", 1.2, task_id="ann", text="Yes, 20% off until Friday")
    gym.command("action.request", 1.5, task_id="ann", action="calendar_invite",
                params={"title": "Intro class", "starts_at": "2026-05-08T18:00:00Z"})
    assert (gym.task.status, gym.task.escalation_cause) == ("escalated", "action_approval")
    gym.tick(3.5)  # the answered escalation's reminder time
    assert gym.notices("escalation_reminder") == []
    gym.tick(9)  # and its cancellation time
    assert gym.events(Task.Cancelled) == [] and gym.task.status == "escalated"


def test_an_answered_escalation_is_void_once_the_owner_escalates_the_task_again_by_hand() -> None:
    gym = Gym()
    gym.loopline.model.evaluation = {"decision": "wait", "confidence": 0.9, "reasoning": "she will come"}
    gym.command("task.guidance", 1.2, task_id="ann", text="Yes, 20% off until Friday")
    gym.command("task.update", 1.5, task_id="ann", notes="I will call her myself", status="escalated")
    gym.tick(3.5)
    gym.tick(9)
    assert gym.notices("escalation_reminder") == [] and gym.task.status == "escalated"


def test_the_tenant_sets_the_timeouts_and_a_type_without_escalated_unresolved_is_cancelled_without_an_outcome() -> None:
    gym = Gym(task_type="win_back", escalation_reminder_hours=0, escalation_cancel_days=2)
    [context] = gym.events(Task.EscalationContextRecorded)
    assert (context.remind_at, context.cancel_at) == (None, at(3))
    gym.tick(3)
    task = gym.task
    assert (task.status, task.outcome) == ("cancelled", None)
    assert gym.notices("escalation_reminder") == []


def test_a_task_escalated_at_its_expiry_is_handed_off_as_blocked_by_the_system_with_the_same_timeouts() -> None:
    loopline = InMemoryLoopline()
    loopline.publish(
        command("c1", "task.create", format_time(at(0)), GYM, task_id="nda", title="Get the NDA signed", expires_in_days=1),
        command("c2", "action.record", format_time(at(0.1)), GYM, task_id="nda", action="send_email", to=ANN,
                subject="NDA"),
    )
    loopline.tick(at(1))
    task = loopline.task(GYM, "nda")
    assert (task.status, task.escalation_cause) == ("escalated", "expiry")
    [context] = [e for e in loopline.app.events.get(task.id) if isinstance(e, Task.EscalationContextRecorded)]
    assert (context.blocked_by, context.cause, context.remind_at) == ("system", "expiry", at(1) + timedelta(hours=48))
    assert context.resume_instructions.startswith("With your guidance the task resumes")
