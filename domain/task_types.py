"""Task types: the defaults each kind of task starts with. A new type is one entry here plus a skill file."""

from __future__ import annotations

from dataclasses import dataclass

from loopline.domain.errors import DomainError


class UnknownTaskType(DomainError):
    pass


@dataclass(frozen=True)
class TaskType:
    name: str
    expires_in_days: int | None
    auto_threshold: float
    """Below this confidence a new task waits for owner review (seed 002, confidence gate)."""
    stalled_after_days: int = 3
    """No activity for this long flags the task as stalled for the proactive run (seed 000 Part 3)."""


TASK_TYPES: dict[str, TaskType] = {
    t.name: t
    for t in (
        TaskType("ad_hoc", expires_in_days=14, auto_threshold=0.5),
        TaskType("meeting_scheduling", expires_in_days=14, auto_threshold=0.5),
        TaskType("inbox_management", expires_in_days=None, auto_threshold=0.5, stalled_after_days=2),
    )
}


def task_type(name: str) -> TaskType:
    try:
        return TASK_TYPES[name]
    except KeyError:
        raise UnknownTaskType(f"unknown task_type {name!r}; known types: {', '.join(sorted(TASK_TYPES))}") from None
