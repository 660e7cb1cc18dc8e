"""The `proactive_runs` read model: one row per tenant with its heartbeat and its pace (the owner's activity tier and
the runs in a row that took no action, as the last `ProactiveRun.Paced` set them)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy import Column, Integer, String, Table, Text, select
from sqlalchemy.engine import Connection, Engine

from loopline.domain.proactive_run import RESCUE_REASON, RETURN_REASON, ProactiveRun
from loopline.domain.safety_limits import STALE_AFTER
from loopline.domain.timeutil import format_time
from loopline.projections import writes
from loopline.projections.runner import metadata

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
    Column("tier", String(20)),  # None until a run finishes with the owner seen once
    Column("empty_runs_in_a_row", Integer, nullable=False),
)


def _update(conn: Connection, event: Any, add: dict[str, int] | None = None, **values: Any) -> None:
    writes.update(conn, proactive_runs, str(event.originator_id), set=values, add=add)


def _started(conn: Connection, event: ProactiveRun.Started, position: int) -> None:
    writes.insert(conn, proactive_runs, {
        "aggregate_id": str(event.originator_id), "tenant": event.tenant, "next_run_at": format_time(event.next_run_at),
        "next_run_reason": event.next_run_reason, "last_run_at": None, "last_run_summary": None, "runs": 0,
        "pending_escalations": 0, "tier": None, "empty_runs_in_a_row": 0,
    })


def _scheduled(conn: Connection, event: ProactiveRun.NextRunScheduled, position: int) -> None:
    _update(conn, event, next_run_at=format_time(event.next_run_at), next_run_reason=event.reason)


def _return(conn: Connection, event: ProactiveRun.ReturnRunScheduled, position: int) -> None:
    _update(conn, event, next_run_at=format_time(event.timestamp), next_run_reason=RETURN_REASON)


def _rescued(conn: Connection, event: ProactiveRun.Rescued, position: int) -> None:
    _update(conn, event, next_run_at=format_time(event.timestamp), next_run_reason=RESCUE_REASON)


def _escalation(conn: Connection, event: ProactiveRun.EscalationQueued, position: int) -> None:
    _update(conn, event, add={"pending_escalations": 1})


def _paced(conn: Connection, event: ProactiveRun.Paced, position: int) -> None:
    _update(conn, event, tier=event.tier, empty_runs_in_a_row=event.empty_runs_in_a_row)


def _ran(conn: Connection, event: ProactiveRun.RunRecorded, position: int) -> None:
    _update(
        conn, event, add={"runs": 1, "pending_escalations": -event.escalations_handled},
        last_run_at=format_time(event.timestamp), last_run_summary=event.summary,
        next_run_at=format_time(event.next_run_at), next_run_reason=event.next_run_reason,
    )


name = "proactive_runs"
cost = 0.3  # seconds to rebuild bench/rebuild.py's store alone, to share rebuild work evenly
tables = (proactive_runs,)
handlers = {
    ProactiveRun.Started: _started,
    ProactiveRun.NextRunScheduled: _scheduled,
    ProactiveRun.ReturnRunScheduled: _return,
    ProactiveRun.Rescued: _rescued,
    ProactiveRun.EscalationQueued: _escalation,
    ProactiveRun.Paced: _paced,
    ProactiveRun.RunRecorded: _ran,
}


def list_runs(conn: Connection) -> list[dict[str, Any]]:
    rows = conn.execute(select(proactive_runs).order_by(proactive_runs.c.tenant))
    return [{k: v for k, v in row._mapping.items() if k != "aggregate_id"} for row in rows]


def stale_runs(engine: Engine) -> Callable[[datetime], list[UUID]]:
    """The supervisor's query: the runs more than 48 h past their wake-up."""

    def past(now: datetime) -> list[UUID]:
        with engine.connect() as conn:
            rows = conn.execute(select(proactive_runs.c.aggregate_id)
                                .where(proactive_runs.c.next_run_at < format_time(now - STALE_AFTER)))
            return [UUID(row.aggregate_id) for row in rows]

    return past
