"""The `routines` read model: each routine (seed 003) with who owns it, its schedule, where it stands and its last run,
for `loopline routines`."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Column, Integer, String, Table, Text, select
from sqlalchemy.engine import Connection

from loopline.domain.routine import Routine, RoutineStopped
from loopline.domain.timeutil import format_time
from loopline.projections import writes
from loopline.projections.runner import metadata

OUTPUT_SHOWN = 200
"""Characters of a run's output the row keeps: the whole output is in the owning task's memory and the audit."""

routines = Table(
    "routines", metadata,
    Column("aggregate_id", String(36), primary_key=True),
    Column("tenant", String(200), nullable=False, index=True),
    Column("routine_id", String(200), nullable=False),
    Column("task_id", String(200)),
    Column("kind", String(20), nullable=False),
    Column("action", String(200), nullable=False),
    Column("schedule", String(400), nullable=False),
    Column("notify", String(20), nullable=False),
    Column("status", String(20), nullable=False),
    Column("runs", Integer, nullable=False),
    Column("failures_in_a_row", Integer, nullable=False),
    Column("last_run_at", String(40)),
    Column("last_outcome", String(20)),
    Column("last_output", Text),
    Column("next_run_at", String(40)),
    Column("report_due_at", String(40)),
)


def _schedule(event: Routine.Created) -> str:
    if event.kind == "event":
        return f"on signals {event.signal_pattern}"
    if event.kind == "oneshot":
        return "once"
    return f"cron {event.cron} ({event.zone})" if event.cron else f"every {event.interval_minutes} min"


def _created(conn: Connection, event: Routine.Created, position: int) -> None:
    writes.insert(conn, routines, {
        "aggregate_id": str(event.originator_id), "tenant": event.tenant, "routine_id": event.ref,
        "task_id": event.owner_task_ref, "kind": event.kind, "action": event.action, "schedule": _schedule(event),
        "notify": event.notify, "status": "active", "runs": 0, "failures_in_a_row": 0, "last_run_at": None,
        "last_outcome": None, "last_output": None, "next_run_at": format_time(event.next_run_at), "report_due_at": None,
    })


def _run_recorded(conn: Connection, event: Routine.RunRecorded, position: int) -> None:
    key = str(event.originator_id)
    failed = event.outcome == "failure"
    writes.update(conn, routines, key, add={"runs": 1, "failures_in_a_row": 1} if failed else {"runs": 1}, set={
        "last_run_at": format_time(event.timestamp), "last_outcome": event.outcome,
        "last_output": (event.error or event.output)[:OUTPUT_SHOWN], "next_run_at": format_time(event.next_run_at),
        "report_due_at": None, **({} if failed else {"failures_in_a_row": 0}),
    })


def _stopped(conn: Connection, event: RoutineStopped, position: int) -> None:
    writes.update(conn, routines, str(event.originator_id), set={"status": event.STATUS, "next_run_at": None,
                                                                 "report_due_at": None})


def _resumed(conn: Connection, event: Routine.Resumed, position: int) -> None:
    writes.update(conn, routines, str(event.originator_id), set={
        "status": "active", "failures_in_a_row": 0, "next_run_at": format_time(event.next_run_at)})


def _run_requested(conn: Connection, event: Routine.RunRequested, position: int) -> None:
    writes.update(conn, routines, str(event.originator_id), set={"next_run_at": format_time(event.timestamp)})


def _adopted(conn: Connection, event: Routine.Adopted, position: int) -> None:
    writes.update(conn, routines, str(event.originator_id), set={
        "task_id": event.task_ref, "next_run_at": format_time(event.next_run_at), "report_due_at": None})


def _dispatched(conn: Connection, event: Routine.Dispatched, position: int) -> None:
    writes.update(conn, routines, str(event.originator_id), set={
        "next_run_at": None, "report_due_at": format_time(event.report_due_at)})


name = "routines"
cost = 0.1  # a guess, not measured with bench/rebuild.py: a few routines per tenant beside the tasks' events
tables = (routines,)
handlers = {
    Routine.Created: _created, Routine.RunRecorded: _run_recorded, Routine.Paused: _stopped,
    Routine.Finished: _stopped, Routine.Disabled: _stopped, Routine.Resumed: _resumed,
    Routine.RunRequested: _run_requested, Routine.Adopted: _adopted, Routine.Dispatched: _dispatched,
}


def list_routines(conn: Connection, tenant: str | None = None) -> list[dict[str, Any]]:
    """Every routine, by tenant and id."""
    query = select(routines)
    if tenant is not None:
        query = query.where(routines.c.tenant == tenant)
    rows = conn.execute(query.order_by(routines.c.tenant, routines.c.routine_id))
    return [{k: v for k, v in row._mapping.items() if k != "aggregate_id"} for row in rows]
