"""The owner's controls on one task (seed 003 §4): pause it, resume it, run its next step now.

A paused task does no work of its own: what falls due for it is held here, as the tenant's pause holds it
(`domain/pause.py` Pausable), and resuming hands it back. A separate aggregate, so Task's events and snapshots keep
their shape.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from eventsourcing.domain import Aggregate

from loopline.domain.base import LooplineAggregate, TaskEvent
from loopline.domain.pause import Pausable


class TaskControl(Pausable, LooplineAggregate):
    OWNER = {"tenant": "tenant", "task_ref": "task_ref"}

    class Created(Aggregate.Created):
        tenant: str
        task_ref: str

    class Paused(TaskEvent):
        reason: str
        by: str
        """The owner, or `question Q` when the question ladder's 8 h rung paused the task."""

        def apply(self, control: TaskControl) -> None:
            control.pause_record = {"reason": self.reason, "by": self.by, "since": self.timestamp.isoformat()}

    class Resumed(TaskEvent):
        reason: str
        by: str
        released: list[dict[str, Any]]
        """The held work handed back, in the order it was held."""

        def apply(self, control: TaskControl) -> None:
            control.pause_record = None
            control.held = []

    class WorkHeld(TaskEvent):
        work: dict[str, Any]

        def apply(self, control: TaskControl) -> None:
            control.held.append(self.work)

    class RunRequested(TaskEvent):
        """The owner asked for the task's next step now, ahead of its schedule."""

        reason: str
        by: str

    def __init__(self, tenant: str, task_ref: str) -> None:
        self.tenant = tenant
        self.task_ref = task_ref
        self.pause_record: dict[str, str] | None = None
        self.held: list[dict[str, Any]] = []

    @classmethod
    def open(cls, *, id: Any, tenant: str, task_ref: str, now: datetime) -> TaskControl:  # noqa: A002
        return cls._create(cls.Created, id=id, timestamp=now, tenant=tenant, task_ref=task_ref)

    @property
    def pause_scope(self) -> str:
        return f"task {self.task_ref}"

    def run_now(self, reason: str, by: str, now: datetime) -> None:
        self.trigger_event(self.RunRequested, timestamp=now, reason=reason, by=by)
