"""The synthesis run's context snapshot (seed 000 Part 3 "Context Snapshot"), assembled by code from what Loopline
knows: the tenant's open tasks (`domain/open_tasks.py`) with their loops expired or expiring, items overdue and due
soon, stalled tasks, escalations waiting for the run, goals and memory, quiet hours and the activity tier."""

from __future__ import annotations

from datetime import datetime, timedelta

from loopline.domain import ids
from loopline.domain.activity_tier import tier_of
from loopline.domain.notification_hold import DEFAULT_QUIET_HOURS
from loopline.domain.open_loop import OpenLoop
from loopline.domain.open_tasks import OpenTasks
from loopline.domain.proactive_run import ProactiveRun
from loopline.domain.synthesis_context import ContextDelta
from loopline.domain.task import Task
from loopline.domain.wording import when
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.owner_notices import notification_hold
from loopline.processors.handlers.tenants import tenant_settings

SOON = timedelta(hours=48)
"""How far ahead a deadline counts as expiring or due soon."""
TASKS_SHOWN = 200
"""The most recent open tasks a snapshot reads: a run's work stays bounded however many a tenant has."""


def context_snapshot(uow: UnitOfWork, run: ProactiveRun, now: datetime) -> dict[str, dict[str, str]]:
    """Sections of one-line items by key; empty sections are left out, so the same state gives the same snapshot.
    The tasks found closed are forgotten by the tenant's open-task index."""
    sections: dict[str, dict[str, str]] = {name: {} for name in (
        "active_tasks", "expired_loops", "expiring_loops", "overdue", "due_soon", "stalled", "escalations")}
    index = uow.get(ids.open_tasks_id(run.tenant), OpenTasks)
    closed = []
    for ref in index.refs[-TASKS_SHOWN:] if index is not None else []:
        task = uow.get(ids.task_id(run.tenant, ref), Task)
        if task is None or task.is_closed:
            closed.append(ref)
        else:
            _task_items(uow, task, sections, now)
    if index is not None:
        index.forget(task_refs=closed, now=now)
    for item in run.pending_escalations:
        sections["escalations"][item["task_ref"]] = item["reason"]
    sections["goals"], sections["memory"] = dict(run.goals), dict(run.memory)
    return {name: items for name, items in sections.items() if items}


def _task_items(uow: UnitOfWork, task: Task, sections: dict[str, dict[str, str]], now: datetime) -> None:
    sections["active_tasks"][task.ref] = f"'{task.title}' ({task.status})"
    if task.stalled_since is not None:
        sections["stalled"][task.ref] = f"'{task.title}' idle since {when(task.stalled_since)}"
    if task.expires_at is not None and task.expires_at <= now + SOON:
        section = "overdue" if task.expires_at <= now else "due_soon"
        sections[section][task.ref] = f"'{task.title}' due {when(task.expires_at)}"
    for loop_ref in task.open_loops:
        loop = uow.get(ids.loop_id(task.tenant, loop_ref), OpenLoop)
        if loop is None or loop.resolved or loop.deadline > now + SOON:
            continue
        section = "expired_loops" if loop.deadline <= now else "expiring_loops"
        sections[section][loop_ref] = f"'{task.title}': {loop.awaited()} (deadline {when(loop.deadline)})"


def context_words(uow: UnitOfWork, run: ProactiveRun, delta: ContextDelta, now: datetime) -> str:
    """The first turn's message: the delta first (what the model has not seen), then the whole snapshot, the
    owner's quiet hours and activity tier."""
    settings = tenant_settings(uow, run.tenant)
    seen = notification_hold(uow, run.tenant, now).last_seen_at
    lines = [f"Now: {now.isoformat()} (tenant {run.tenant}, time zone {settings.timezone}).",
             f"Owner activity tier: {tier_of(seen, now).value if seen is not None else 'unknown (never seen)'}; "
             f"quiet hours: {settings.owner_quiet_hours or DEFAULT_QUIET_HOURS}.", "", "Changed since your last run:"]
    lines += [f"- {section}/{key}: {line}" for section, items in delta.changed.items() for key, line in items.items()]
    lines += [f"- {section}: gone {', '.join(keys)}" for section, keys in delta.gone.items()]
    lines += ["", "Everything you know now:"]
    lines += [f"- {section}/{key}: {line}" for section, items in (run.last_context_snapshot or {}).items()
              for key, line in items.items()]
    return "\n".join(lines)
