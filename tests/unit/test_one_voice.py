"""One voice per contact (seed 002 §21.3): at most one message a day to a contact across all of its tasks, the
day's message going to the task of the highest priority; an answer to the contact's own message is not held back."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from loopline.domain.send_ledger import local_day
from loopline.domain.task import Task
from loopline.domain.timeutil import format_time, parse_time
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.outreach import step_task
from tests.conftest import ANY_HOUR, command, signal
from tests.unit.in_memory import InMemoryLoopline

GYM = "gym"
ANN = "ann@example.com"
T0 = parse_time("2026-03-02T09:00:00Z")
ZONE = "America/New_York"


@pytest.fixture
def loopline() -> Iterator[InMemoryLoopline]:
    running = InMemoryLoopline()
    running.publish(command("cfg", "tenant.configure", format_time(T0), GYM, execution_mode="limited_auto", timezone=ZONE,
                              **ANY_HOUR))
    yield running
    running.close()


def create(loopline: InMemoryLoopline, ref: str, task_type: str, subject: str) -> None:
    loopline.publish(command(
        f"c-{ref}", "task.create", format_time(T0), GYM, task_id=ref, title=f"{task_type} Ann", task_type=task_type,
        contact=ANN, to_name="Ann", confidence=0.95, draft={"subject": subject, "body": "Hi Ann, see you soon."},
    ))


def sent_days(loopline: InMemoryLoopline) -> list[tuple[str, str]]:
    return [(local_day(parse_time(message["at"]), ZONE).isoformat(), message["details"]["subject"])
            for _, message in loopline.emails()]


def test_two_tasks_for_one_contact_send_one_email_a_day_the_higher_priority_first(loopline: InMemoryLoopline) -> None:
    create(loopline, "lead", "lead_followup", "Your free class")
    create(loopline, "churn", "churn_risk", "We miss you")

    now = T0
    for _ in range(8):
        now += timedelta(hours=3)
        loopline.tick(now)

    assert sent_days(loopline) == [("2026-03-02", "We miss you"), ("2026-03-03", "Your free class")]


def test_a_lower_priority_touch_due_with_a_higher_one_leaves_it_the_day(loopline: InMemoryLoopline) -> None:
    create(loopline, "lead", "lead_followup", "Your free class")
    create(loopline, "churn", "churn_risk", "We miss you")
    uow = UnitOfWork(loopline.app)
    lead = uow.get(loopline.task(GYM, "lead").id, Task)
    assert lead is not None

    said = step_task(uow, lead, T0 + timedelta(minutes=5))
    uow.commit()

    assert said is not None and "deferred until" in said
    assert lead.deferred is not None and lead.deferred["rule"] == "member_daily_limit"
    assert loopline.emails() == []


def test_an_answer_to_the_contacts_reply_goes_out_the_same_day(loopline: InMemoryLoopline) -> None:
    create(loopline, "churn", "churn_risk", "We miss you")
    loopline.tick(T0 + timedelta(hours=1))
    loopline.publish(signal("r1", "email.received", format_time(T0 + timedelta(hours=2)), GYM, sender=ANN,
                            subject="Re: We miss you", body="Maybe, what are the class times?"))
    loopline.tick(T0 + timedelta(hours=2, minutes=1))

    assert sent_days(loopline) == [("2026-03-02", "We miss you"), ("2026-03-02", "Re: We miss you")]
