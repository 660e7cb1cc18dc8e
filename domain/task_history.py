"""What happened to a task, told from its own events in the owner's words (an expiry says it)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from loopline.domain.task import Task
from loopline.domain.wording import count


def story(events: Iterable[Any]) -> str:
    """The task's history in one sentence: reviews, actions, follow-ups, reminders, answers, notes."""
    reviews, agent_actions, followups, reminders, answers, notes, escalations, owner_sent = [], 0, 0, 0, 0, 0, 0, 0
    for event in events:
        if isinstance(event, Task.Reviewed):
            reviews.append(event.decision)
        elif isinstance(event, Task.ActionRecorded) and event.performed_by == "owner":
            owner_sent += 1
        elif isinstance(event, Task.ActionRecorded) and event.performed_by == "loopline":
            followups += event.action == "send_email"
            reminders += event.action == "send_reminder"
        elif isinstance(event, Task.ActionRecorded):
            agent_actions += 1
        elif isinstance(event, Task.SignalReceived):
            answers += 1
        elif isinstance(event, Task.ProgressNoted):
            notes += 1
        elif isinstance(event, Task.Escalated):
            escalations += 1
    parts = [f"{decision} by the owner" for decision in reviews]
    parts.append(count(agent_actions, "action") + " by the agent" if agent_actions else "no action by the agent")
    parts += [count(n, word) + " sent" for n, word in ((followups, "follow-up"), (reminders, "reminder")) if n]
    parts += [count(owner_sent, "message") + " from the owner sent"] if owner_sent else []
    parts += [count(notes, "progress note")] if notes else []
    parts += [count(escalations, "escalation") + " to the owner"] if escalations else []
    parts.append(count(answers, "answer") + " received" if answers else "no answer received")
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def expiry_reason(events: Iterable[Any], *, created_on: datetime, last_activity_at: datetime, status: str,
                  now: datetime) -> str:
    """Why a task expired, as it happened: its age, its history, and how long it had been quiet."""
    idle = (now - last_activity_at).days
    quiet = {0: "nothing was left to wait for", 1: "nothing happened in the last day"}.get(
        idle, f"nothing happened in the last {idle} days")
    where = {"pending_review": " still awaiting the owner's review", "dormant": " while dormant"}.get(status, "")
    return f"expired after {count((now - created_on).days, 'day')}{where}: {story(events)}; {quiet}"
