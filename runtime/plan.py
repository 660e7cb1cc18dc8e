"""`loopline plan`: what the agent would send for a tenant over the next days, worked out on a copy of the event store.

The embedded SQLite event store is copied (SQLite's online backup, from a connection that refuses writes) into a
temporary home, and ticks are run forward on the copy with the offline policy and no channel but a JSONL
file in that home: the real home is only read, so its event store is byte-identical after, and nothing
reaches a contact, the owner or a model. What the copy recorded for the tenant is the plan.
"""

from __future__ import annotations

import heapq
import sqlite3
import tempfile
from contextlib import closing
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from eventsourcing.utils import get_topic

from loopline.adapters.config import InvalidSetting, Settings
from loopline.domain.task import Task
from loopline.domain.timers import TimerBucket
from loopline.domain.timeutil import format_time
from loopline.runtime.bootstrap import build
from loopline.runtime.system import System

TICK_EVERY = timedelta(minutes=15)
"""How often the copy is ticked besides the due times of the timers it files: a timer filed before the plan
fires at most this long after it falls due."""
MOST_DAYS = 31
PLANNED = (Task.ActionRecorded, Task.SendDeferred, Task.UserNotified)


class PlanUnavailable(InvalidSetting):
    """The plan cannot be worked out for this home (not embedded, or no event store yet)."""


@dataclass
class Plan:
    tenant: str
    start: datetime
    until: datetime
    sends: list[dict[str, Any]] = field(default_factory=list)
    """Each email the agent would send: when, for which task, to whom, and its subject."""
    held: list[dict[str, Any]] = field(default_factory=list)
    """Each send a rail would hold: the rule, why, and until when."""
    owner_notices: list[dict[str, Any]] = field(default_factory=list)
    """What the owner would be told, such as a task waiting for review: why it would not send on its own."""

    def as_dict(self) -> dict[str, Any]:
        return {"tenant": self.tenant, "from": format_time(self.start), "until": format_time(self.until),
                "sends": self.sends, "held": self.held, "owner_notices": self.owner_notices,
                "changed": "nothing: worked out on a copy of the event store"}


def plan(settings: Settings, tenant: str, *, start: datetime, days: int) -> Plan:
    """Runs the copy forward from `start` for `days` days and collects what it recorded for `tenant`."""
    if not 1 <= days <= MOST_DAYS:
        raise InvalidSetting(f"--days {days} is not from 1 to {MOST_DAYS}")
    source = _sqlite_path(settings)
    with tempfile.TemporaryDirectory(prefix="loopline-plan-") as folder:
        home = Path(folder)
        _copy(source, home / "events.db")
        system = build(_shadow(settings, home), read_models=())
        try:
            before = system.app.process_recorder.max_notification_id() or 0
            until = start + timedelta(days=days)
            with system.leader.writing():  # the copy's home lock, held once rather than taken again each tick
                _run_forward(system, start, until, after=before)
            return _collect(system.app, tenant, before, Plan(tenant, start, until))
        finally:
            system.close()


def _run_forward(system: System, start: datetime, until: datetime, *, after: int) -> None:
    """Ticks every `TICK_EVERY`, and also at the due time of each timer the run files (a touch, a held send that may
    go at a window's jittered minute or when a limit frees up), so the plan shows it at that minute."""
    due = [start + step * TICK_EVERY for step in range(int((until - start) / TICK_EVERY) + 1)]
    heapq.heapify(due)
    done: set[datetime] = set()
    seen = after
    while due:
        now = heapq.heappop(due)
        if now in done:
            continue
        done.add(now)
        system.tick(now)
        filed, seen = _new_events(system.app, seen, [get_topic(TimerBucket.TimerSet)])
        for timer in filed:
            if now < timer.due <= until:
                heapq.heappush(due, timer.due)


def _new_events(app: Any, after: int, topics: list[str]) -> tuple[list[Any], int]:
    """The events of `topics` stored after position `after`, and the position to read from next time."""
    found, start = [], after + 1
    while notifications := app.process_recorder.select_notifications(start=start, limit=500, topics=topics):
        found += [app.mapper.to_domain_event(notification) for notification in notifications]
        start = notifications[-1].id + 1
    return found, start - 1


def _sqlite_path(settings: Settings) -> Path:
    if not settings.event_store.startswith("sqlite:///"):
        raise PlanUnavailable(
            "loopline plan works on a copy of the embedded SQLite event store; LOOPLINE_EVENT_STORE is not one "
            "(at scale, run it against a SQLite copy of the store)"
        )
    path = Path(settings.event_store.removeprefix("sqlite:///"))
    if not path.is_file():
        raise PlanUnavailable(f"there is no event store at {path} yet: publish commands first (LOOPLINE_HOME chooses the home)")
    return path


def _copy(source: Path, target: Path) -> None:
    """A consistent copy while other processes may write: SQLite's backup reads one snapshot.

    The source is opened as any reader opens it, with writes refused (`query_only`): a `mode=ro` connection
    would leave SQLite's WAL side files behind in the home, which a normal reader removes when it closes last."""
    with closing(sqlite3.connect(source)) as reading, closing(sqlite3.connect(target)) as writing:
        reading.execute("PRAGMA query_only = 1")
        reading.backup(writing)


def _shadow(settings: Settings, home: Path) -> Settings:
    """The copy's settings: its own home, the offline policy, and no SMTP, webhook or Kafka to reach anyone."""
    return Settings(
        home=home, event_store=f"sqlite:///{home / 'events.db'}", read_model=f"sqlite:///{home / 'views.db'}",
        kafka=None, kafka_topic_prefix="", kafka_partitions=1, smtp_url=None, email_from=settings.email_from,
        webhook_url=None, webhook_secret=None,
    )


def _collect(app: Any, tenant: str, after: int, found: Plan) -> Plan:
    events, _ = _new_events(app, after, [get_topic(kind) for kind in PLANNED])
    for event in events:
        if event.tenant == tenant:
            _add(found, event)
    return found


def _add(found: Plan, event: Any) -> None:
    at, task = format_time(event.timestamp), event.task_ref
    if isinstance(event, Task.ActionRecorded) and event.sent_by_loopline:
        found.sends.append({"at": at, "task_id": task, "to": event.details.get("to"), "kind": event.action,
                            "subject": event.details.get("subject")})
    elif isinstance(event, Task.SendDeferred):
        found.held.append({"at": at, "task_id": task, "rule": event.rule, "reason": event.reason,
                           "until": format_time(event.until) if event.until else None})
    elif isinstance(event, Task.UserNotified):
        found.owner_notices.append({"at": at, "task_id": task, "kind": event.kind, "message": event.message})
