"""The task's folder as `tasks files` lists and reads it: stored files, and the ones rendered when read."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.engine import Connection

from loopline.projections.task_memory.conversation import render_conversation
from loopline.projections.task_memory.log import render_log, render_log_summary
from loopline.projections.task_memory.progress import render_context, render_description, render_progress
from loopline.projections.task_memory.schema import (
    ARCHIVED_WORKFLOWS, CONVERSATION, DESCRIPTION, memory_files, memory_tasks,
)
from loopline.projections.task_memory.workflows import iso_week, render_week


def find(conn: Connection, task_id: str, tenant: str | None = None) -> list[dict[str, Any]]:
    query = select(memory_tasks).where(memory_tasks.c.task_id == task_id)
    if tenant:
        query = query.where(memory_tasks.c.tenant == tenant)
    return [dict(row._mapping) for row in conn.execute(query)]


def root(memory: dict[str, Any]) -> str:
    """Where the folder lives: under tasks/archive/ once the task is completed, cancelled or expired."""
    task_id = memory["task_id"]
    return f"tasks/archive/{task_id}/" if memory["archived_at"] else f"tasks/{task_id}/"


def listing(conn: Connection, memory: dict[str, Any]) -> list[dict[str, Any]]:
    """Every file of the folder: path, kind, size in bytes and when it last changed."""
    state = memory["state"]
    rendered = {
        "progress.md": ("progress", render_progress(state)),
        "log.md": ("log", render_log(conn, memory)),
        "context.json": ("context", render_context(state)),
    }
    if state["description"]:
        rendered[DESCRIPTION] = ("description", render_description(state))
    if state["turns"]:
        rendered[CONVERSATION] = ("conversation", render_conversation(conn, memory))
    entries = [{"path": p, "kind": k, "size": len(c.encode()), "at": state["updated_at"]} for p, (k, c) in rendered.items()]
    for summary in state["log"]["summaries"]:
        entries.append({
            "path": summary["name"], "kind": "log_summary", "at": summary["at"],
            "size": len(render_log_summary(conn, memory, summary).encode()),
        })
    stored = conn.execute(
        select(memory_files.c.path, memory_files.c.kind, memory_files.c.at, func.length(memory_files.c.content))
        .where(memory_files.c.aggregate_id == memory["aggregate_id"]).order_by(memory_files.c.path)
    ).all()
    weeks: dict[str, str] = {}
    for path, kind, at, size in stored:
        entries.append({"path": path, "kind": kind, "size": size, "at": at})
        if kind == "workflow_archived":
            weeks[iso_week(at)] = max(weeks.get(iso_week(at), at), at)
    for week, at in sorted(weeks.items()):
        path = f"{ARCHIVED_WORKFLOWS}archive_summary_{week}.md"
        entries.append({"path": path, "kind": "archive_summary", "at": at, "size": len(read(conn, memory, path).encode())})
    return sorted(entries, key=lambda entry: (entry["path"].count("/"), entry["path"]))


def read(conn: Connection, memory: dict[str, Any], path: str) -> str:
    """One file's content; raises KeyError naming the path when the folder has no such file."""
    state = memory["state"]
    if path == "progress.md":
        return render_progress(state)
    if path == "context.json":
        return render_context(state)
    if path == "log.md":
        return render_log(conn, memory)
    if path == DESCRIPTION and state["description"]:
        return render_description(state)
    if path == CONVERSATION and state["turns"]:
        return render_conversation(conn, memory)
    for summary in state["log"]["summaries"]:
        if summary["name"] == path:
            return render_log_summary(conn, memory, summary)
    if path.startswith(f"{ARCHIVED_WORKFLOWS}archive_summary_") and path.endswith(".md"):
        week = path.removeprefix(f"{ARCHIVED_WORKFLOWS}archive_summary_").removesuffix(".md")
        return render_week(conn, memory, week)
    content = conn.execute(
        select(memory_files.c.content).where(memory_files.c.aggregate_id == memory["aggregate_id"], memory_files.c.path == path)
    ).scalar()
    if content is None:
        raise KeyError(path)
    return content


def active_tasks(conn: Connection, tenant: str) -> list[dict[str, Any]]:
    rows = conn.execute(
        select(memory_tasks).where(memory_tasks.c.tenant == tenant, memory_tasks.c.archived_at.is_(None))
        .order_by(memory_tasks.c.task_id)
    )
    return [dict(row._mapping) for row in rows]
