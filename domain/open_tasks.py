"""The tenant's open tasks, as the synthesis run's context snapshot reads them: every task created is noted, and
those found closed when a run looks are forgotten (a close is not written here, as in `domain/task_ledger.py`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from eventsourcing.domain import Aggregate

from loopline.domain.base import LooplineAggregate, TenantEvent


class OpenTasks(LooplineAggregate):
    OWNER = {"tenant": "tenant"}

    class Created(Aggregate.Created):
        tenant: str

    class Noted(TenantEvent):
        task_ref: str

        def apply(self, index: OpenTasks) -> None:
            index.refs.append(self.task_ref)

    class Forgotten(TenantEvent):
        task_refs: list[str]

        def apply(self, index: OpenTasks) -> None:
            closed = set(self.task_refs)
            index.refs = [ref for ref in index.refs if ref not in closed]

    def __init__(self, tenant: str) -> None:
        self.tenant = tenant
        self.refs: list[str] = []
        """The tasks created and open when last looked at, oldest first."""

    @classmethod
    def open(cls, *, id: Any, tenant: str, now: datetime) -> OpenTasks:  # noqa: A002
        return cls._create(cls.Created, id=id, timestamp=now, tenant=tenant)

    def note(self, *, task_ref: str, now: datetime) -> None:
        self.trigger_event(self.Noted, timestamp=now, task_ref=task_ref)

    def forget(self, *, task_refs: list[str], now: datetime) -> None:
        if task_refs:
            self.trigger_event(self.Forgotten, timestamp=now, task_refs=list(task_refs))
