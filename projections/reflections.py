"""The `reflections` read model (seed 004 §7): one row per decision a human made (a task or a proposal approved or
rejected with its type, a question answered), kept for later tuning of the rules that asked them."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Boolean, Column, Integer, String, Table, Text, select
from sqlalchemy.engine import Connection

from loopline.domain.proposal import Proposal
from loopline.domain.question import Question
from loopline.domain.task import Task
from loopline.domain.timeutil import format_time
from loopline.projections import writes
from loopline.projections.runner import metadata

reflections = Table(
    "reflections", metadata,
    Column("position", Integer, primary_key=True),
    Column("tenant", String(200), nullable=False, index=True),
    Column("at", String(40), nullable=False),
    Column("kind", String(20), nullable=False),
    Column("subject", String(200), nullable=False),
    Column("decision", String(400)),
    Column("rejection_type", String(40)),
    Column("detail", Text),
    Column("for_review", Boolean, nullable=False),
)


def _reviewed(conn: Connection, event: Task.Reviewed, position: int) -> None:
    writes.insert(conn, reflections, {
        "position": position, "tenant": event.tenant, "at": format_time(event.timestamp), "kind": "task",
        "subject": event.task_ref, "decision": event.decision, "rejection_type": event.rejection_type,
        "detail": event.reason, "for_review": False,
    })


def _answered(conn: Connection, event: Question.Answered, position: int) -> None:
    writes.insert(conn, reflections, {
        "position": position, "tenant": event.tenant, "at": format_time(event.timestamp), "kind": "question",
        "subject": event.question_ref, "decision": event.option, "rejection_type": None, "detail": event.text,
        "for_review": event.for_review,
    })


def _proposal_decided(conn: Connection, event: Proposal.Approved | Proposal.Rejected, position: int) -> None:
    approved = isinstance(event, Proposal.Approved)
    writes.insert(conn, reflections, {
        "position": position, "tenant": event.tenant, "at": format_time(event.timestamp), "kind": "proposal",
        "subject": event.proposal_ref, "decision": "approved" if approved else "rejected",
        "rejection_type": None if approved else event.rejection_type,
        "detail": f"became task {event.task_ref}" if approved else event.reason, "for_review": False,
    })


name = "reflections"
cost = 0.1  # a guess, not measured with bench/rebuild.py: one row per human decision
tables = (reflections,)
handlers = {
    Task.Reviewed: _reviewed, Question.Answered: _answered, Proposal.Approved: _proposal_decided,
    Proposal.Rejected: _proposal_decided,
}


def reflection_log(conn: Connection, tenant: str | None = None) -> list[dict[str, Any]]:
    """Every human decision, in the order made."""
    query = select(reflections)
    if tenant is not None:
        query = query.where(reflections.c.tenant == tenant)
    return [{k: v for k, v in row._mapping.items() if k != "position"}
            for row in conn.execute(query.order_by(reflections.c.position))]
