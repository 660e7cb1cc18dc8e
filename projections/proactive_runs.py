"""The `proactive_runs` read model: one row per tenant with its heartbeat."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Column, Integer, String, Table, Text, select
from sqlalchemy.engine import Connection

from domain.proactive_run import ProactiveRun
from domain.timeutil import format_time
from projections.runner import metadata

proactive_runs = Table(
    "proactive_runs", metadata,
    Column("aggregate_id", String(36), primary_key=True),
    Column("tenant", String(200), nullable=False, unique=True),
    Column("next_run_at", String(40), nullable=False),
    Column("next_run_reason", Text, nullable=False),
    Column("last_run_at", String(40)),
    Column("last_run_summary", Text),
    Column("runs", Integer, nullable=False),
    Column("pending_escalations", Integer, nullable=False),
)


def _where(event: Any):
    return proactive_runs.update().where(proactive_runs.c.aggregate_id == str(event.originator_id))


def _started(conn: Connection, event: ProactiveRun.Started, position: int) -> None:
    conn.execute(
        proactive_runs.insert().values(
            aggregate_id=str(event.originator_id), tenant=event.tenant, next_run_at=format_time(event.next_run_at),
            next_run_reason=event.next_run_reason, runs=0, pending_escalations=0,
        )
    )


def _scheduled(conn: Connection, event: ProactiveRun.NextRunScheduled, position: int) -> None:
    conn.execute(_where(event).values(next_run_at=format_time(event.next_run_at), next_run_reason=event.reason))


def _escalation(conn: Connection, event: ProactiveRun.EscalationQueued, position: int) -> None:
    conn.execute(_where(event).values(pending_escalations=proactive_runs.c.pending_escalations + 1))


def _ran(conn: Connection, event: ProactiveRun.RunRecorded, position: int) -> None:
    conn.execute(
        _where(event).values(
            last_run_at=format_time(event.timestamp), last_run_summary=event.summary, runs=proactive_runs.c.runs + 1,
            pending_escalations=proactive_runs.c.pending_escalations - event.escalations_handled,
            next_run_at=format_time(event.next_run_at), next_run_reason=event.next_run_reason,
        )
    )


name = "proactive_runs"
tables = (proactive_runs,)
handlers = {
    ProactiveRun.Started: _started,
    ProactiveRun.NextRunScheduled: _scheduled,
    ProactiveRun.EscalationQueued: _escalation,
    ProactiveRun.RunRecorded: _ran,
}


def list_runs(conn: Connection) -> list[dict[str, Any]]:
    rows = conn.execute(select(proactive_runs).order_by(proactive_runs.c.tenant))
    return [{k: v for k, v in row._mapping.items() if k != "aggregate_id"} for row in rows]
