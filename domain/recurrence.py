"""The Recurrence aggregate: a recurring template (seed 002 §31.6), never worked itself, that creates a fresh task at
each firing of its cron, counted, until its `max_instances`; a timer at `next_at` fires it."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from eventsourcing.domain import Aggregate

from loopline.domain.base import LooplineAggregate, TenantEvent
from loopline.domain.errors import DomainError


class RecurrenceEnded(DomainError):
    """The template made its last instance: it creates no more."""


class RecurrenceEvent(TenantEvent):
    template_ref: str


class Recurrence(LooplineAggregate):
    OWNER = {"tenant": "tenant", "template_ref": "ref"}

    class Created(Aggregate.Created):
        tenant: str
        ref: str
        cron: str
        timezone: str
        max_instances: int
        template: dict[str, Any]
        next_at: datetime

    class InstanceCreated(RecurrenceEvent):
        """Firing `number` (counted whether or not a limit held its task): `created` False says a limit held it,
        `result` what `task.create` answered; `next_at` the next firing (None: this was the last)."""

        number: int
        task_ref: str
        created: bool
        result: str
        next_at: datetime | None

        def apply(self, recurrence: Recurrence) -> None:
            recurrence.instances = self.number
            recurrence.next_at = self.next_at

    class Ended(RecurrenceEvent):
        reason: str

        def apply(self, recurrence: Recurrence) -> None:
            recurrence.next_at = None

    def __init__(self, tenant: str, ref: str, cron: str, timezone: str, max_instances: int, template: dict[str, Any],
                 next_at: datetime) -> None:
        self.tenant = tenant
        self.ref = ref
        self.cron = cron
        self.timezone = timezone
        self.max_instances = max_instances
        self.template = template
        self.next_at: datetime | None = next_at
        self.instances = 0

    @classmethod
    def start(cls, *, id: Any, now: datetime, **fields: Any) -> Recurrence:  # noqa: A002
        return cls._create(cls.Created, id=id, timestamp=now, **fields)

    @property
    def has_ended(self) -> bool:
        return self.next_at is None

    def is_due(self, now: datetime) -> bool:
        return self.next_at is not None and self.next_at <= now

    def check_may_fire(self) -> None:
        if self.has_ended:
            raise RecurrenceEnded(f"template {self.ref} made its {self.instances} instances and ended")

    def stop(self, *, reason: str, now: datetime) -> bool:
        """Ends the template before its last instance (the owner's `recurrence.stop`); False when it had ended."""
        if self.has_ended:
            return False
        self.trigger_event(self.Ended, timestamp=now, reason=reason)
        return True

    def record_instance(self, *, task_ref: str, created: bool, result: str, next_at: datetime, now: datetime) -> None:
        """Counts one firing; the last one the limit allows ends the template (`Ended`)."""
        self.check_may_fire()
        number = self.instances + 1
        last = number >= self.max_instances
        self.trigger_event(self.InstanceCreated, timestamp=now, number=number, task_ref=task_ref, created=created,
                           result=result, next_at=None if last else next_at)
        if last:
            self.trigger_event(self.Ended, timestamp=now, reason=f"made its {number} instances, its max_instances")
