"""The base of Loopline's aggregates: remembers the order in which events were triggered.

A unit of work that changes several aggregates for one message saves their events in the
order they happened, not the order the aggregates were loaded, so the log (and the audit
trail) does not depend on where a batch began.
"""

from __future__ import annotations

from itertools import count
from typing import Any, ClassVar

from eventsourcing.domain import Aggregate

_triggered = count()


class TenantEvent(Aggregate.Event):
    """An event that says whose it is, so readers copy its owner instead of looking it up."""

    tenant: str


class TaskEvent(TenantEvent):
    task_ref: str


class TaskMoved(TaskEvent):
    """An event that leads its task to the `status` it names (each subclass declares that field): activity."""

    def apply(self, task: Any) -> None:
        task._moved(self.status, self.timestamp)


class LoopEvent(TaskEvent):
    loop_ref: str


class LooplineAggregate(Aggregate):
    OWNER: ClassVar[dict[str, str]] = {}
    """Event field -> aggregate attribute, copied onto every event the aggregate triggers after creation."""

    @classmethod
    def _create(cls, event_class: Any, **kwargs: Any) -> Any:
        aggregate = super()._create(event_class, **kwargs)
        aggregate.__dict__["_trigger_order"] = [next(_triggered)]
        return aggregate

    def trigger_event(self, event_class: Any, **kwargs: Any) -> None:
        owner = {field: getattr(self, attribute) for field, attribute in self.OWNER.items()}
        super().trigger_event(event_class, **owner, **kwargs)
        self.__dict__.setdefault("_trigger_order", []).append(next(_triggered))

    def collect_ordered_events(self) -> list[tuple[int, Any]]:
        """Pending events with the order they were triggered in, and forgets both."""
        order = self.__dict__.pop("_trigger_order", [])
        events = list(self.collect_events())
        assert len(order) == len(events), "every pending event is triggered through _create or trigger_event"
        return list(zip(order, events, strict=True))
