"""The `questions` read model: every escalation question (seed 001 §6) with where it stands on its ladder and the
owner's answer, for the review queue: what waits for the owner, and the free-text answers logged for review."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Boolean, Column, Integer, String, Table, Text, select
from sqlalchemy.engine import Connection

from loopline.domain.question import PAUSE_ACTION, Question
from loopline.domain.timeutil import format_time
from loopline.projections import writes
from loopline.projections.runner import metadata

questions = Table(
    "questions", metadata,
    Column("aggregate_id", String(36), primary_key=True),
    Column("tenant", String(200), nullable=False, index=True),
    Column("question_id", String(200), nullable=False),
    Column("task_id", String(200)),
    Column("asker", String(200), nullable=False),
    Column("stuck_on", String(400), nullable=False),
    Column("question", Text, nullable=False),
    Column("options", Text, nullable=False),
    Column("blocked", Integer, nullable=False),
    Column("asked_at", String(40), nullable=False),
    Column("urgency", String(20), nullable=False),
    Column("last_step", String(40)),
    Column("paused", Boolean, nullable=False),
    Column("answered_at", String(40)),
    Column("answer_option", String(400)),
    Column("answer_text", Text),
    Column("for_review", Boolean, nullable=False),
)


def _asked(conn: Connection, event: Question.Asked, position: int) -> None:
    writes.insert(conn, questions, {
        "aggregate_id": str(event.originator_id), "tenant": event.tenant, "question_id": event.question_ref,
        "task_id": event.task_ref, "asker": event.asker, "stuck_on": event.stuck_on, "question": event.question,
        "options": json.dumps(event.options), "blocked": len(event.blocked_tasks),
        "asked_at": format_time(event.timestamp), "urgency": "normal", "last_step": None, "paused": False,
        "answered_at": None, "answer_option": None, "answer_text": None, "for_review": False,
    })


def _climbed(conn: Connection, event: Question.Climbed, position: int) -> None:
    paused = {"paused": True} if event.action == PAUSE_ACTION else {}
    writes.update(conn, questions, str(event.originator_id), set={"urgency": event.urgency, "last_step": event.action,
                                                                  **paused})


def _answered(conn: Connection, event: Question.Answered, position: int) -> None:
    writes.update(conn, questions, str(event.originator_id), set={
        "answered_at": format_time(event.timestamp), "answer_option": event.option, "answer_text": event.text,
        "for_review": event.for_review, "paused": False,
    })


name = "questions"
cost = 0.1  # a guess, not measured with bench/rebuild.py: few questions beside the tasks' events
tables = (questions,)
handlers = {Question.Asked: _asked, Question.Climbed: _climbed, Question.Answered: _answered}


def _shown(row: Any) -> dict[str, Any]:
    shown = {k: v for k, v in row._mapping.items() if k != "aggregate_id"}
    return {**shown, "options": json.loads(row.options)}


def open_questions(conn: Connection, tenant: str | None = None) -> list[dict[str, Any]]:
    """The questions waiting for the owner's answer, oldest first."""
    query = select(questions).where(questions.c.answered_at.is_(None))
    if tenant is not None:
        query = query.where(questions.c.tenant == tenant)
    return [_shown(row) for row in conn.execute(query.order_by(questions.c.asked_at, questions.c.question_id))]


def answers_for_review(conn: Connection, tenant: str | None = None) -> list[dict[str, Any]]:
    """Answers that picked none of the question's options: accepted as free text, kept for a human to review."""
    query = select(questions).where(questions.c.for_review.is_(True))
    if tenant is not None:
        query = query.where(questions.c.tenant == tenant)
    return [_shown(row) for row in conn.execute(query.order_by(questions.c.answered_at, questions.c.question_id))]


def find_question(conn: Connection, tenant: str, question_id: str) -> dict[str, Any] | None:
    """The tenant's question of that id, answered or not; None if it has none."""
    row = conn.execute(select(questions).where(questions.c.tenant == tenant,
                                               questions.c.question_id == question_id)).first()
    return _shown(row) if row else None
