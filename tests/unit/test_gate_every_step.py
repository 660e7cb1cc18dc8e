"""The gate at every step (issue 18 item 7, seed 002 §6.2, §7.4, §7.6, §36.5), on the in-memory store with a
scripted model: what goes to the owner instead of out, and what still goes out."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from loopline.adapters.messages import InvalidMessage, parse_message
from loopline.domain import ids
from loopline.domain.task import Task
from loopline.domain.task_types import TASK_TYPES
from loopline.processors.application import UnitOfWork
from tests.conftest import command, signal
from tests.unit.fakes import ScriptedModel
from tests.unit.in_memory import InMemoryLoopline

GYM = "iron_temple"
SAM, JO = "sam@example.com", "jo@example.com"
T0 = datetime(2026, 4, 6, 9, 0, tzinfo=timezone.utc)


def stamp(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


class Gym(InMemoryLoopline):
    """One gym's Loopline in memory, in the words of these tests."""

    count = 0

    def command(self, type_: str, at: datetime, **data: Any) -> list[Any]:
        self.count += 1
        return self.publish(command(f"c{self.count}", type_, stamp(at), GYM, **data))

    def mode(self, mode: str, at: datetime = T0) -> None:
        self.command("tenant.configure", at, execution_mode=mode)

    def churn(self, ref: str, confidence: float, at: datetime = T0, contact: str = SAM, **data: Any) -> None:
        self.command("task.create", at, task_id=ref, title=f"Bring {ref} back", task_type="churn_risk", contact=contact,
                     to_name="Sam", confidence=confidence, **data)

    def reply(self, body: str, at: datetime) -> None:
        self.count += 1
        self.publish(signal(f"s{self.count}", "email.received", stamp(at), GYM, sender=SAM, body=body))

    def get(self, ref: str) -> Task:
        return self.task(GYM, ref)

    def sent(self, contact: str = SAM) -> list[str]:
        """The subjects of the emails the contact received."""
        return [message["details"]["subject"] for _, message in self.emails() if message["details"]["to"] == contact]


@pytest.fixture
def make_gym() -> Iterator[Callable[..., Gym]]:
    made: list[Gym] = []

    def make(model: ScriptedModel | None = None) -> Gym:
        made.append(Gym(model))
        return made[-1]

    yield make
    for running in made:
        running.close()


def after(days: float = 0, minutes: float = 5) -> datetime:
    return T0 + timedelta(days=days, minutes=minutes)


@pytest.mark.parametrize("mode", ["manual", "limited_auto"])
def test_a_task_at_confidence_0_05_never_sends_in_any_mode(make_gym: Callable[..., Gym], mode: str) -> None:
    gym = make_gym(ScriptedModel(draft_confidence=0.05))
    gym.mode(mode)
    gym.churn("t1", 0.05, draft={"subject": "We miss you", "body": "Come back!"})
    gym.tick(after())
    assert gym.get("t1").status == "pending_review" and gym.sent() == []

    gym.churn("t2", 0.05, contact=JO)
    for ref in ("t1", "t2"):
        gym.command("task.approve", after(minutes=10), task_id=ref)
    gym.tick(after(minutes=15))
    # The owner approved t1's own draft; the model's 0.05 draft for t2 goes to the owner, not out.
    assert gym.sent() == ["We miss you"]
    held = gym.get("t2")
    assert (held.status, held.escalation_cause, gym.sent(JO)) == ("escalated", "low_confidence", [])


def test_auto_mode_is_refused_naming_the_modes_there_are() -> None:
    configure = command("c1", "tenant.configure", stamp(T0), GYM, execution_mode="auto")
    with pytest.raises(InvalidMessage, match="data.execution_mode: Input should be 'manual' or 'limited_auto'"):
        parse_message(json.dumps(configure))


