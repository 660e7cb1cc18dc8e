"""`loopline review list` says which tasks a question holds up (the task it was asked on, then the downstream ones),
and tells a waiting task's papers in one line."""

from __future__ import annotations

from loopline.cli.review import task_line
from loopline.projections.review_queue import question_item


def question_row(task_id: str | None, blocked: int) -> dict:
    return {"tenant": "iron_temple", "question_id": "zoe-offer", "question": "Offer Zoe a free week or 20% off?",
            "asker": "Retention agent", "stuck_on": "which offer Zoe gets", "task_id": task_id, "blocked": blocked,
            "options": ["A free week", "20% off for 3 months"], "asked_at": "2026-04-21T09:10:00Z",
            "urgency": "urgent", "paused": True}


def test_a_question_on_one_task_names_that_task_as_waiting_not_zero_blocked():
    assert question_item(question_row("churn-zoe", 0))["why"] == (
        "Retention agent is stuck on which offer Zoe gets; churn-zoe waits for the answer")


def test_a_question_names_its_task_and_counts_the_downstream_ones():
    assert question_item(question_row("churn-zoe", 2))["why"].endswith("churn-zoe and 2 downstream task(s) wait for the answer")
    assert question_item(question_row(None, 1))["why"].endswith("; 1 downstream task(s) wait for the answer")


def test_a_waiting_tasks_papers_are_told_in_one_line_with_the_last_message_and_the_draft():
    papers = {"status": "pending_review", "last": {"author": "contact", "text": "Is the\ndiscount still on?"},
              "contact_said": None, "draft": {"subject": "Yes", "body": "20% off until June."}, "escalation": None}
    assert task_line(papers) == "last from contact: Is the discount still on? | draft: Yes: 20% off until June."
    assert task_line({**papers, "last": None, "draft": None}) == "no message yet"
