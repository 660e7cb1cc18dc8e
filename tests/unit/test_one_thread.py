"""One thread per task: every message of an acting task after the first answers the one before it
(`In-Reply-To`, `References`) under `Re:` the first subject, as the SMTP channel composes it."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from loopline.adapters.smtp import compose, message_id
from loopline.domain.task_outreach import THREAD_REFERENCES, TaskOutreach
from loopline.domain.timeutil import format_time, parse_time
from tests.conftest import command, signal
from tests.unit.in_memory import InMemoryLoopline

GYM = "gym"
ANN = "ann@example.com"
T0 = parse_time("2026-03-02T09:00:00Z")
SENDER = "coach@gym.example"


@pytest.fixture
def loopline() -> Iterator[InMemoryLoopline]:
    running = InMemoryLoopline()
    running.publish(command("cfg", "tenant.configure", format_time(T0), GYM, execution_mode="limited_auto"))
    yield running
    running.close()


def create_win_back(loopline: InMemoryLoopline) -> None:
    loopline.publish(command(
        "c1", "task.create", format_time(T0), GYM, task_id="t1", title="Win Ann back", task_type="win_back", contact=ANN,
        to_name="Ann", confidence=0.95, draft={"subject": "We miss you at the gym", "body": "Hi Ann, come back soon."},
    ))


def tick_until_emails(loopline: InMemoryLoopline, count: int) -> list[tuple[str, dict]]:
    now = T0
    while len(loopline.emails()) < count and now < T0 + timedelta(days=40):
        now += timedelta(hours=6)
        loopline.tick(now)
    return loopline.emails()


def test_each_touch_answers_the_one_before_under_re_the_first_subject(loopline: InMemoryLoopline) -> None:
    create_win_back(loopline)

    emails = [compose(key=key, message=message, sender=SENDER) for key, message in tick_until_emails(loopline, 3)]

    first, second, third = emails[:3]
    assert first["Subject"] == "We miss you at the gym" and first["In-Reply-To"] is None
    assert second["Subject"] == third["Subject"] == "Re: We miss you at the gym"
    assert second["In-Reply-To"] == first["Message-ID"] and second["References"] == first["Message-ID"]
    assert third["In-Reply-To"] == second["Message-ID"]
    assert third["References"] == f"{first['Message-ID']} {second['Message-ID']}"


def test_the_answer_to_a_reply_stays_in_the_thread(loopline: InMemoryLoopline) -> None:
    create_win_back(loopline)
    [(first_key, _)] = tick_until_emails(loopline, 1)
    replied_at = parse_time(loopline.emails()[0][1]["at"]) + timedelta(hours=1)

    loopline.publish(signal("r1", "email.received", format_time(replied_at), GYM, sender=ANN,
                            subject="Re: We miss you at the gym", body="Maybe, what are the class times?"))
    loopline.tick(replied_at + timedelta(minutes=1))

    [(_, answer)] = loopline.emails()[1:]
    email = compose(key="x:1", message=answer, sender=SENDER)
    assert email["Subject"] == "Re: We miss you at the gym"
    assert email["In-Reply-To"] == email["References"] == message_id(first_key, SENDER)


def test_the_thread_names_its_first_and_latest_messages_only() -> None:
    holder = TaskOutreach.__new__(TaskOutreach)
    holder.outreach = {}
    for version in range(1, 30):
        holder._join_thread("Hello", f"task:{version}")

    assert holder.thread_references == ["task:1", *[f"task:{v}" for v in range(31 - THREAD_REFERENCES, 30)]]
    assert holder.thread_subject("anything") == "Re: Hello"
