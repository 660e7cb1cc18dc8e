"""What `loopline review list` shows beside each item so the owner can decide from the list (seed 004 §6): a task's
last message and the draft waiting with it, a question's lettered options and whether its tasks wait paused."""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import Connection

from loopline.domain import ids
from loopline.domain.question_ladder import lettered
from loopline.domain.wording import one_line
from loopline.projections import task_memory
from loopline.projections.timeline import task_trail


def task_context(conn: Connection, row: dict[str, Any]) -> str:
    """The task's last message (who wrote it) and the latest draft a notice put before the owner, if any."""
    turns = task_memory.conversation(conn, str(ids.task_id(row["tenant"], row["task_id"])))
    parts = [f"last from {turns[-1]['author']}: {one_line(turns[-1]['text'], 160)}"] if turns else []
    drafts = [entry["payload"]["draft"] for entry in task_trail(conn, row["task_id"], row["tenant"])
              if entry["event"] == "Task.UserNotified" and entry["payload"].get("draft")]
    if drafts:
        subject = f"{drafts[-1]['subject']}: " if drafts[-1].get("subject") else ""
        parts.append(f"draft: {one_line(subject + drafts[-1].get('body', ''), 160)}")
    return " | ".join(parts) or "no message yet"


def question_why(row: dict[str, Any]) -> str:
    """Who is stuck on what, and which tasks wait for the answer: the task it was asked on, then the downstream ones
    (`blocked` counts only those, so a question on one task alone blocks that task, not none)."""
    waiting = [row["task_id"]] if row["task_id"] else []
    waiting += [f"{row['blocked']} downstream task(s)"] if row["blocked"] or not waiting else []
    verb = "waits" if waiting == [row["task_id"]] else "wait"
    return f"{row['asker']} is stuck on {row['stuck_on']}; {' and '.join(waiting)} {verb} for the answer"


def question_context(row: dict[str, Any]) -> str:
    """The question's options as the owner answers them, and whether its tasks are paused waiting for the answer."""
    options = "  ".join(lettered(row["options"])) or "no options: answer in your own words"
    return options + (" | its tasks are paused until it is answered" if row.get("paused") else "")
