"""Seed 001 §6: an unanswered question climbs the SLA ladder (5 min … 8 h pause, then 24 h re-escalation), and the
owner's reply is read as an option letter or accepted as free text for review."""

from __future__ import annotations

from datetime import timedelta

import pytest

from loopline.domain.question_ladder import (
    LADDER,
    InvalidQuestion,
    check_question,
    next_due,
    read_answer,
    render_question,
    rungs_due,
)
from loopline.domain.timeutil import parse_time

ASKED = parse_time("2026-11-27T09:00:00Z")
OPTIONS = ("Auth0 - managed, costs more", "Firebase - Google lock-in", "Custom - more control, more work")


def test_the_ladder_is_the_seeds_table_with_the_24_hour_re_escalation_last() -> None:
    assert [(rung.after, rung.action, rung.urgency) for rung in LADDER] == [
        (timedelta(minutes=5), "log", "normal"), (timedelta(minutes=15), "publish", "normal"),
        (timedelta(minutes=30), "ask", "normal"), (timedelta(hours=2), "resend_urgent", "urgent"),
        (timedelta(hours=8), "pause", "urgent"), (timedelta(hours=24), "re_escalate", "critical"),
    ]


def test_nothing_is_due_before_five_minutes_and_the_next_timer_is_at_five() -> None:
    assert rungs_due(ASKED, ASKED + timedelta(minutes=4), taken=0) == ()
    assert next_due(ASKED, taken=0) == ASKED + timedelta(minutes=5)


def test_a_late_timer_takes_every_rung_it_missed_and_none_already_taken() -> None:
    due = rungs_due(ASKED, ASKED + timedelta(hours=3), taken=1)
    assert [rung.action for rung in due] == ["publish", "ask", "resend_urgent"]
    assert next_due(ASKED, taken=4) == ASKED + timedelta(hours=8)


def test_the_climbed_ladder_files_no_more_timers() -> None:
    assert rungs_due(ASKED, ASKED + timedelta(days=3), taken=len(LADDER)) == ()
    assert next_due(ASKED, taken=len(LADDER)) is None


@pytest.mark.parametrize("reply, option, text", [
    ("B", OPTIONS[1], ""), ("b) lock-in is fine for now", OPTIONS[1], "lock-in is fine for now"),
    ("C: we own it", OPTIONS[2], "we own it"),
])
def test_a_leading_option_letter_picks_that_option_with_the_rest_as_reasoning(reply: str, option: str,
                                                                            text: str) -> None:
    answer = read_answer(reply, OPTIONS)
    assert (answer.option, answer.text, answer.for_review) == (option, text, False)


def test_a_reply_that_matches_no_option_is_accepted_as_free_text_and_logged_for_review() -> None:
    answer = read_answer("Also ask Dana first", OPTIONS)
    assert (answer.option, answer.text, answer.for_review) == (None, "Also ask Dana first", True)
    assert read_answer("D", OPTIONS).option is None


def test_free_text_to_an_open_question_needs_no_review_and_an_empty_reply_is_not_an_answer() -> None:
    assert read_answer("Go with the cheaper one", ()).for_review is False
    assert read_answer("  \n", OPTIONS) is None


def test_the_question_reads_as_the_seeds_format_with_lettered_options() -> None:
    text = render_question(asker="Build agent", task_title="Implement user authentication",
                           stuck_on="Which OAuth provider to use", question="Which provider?", options=OPTIONS,
                           blocked=3, urgency="urgent")
    assert text.startswith("URGENT: Build agent needs help\nTask: Implement user authentication")
    assert "A) Auth0 - managed, costs more\nB) Firebase - Google lock-in" in text
    assert "Blocked: 3 downstream tasks waiting" in text
    assert text.endswith("Reply A, B, C with optional reasoning.")


@pytest.mark.parametrize("question, options, field", [
    ("  ", (), "question"), ("Which?", ("A", " "), "options"), ("Which?", tuple("abcdefg"), "options"),
])
def test_a_question_without_text_or_with_bad_options_names_the_field(question: str, options: tuple[str, ...],
                                                                     field: str) -> None:
    with pytest.raises(InvalidQuestion, match=f"^{field}:"):
        check_question(question, options)
