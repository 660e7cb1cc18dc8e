"""What happens when a task becomes `ready`: at creation when the gate lets it through, and at `task.approve`.

This is the one place the pipeline starts working a ready task. `on_ready` is the hook the outreach
pipeline (DESIGN11 §4, H3) fills: it files the `TASK_STEP` timer due at `now` for an acting task
(one with an outreach plan), so the next tick sends its first touch. Until that lands it does
nothing, and a ready task waits, as it did before issue 11.
"""

from __future__ import annotations

from datetime import datetime

from loopline.domain.task import Task
from loopline.processors.application import UnitOfWork


def on_ready(uow: UnitOfWork, task: Task, now: datetime) -> None:
    """Called once for every task that has just become `ready`, in the same unit of work."""
