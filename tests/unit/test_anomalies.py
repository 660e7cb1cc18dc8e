"""Anomaly detection (seed 002 §7.5): a conversation that runs five turns without an outcome, or a contact who writes
three times in a row with nothing answered, goes to the owner, and the model is not asked about that reply."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from loopline.domain.safety_limits import ANOMALY_TURNS
from loopline.domain.status import TaskStatus
from loopline.domain.timeutil import format_time, parse_time
from tests.conftest import command, signal
from tests.unit.fakes import ScriptedModel
from tests.unit.in_memory import InMemoryLoopline

GYM = "gym"
LEAD = "lead@example.com"
T0 = parse_time("2026-03-02T14:00:00Z")


@pytest.fixture
def loopline() -> Iterator[InMemoryLoopline]:
    # The model waits after each reply: nothing is sent, so no message budget or send limit ends the conversation.
    running = InMemoryLoopline(ScriptedModel(evaluation={"decision": "wait", "confidence": 0.9, "reasoning": "thinking"}))
    running.publish(
        command("cfg", "tenant.configure", format_time(T0), GYM, execution_mode="limited_auto"),
        command("c1", "task.create", format_time(T0), GYM, task_id="lead", title="Lead", task_type="lead_followup",
                contact=LEAD, confidence=0.95, draft={"subject": "Your free class", "body": "Hi, come try a class?"}),
    )
    running.tick(T0 + timedelta(minutes=1))
    yield running
    running.close()


def reply(n: int) -> dict:
    return signal(f"r{n}", "email.received", format_time(T0 + timedelta(hours=n)), GYM, sender=LEAD,
                  subject="Re: Your free class", body=f"Question number {n}?")


def evaluations(loopline: InMemoryLoopline) -> int:
    return sum(1 for request in loopline.model.requests if request.point == "evaluate_reply")


def test_the_reply_after_five_turns_without_an_outcome_goes_to_the_owner(loopline: InMemoryLoopline) -> None:
    for n in range(1, ANOMALY_TURNS + 1):
        loopline.publish(reply(n))
    task = loopline.task(GYM, "lead")
    assert task.status is not TaskStatus.ESCALATED and task.turns_used == ANOMALY_TURNS < task.outreach["budget_turns"]

    loopline.publish(reply(ANOMALY_TURNS + 1))

    task = loopline.task(GYM, "lead")
    assert (task.status, task.escalation_cause) == (TaskStatus.ESCALATED, "anomaly_turns")
    assert evaluations(loopline) == ANOMALY_TURNS


def test_three_replies_in_a_row_with_nothing_answered_go_to_the_owner(loopline: InMemoryLoopline) -> None:
    loopline.publish(reply(1), reply(2), reply(3))  # all three are routed before the model answers any

    task = loopline.task(GYM, "lead")
    assert (task.status, task.escalation_cause) == (TaskStatus.ESCALATED, "anomaly_replies")
    assert evaluations(loopline) == 0 and "wrote 3 times in a row" in (task.escalation_reason or "")
