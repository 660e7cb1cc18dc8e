"""The actions requested on one task, by idempotency key (seed 002 §32.2): which were taken, which wait for the owner
or for a send limit, and the staff to-dos still open with their reminders.

A request whose key the log already holds changes nothing, so a retried or repeated request takes its action once.
It is an aggregate of its own beside the task, so the task's snapshot does not grow with the actions it requests.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from eventsourcing.domain import Aggregate

from loopline.domain.base import LooplineAggregate, TaskEvent
from loopline.domain.errors import DomainError
from loopline.domain.safety_limits import TODO_REMINDERS
from loopline.domain.timeutil import format_time, parse_time

TODO_REMINDER_EVERY = timedelta(days=1)
"""A to-do not done is reminded at its due time and then once a day (seed 002 §31.3 nudges after 1 and 2 days)."""
TODO_ESCALATION_AFTER = timedelta(days=3)
"""A to-do still not done this long after its due time, its reminders all sent, escalates its task to the owner
(seed 002 §31.3: "if owner ignores for 3 days, flag it")."""

HELD, DEFERRED, TAKEN, DROPPED, DONE = "held", "deferred", "taken", "dropped", "done"
PAUSED = "paused"
"""The send check's rule for a tenant or the system paused (`domain/send_checks.py`)."""
ON_HOLD = "on_hold"
"""The rule of an action deferred while its task or the pipeline above it may not act (with the owner, a subtask held
back); what lets the task go on hands its timer back."""


class NoSuchAction(DomainError):
    """The owner named an action the task does not have in the state the command needs."""


