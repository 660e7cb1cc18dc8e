"""The synthesis run's context snapshot (seed 000 Part 3 "Context Snapshot"), assembled by code from what Loopline
knows: the tenant's open tasks (`domain/open_tasks.py`) with their loops expired or expiring, items overdue and due
soon, stalled tasks, escalations waiting for the run, the signals received since the last synthesis run and the
upcoming calendar events seen in calendar.event signals, goals and memory, quiet hours and the activity tier.

Signals are read by the run, not noted on the signal path: every message is already recorded as an
`InboundMessage.Received` event (the embedded log, or the receipt a Kafka message is saved with), so the run reads
those events of its tenant from the log position its last synthesis run recorded (`ProactiveRun.SignalsRead`,
with the calendar events still ahead). A signal costs nothing more, for any tenant; the run's read is bounded to the
log's last SIGNAL_SCAN positions (older signals are not listed), and what it read is recorded, so a replay rebuilds
the same context. A per-tenant index noted by each signal would have been exact however busy the log, at the price
of one more event per signal for every tenant.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from eventsourcing.utils import get_topic

from loopline.domain import ids
from loopline.domain.activity_tier import tier_of
from loopline.domain.inbound import InboundMessage
from loopline.domain.notification_hold import DEFAULT_QUIET_HOURS
from loopline.domain.open_loop import OpenLoop
from loopline.domain.open_tasks import OpenTasks
from loopline.domain.proactive_run import ProactiveRun
from loopline.domain.synthesis_context import ContextDelta
from loopline.domain.task import Task
from loopline.domain.timeutil import format_time, parse_time
from loopline.domain.wording import when
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.owner_notices import owner_last_seen
from loopline.processors.handlers.tenants import tenant_settings

SOON = timedelta(hours=48)
"""How far ahead a deadline counts as expiring or due soon."""
TASKS_SHOWN = 200
"""The most recent open tasks a snapshot reads: a run's work stays bounded however many a tenant has."""
SIGNAL_SCAN = 5000
"""The most recent event-log positions a run reads for its tenant's signals: its work stays bounded however busy the
log (every tenant's events share it)."""
SIGNALS_SHOWN = 50
"""The most recent signals listed one by one; earlier ones are counted."""
NOT_SIGNALS = frozenset({"user.seen"})
"""Signal types left out of the signals section: the owner's sightings are the activity tier already."""
RECEIVED = get_topic(InboundMessage.Received)


@dataclass(frozen=True)
class SignalsSeen:
    """What a run read of its tenant's signals: the log position it read to, the signals since the last synthesis
    run by ref, and the calendar events not yet started by event id."""

    position: int
    signals: dict[str, str]
    upcoming: dict[str, dict[str, str]]


def signals_seen(uow: UnitOfWork, run: ProactiveRun, now: datetime) -> SignalsSeen:
    """Reads the tenant's signals recorded since the run's last synthesis (at most the log's last SIGNAL_SCAN
    positions); calendar events known before stay upcoming until they start."""
    recorder = uow.app.process_recorder
    end = recorder.max_notification_id() or 0
    start = max(run.signals_position, end - SIGNAL_SCAN) + 1
    signals: dict[str, str] = {}
    upcoming = {key: event for key, event in run.upcoming_events.items() if parse_time(event["starts_at"]) > now}
    while start <= end:
        page = recorder.select_notifications(start=start, limit=500, stop=end, topics=[RECEIVED])
        for notification in page:
            received = uow.app.mapper.to_domain_event(notification)
            if received.tenant != run.tenant or received.kind != "signal" or received.type in NOT_SIGNALS:
                continue
            signals[received.ref] = f"{received.type} at {when(received.timestamp)}"
            if received.type == "calendar.event":
                _note_event(upcoming, received.data, now)
        start = page[-1].id + 1 if page else end + 1
    listed = dict(list(signals.items())[-SIGNALS_SHOWN:])
    if len(signals) > len(listed):
        listed["earlier"] = f"{len(signals) - len(listed)} earlier signal(s) not listed"
    return SignalsSeen(position=max(end, run.signals_position), signals=listed, upcoming=upcoming)


def _note_event(upcoming: dict[str, dict[str, str]], data: dict[str, object], now: datetime) -> None:
    """A calendar.event signal: an event starting later is upcoming (its latest signal wins); one started is not."""
    event_id = str(data.get("event_id"))
    try:
        starts = parse_time(str(data["starts_at"])) if data.get("starts_at") else None
    except ValueError:
        starts = None
    if data.get("event_type") == "event_started" or starts is None or starts <= now:
        upcoming.pop(event_id, None)
        return
    upcoming[event_id] = {"starts_at": format_time(starts) or "", "line": f"event {event_id} starts {when(starts)}"}


def context_snapshot(uow: UnitOfWork, run: ProactiveRun, now: datetime,
                     seen: SignalsSeen) -> dict[str, dict[str, str]]:
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
    sections["signals"] = seen.signals
    sections["upcoming_events"] = {key: event["line"] for key, event in seen.upcoming.items()}
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
    seen = owner_last_seen(uow, run.tenant)
    lines = [f"Now: {now.isoformat()} (tenant {run.tenant}, time zone {settings.timezone}).",
             f"Owner activity tier: {tier_of(seen, now).value if seen is not None else 'unknown (never seen)'}; "
             f"quiet hours: {settings.owner_quiet_hours or DEFAULT_QUIET_HOURS}.", "", "Changed since your last run:"]
    lines += [f"- {section}/{key}: {line}" for section, items in delta.changed.items() for key, line in items.items()]
    lines += [f"- {section}: gone {', '.join(keys)}" for section, keys in delta.gone.items()]
    lines += ["", "Everything you know now:"]
    lines += [f"- {section}/{key}: {line}" for section, items in (run.last_context_snapshot or {}).items()
              for key, line in items.items()]
    return "\n".join(lines)
