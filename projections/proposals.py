"""The `proposals` read model (seed 001 §3–§7): every proposal with where it stands (debating, ready, shown,
approved, rejected, failed, skipped, avoided), for the review queue: the survivors waiting for the owner's approve or reject."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Column, String, Table, Text, select
from sqlalchemy.engine import Connection

from loopline.domain.proposal import Proposal
from loopline.domain.timeutil import format_time
from loopline.projections import writes
from loopline.projections.runner import metadata

proposals = Table(
    "proposals", metadata,
    Column("aggregate_id", String(36), primary_key=True),
    Column("tenant", String(200), nullable=False, index=True),
    Column("proposal_id", String(200), nullable=False),
    Column("title", String(400), nullable=False),
    Column("summary", Text, nullable=False),
    Column("theme", String(100), nullable=False),
    Column("impact", String(20), nullable=False),
    Column("status", String(20), nullable=False),
    Column("flag", String(40)),
    Column("batch_ref", String(100)),
    Column("task_id", String(200)),
    Column("rejection_type", String(20)),
    Column("similar_to", String(200)),
    Column("proposed_at", String(40), nullable=False),
    Column("updated_at", String(40), nullable=False),
)
WAITING = ("ready", "shown")
"""The statuses that wait for the owner's answer."""

DEBATE_STATUS = {"ready": "ready", "owner": "ready", "failed": "failed"}
"""A debate round's outcome as the proposal's status (as `Proposal.DebateRoundRecorded` applies it)."""


def _proposed(conn: Connection, event: Proposal.Proposed, position: int) -> None:
    at = format_time(event.timestamp)
    avoided = isinstance(event, Proposal.Avoided)
    writes.insert(conn, proposals, {
        "aggregate_id": str(event.originator_id), "tenant": event.tenant, "proposal_id": event.proposal_ref,
        "title": event.title, "summary": event.summary, "theme": event.theme, "impact": event.impact,
        "status": "avoided" if avoided else "debating", "flag": None, "batch_ref": None, "task_id": None,
        "rejection_type": event.rejection_type if avoided else None,
        "similar_to": event.similar_to if avoided else None, "proposed_at": at, "updated_at": at,
    })


def _set(event: Any, conn: Connection, **values: Any) -> None:
    writes.update(conn, proposals, str(event.originator_id), set={**values, "updated_at": format_time(event.timestamp)})


def _debated(conn: Connection, event: Proposal.DebateRoundRecorded, position: int) -> None:
    _set(event, conn, status=DEBATE_STATUS.get(event.outcome, "debating"), flag=event.flag)


def _abandoned(conn: Connection, event: Proposal.DebateAbandoned, position: int) -> None:
    _set(event, conn, status="skipped")


def _shown(conn: Connection, event: Proposal.Shown, position: int) -> None:
    _set(event, conn, status="shown", batch_ref=event.batch_ref)


def _approved(conn: Connection, event: Proposal.Approved, position: int) -> None:
    _set(event, conn, status="approved", task_id=event.task_ref)


def _rejected(conn: Connection, event: Proposal.Rejected, position: int) -> None:
    _set(event, conn, status="rejected", rejection_type=event.rejection_type)


name = "proposals"
cost = 0.1  # a guess, not measured with bench/rebuild.py: a few proposals a day beside the tasks' events
tables = (proposals,)
handlers = {
    Proposal.Proposed: _proposed, Proposal.Avoided: _proposed, Proposal.DebateRoundRecorded: _debated,
    Proposal.DebateAbandoned: _abandoned, Proposal.Shown: _shown, Proposal.Approved: _approved,
    Proposal.Rejected: _rejected,
}


def list_proposals(
    conn: Connection, tenant: str | None = None, statuses: tuple[str, ...] = WAITING,
) -> list[dict[str, Any]]:
    """The tenant's proposals in these statuses (by default those waiting for the owner), oldest first."""
    query = select(proposals).where(proposals.c.status.in_(statuses))
    if tenant is not None:
        query = query.where(proposals.c.tenant == tenant)
    rows = conn.execute(query.order_by(proposals.c.proposed_at, proposals.c.proposal_id))
    return [{k: v for k, v in row._mapping.items() if k != "aggregate_id"} for row in rows]


def find_proposal(conn: Connection, tenant: str, proposal_id: str) -> dict[str, Any] | None:
    """The tenant's proposal of that id, whatever its status; None if it has none."""
    query = select(proposals).where(proposals.c.tenant == tenant, proposals.c.proposal_id == proposal_id)
    row = conn.execute(query).first()
    return {k: v for k, v in row._mapping.items() if k != "aggregate_id"} if row else None
