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
        """The task is credited for `outcome` and now worth `value`, replacing what it was credited before (a downgrade
        or an override to an outcome without revenue sets 0): the signal's amount or `multiplier` × `average_value`
        (`basis`); `late` when a signal came after the close, inside the type's attribution window."""

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
                  signal_ref: str | None, late: bool, now: datetime) -> None:
        """Records the value unless it changes nothing: an outcome without revenue on a task never credited any."""
        if basis == "none" and self.attributed_value == 0:
            return
        self.trigger_event(
            self.ValueAttributed, timestamp=now, outcome=outcome, value=value, basis=basis, multiplier=multiplier,
            average_value=average_value, signal_ref=signal_ref, late=late,
        )
