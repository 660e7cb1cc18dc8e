"""The write-side index of a tenant's acting tasks per contact: one active task per (contact, type).

`task.create` for a contact loads this one entry (no scan, no read model) to find the task of the
same type it may merge into (its context is added to that task); the pipeline reads it for the contact's other tasks
(cross-task context) and for replies to a task already closed.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from eventsourcing.domain import Aggregate

from loopline.domain.base import LooplineAggregate, TenantEvent


class ContactIndex(LooplineAggregate):
    OWNER = {"tenant": "tenant"}

    class Created(Aggregate.Created):
        tenant: str
        contact: str

    class Linked(TenantEvent):
        """The task now worked for this contact and type; it replaces the one before (which was closed)."""

        task_type: str
        task_ref: str

        def apply(self, index: ContactIndex) -> None:
            index.tasks[self.task_type] = self.task_ref

    def __init__(self, tenant: str, contact: str) -> None:
        self.tenant = tenant
        self.contact = contact
        self.tasks: dict[str, str] = {}
        """Task type -> ref of the latest acting task of that type for this contact (open or closed)."""

    @classmethod
    def create(cls, *, id: Any, tenant: str, contact: str, now: datetime) -> ContactIndex:  # noqa: A002
        return cls._create(cls.Created, id=id, timestamp=now, tenant=tenant, contact=contact.lower())

    def link(self, task_type: str, task_ref: str, *, now: datetime) -> None:
        if self.tasks.get(task_type) != task_ref:
            self.trigger_event(self.Linked, timestamp=now, task_type=task_type, task_ref=task_ref)
