"""log.md: one line per event of the task; past 500 lines the oldest 80% are compacted into a log summary."""

from __future__ import annotations

from collections import Counter
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Connection

from loopline.domain.timeutil import format_time
from loopline.projections import writes
from loopline.projections.task_memory.schema import memory_log
from loopline.projections.timeline import DESCRIPTIONS

LOG_LIMIT = 500
LOG_COMPACT_SHARE = 0.8

KEY_MOMENTS = {
    "Task.Created", "Task.Reviewed", "Task.GuidanceGiven", "Task.Escalated", "Task.Completed", "Task.Cancelled",
    "Task.Expired", "Task.ProgressNoted", "Task.StallFlagged", "Task.WokenUp", "Task.WaitStarted",
    "Task.WaitEnded",
}


def append_line(conn: Connection, aggregate_id: str, state: dict[str, Any], event: Any) -> None:
    """Appends the event's line to log.md, compacting the oldest 80% into a summary past 500 lines."""
    summary, reason = DESCRIPTIONS[type(event)](event)
    at = format_time(event.timestamp)
    log = state["log"]
    log["lines"] += 1
    writes.insert(conn, memory_log, {
        "aggregate_id": aggregate_id, "seq": log["lines"], "at": at, "event": type(event).__qualname__,
        "line": f"- {at} {summary}" + (f" ({reason})" if reason else ""),
    })
    live = log["lines"] - log["start"] + 1
    if live > LOG_LIMIT:
        compacted = int(live * LOG_COMPACT_SHARE)
        day = at[:10]
        same_day = sum(1 for s in log["summaries"] if s["name"].startswith(f"log_summary_{day}"))
        name = f"log_summary_{day}{f'_{same_day + 1}' if same_day else ''}.md"
        log["summaries"].append({"name": name, "from": log["start"], "to": log["start"] + compacted - 1, "at": at})
        log["start"] += compacted


def _lines(conn: Connection, aggregate_id: str, first: int, last: int | None = None) -> list[Any]:
    query = select(memory_log).where(memory_log.c.aggregate_id == aggregate_id, memory_log.c.seq >= first)
    if last is not None:
        query = query.where(memory_log.c.seq <= last)
    return conn.execute(query.order_by(memory_log.c.seq)).all()


def render_log(conn: Connection, memory: dict[str, Any]) -> str:
    state = memory["state"]
    log = state["log"]
    lines = [f"# Log — {state['title']}", ""]
    if log["summaries"]:
        lines.append("Earlier entries, summarised:")
        lines += [f"* {s['name']} (entries {s['from']}–{s['to']})" for s in log["summaries"]]
        lines.append("")
    lines += [row.line for row in _lines(conn, memory["aggregate_id"], log["start"])]
    return "\n".join(lines) + "\n"


def render_log_summary(conn: Connection, memory: dict[str, Any], summary: dict[str, Any]) -> str:
    rows = _lines(conn, memory["aggregate_id"], summary["from"], summary["to"])
    counts = Counter(row.event for row in rows)
    lines = [
        f"# Log summary — {memory['state']['title']}", "",
        f"Entries {summary['from']}–{summary['to']} ({rows[0].at} → {rows[-1].at}), compacted {summary['at']}.", "",
        "## What happened",
    ]
    lines += [f"- {event}: {count}" for event, count in sorted(counts.items())]
    moments = [row.line for row in rows if row.event in KEY_MOMENTS]
    if moments:
        lines += ["", "## Key moments", *moments[-20:]]
    lines += ["", f"The full history stays in the audit trail: `loopline audit {memory['task_id']}`."]
    return "\n".join(lines) + "\n"
