"""Escalation questions on the in-memory store (seed 001 §6): the tick climbs an unanswered question's ladder and
puts it before the owner at 30 min and urgently at 2 h; the answer is recorded once and stops the ladder."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import pytest

from loopline.domain import ids
from loopline.domain.notice_budget import category_of
from loopline.domain.question import Question, UnknownQuestion
from loopline.domain.task import Task
from loopline.domain.task_control import TaskControl
from loopline.domain.timeutil import format_time
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.questions import answer_question
from tests.conftest import command
from tests.unit.in_memory import InMemoryLoopline

TENANT = "studio"
T0 = datetime(2026, 11, 2, 9, 0, tzinfo=timezone.utc)


@pytest.fixture
def loopline() -> Iterator[InMemoryLoopline]:
    running = InMemoryLoopline()
    running.publish(command("c-auth", "task.create", format_time(T0), TENANT, task_id="auth",
                            title="Implement user authentication"))
    running.publish(command("c-q1", "question.ask", format_time(T0), TENANT, question_id="q1", task_id="auth",
                            asker="Build agent", stuck_on="Which OAuth provider to use",
                            question="Should we use Auth0, Firebase Auth, or our own?",
                            options=["Auth0", "Firebase", "Custom"], blocked_tasks=["login", "signup", "sso"]))
    yield running
    running.close()


def _questions_asked(loopline: InMemoryLoopline) -> list[Task.UserNotified]:
    task = loopline.task(TENANT, "auth")
    return [event for event in loopline.app.events.get(task.id)
            if isinstance(event, Task.UserNotified) and event.kind.startswith("question")]


def test_the_tick_asks_the_owner_at_30_minutes_and_urgently_at_2_hours(loopline: InMemoryLoopline) -> None:
    loopline.tick(T0 + timedelta(minutes=10))
    assert _questions_asked(loopline) == []
    loopline.tick(T0 + timedelta(minutes=31))
    loopline.tick(T0 + timedelta(hours=2, minutes=1))
    asked = _questions_asked(loopline)
    assert [event.kind for event in asked] == ["question", "question_urgent"]
    assert "Blocked: 3 downstream tasks waiting" in asked[0].message
    assert asked[1].message.startswith("URGENT: Build agent needs help")


def test_the_first_answer_is_the_decision_and_no_later_rung_asks_again(loopline: InMemoryLoopline) -> None:
    loopline.tick(T0 + timedelta(minutes=31))
    loopline.publish(command("c-a1", "question.answer", format_time(T0 + timedelta(minutes=40)), TENANT,
                             question_id="q1", answer="A, managed is worth it"))
    loopline.publish(command("c-a2", "question.answer", format_time(T0 + timedelta(minutes=41)), TENANT,
                             question_id="q1", answer="C"))
    loopline.tick(T0 + timedelta(hours=9))
    question = UnitOfWork(loopline.app).get(ids.question_id(TENANT, "q1"), Question)
    assert question.answer == {"option": "Auth0", "text": "managed is worth it", "for_review": False}
    assert [event.kind for event in _questions_asked(loopline)] == ["question"]


def test_an_answer_to_a_question_never_asked_names_the_field(loopline: InMemoryLoopline) -> None:
    with pytest.raises(UnknownQuestion, match="^question_id:"):
        answer_question(UnitOfWork(loopline.app), tenant=TENANT, question_ref="q9", reply="A", now=T0)


def test_asking_an_answered_question_again_changes_nothing(loopline: InMemoryLoopline) -> None:
    loopline.publish(command("c-a1", "question.answer", format_time(T0), TENANT, question_id="q1", answer="B"))
    [again] = loopline.publish(command("c-q1-again", "question.ask", format_time(T0 + timedelta(hours=1)), TENANT,
                                       question_id="q1", task_id="auth", asker="Build agent", stuck_on="OAuth",
                                       question="Which one?"))
    assert (again.accepted, again.detail) == (True, "question q1: already answered or its ladder climbed; nothing "
                                              "asked again")


def _paused_by(loopline: InMemoryLoopline, task_ref: str) -> str | None:
    control = UnitOfWork(loopline.app).get(ids.task_control_id(TENANT, task_ref), TaskControl)
    return (control.pause_record or {}).get("by") if control is not None else None


def test_at_8_hours_the_questions_tasks_pause_and_the_answer_resumes_them(loopline: InMemoryLoopline) -> None:
    loopline.publish(command("c-login", "task.create", format_time(T0), TENANT, task_id="login", title="Login page"))
    loopline.tick(T0 + timedelta(hours=7))
    assert _paused_by(loopline, "auth") is None
    loopline.tick(T0 + timedelta(hours=8, minutes=1))
    assert (_paused_by(loopline, "auth"), _paused_by(loopline, "login")) == ("question q1", "question q1")

    [answered] = loopline.publish(command("c-a1", "question.answer", format_time(T0 + timedelta(hours=9)), TENANT,
                                          question_id="q1", answer="A"))
    assert answered.detail == "question q1: answered (Auth0); resumed auth, login"
    assert (_paused_by(loopline, "auth"), _paused_by(loopline, "login")) == (None, None)


def test_the_answer_leaves_the_owners_own_pause_of_a_task_alone(loopline: InMemoryLoopline) -> None:
    loopline.publish(command("c-p", "task.pause", format_time(T0), TENANT, task_id="auth", reason="on hold this week"))
    loopline.tick(T0 + timedelta(hours=8, minutes=1))
    [answered] = loopline.publish(command("c-a1", "question.answer", format_time(T0 + timedelta(hours=9)), TENANT,
                                          question_id="q1", answer="B"))
    assert answered.detail == "question q1: answered (Firebase)" and _paused_by(loopline, "auth") == "owner"


def test_the_owners_notice_offers_the_answer_command_for_the_question(loopline: InMemoryLoopline) -> None:
    loopline.tick(T0 + timedelta(minutes=31))
    [asked] = _questions_asked(loopline)
    assert [(action["command"], action["data"]) for action in asked.actions] == [
        ("question.answer", {"question_id": "q1"}), ("task.cancel", {"task_id": "auth"})]
    assert category_of(asked.kind) == "escalation"  # budgeted as an escalation: never batched, quiet hours kept
