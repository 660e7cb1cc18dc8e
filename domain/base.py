"""The base of Loopline's aggregates: remembers the order in which events were triggered.

A unit of work that changes several aggregates for one message saves their events in the
order they happened, not the order the aggregates were loaded, so the log (and the audit
trail) does not depend on where a batch began.
"""

from __future__ import annotations

from itertools import count
from typing import Any

from eventsourcing.domain import Aggregate

_triggered = count()


class LooplineAggregate(Aggregate):
    @classmethod
    def _create(cls, event_class: Any, **kwargs: Any) -> Any:
        aggregate = super()._create(event_class, **kwargs)
        aggregate.__dict__["_trigger_order"] = [next(_triggered)]
        return aggregate

    def trigger_event(self, event_class: Any, **kwargs: Any) -> None:
        super().trigger_event(event_class, **kwargs)
        self.__dict__.setdefault("_trigger_order", []).append(next(_triggered))

    def collect_ordered_events(self) -> list[tuple[int, Any]]:
        """Pending events with the order they were triggered in, and forgets both."""
        order = self.__dict__.pop("_trigger_order", [])
        events = list(self.collect_events())
        assert len(order) == len(events), "every pending event is triggered through _create or trigger_event"
        return list(zip(order, events, strict=True))
