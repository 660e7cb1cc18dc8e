"""The grey-area framework (seed 002 §18): hard rules first, then confidence against the point's threshold, then the
cost of being wrong; and "I don't know" is an answer the model and the offline policy may give, which asks the owner."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from loopline.adapters.offline_policy import OfflinePolicy
from loopline.domain.grey_area import CLOSE, SEND, DecisionPoint, cost_of_being_wrong, resolve
from loopline.domain.task import Task
from loopline.domain.timeutil import format_time, parse_time
from tests.conftest import command, signal
from tests.unit.in_memory import InMemoryLoopline

GYM = "gym"
ANN = "ann@example.com"
T0 = parse_time("2026-03-02T09:00:00Z")


def at(hours: float) -> str:
    return format_time(T0 + timedelta(hours=hours))


@pytest.mark.parametrize(("external", "reversible", "cost"), [
    (True, False, "high"), (True, True, "medium"), (False, True, "low"), (False, False, "low"),
])
def test_the_cost_of_being_wrong_follows_the_safety_profile(external: bool, reversible: bool, cost: str) -> None:
    assert cost_of_being_wrong(external_side_effect=external, reversible=reversible) == cost


@pytest.mark.parametrize(("point", "confidence", "call"), [
    (SEND, 0.5, "act"), (SEND, 0.49, "escalate"),
    (CLOSE, 0.6, "act"), (CLOSE, 0.59, "ask"),
    (DecisionPoint("redraft", 0.9, "low"), 0.1, "act"),
])
def test_below_its_threshold_a_decision_goes_to_the_owner_as_its_cost_says(
        point: DecisionPoint, confidence: float, call: str) -> None:
    assert resolve(point, confidence) == call


@pytest.fixture
def loopline() -> Iterator[InMemoryLoopline]:
    running = InMemoryLoopline(model=OfflinePolicy())
    running.publish(command("cfg", "tenant.configure", at(0), GYM, execution_mode="limited_auto"))
    yield running
    running.close()


def test_a_reply_the_offline_policy_cannot_read_asks_the_owner_its_question(loopline: InMemoryLoopline) -> None:
    loopline.publish(command("c1", "task.create", at(0), GYM, task_id="ann", title="Win Ann back", task_type="win_back",
                             contact=ANN, to_name="Ann", confidence=0.95))
    loopline.tick(T0 + timedelta(hours=1))
    assert len(loopline.emails()) == 1
    loopline.publish(signal("r1", "email.received", at(30), GYM, sender=ANN, subject="Re: hi",
                            body="The blue one, like last time."))
    task = loopline.task(GYM, "ann")
    assert (task.status, task.escalation_cause) == ("escalated", "dont_know")
    [decision] = [e for e in loopline.events() if isinstance(e, Task.DecisionRecorded) and e.point == "evaluate_reply"]
    assert decision.decision == "dont_know" and decision.output["question"]
    [told] = [e for e in loopline.events() if isinstance(e, Task.UserNotified) and e.kind == "escalation"]
    assert "does not know, and asks you: What does the contact mean" in told.message
    assert "The blue one, like last time." in str(told.quote)
    assert len(loopline.emails()) == 1
