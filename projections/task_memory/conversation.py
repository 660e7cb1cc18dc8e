"""conversation.md: every message sent and received, who wrote it (agent, contact, owner, system) and when."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Connection

from loopline.domain.conversation import turn_of
from loopline.domain.timeutil import format_time
from loopline.projections import writes
from loopline.projections.task_memory.schema import memory_turns


def record_turn(conn: Connection, aggregate_id: str, state: dict[str, Any], event: Any) -> None:
    """The event's message, when it carries one, as the next turn (`domain/conversation.py` says which events do)."""
    turn = turn_of(event)
    if turn is None:
        return
    state["turns"] += 1
    writes.insert(conn, memory_turns, {
        "aggregate_id": aggregate_id, "seq": state["turns"], "at": format_time(turn.at), "author": turn.author,
        "text": turn.text,
    })


def conversation(conn: Connection, aggregate_id: str) -> list[dict[str, Any]]:
    """Every message of the task, oldest first: `at`, `author` (agent, contact, owner, system) and `text`."""
    rows = conn.execute(
        select(memory_turns.c.at, memory_turns.c.author, memory_turns.c.text)
        .where(memory_turns.c.aggregate_id == aggregate_id).order_by(memory_turns.c.seq)
    )
    return [dict(row._mapping) for row in rows]


def render_conversation(conn: Connection, memory: dict[str, Any]) -> str:
    lines = [f"# Conversation — {memory['state']['title']}", ""]
    for turn in conversation(conn, memory["aggregate_id"]):
        lines += [f"## {turn['at']} · {turn['author']}", "", turn["text"], ""]
    return "\n".join(lines)