def test_manual_stops_touch_2_and_hands_its_draft_to_the_owner(make_gym: Callable[..., Gym]) -> None:
    gym = make_gym()
    gym.mode("limited_auto")
    gym.churn("t1", 0.9)
    gym.tick(after())
    assert gym.sent() == ["Touch 1"]

    gym.mode("manual", after(days=1))
    gym.tick(after(days=3, minutes=10))

    task = gym.get("t1")
    assert gym.sent() == ["Touch 1"]
    assert (task.status, task.escalation_cause) == ("escalated", "manual_mode")
    assert "touch 2 is due, and the execution mode is manual" in str(task.escalation_reason)
    assert "Draft held back:\nSubject: Touch 2\nfake draft (direct_offer_help)" in str(task.escalation_reason)


def test_in_manual_mode_the_owners_approval_sends_the_held_touch_and_the_cadence_goes_on(
    make_gym: Callable[..., Gym],
) -> None:
    gym = make_gym()
    gym.mode("limited_auto")
    gym.churn("t1", 0.9)
    gym.tick(after())
    gym.mode("manual", after(days=1))
    gym.tick(after(days=3, minutes=10))

    gym.command("task.approve", after(days=3, minutes=20), task_id="t1")

    assert gym.sent() == ["Touch 1", "Re: Touch 1"]  # touch 2, in the thread of touch 1
    assert [message["details"]["body"] for _, message in gym.emails()][-1] == "fake draft (direct_offer_help)"
    assert gym.get("t1").status == "waiting"
    gym.tick(after(days=8, minutes=30))
    held = gym.get("t1")  # touch 3 waits for the owner in its turn
    assert (held.status, held.escalation_cause, gym.sent()) == ("escalated", "manual_mode", ["Touch 1", "Re: Touch 1"])


def test_in_manual_mode_the_contacts_conversation_goes_on(make_gym: Callable[..., Gym]) -> None:
    gym = make_gym()
    gym.mode("limited_auto")
    gym.churn("t1", 0.9)
    gym.tick(after())
    gym.mode("manual", after(days=1))

    gym.reply("Thanks! Which class would suit a beginner?", after(days=1, minutes=30))

    assert gym.sent() == ["Touch 1", "Re: Touch 1"]  # the scripted reply (confidence 0.9) went out


@pytest.mark.parametrize("draft", [None, {"subject": "We miss you", "body": "Come back!"}])
def test_a_task_started_without_the_owner_holds_its_first_touch_once_the_tenant_is_manual(
    make_gym: Callable[..., Gym], draft: Any,
) -> None:
    gym = make_gym()
    gym.mode("limited_auto")
    gym.churn("t1", 0.9, **({"draft": draft} if draft else {}))
    assert gym.get("t1").status == "ready"
    gym.mode("manual", after(minutes=1))

    gym.tick(after())

    task = gym.get("t1")
    assert (task.status, task.escalation_cause, gym.sent()) == ("escalated", "manual_mode", [])


def test_in_manual_mode_the_owners_approval_sends_the_first_touch_only(make_gym: Callable[..., Gym]) -> None:
    gym = make_gym()
    gym.churn("t1", 0.9)  # manual: the default
    gym.command("task.approve", after(), task_id="t1")
    gym.tick(after(minutes=10))
    assert gym.sent() == ["Touch 1"]

    gym.tick(after(days=3, minutes=15))
    assert gym.sent() == ["Touch 1"] and gym.get("t1").escalation_cause == "manual_mode"


def test_a_close_below_0_6_goes_to_the_owner_and_leaves_no_outcome(make_gym: Callable[..., Gym]) -> None:
    gym = make_gym(ScriptedModel(evaluation={"decision": "close", "outcome": "verbal_commitment", "confidence": 0.55,
                                        "reasoning": "sounds like yes"}))
    gym.mode("limited_auto")
    gym.churn("t1", 0.9)
    gym.tick(after())

    gym.reply("yeah", after(days=1))

    task = gym.get("t1")
    assert (task.status, task.outcome, task.escalation_cause) == ("escalated", None, "low_confidence")
    assert "would close as verbal_commitment with confidence 0.55, below 0.6" in str(task.escalation_reason)


