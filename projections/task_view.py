"""One task as `loopline tasks show` and the dashboard's task page tell it: its follow-through fields, the outreach
plan with budgets and cadence position, conversation, loops, inbox, subtasks, the owner's notices, goal and pause,
read from the `tasks`, `task_memory`, `open_loops` and `timeline` read models."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.engine import Connection

from loopline.domain.status import TaskStatus
from loopline.domain.task_types import task_type
from loopline.projections import task_memory
from loopline.projections.open_loops import list_loops
from loopline.projections.task_queries import inbox, outreach, subtasks

SHOWN = (
    "tenant", "task_id", "title", "description", "task_type", "status", "status_reason", "priority", "contact",
    "created_at", "updated_at", "expires_at", "open_loops", "actions", "inbox", "notifications", "last_note",
    "stalled_since",
)
"""The follow-through fields of a task; an acting task's plan and progress are under `outreach`."""
OWNER_WORD = {"Task.OutcomeOverridden": "override", "Task.Reopened": "reopen", "Task.OutcomeRated": "rating"}


def task_view(conn: Connection, aggregate_id: str, row: dict[str, Any], trail: list[dict[str, Any]],
              now: datetime) -> dict[str, Any]:
    """The task found by `find_tasks` (its aggregate id and row) with its trail (`task_trail`), as of `now`."""
    task = {key: row[key] for key in SHOWN}
    task["outcome"] = row["outcome"]
    task["outreach"] = _with_outcome_label(outreach(row, now), row["task_type"])
    task["conversation"] = task_memory.conversation(conn, aggregate_id)
    task["loops"] = list_loops(conn, tenant=task["tenant"], task_id=task["task_id"])
    task["inbox_items"] = inbox(conn, aggregate_id)
    task["parent"] = {"task_id": row["parent_id"], "requirement": row["requirement"]} if row["parent_id"] else None
    task["subtasks"] = subtasks(conn, task["tenant"], task["task_id"])
    task["subtasks_derived"] = row["subtasks_derived"]
    task["notifications_sent"] = [
        {"at": event["at"], "kind": event["reason"], "message": event["payload"]["message"]}
        for event in trail if event["event"] == "Task.UserNotified"
    ]
    task["goal"] = goal_record(trail)
    task["pause"] = _own_pause(trail)
    handoffs = [event["payload"] for event in trail if event["event"] == "Task.EscalationContextRecorded"]
    task["escalation"] = handoffs[-1] if handoffs and task["status"] == TaskStatus.ESCALATED else None
    return task


def _own_pause(trail: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The task's own pause in force (`task.pause`, or its question's 8 h rung): by whom, why and since when."""
    controls = [row for row in trail if row["event"] in ("TaskControl.Paused", "TaskControl.Resumed")]
    if not controls or controls[-1]["event"] != "TaskControl.Paused":
        return None
    return {"by": controls[-1]["payload"]["by"], "reason": controls[-1]["payload"]["reason"], "since": controls[-1]["at"]}


def _with_outcome_label(plan: dict[str, Any] | None, type_name: str) -> dict[str, Any] | None:
    """The outcome's label from the task type's spectrum, and what the owner does next when it says (a conversion)."""
    if plan and plan["outcome"]:
        known = task_type(type_name).outcome(plan["outcome"]["code"])
        plan["outcome"]["label"] = known.label if known else None
        plan["outcome"]["next_step"] = known.next_step if known else None
    return plan


def _fields(row: dict[str, Any]) -> dict[str, Any]:
    return {"at": row["at"], **{k: v for k, v in row["payload"].items() if k not in ("tenant", "task_ref")}}


def goal_record(trail: list[dict[str, Any]]) -> dict[str, Any]:
    """The latest goal progress, every evaluation (one per close, and per later change of the outcome), and the
    owner's overrides, reopenings and ratings, oldest first."""
    progress = [_fields(row) for row in trail if row["event"] == "Task.GoalProgressed"]
    return {
        "progress": progress[-1] if progress else None,
        "evaluations": [_fields(row) for row in trail if row["event"] == "Task.Evaluated"],
        "owner": [{"what": OWNER_WORD[row["event"]], "by": row["payload"]["by"], "said": row["summary"],
                   "why": row["reason"], "at": row["at"]} for row in trail if row["event"] in OWNER_WORD],
    }
