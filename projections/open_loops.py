"""The `open_loops` read model: what `loops list` prints (each loop's task, channel, watch, deadline, deadline action and how it was resolved)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, Boolean, Column, String, Table, Text, select
from sqlalchemy.engine import Connection

from loopline.domain.open_loop import OpenLoop
from loopline.domain.timeutil import format_time
from loopline.projections import writes
from loopline.projections.runner import metadata

open_loops = Table(
    "open_loops", metadata,
    Column("aggregate_id", String(36), primary_key=True),
    Column("tenant", String(200), nullable=False, index=True),
    Column("loop_id", String(300), nullable=False),
    Column("task_id", String(200), nullable=False),
    Column("channel", String(32), nullable=False),
    Column("watch", JSON, nullable=False),
    Column("deadline", String(40), nullable=False),
    Column("if_unresolved", String(32), nullable=False),
    Column("description", Text, nullable=False),
    Column("origin", String(16), nullable=False),
    Column("registered_at", String(40), nullable=False),
    Column("resolved", Boolean, nullable=False, index=True),
    Column("resolved_at", String(40)),
    Column("resolved_by", String(32)),
    Column("resolution", Text),
)


def _registered(conn: Connection, event: OpenLoop.Registered, position: int) -> None:
    writes.insert(conn, open_loops, {
        "aggregate_id": str(event.originator_id), "tenant": event.tenant, "loop_id": event.ref,
        "task_id": event.task_ref, "channel": event.channel, "watch": event.watch,
        "deadline": format_time(event.deadline), "if_unresolved": event.if_unresolved,
        "description": event.description, "origin": event.origin, "registered_at": format_time(event.timestamp),
        "resolved": False, "resolved_at": None, "resolved_by": None, "resolution": None,
    })


def _resolved(conn: Connection, event: OpenLoop.Resolved, position: int) -> None:
    writes.update(conn, open_loops, str(event.originator_id), set={
        "resolved": True, "resolved_at": format_time(event.timestamp), "resolved_by": event.resolved_by,
        "resolution": event.reason + (f" [{event.rule}]" if event.rule else ""),
    })


name = "open_loops"
cost = 1  # seconds to rebuild bench/rebuild.py's store alone, to share rebuild work evenly
tables = (open_loops,)
handlers = {OpenLoop.Registered: _registered, OpenLoop.Resolved: _resolved}


def list_loops(
    conn: Connection, *, open_only: bool = False, tenant: str | None = None, task_id: str | None = None
) -> list[dict[str, Any]]:
    query = select(open_loops).order_by(open_loops.c.tenant, open_loops.c.registered_at, open_loops.c.loop_id)
    if open_only:
        query = query.where(open_loops.c.resolved.is_(False))
    if tenant:
        query = query.where(open_loops.c.tenant == tenant)
    if task_id:
        query = query.where(open_loops.c.task_id == task_id)
    rows = []
    for row in conn.execute(query):
        data = dict(row._mapping)
        data.pop("aggregate_id")
        rows.append(data)
    return rows
