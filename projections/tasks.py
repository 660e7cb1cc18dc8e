"""The `tasks` read model (with each task's inbox): what `tasks list` and `tasks show` print."""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, Column, Integer, String, Table, Text, select
from sqlalchemy.engine import Connection

from loopline.domain.task import Task
from loopline.domain.timeutil import format_time
from loopline.projections import writes
from loopline.projections.runner import metadata

tasks = Table(
    "tasks", metadata,
    Column("aggregate_id", String(36), primary_key=True),
    Column("tenant", String(200), nullable=False, index=True),
    Column("task_id", String(200), nullable=False),
    Column("title", Text, nullable=False),
    Column("description", Text, nullable=False),
    Column("task_type", String(64), nullable=False),
    Column("status", String(32), nullable=False, index=True),
    Column("priority", String(16)),
    Column("contact", String(200)),
    Column("created_at", String(40), nullable=False),
    Column("updated_at", String(40), nullable=False),
    Column("expires_at", String(40)),
    Column("open_loops", Integer, nullable=False),
    Column("actions", Integer, nullable=False),
    Column("inbox", Integer, nullable=False),
    Column("notifications", Integer, nullable=False),
    Column("last_note", Text),
    Column("status_reason", Text),
    Column("stalled_since", String(40)),
)

task_inbox = Table(
    "task_inbox", metadata,
    Column("aggregate_id", String(36), primary_key=True),
    Column("signal_id", String(200), primary_key=True),
    Column("type", String(64), nullable=False),
    Column("received_at", String(40), nullable=False),
    Column("data", JSON, nullable=False),
)


def _update(conn: Connection, event: Any, add: dict[str, int] | None = None, **values: Any) -> None:
    """Activity (the events that move a task, as Task._moved sees it) clears the stalled flag."""
    quiet = isinstance(event, (Task.UserNotified, Task.StallFlagged, Task.WakeupScheduled, Task.LoopLinked, Task.LoopClosed)) or (
        isinstance(event, Task.WokenUp) and event.cause == "escalation"
    )
    values = values if quiet else {"stalled_since": None, **values}
    writes.update(
        conn, tasks, str(event.originator_id), set={"updated_at": format_time(event.timestamp), **values}, add=add
    )


def _created(conn: Connection, event: Task.Created, position: int) -> None:
    writes.insert(conn, tasks, {
        "aggregate_id": str(event.originator_id), "tenant": event.tenant, "task_id": event.ref, "title": event.title,
        "description": event.description, "task_type": event.task_type, "status": event.status,
        "priority": event.priority, "contact": event.contact, "created_at": format_time(event.timestamp),
        "updated_at": format_time(event.timestamp), "expires_at": format_time(event.expires_at), "open_loops": 0,
        "actions": 0, "inbox": 0, "notifications": 0, "last_note": None, "status_reason": event.reason,
        "stalled_since": None,
    })


def _action(conn: Connection, event: Task.ActionRecorded, position: int) -> None:
    _update(conn, event, add={"actions": 1}, status=event.status, last_note=event.summary)


def _loop_linked(conn: Connection, event: Task.LoopLinked, position: int) -> None:
    _update(conn, event, add={"open_loops": 1})


def _loop_closed(conn: Connection, event: Task.LoopClosed, position: int) -> None:
    _update(conn, event, add={"open_loops": -1})


def _signal(conn: Connection, event: Task.SignalReceived, position: int) -> None:
    _update(
        conn, event, add={"inbox": 1, "open_loops": -len(event.resolved_loops)}, status=event.status,
    )
    writes.insert(conn, task_inbox, {
        "aggregate_id": str(event.originator_id), "signal_id": event.signal_ref, "type": event.signal_type,
        "received_at": format_time(event.timestamp), "data": event.data,
    })


def _status(reason_field: str | None):
    def handler(conn: Connection, event: Any, position: int) -> None:
        values: dict[str, Any] = {"status": event.status}
        if reason_field:
            values["status_reason"] = getattr(event, reason_field)
        _update(conn, event, **values)

    return handler


def _noted(conn: Connection, event: Task.ProgressNoted, position: int) -> None:
    _update(conn, event, status=event.status, last_note=event.notes)


def _notified(conn: Connection, event: Task.UserNotified, position: int) -> None:
    _update(conn, event, add={"notifications": 1})


name = "tasks"
cost = 2  # seconds to rebuild bench/rebuild.py's store alone, to share rebuild work evenly
tables = (tasks, task_inbox)
handlers = {
    Task.Created: _created,
    Task.ActionRecorded: _action,
    Task.LoopLinked: _loop_linked,
    Task.LoopClosed: _loop_closed,
    Task.SignalReceived: _signal,
    Task.ProgressNoted: _noted,
    Task.UserNotified: _notified,
    Task.Reviewed: _status("reason"),
    Task.GuidanceGiven: _status("text"),
    Task.Escalated: _status("reason"),
    Task.Completed: _status("summary"),
    Task.Cancelled: _status("reason"),
    Task.Expired: _status("reason"),
    Task.WaitEnded: _status("reason"),
    Task.WorkflowOutputRecorded: lambda conn, event, position: _update(conn, event),
    Task.WakeupScheduled: lambda conn, event, position: _update(conn, event),
    Task.WokenUp: _status(None),  # the status changes; why the task is in it (e.g. escalated) does not
    Task.StallFlagged: lambda conn, event, position: _update(conn, event, stalled_since=format_time(event.timestamp)),
}


def _row(row: Any) -> dict[str, Any]:
    data = dict(row._mapping)
    data.pop("aggregate_id", None)
    return data


def list_tasks(conn: Connection, *, tenant: str | None = None, status: str | None = None) -> list[dict[str, Any]]:
    query = select(tasks).order_by(tasks.c.tenant, tasks.c.created_at, tasks.c.task_id)
    if tenant:
        query = query.where(tasks.c.tenant == tenant)
    if status:
        query = query.where(tasks.c.status == status)
    return [_row(row) for row in conn.execute(query)]


def find_tasks(conn: Connection, task_id: str, tenant: str | None = None) -> list[tuple[str, dict[str, Any]]]:
    query = select(tasks).where(tasks.c.task_id == task_id)
    if tenant:
        query = query.where(tasks.c.tenant == tenant)
    return [(row.aggregate_id, _row(row)) for row in conn.execute(query)]


def inbox(conn: Connection, aggregate_id: str) -> list[dict[str, Any]]:
    query = select(task_inbox).where(task_inbox.c.aggregate_id == aggregate_id).order_by(task_inbox.c.received_at)
    return [_row(row) for row in conn.execute(query)]