def test_a_follow_up_drafted_below_0_5_goes_to_the_owner_unsent(make_gym: Callable[..., Gym]) -> None:
    gym = make_gym(ScriptedModel(draft_confidence=0.3))
    gym.command("task.create", T0, task_id="f1", title="Meet Rahul")
    gym.command("action.record", T0, task_id="f1", action="send_email", to="rahul@company.com", subject="Lunch?")

    gym.tick(after(days=3, minutes=1))

    task = gym.get("f1")
    assert (task.status, task.escalation_cause, task.actions_count) == ("escalated", "low_confidence", 1)
    assert "the follow-up drafted has confidence 0.30, below 0.5" in str(task.escalation_reason)
    assert "fake draft" in str(task.escalation_reason)
    assert task.open_loops == ["f1/send_email/1"]  # Rahul's reply still finds the task while the owner decides


@pytest.mark.parametrize("confidence", [math.nan, math.inf, 1.5, -0.1])
def test_a_draft_whose_confidence_is_no_number_from_0_to_1_is_a_failed_decision_and_nothing_is_sent(
    make_gym: Callable[..., Gym],
    confidence: float,
) -> None:
    gym = make_gym(ScriptedModel(draft_confidence=confidence))
    gym.mode("limited_auto")
    gym.churn("t1", 0.9)

    gym.tick(after())

    task = gym.get("t1")
    [pending] = task.pending_decisions.values()
    assert pending["failed"] == 1 and pending["retry_at"] is not None
    assert gym.sent() == [] and task.status != "escalated"


def test_a_missing_skill_file_gets_an_inline_prompt_and_the_draft_goes_to_the_owner(
    make_gym: Callable[..., Gym],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(TASK_TYPES, "churn_risk", replace(TASK_TYPES["churn_risk"], skill="churn_risk_gone.md"))
    gym = make_gym()
    gym.mode("limited_auto")
    gym.churn("t1", 0.9)

    gym.tick(after())

    assert "# At-Risk Member (churn_risk): inline instructions" in gym.model.requests[0].prompt.system
    task = gym.get("t1")
    assert (task.status, task.escalation_cause, gym.sent()) == ("escalated", "missing_skill", [])
    assert "the skill file skills/churn_risk_gone.md is missing" in str(task.escalation_reason)


@pytest.mark.parametrize("mode", ["manual", "limited_auto"])
def test_a_staff_call_waits_for_review_and_a_second_one_for_the_member_merges(
    make_gym: Callable[..., Gym], mode: str,
) -> None:
    gym = make_gym()
    gym.mode(mode)
    gym.command("task.create", T0, task_id="call-1", title="Call Ann", task_type="staff_call_member",
                contact="ann@example.com", confidence=1.0)
    [outcome] = gym.command("task.create", after(), task_id="call-2", title="Call Ann again",
                            task_type="staff_call_member", contact="Ann@Example.com", context={"why": "missed class"})

    call = gym.get("call-1")
    assert call.status == "pending_review" and call.context == {"why": "missed class"}
    assert "merged into active task call-1" in str(outcome.detail)
    assert UnitOfWork(gym.app).get(ids.task_id(GYM, "call-2"), Task) is None


def test_a_reply_from_a_member_with_a_staff_call_open_goes_to_the_task_that_wrote_to_them(
    make_gym: Callable[..., Gym],
) -> None:
    gym = make_gym()
    gym.mode("limited_auto")
    gym.churn("t1", 0.9)
    gym.tick(after())
    gym.command("task.create", after(minutes=10), task_id="call-1", title="Call Sam", task_type="staff_call_member",
                contact=SAM)

    gym.reply("Thanks, appreciate it", after(days=1))

    assert gym.sent() == ["Touch 1", "Re: Touch 1"]
    assert gym.get("call-1").status == "pending_review" and gym.get("call-1").inbox_count == 0
