"""workflows/: each workflow output the task records, moved to workflows/archive/ after 7 days, with one
summary per ISO week of archived outputs."""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, literal, select
from sqlalchemy.engine import Connection

from loopline.domain.task import Task
from loopline.domain.timeutil import format_time, parse_time
from loopline.projections import writes
from loopline.projections.task_memory.schema import ARCHIVED_WORKFLOWS, WORKFLOWS, memory_files

WORKFLOW_INLINE = timedelta(days=7)


def store_output(conn: Connection, aggregate_id: str, state: dict[str, Any], event: Task.WorkflowOutputRecorded) -> None:
    outputs = state["workflows"]["outputs"]
    outputs[event.workflow] = outputs.get(event.workflow, 0) + 1
    at = format_time(event.timestamp)
    # Rotation (after this change) moves files older than 7 days; this one is newer than all of them.
    if state["workflows"]["oldest_inline"] is None:
        state["workflows"]["oldest_inline"] = at
    content = event.output if isinstance(event.output, str) else json.dumps(event.output, indent=2, sort_keys=True)
    writes.insert(conn, memory_files, {
        "aggregate_id": aggregate_id, "path": WORKFLOWS + event.name, "kind": "workflow", "at": at, "content": content,
    })
    state["stalled_since"] = None


def archive_old_outputs(conn: Connection, aggregate_id: str, state: dict[str, Any], now: datetime) -> None:
    """Moves workflow outputs older than 7 days (event time) into workflows/archive/."""
    oldest = state["workflows"]["oldest_inline"]
    cutoff = format_time(now - WORKFLOW_INLINE)
    if oldest is None or oldest >= cutoff:
        return
    mine = memory_files.c.aggregate_id == aggregate_id
    writes.execute(conn, memory_files, memory_files.update().where(
        mine, memory_files.c.kind == "workflow", memory_files.c.at < cutoff
    ).values(
        path=literal(ARCHIVED_WORKFLOWS) + func.substr(memory_files.c.path, len(WORKFLOWS) + 1), kind="workflow_archived"
    ))
    state["workflows"]["oldest_inline"] = conn.execute(
        select(func.min(memory_files.c.at)).where(mine, memory_files.c.kind == "workflow")
    ).scalar()


def iso_week(at: str) -> str:
    year, week, _ = parse_time(at).isocalendar()
    return f"{year}-W{week:02d}"


def render_week(conn: Connection, memory: dict[str, Any], week: str) -> str:
    rows = conn.execute(
        select(memory_files.c.path, memory_files.c.at).where(
            memory_files.c.aggregate_id == memory["aggregate_id"], memory_files.c.kind == "workflow_archived"
        ).order_by(memory_files.c.at)
    ).all()
    files = [row for row in rows if iso_week(row.at) == week]
    if not files:
        raise KeyError(f"{ARCHIVED_WORKFLOWS}archive_summary_{week}.md")
    per_workflow: dict[str, list[str]] = defaultdict(list)
    for row in files:
        per_workflow[row.path.removeprefix(ARCHIVED_WORKFLOWS).rsplit("_", 2)[0]].append(row.at)
    lines = [f"# Workflow outputs of {week} (archived)", ""]
    lines += [f"- {workflow}: {len(times)} output(s), {times[0]} → {times[-1]}" for workflow, times in sorted(per_workflow.items())]
    lines += ["", "Files:", *[f"- {row.path}" for row in files]]
    return "\n".join(lines) + "\n"