class ActionLog(LooplineAggregate):
    OWNER = {"tenant": "tenant", "task_ref": "task_ref"}

    class Created(Aggregate.Created):
        tenant: str
        task_ref: str

    class Held(TaskEvent):
        """The action waits for the owner's `action.approve` (its safety profile and the execution mode say so)."""

        key: str
        action: str
        params: dict[str, Any]
        requested_by: str
        reason: str

        def apply(self, log: ActionLog) -> None:
            log.actions[self.key] = {"action": self.action, "params": dict(self.params),
                                     "requested_by": self.requested_by, "state": HELD}

    class Deferred(TaskEvent):
        """A send limit holds the action back until `until`; it is taken then (seed 002 §15.3: rate limited, retry)."""

        key: str
        action: str
        params: dict[str, Any]
        requested_by: str
        rule: str
        reason: str
        until: datetime

        def apply(self, log: ActionLog) -> None:
            log.actions[self.key] = {"action": self.action, "params": dict(self.params),
                                     "requested_by": self.requested_by, "state": DEFERRED,
                                     "until": format_time(self.until), "rule": self.rule}

    class Taken(TaskEvent):
        key: str
        action: str
        params: dict[str, Any]
        requested_by: str

        def apply(self, log: ActionLog) -> None:
            log.actions[self.key] = {"action": self.action, "params": dict(self.params),
                                     "requested_by": self.requested_by, "state": TAKEN, "reminders": 0}

    class Dropped(TaskEvent):
        """A held or deferred action that will not be taken: the owner rejected it, or its task closed."""

        key: str
        reason: str
        by: str

        def apply(self, log: ActionLog) -> None:
            log.actions[self.key] = {**log.actions[self.key], "state": DROPPED}

    class TodoReminded(TaskEvent):
        key: str
        reminder: int

        def apply(self, log: ActionLog) -> None:
            log.actions[self.key] = {**log.actions[self.key], "reminders": self.reminder}

    class TodoEscalated(TaskEvent):
        """The to-do was ignored past its last reminder: its task went to the owner, once."""

        key: str

        def apply(self, log: ActionLog) -> None:
            log.actions[self.key] = {**log.actions[self.key], "escalated": True}

    class TodoDone(TaskEvent):
        key: str
        by: str
        note: str

        def apply(self, log: ActionLog) -> None:
            log.actions[self.key] = {**log.actions[self.key], "state": DONE}

    def __init__(self, tenant: str, task_ref: str) -> None:
        self.tenant = tenant
        self.task_ref = task_ref
        self.actions: dict[str, dict[str, Any]] = {}
        """Idempotency key -> the action, its params, who asked and its state (held, deferred, taken, dropped, done)."""

    @classmethod
    def open(cls, *, id: Any, tenant: str, task_ref: str, now: datetime) -> ActionLog:  # noqa: A002
        return cls._create(cls.Created, id=id, timestamp=now, tenant=tenant, task_ref=task_ref)

    def hold(self, key: str, *, action: str, params: dict[str, Any], requested_by: str, reason: str,
             now: datetime) -> None:
        self.trigger_event(self.Held, timestamp=now, key=key, action=action, params=dict(params),
                           requested_by=requested_by, reason=reason)

    def defer(self, key: str, *, action: str, params: dict[str, Any], requested_by: str, rule: str, reason: str,
              until: datetime, now: datetime) -> None:
        self.trigger_event(self.Deferred, timestamp=now, key=key, action=action, params=dict(params),
                           requested_by=requested_by, rule=rule, reason=reason, until=until)

    def take(self, key: str, *, action: str, params: dict[str, Any], requested_by: str, now: datetime) -> None:
        self.trigger_event(self.Taken, timestamp=now, key=key, action=action, params=dict(params),
                           requested_by=requested_by)

    def drop(self, key: str, *, reason: str, by: str, now: datetime) -> None:
        self.trigger_event(self.Dropped, timestamp=now, key=key, reason=reason, by=by)

    def held(self, key: str | None) -> tuple[str, dict[str, Any]]:
        """The held action `key` names, or the only one held when `key` is None; NoSuchAction says which to name."""
        return self._one(key, HELD, "waits for approval")

    def open_todo(self, key: str | None) -> tuple[str, dict[str, Any]]:
        """The open staff to-do `key` names, or the only one when `key` is None."""
        return self._one(key, TAKEN, "is an open staff to-do", action="staff_todo")

    def _one(self, key: str | None, state: str, words: str, action: str | None = None) -> tuple[str, dict[str, Any]]:
        found = {k: entry for k, entry in self.actions.items()
                 if entry["state"] == state and (action is None or entry["action"] == action)}
        if key is not None:
            if key not in found:
                raise NoSuchAction(f"key: task {self.task_ref} has no action {key!r} that {words}"
                                   + (f"; these do: {', '.join(found)}" if found else ""))
            return key, found[key]
        if len(found) != 1:
            raise NoSuchAction(f"key: task {self.task_ref} has {len(found) or 'no'} actions that {words}"
                               + (f"; name one in `key`: {', '.join(found)}" if found else ""))
        return next(iter(found.items()))

    def due_retries(self, now: datetime) -> list[tuple[str, dict[str, Any]]]:
        """Deferred actions whose limit has freed up by `now`, in the order they were requested; one a pause held is
        tried whenever the log is looked at (the resume hands its timer back), since a pause ends at no known time."""
        return [(key, entry) for key, entry in self.actions.items() if entry["state"] == DEFERRED
                and (entry["rule"] == PAUSED or parse_time(entry["until"]) <= now)]

    def due_reminders(self, now: datetime) -> list[tuple[str, dict[str, Any], int]]:
        """Open to-dos whose next reminder is due by `now`, with that reminder's number (1 at the due time)."""
        return [(key, entry, entry["reminders"] + 1) for key, entry in self.actions.items()
                if self._next_reminder(entry) is not None and self._next_reminder(entry) <= now]

    def due_escalations(self, now: datetime) -> list[tuple[str, dict[str, Any]]]:
        """Open to-dos ignored past their last reminder by `now` whose task has not been escalated for them yet."""
        return [(key, entry) for key, entry in self.actions.items()
                if (at := self._escalation_due(entry)) is not None and at <= now]

    def next_due(self, *, retries: bool = True, escalations: bool = True) -> datetime | None:
        """When this log next has something to do: a deferred action's retry (unless `retries` is False: the task may
        not act now), a to-do's reminder, or an ignored to-do's escalation (unless `escalations` is False: the task
        cannot be escalated now)."""
        times = [parse_time(entry["until"]) for entry in self.actions.values()
                 if retries and entry["state"] == DEFERRED]
        times += [t for entry in self.actions.values() if (t := self._next_reminder(entry)) is not None]
        times += [t for entry in self.actions.values() if escalations and (t := self._escalation_due(entry))]
        return min(times, default=None)

    @staticmethod
    def _escalation_due(entry: dict[str, Any]) -> datetime | None:
        if entry["action"] != "staff_todo" or entry["state"] != TAKEN or entry["reminders"] < TODO_REMINDERS \
                or entry.get("escalated"):  # entries of logs from before TodoEscalated have no such field
            return None
        return parse_time(entry["params"]["due_at"]) + TODO_ESCALATION_AFTER

    @staticmethod
    def _next_reminder(entry: dict[str, Any]) -> datetime | None:
        if entry["action"] != "staff_todo" or entry["state"] != TAKEN or entry["reminders"] >= TODO_REMINDERS:
            return None
        return parse_time(entry["params"]["due_at"]) + TODO_REMINDER_EVERY * entry["reminders"]

    def remind(self, key: str, *, reminder: int, now: datetime) -> None:
        self.trigger_event(self.TodoReminded, timestamp=now, key=key, reminder=reminder)

    def escalate_todo(self, key: str, *, now: datetime) -> None:
        self.trigger_event(self.TodoEscalated, timestamp=now, key=key)

    def todo_done(self, key: str, *, by: str, note: str, now: datetime) -> None:
        self.trigger_event(self.TodoDone, timestamp=now, key=key, by=by, note=note)

    def held_keys(self) -> list[str]:
        """Keys of the actions waiting for the owner's approval."""
        return [key for key, entry in self.actions.items() if entry["state"] == HELD]

    def pending(self) -> list[str]:
        """Keys of the actions that may still be taken (held or deferred)."""
        return [key for key, entry in self.actions.items() if entry["state"] in (HELD, DEFERRED)]
