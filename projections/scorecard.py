"""The `scorecard` read model (seed 002 §28.3, §38 phase 3): per task, when it was created and reached its outcome,
the outcome and value it is credited with, whether it escalated and what it waits on the owner for; per event, the
messages sent, replies and late attributions. Every row keeps the positions of the events that made it, and each
moment keeps the local day, ISO week and month of the tenant's time zone at the time; `scorecard_numbers.py` adds up.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Boolean, Column, Float, Integer, String, Table, Text
from sqlalchemy.engine import Connection

from loopline.domain.base import TaskEvent
from loopline.domain.periods import labels_at
from loopline.domain.status import TaskStatus
from loopline.domain.task import Task
from loopline.domain.task_types import TASK_TYPES
from loopline.domain.tenant import Tenant
from loopline.domain.timeutil import format_time
from loopline.projections import writes
from loopline.projections.runner import metadata


def _periods(prefix: str) -> list[Column[Any]]:
    return [Column(f"{prefix}_day", String(10)), Column(f"{prefix}_week", String(8)), Column(f"{prefix}_month", String(7))]


scorecard_zones = Table(
    "scorecard_zones", metadata,
    Column("tenant", String(200), primary_key=True),
    Column("timezone", String(64), nullable=False),
)

scorecard_tasks = Table(
    "scorecard_tasks", metadata,
    Column("aggregate_id", String(36), primary_key=True),
    Column("tenant", String(200), nullable=False, index=True),
    Column("task_id", String(200), nullable=False),
    Column("title", Text, nullable=False),
    Column("task_type", String(64), nullable=False),
    Column("status", String(32), nullable=False),
    Column("created_at", String(40), nullable=False),
    Column("created_position", Integer, nullable=False),
    *_periods("created"),
    Column("escalated_position", Integer),  # the task's first escalation
    Column("attention_reason", Text),  # why it is escalated or in review, as the event said
    Column("attention_position", Integer),
    Column("held_position", Integer),  # a draft held back for the owner's task.approve
    Column("messages_used", Integer, nullable=False),
    Column("outcome", String(64)),  # the outcome it is credited with now
    Column("outcome_kind", String(16)),
    Column("outcome_provisional", Boolean),
    Column("outcome_position", Integer),
    Column("outcome_at", String(40)),  # when it first reached an outcome: the period it counts in
    Column("first_outcome_position", Integer),
    *_periods("outcome"),
    Column("value", Float),
    Column("value_position", Integer),
)

scorecard_events = Table(
    "scorecard_events", metadata,
    Column("position", Integer, primary_key=True, autoincrement=False),
    Column("tenant", String(200), nullable=False, index=True),
    Column("task_id", String(200), nullable=False),
    Column("kind", String(16), nullable=False),  # sent, returned (a sent touch that never left), reply, late
    Column("event", String(64), nullable=False),
    Column("at", String(40), nullable=False),
    *_periods("at"),
)


def _task_events() -> list[type]:
    found = (getattr(Task, name) for name in dir(Task))
    return [cls for cls in found if isinstance(cls, type) and issubclass(cls, TaskEvent)]


MOVING = tuple(cls for cls in _task_events() if any("status" in vars(k).get("__annotations__", {}) for k in cls.__mro__))
"""Every Task event that names the status it leads to."""

REVISED = (Task.AttributedLate, Task.OutcomeDowngraded, Task.OutcomeUndone, Task.OutcomeOverridden)
"""A closed task's outcome revised by a signal (`domain/task_outcomes.py`) or the owner (`domain/task_progress.py`);
its value follows in a `ValueAttributed`."""

HELD_ENDS_WITH = (Task.ActionRecorded, Task.GuidanceGiven, Task.OwnerAnswered)
"""What ends a draft's wait for the owner (as `Task._hold(None)` does): a message sent, guidance, an answer."""


def _zone(conn: Connection, tenant: str) -> str:
    found = writes.row(conn, scorecard_zones, tenant)
    return found["timezone"] if found else "UTC"


def _stamped(conn: Connection, prefix: str, event: Any) -> dict[str, str]:
    return {f"{prefix}_{kind}": label for kind, label in labels_at(event.timestamp, _zone(conn, event.tenant)).items()}


def _configured(conn: Connection, event: Tenant.Configured, position: int) -> None:
    zone = event.settings.get("timezone")
    if zone is None:
        return
    if writes.row(conn, scorecard_zones, event.tenant) is None:
        writes.insert(conn, scorecard_zones, {"tenant": event.tenant, "timezone": zone})
    else:
        writes.update(conn, scorecard_zones, event.tenant, set={"timezone": zone})


