"""What a user sees of a running system: read-model rows, the audit trail, the outbox. Shared by integration tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Engine

from loopline.adapters.embedded_log import AppendReport
from loopline.adapters.messages import parse_message
from loopline.domain import ids
from loopline.domain.timeutil import parse_time
from loopline.processors.followers.scheduler import TickReport
from loopline.projections import open_loops, proactive_runs, task_queries, timeline
from loopline.projections.runner import metadata
from loopline.runtime.system import System
from tests.conftest import command, signal

TENANT = "user_xyz"
RAHUL = "rahul@company.com"
T0 = "2026-03-13T10:00:00Z"

# Seed 000 Flow 1, as the agent would send it (cli/demo.py plays the same story).
CREATE_TASK = command(
    "msg-1", "task.create", "2026-03-13T10:00:00Z", task_id="task_abc", title="Schedule meeting with Rahul",
    task_type="meeting_scheduling", contact=RAHUL, context={"conversation_id": "conv_123"},
)
SEND_EMAIL = command(
    "msg-2", "action.record", "2026-03-13T10:00:00Z", task_id="task_abc", action="send_email", to=RAHUL,
    thread_id="gmail_thread_xyz", subject="Meeting next week?", summary="Sent scheduling email to Rahul at 10am",
)
RAHUL_REPLIES = signal(
    "gmail-evt-77", "email.received", "2026-03-17T09:12:00Z", sender="Rahul@company.com",
    thread_id="gmail_thread_xyz", subject="Re: Meeting next week?", body="Thursday 3pm or Friday 2pm works.",
)
COMPLETE = command(
    "msg-3", "task.complete", "2026-03-17T09:20:00Z", task_id="task_abc",
    summary="Meeting booked with Rahul for Thursday 3pm",
)
FIRST_LOOP = "task_abc/send_email/1"
FOLLOWUP_LOOP = f"{FIRST_LOOP}/followup"


def nda_awaiting_signature(prefix: str, deadline: str, if_unresolved: str, **task: Any) -> list[dict[str, Any]]:
    """The agent's task `nda` and its loop `nda/signature`, waiting for DocuSign's document_signed webhook until
    `deadline`; message ids `{prefix}1` and `{prefix}2`, `task` any further task.create fields."""
    return [
        command(f"{prefix}1", "task.create", T0, task_id="nda", title="Get the NDA signed", **task),
        command(f"{prefix}2", "loop.register", T0, loop_id="nda/signature", task_id="nda", channel="webhook",
                watch={"source": "docusign", "trigger_name": "document_signed"}, deadline=deadline,
                if_unresolved=if_unresolved, description="Signed NDA"),
    ]


def append(system: System, *messages: dict[str, Any]) -> AppendReport:
    """Appends to the embedded log without processing, returning what the log made of it."""
    return system.log.append([parse_message(json.dumps(m)) for m in messages], "test")


def tick(system: System, now: str) -> TickReport:
    """`loopline tick --now NOW`: the scheduler's scan, then every processor drained."""
    report = system.scheduler.tick(parse_time(now))
    system.drain()
    return report


def event_count(system: System) -> int:
    return system.app.recorder.max_notification_id() or 0


def task_rows(system: System, **filters: Any) -> list[dict[str, Any]]:
    with system.projections.engine.connect() as conn:
        return task_queries.list_tasks(conn, **filters)


def _the_row(rows: list[dict[str, Any]], column: str, value: str, tenant: str) -> dict[str, Any]:
    """The one row of a tenant's `rows` whose `column` is `value`; the test fails where there is none or more."""
    picked = [row for row in rows if row[column] == value]
    assert len(picked) == 1, f"expected one row with {column} {value} for {tenant}, got {picked}"
    return picked[0]


def task_row(system: System, task_id: str, tenant: str = TENANT) -> dict[str, Any]:
    return _the_row(task_rows(system, tenant=tenant), "task_id", task_id, tenant)


def loop_rows(system: System, **filters: Any) -> list[dict[str, Any]]:
    with system.projections.engine.connect() as conn:
        return open_loops.list_loops(conn, **filters)


def loop_row(system: System, loop_id: str, tenant: str = TENANT) -> dict[str, Any]:
    return _the_row(loop_rows(system, tenant=tenant), "loop_id", loop_id, tenant)


def run_rows(system: System) -> list[dict[str, Any]]:
    with system.projections.engine.connect() as conn:
        return proactive_runs.list_runs(conn)


def run_row(system: System, tenant: str = TENANT) -> dict[str, Any]:
    (row,) = [row for row in run_rows(system) if row["tenant"] == tenant]
    return row


def inbox(system: System, task_id: str, tenant: str = TENANT) -> list[dict[str, Any]]:
    with system.projections.engine.connect() as conn:
        return task_queries.inbox(conn, str(ids.task_id(tenant, task_id)))


def trail(system: System, task_id: str, tenant: str = TENANT) -> list[dict[str, Any]]:
    """`loopline audit TASK_ID`: the task's event trail."""
    with system.projections.engine.connect() as conn:
        return timeline.task_trail(conn, task_id, tenant)


def trail_events(system: System, task_id: str, tenant: str = TENANT) -> list[str]:
    return [row["event"] for row in trail(system, task_id, tenant)]


def recent(system: System, tenant: str | None = None) -> list[dict[str, Any]]:
    with system.projections.engine.connect() as conn:
        return timeline.recent(conn, limit=100_000, tenant=tenant)


def outbox(home: Path) -> list[dict[str, Any]]:
    """Every message Loopline delivered, in delivery order."""
    path = home / "outbox.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def dump(engine: Engine) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every read-model table, ordered by primary key."""
    with engine.connect() as conn:
        return {
            table.name: [tuple(row) for row in conn.execute(select(table).order_by(*table.primary_key.columns))]
            for table in metadata.sorted_tables
        }
