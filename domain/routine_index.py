"""The write-side index of a tenant's routines: which listens for which signal types, and which task owns which, so
a signal or a task's closing loads one aggregate instead of scanning routines or reading a read model (as
`watch_index.py` does for loops)."""

from __future__ import annotations

from datetime import datetime
from fnmatch import fnmatchcase
from typing import Any

from eventsourcing.domain import Aggregate

from loopline.domain.base import LooplineAggregate, TenantEvent


class RoutineIndex(LooplineAggregate):
    OWNER = {"tenant": "tenant"}

    class Started(Aggregate.Created):
        tenant: str

    class Listed(TenantEvent):
        routine_ref: str
        signal_pattern: str

        def apply(self, index: RoutineIndex) -> None:
            index.patterns[self.routine_ref] = self.signal_pattern

    class Owned(TenantEvent):
        routine_ref: str
        task_ref: str

        def apply(self, index: RoutineIndex) -> None:
            index.owned.setdefault(self.task_ref, []).append(self.routine_ref)

    class Registered(TenantEvent):
        """A routine the tenant created, counted against the routines it may have."""

        routine_ref: str

        def apply(self, index: RoutineIndex) -> None:
            index.routines.append(self.routine_ref)

    def __init__(self, tenant: str) -> None:
        self.tenant = tenant
        self.routines: list[str] = []
        self.patterns: dict[str, str] = {}
        self.owned: dict[str, list[str]] = {}

    @classmethod
    def start(cls, *, id: Any, tenant: str, now: datetime) -> RoutineIndex:  # noqa: A002
        return cls._create(cls.Started, id=id, timestamp=now, tenant=tenant)

    def register(self, *, routine_ref: str, now: datetime) -> None:
        self.trigger_event(self.Registered, timestamp=now, routine_ref=routine_ref)

    def listen(self, *, routine_ref: str, signal_pattern: str, now: datetime) -> None:
        self.trigger_event(self.Listed, timestamp=now, routine_ref=routine_ref, signal_pattern=signal_pattern)

    def own(self, *, routine_ref: str, task_ref: str, now: datetime) -> None:
        self.trigger_event(self.Owned, timestamp=now, routine_ref=routine_ref, task_ref=task_ref)

    def listening(self, signal_type: str) -> list[str]:
        """The routines whose pattern matches the signal type (each checks its own status before it runs)."""
        return [ref for ref, pattern in self.patterns.items() if fnmatchcase(signal_type, pattern)]