def _created(conn: Connection, event: Task.Created, position: int) -> None:
    writes.insert(conn, scorecard_tasks, {
        "aggregate_id": str(event.originator_id), "tenant": event.tenant, "task_id": event.ref, "title": event.title,
        "task_type": event.task_type, "status": event.status, "created_at": format_time(event.timestamp),
        "created_position": position, **_stamped(conn, "created", event), "escalated_position": None,
        "attention_reason": event.reason if event.status == TaskStatus.PENDING_REVIEW else None,
        "attention_position": position if event.status == TaskStatus.PENDING_REVIEW else None,
        "held_position": None, "messages_used": 0, "outcome": None, "outcome_kind": None, "outcome_provisional": None,
        "outcome_position": None, "outcome_at": None, "first_outcome_position": None, "outcome_day": None,
        "outcome_week": None, "outcome_month": None, "value": None, "value_position": None,
    })


def _fact(conn: Connection, event: Any, position: int, kind: str) -> None:
    writes.insert(conn, scorecard_events, {
        "position": position, "tenant": event.tenant, "task_id": event.task_ref, "kind": kind,
        "event": f"Task.{type(event).__name__}", "at": format_time(event.timestamp), **_stamped(conn, "at", event),
    })


def _outcome(conn: Connection, event: Any, position: int, row: dict[str, Any], code: str) -> dict[str, Any]:
    """The outcome the task is credited with now; the first one dates it."""
    known = TASK_TYPES[row["task_type"]].outcome(code) if row["task_type"] in TASK_TYPES else None
    provisional = event.provisional if isinstance(event, Task.OutcomeSet) else bool(known and known.provisional)
    kind = getattr(event, "kind", None) or (known.kind if known else "neutral")  # a revision names its kind
    changes = {"outcome": code, "outcome_kind": kind, "outcome_provisional": provisional, "outcome_position": position}
    if row["outcome_at"] is None:
        changes |= {"outcome_at": format_time(event.timestamp), "first_outcome_position": position,
                    **_stamped(conn, "outcome", event)}
    return changes


def _changes(conn: Connection, event: Any, position: int, row: dict[str, Any]) -> dict[str, Any]:
    """What the event changes in the task's row (and the facts it adds)."""
    changes: dict[str, Any] = {}
    if isinstance(event, MOVING):
        changes["status"] = event.status
        if event.status != row["status"] and event.status in (TaskStatus.ESCALATED, TaskStatus.PENDING_REVIEW):
            why = getattr(event, "reason", None) or getattr(event, "notes", None)  # `task.update` gives notes
            changes |= {"attention_reason": why, "attention_position": position}
        if event.status == TaskStatus.ESCALATED and row["escalated_position"] is None:
            changes["escalated_position"] = position
    if isinstance(event, Task.DraftHeldBack):
        changes["held_position"] = position
    elif isinstance(event, HELD_ENDS_WITH) and (not isinstance(event, Task.ActionRecorded) or event.sent_by_loopline):
        changes["held_position"] = None
    if isinstance(event, (Task.OutcomeSet, *REVISED)):
        changes |= _outcome(conn, event, position, row, event.code)
    if isinstance(event, Task.Reopened):  # back to work: no outcome until it closes again (its first still dates it)
        changes |= {"outcome": None, "outcome_kind": None, "outcome_provisional": None, "outcome_position": position}
    if isinstance(event, Task.ValueAttributed):
        changes |= _outcome(conn, event, position, row, event.outcome) | {"value": event.value, "value_position": position}
        if event.late:
            _fact(conn, event, position, "late")
    if isinstance(event, Task.TouchSent):
        changes["messages_used"] = event.messages_used
        _fact(conn, event, position, "sent")
    if isinstance(event, Task.SendReturned):
        changes["messages_used"] = event.messages_used
        if event.messages_used < row["messages_used"]:
            _fact(conn, event, position, "returned")
    if isinstance(event, Task.SignalReceived) and event.signal_type == "email.received":
        _fact(conn, event, position, "reply")
    return changes


def _task_event(conn: Connection, event: Any, position: int) -> None:
    row = writes.row(conn, scorecard_tasks, str(event.originator_id))
    assert row is not None, f"task {event.task_ref} of {event.tenant} has events before its Task.Created"
    changes = _changes(conn, event, position, row)
    if changes:
        writes.update(conn, scorecard_tasks, str(event.originator_id), set=changes)


def prefetch(conn: Connection, events: list[Any]) -> None:
    writes.preload(conn, scorecard_tasks, list({str(e.originator_id) for e in events if isinstance(e, TaskEvent)}))
    writes.preload(conn, scorecard_zones, list({e.tenant for e in events}))


FOLLOWED = (*MOVING, Task.DraftHeldBack, *HELD_ENDS_WITH, Task.OutcomeSet, *REVISED, Task.Reopened,
            Task.ValueAttributed, Task.TouchSent, Task.SendReturned, Task.SignalReceived)

name = "scorecard"
cost = 2  # not measured: taken as the `tasks` read model's, which changes a row per task on most of the same events
tables = (scorecard_zones, scorecard_tasks, scorecard_events)
handlers = {Tenant.Configured: _configured, Task.Created: _created, **{cls: _task_event for cls in FOLLOWED}}
