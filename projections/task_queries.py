"""Queries over the `tasks` read model: what `tasks list` and `tasks show` print (the projection is
`projections/tasks.py`)."""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.engine import Connection

from loopline.domain.status import TERMINAL
from loopline.domain.timeutil import parse_time
from loopline.projections.tasks import task_inbox, tasks


def _row(row: Any) -> dict[str, Any]:
    data = dict(row._mapping)
    data.pop("aggregate_id", None)
    return data


def list_tasks(
    conn: Connection, *, tenant: str | None = None, status: str | None = None, outcome: str | None = None,
    contact: str | None = None, task_type: str | None = None,
) -> list[dict[str, Any]]:
    """The tasks, filtered by any of tenant, status, outcome, contact (an address in any case) and task type."""
    query = select(tasks).order_by(tasks.c.tenant, tasks.c.created_at, tasks.c.task_id)
    if tenant:
        query = query.where(tasks.c.tenant == tenant)
    if status:
        query = query.where(tasks.c.status == status)
    if outcome:
        query = query.where(tasks.c.outcome == outcome)
    if contact:
        query = query.where(func.lower(tasks.c.contact) == contact.lower())
    if task_type:
        query = query.where(tasks.c.task_type == task_type)
    return [_row(row) for row in conn.execute(query)]


def find_tasks(conn: Connection, task_id: str, tenant: str | None = None) -> list[tuple[str, dict[str, Any]]]:
    query = select(tasks).where(tasks.c.task_id == task_id)
    if tenant:
        query = query.where(tasks.c.tenant == tenant)
    return [(row.aggregate_id, _row(row)) for row in conn.execute(query)]


def subtasks(conn: Connection, tenant: str, parent_id: str) -> list[dict[str, Any]]:
    """A task's subtasks, oldest first: each one's requirement, status, emails sent and outcome."""
    query = (select(tasks.c.task_id, tasks.c.title, tasks.c.requirement, tasks.c.status, tasks.c.messages_used,
                    tasks.c.outcome)
             .where(tasks.c.tenant == tenant, tasks.c.parent_id == parent_id)
             .order_by(tasks.c.created_at, tasks.c.task_id))
    return [_row(row) for row in conn.execute(query)]


def inbox(conn: Connection, aggregate_id: str) -> list[dict[str, Any]]:
    query = select(task_inbox).where(task_inbox.c.aggregate_id == aggregate_id).order_by(task_inbox.c.received_at)
    return [_row(row) for row in conn.execute(query)]


DAY = timedelta(days=1)
EXHAUSTION = {
    "cancel": "cadence ends: cancelled as unresponsive unless the contact replies",
    "escalate": "cadence ends: handed to the owner unless the contact replies",
    "dormant": "cadence ends: goes dormant unless the contact replies",
}
DAYS_RUN_OUT = {
    exhaustion: "the task's days run out: " + what.removeprefix("cadence ends: ") for exhaustion, what in EXHAUSTION.items()
}
"""The budget's last day ends the cadence as running out of touches does (`domain/outreach.py` next_step)."""
NEXT_ACTIONS = {
    "deferred_send": "send the deferred touch",
    "draft_message": "the model drafts the next message",
    "evaluate_reply": "the model evaluates the reply",
    "decision_retry": "ask the model again",
    "dormant_end": "closed as unresponsive unless the contact replies or an outcome signal comes",
}


def outreach(task: dict[str, Any], now: datetime) -> dict[str, Any] | None:
    """What Loopline does with an acting task, as of `now`: budgets used and left, cadence position, what it does
    next and when, and the outcome; None for a follow-through task (Loopline only watches its loops)."""
    if task["cadence"] is None:
        return None
    created, ends = parse_time(task["created_at"]), task["ends_at"] and parse_time(task["ends_at"])
    days = None
    if ends:
        budget_days = math.ceil((ends - created) / DAY)
        at = min(now, parse_time(task["updated_at"])) if task["status"] in TERMINAL else now  # a closed task stopped
        left = max(0, min(budget_days, math.ceil((ends - at) / DAY)))
        days = {"budget": budget_days, "used": budget_days - left, "left": left, "ends_at": task["ends_at"]}
    return {
        "cadence": task["cadence"],
        "touch": task["touch"],
        "touches": task["touches"],
        "position": f"touch {task['touch']} of {task['touches']}",
        "budget": {
            "messages": _budget(task["messages_budget"], task["messages_used"]),
            "turns": _budget(task["turns_budget"], task["turns_used"]),
            "days": days,
        },
        "next_action": _next_action(task),
        "away": _away(task, now),
        "decisions": task["decisions"],
        "deferrals": task["deferrals"],
        "outcome": task["outcome"] and {
            "code": task["outcome"], "kind": task["outcome_kind"], "provisional": bool(task["outcome_provisional"]),
        },
    }


def _away(task: dict[str, Any], now: datetime) -> dict[str, Any] | None:
    """The contact's absence an automatic reply stated, while it lasts as of `now`."""
    away = task["away"]
    if away is None or task["status"] in TERMINAL or parse_time(away["until"]) <= now:
        return None
    return away


def _budget(budget: int, used: int) -> dict[str, int]:
    return {"budget": budget, "used": used, "left": max(0, budget - used)}


def _next_action(task: dict[str, Any]) -> dict[str, Any] | None:
    """The step Loopline takes next, in words, with its time (None: when the owner acts or a reply comes)."""
    status, kind = task["status"], task["next_action"]
    if status in TERMINAL:
        return None
    if status == "pending_review":
        return {"what": "waits for the owner's review (task.approve)", "at": None, "reason": task["status_reason"]}
    if status == "escalated":
        return {"what": "waits for the owner (task.guidance)", "at": None, "reason": task["status_reason"]}
    if kind is None:
        if status == "ready" and task["touch"] == 0:
            return {"what": f"touch 1 of {task['touches']}", "at": task["updated_at"], "reason": "ready: the next tick works it"}
        return None
    if kind == "touch":
        touch, touches = task["touch"], task["touches"]
        if task["ends_at"] and task["next_action_at"] and parse_time(task["next_action_at"]) > parse_time(task["ends_at"]):
            return {"what": DAYS_RUN_OUT[task["on_exhaustion"]], "at": task["ends_at"], "reason": None}
        what = f"touch {touch + 1} of {touches}" if touch < touches else EXHAUSTION[task["on_exhaustion"]]
    else:
        what = NEXT_ACTIONS[kind]
    return {"what": what, "at": task["next_action_at"], "reason": task["next_action_reason"]}
