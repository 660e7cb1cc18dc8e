"""The tables of the `task_memory` read model, and the paths of the files it stores or renders."""

from __future__ import annotations

from sqlalchemy import JSON, Column, Integer, String, Table, Text

from loopline.projections.runner import metadata

DESCRIPTION = "description.md"
CONVERSATION = "conversation.md"
WORKFLOWS = "workflows/"
ARCHIVED_WORKFLOWS = "workflows/archive/"

memory_tasks = Table(
    "memory_tasks", metadata,
    Column("aggregate_id", String(36), primary_key=True),
    Column("tenant", String(200), nullable=False, index=True),
    Column("task_id", String(200), nullable=False, index=True),
    Column("archived_at", String(40)),
    Column("state", JSON, nullable=False),
)

memory_log = Table(
    "memory_log", metadata,
    Column("aggregate_id", String(36), primary_key=True),
    Column("seq", Integer, primary_key=True, autoincrement=False),
    Column("at", String(40), nullable=False),
    Column("event", String(64), nullable=False),
    Column("line", Text, nullable=False),
)

memory_turns = Table(
    "memory_turns", metadata,
    Column("aggregate_id", String(36), primary_key=True),
    Column("seq", Integer, primary_key=True, autoincrement=False),
    Column("at", String(40), nullable=False),
    Column("author", String(16), nullable=False),
    Column("text", Text, nullable=False),
)

memory_files = Table(
    "memory_files", metadata,
    Column("aggregate_id", String(36), primary_key=True),
    Column("path", String(400), primary_key=True),
    Column("kind", String(32), nullable=False),
    Column("at", String(40), nullable=False),
    Column("content", Text, nullable=False),
)
