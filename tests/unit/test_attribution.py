"""Attribution (seed 002 §9): an outcome is worth its type's multiplier times the tenant's average value, or its
signal's amount; a close records the value on the task, and an outcome without revenue takes a value back."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from loopline.domain.attribution import attributed_value
from loopline.domain.task import Task
from loopline.domain.task_types import TASK_TYPES
from loopline.domain.timeutil import format_time, parse_time
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.attribution import attribute_value
from tests.conftest import ANY_HOUR, command, signal
from tests.unit.fakes import ScriptedModel
from tests.unit.in_memory import InMemoryLoopline

GYM = "gym"
ANN = "ann@example.com"
T0 = parse_time("2026-03-02T09:00:00Z")
CHURN = TASK_TYPES["churn_risk"]


def test_an_outcome_is_worth_its_multiplier_times_the_average_value() -> None:
    assert attributed_value(CHURN.outcome("retained"), 175.0, None) == (175.0, "multiplier")
    assert attributed_value(CHURN.outcome("verbal_commitment"), 175.0, None) == (87.5, "multiplier")
    assert attributed_value(TASK_TYPES["win_back"].outcome("recovered"), 150.0, None) == (450.0, "multiplier")


def test_a_signal_amount_is_the_value_itself() -> None:
    assert attributed_value(TASK_TYPES["payment_recovery"].outcome("recovered"), 150.0, 89.99) == (89.99, "signal_amount")


def test_an_outcome_without_revenue_is_worth_nothing_whatever_the_signal_says() -> None:
    assert attributed_value(CHURN.outcome("unresponsive"), 150.0, 500.0) == (0.0, "none")
    assert attributed_value(None, 150.0, None) == (0.0, "none")


@pytest.fixture
def loopline() -> Iterator[InMemoryLoopline]:
    running = InMemoryLoopline(ScriptedModel(evaluation={
        "decision": "close", "outcome": "verbal_commitment", "confidence": 0.9, "reasoning": "Named Tuesday."}))
    running.publish(command("cfg", "tenant.configure", format_time(T0), GYM, execution_mode="limited_auto",
                            average_value=175, **ANY_HOUR))
    yield running
    running.close()


def _verbal_commitment(loopline: InMemoryLoopline) -> Task:
    loopline.publish(command("c1", "task.create", format_time(T0), GYM, task_id="churn", title="Ann", contact=ANN,
                             task_type="churn_risk", confidence=0.95, draft={"subject": "We miss you", "body": "Hi"}))
    loopline.tick(T0 + timedelta(hours=1))
    loopline.publish(signal("r1", "email.received", format_time(T0 + timedelta(hours=2)), GYM, sender=ANN,
                            subject="Re: We miss you", body="I'll be there Tuesday."))
    return loopline.task(GYM, "churn")


def test_a_close_with_a_revenue_outcome_credits_the_task_at_the_tenants_average_value(loopline: InMemoryLoopline) -> None:
    task = _verbal_commitment(loopline)

    credited = [e for e in loopline.events() if isinstance(e, Task.ValueAttributed)]
    assert task.outcome == "verbal_commitment" and task.attributed_value == 87.5
    assert [(e.outcome, e.value, e.basis, e.multiplier, e.average_value, e.late) for e in credited] == [
        ("verbal_commitment", 87.5, "multiplier", 0.5, 175.0, False)]


def test_an_outcome_without_revenue_takes_back_the_value_credited_before(loopline: InMemoryLoopline) -> None:
    task = _verbal_commitment(loopline)
    uow = UnitOfWork(loopline.app)
    task = uow.get(task.id, Task)
    assert task is not None

    value = attribute_value(uow, task, "engaged_conversation", now=T0 + timedelta(days=15))
    uow.commit()

    assert value == 0.0 and loopline.task(GYM, "churn").attributed_value == 0.0


def test_an_outcome_without_revenue_on_a_task_worth_nothing_records_nothing(loopline: InMemoryLoopline) -> None:
    task = _verbal_commitment(loopline)
    uow = UnitOfWork(loopline.app)
    task = uow.get(task.id, Task)
    assert task is not None
    attribute_value(uow, task, "engaged_conversation", now=T0 + timedelta(days=15))
    attribute_value(uow, task, "unresponsive", now=T0 + timedelta(days=16))
    uow.commit()

    credited = [(e.outcome, e.value) for e in loopline.events() if isinstance(e, Task.ValueAttributed)]
    assert credited == [("verbal_commitment", 87.5), ("engaged_conversation", 0.0)]
