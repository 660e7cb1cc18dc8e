"""Which task a routine's audit lines belong to: a routine's events name only the routine, so the `timeline` read
model keeps each task-owned routine's task (from `Routine.Created` or `Routine.Adopted`) and files the routine's
later events in that task's trail, where `loopline audit TASK` shows them."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Column, String, Table
from sqlalchemy.engine import Connection

from loopline.domain.routine import Routine
from loopline.projections import writes
from loopline.projections.runner import metadata

routine_tasks = Table(
    "timeline_routine_tasks", metadata,
    Column("aggregate_id", String(36), primary_key=True),
    Column("task_id", String(200), nullable=False),
)


def routine_task(conn: Connection, event: Any) -> str | None:
    """The task that owns the routine at this event (None: the tenant does), recorded when it becomes the owner."""
    key = str(event.originator_id)
    owner = event.owner_task_ref if isinstance(event, Routine.Created) else getattr(event, "task_ref", None)
    if isinstance(event, (Routine.Created, Routine.Adopted)):
        if owner is not None:
            writes.insert(conn, routine_tasks, {"aggregate_id": key, "task_id": owner})
        return owner
    found = writes.row(conn, routine_tasks, key)
    return None if found is None else found["task_id"]
