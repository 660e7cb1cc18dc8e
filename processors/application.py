"""The Loopline event-sourced application and the unit of work every change goes through."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError, Application
from eventsourcing.persistence import ProcessRecorder, Tracking

from domain.base import LooplineAggregate

A = TypeVar("A", bound=LooplineAggregate)


class Loopline(Application[UUID]):
    """The write side: one event store holding every aggregate; processors record positions in it."""

    name = "loopline"

    def construct_recorder(self) -> ProcessRecorder:
        return self.factory.process_recorder()

    @property
    def process_recorder(self) -> ProcessRecorder:
        assert isinstance(self.recorder, ProcessRecorder)
        return self.recorder

    def position(self, processor: str) -> int:
        return self.process_recorder.max_tracking_id(processor) or 0


class UnitOfWork:
    """Aggregates loaded and changed by one batch, saved in one transaction with its position.

    A step that fails with a domain error is undone with `rollback_step`, so the rest of the
    batch still commits (a reject never takes valid messages down with it).
    """

    def __init__(self, app: Loopline) -> None:
        self.app = app
        self._aggregates: dict[UUID, LooplineAggregate] = {}
        self._collected: list[Any] = []

    def get(self, aggregate_id: UUID, cls: type[A]) -> A | None:
        aggregate = self._aggregates.get(aggregate_id)
        if aggregate is None:
            try:
                aggregate = self.app.repository.get(aggregate_id)
            except AggregateNotFoundError:
                return None
            self._aggregates[aggregate_id] = aggregate
        assert isinstance(aggregate, cls), f"{aggregate_id} is a {type(aggregate).__name__}, not a {cls.__name__}"
        return aggregate

    def get_or_create(self, aggregate_id: UUID, cls: type[A], create: Callable[[], A]) -> A:
        return self.get(aggregate_id, cls) or self.add(create())

    def add(self, aggregate: A) -> A:
        self._aggregates[aggregate.id] = aggregate
        return aggregate

    def end_step(self) -> None:
        """Collects the step's events in the order they were triggered across aggregates."""
        ordered = [pair for aggregate in self._aggregates.values() for pair in aggregate.collect_ordered_events()]
        self._collected.extend(event for _, event in sorted(ordered, key=lambda pair: pair[0]))

    def rollback_step(self) -> None:
        """Rebuilds every aggregate the failed step touched from what is stored plus earlier steps."""
        for aggregate_id, aggregate in list(self._aggregates.items()):
            if not aggregate.pending_events:
                continue
            del self._aggregates[aggregate_id]
            earlier = [event for event in self._collected if event.originator_id == aggregate_id]
            if earlier and earlier[0].originator_version == 1:
                rebuilt = None
            else:
                try:
                    rebuilt = self.app.repository.get(aggregate_id)
                except AggregateNotFoundError:
                    continue
            for event in earlier:
                rebuilt = event.mutate(rebuilt)
            if rebuilt is not None:
                self._aggregates[aggregate_id] = rebuilt

    def commit(self, tracking: Tracking | None = None) -> int:
        """Saves every collected event (and the position, if given) atomically; returns the event count."""
        self.end_step()
        events, self._collected = self._collected, []
        if events or tracking is not None:
            self.app.events.put(events, tracking=tracking)
        return len(events)
