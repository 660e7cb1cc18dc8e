"""The value a task's outcome is credited with (`domain/attribution.py` computes it; the scorecard reads the event)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from loopline.domain.base import TaskEvent

if TYPE_CHECKING:
    from loopline.domain.task import Task


class TaskAttribution:
    """A direct base of `Task`; eventsourcing redefines its event as `Task.ValueAttributed`."""

    attributed_value: float = 0.0
    """What the task is worth now; a class default, so snapshots taken before attribution existed need no upcaster."""

    class ValueAttributed(TaskEvent):
        """The task is now worth `value` (it replaces any value before: a downgrade or an override sets 0): from the
        signal's amount or `multiplier` × `average_value` (`basis`), for `outcome`; `late` when a signal came after
        the close, inside the type's attribution window."""

        outcome: str
        value: float
        basis: str
        multiplier: float | None
        average_value: float
        signal_ref: str | None
        late: bool

        def apply(self, task: Task) -> None:
            task.attributed_value = self.value

    def attribute(self, *, outcome: str, value: float, basis: str, multiplier: float | None, average_value: float,
                  signal_ref: str | None, late: bool, now: datetime) -> bool:
        """Records the value unless it changes nothing (no revenue for a task never credited any); True if recorded."""
        if value == self.attributed_value and basis == "none":
            return False
        self.trigger_event(
            self.ValueAttributed, timestamp=now, outcome=outcome, value=value, basis=basis, multiplier=multiplier,
            average_value=average_value, signal_ref=signal_ref, late=late,
        )
        return True
