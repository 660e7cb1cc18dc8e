"""The Question aggregate: it climbs seed 001 §6's ladder while unanswered, pauses at 8 h, and records the owner's
answer as the decision exactly once; replaying its events rebuilds the same state."""

from __future__ import annotations

from datetime import timedelta

import pytest

from loopline.domain import ids
from loopline.domain.question import AlreadyAnswered, NotAnAnswer, Question
from loopline.domain.timeutil import parse_time

ASKED = parse_time("2026-11-27T09:00:00Z")


def _question() -> Question:
    return Question.ask(id=ids.question_id("acme", "q1"), tenant="acme", question_ref="q1", task_ref="t1",
                        asker="Build agent", stuck_on="Which OAuth provider", question="Which provider?",
                        options=("Auth0", "Firebase", "Custom"), blocked_tasks=("t2", "t3"), now=ASKED)


def _replayed(question: Question) -> Question:
    events = [event for _, event in question.collect_ordered_events()]
    rebuilt = None
    for event in events:
        rebuilt = event.mutate(rebuilt)
    return rebuilt


def test_an_unanswered_question_climbs_to_its_pause_and_its_timer_moves_on() -> None:
    question = _question()
    assert question.climb(ASKED + timedelta(minutes=31)) == ("log", "publish", "ask")
    assert (question.urgency, question.is_paused, question.next_due) == ("normal", False, ASKED + timedelta(hours=2))
    assert question.climb(ASKED + timedelta(hours=8)) == ("resend_urgent", "pause")
    assert (question.urgency, question.is_paused) == ("urgent", True)
    assert question.climb(ASKED + timedelta(hours=8)) == ()


def test_the_answer_is_the_decision_recorded_once_and_stops_the_ladder() -> None:
    question = _question()
    question.climb(ASKED + timedelta(hours=9))
    question.record_answer("B, lock-in is fine", ASKED + timedelta(hours=9, minutes=1))
    assert question.answer == {"option": "Firebase", "text": "lock-in is fine", "for_review": False}
    assert (question.is_paused, question.next_due, question.climb(ASKED + timedelta(days=2))) == (False, None, ())
    with pytest.raises(AlreadyAnswered, match="^question q1"):
        question.record_answer("C", ASKED + timedelta(hours=10))


def test_an_empty_reply_records_nothing_and_says_what_to_give() -> None:
    question = _question()
    with pytest.raises(NotAnAnswer, match="^answer:"):
        question.record_answer("   ", ASKED)
    assert question.is_open


def test_replaying_its_events_rebuilds_the_same_question() -> None:
    question = _question()
    question.climb(ASKED + timedelta(hours=3))
    question.record_answer("ask Dana first", ASKED + timedelta(hours=4))
    rebuilt = _replayed(question)
    assert (rebuilt.taken, rebuilt.urgency, rebuilt.answer, rebuilt.options, rebuilt.blocked_tasks) == (
        4, "urgent", {"option": None, "text": "ask Dana first", "for_review": True}, question.options, ("t2", "t3"))
