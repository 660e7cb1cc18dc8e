"""The Loopline event-sourced application and the unit of work every change goes through."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError, Application
from eventsourcing.persistence import ProcessRecorder, Tracking

from loopline.domain.base import LooplineAggregate
from loopline.domain.contact_outcomes import ContactOutcomes
from loopline.domain.model_ledger import TenantModelCalls
from loopline.domain.notification_hold import NotificationHold
from loopline.domain.pause import SystemSwitch
from loopline.domain.proactive_run import ProactiveRun
from loopline.domain.routine import Routine
from loopline.domain.send_ledger import ContactSends, TenantSends
from loopline.domain.task import Task
from loopline.domain.open_tasks import OpenTasks
from loopline.domain.task_ledger import TenantTasks
from loopline.domain.tenant import Tenant
from loopline.domain.timers import TimerBucket
from loopline.domain.watch_index import WatchIndex

A = TypeVar("A", bound=LooplineAggregate)


@dataclass(frozen=True)
class Position(Tracking):
    """A processor's new position together with the one it read: the recorders store it only if the
    stored position is still `previous` (IntegrityError otherwise), so two processes reading the
    same batch cannot both apply it. `marks` are other named values written in the same transaction,
    overwriting what was stored under their names (e.g. a fingerprint of the last record processed)."""

    previous: int = 0
    marks: tuple[tuple[str, int], ...] = ()


class AggregateCache:
    """Aggregates as last committed by this process, kept so a busy one is not replayed for every batch.

    A unit of work takes an aggregate out (so no other unit of work can hold the same object),
    brings it up to date with whatever events were stored after its version (another worker or
    the scheduler may have written some), and puts it back only once its own commit succeeded.
    A failed or abandoned unit of work simply loses its aggregates from the cache.
    """

    def __init__(self, maxsize: int = 20_000) -> None:
        self.maxsize = maxsize
        self._aggregates: OrderedDict[UUID, LooplineAggregate] = OrderedDict()

    def take(self, aggregate_id: UUID) -> LooplineAggregate | None:
        return self._aggregates.pop(aggregate_id, None)

    def put(self, aggregates: Iterable[LooplineAggregate]) -> None:
        for aggregate in aggregates:
            self._aggregates[aggregate.id] = aggregate
            self._aggregates.move_to_end(aggregate.id)
        while len(self._aggregates) > self.maxsize:
            self._aggregates.popitem(last=False)

    def clear(self) -> None:
        self._aggregates.clear()


class Loopline(Application[UUID]):
    """The write side: one event store holding every aggregate; processors record positions in it.

    Aggregates that collect many events (timer buckets, match indexes, long-running tasks) are
    snapshotted, so loading one replays at most an interval's worth of events. Recently used
    aggregates stay in this process's `cache` between units of work.
    """

    name = "loopline"
    snapshotting_intervals: ClassVar[dict[type, int]] = {
        TimerBucket: 100, WatchIndex: 100, Task: 50, ContactSends: 50, TenantSends: 100, TenantTasks: 100,
        TenantModelCalls: 100, Tenant: 100, SystemSwitch: 100, ContactOutcomes: 50, OpenTasks: 100,
        Routine: 50,  # a routine every 30 minutes records a run about 50 times a day, for as long as it lives
        ProactiveRun: 50, NotificationHold: 50,  # a tenant's brain: several events a run, several runs a day, for ever
    }

    def __init__(self, env: Any = None) -> None:
        super().__init__(env)
        self.cache = AggregateCache()

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
    batch still commits (a reject never takes valid messages down with it). A step only changes
    aggregates it got or added during that step, so ending a step looks at those alone.
    """

    def __init__(self, app: Loopline) -> None:
        self.app = app
        self._aggregates: dict[UUID, LooplineAggregate] = {}
        self._step: dict[UUID, LooplineAggregate] = {}
        self._absent: set[UUID] = set()
        self._collected: list[Any] = []

    def get(self, aggregate_id: UUID, cls: type[A]) -> A | None:
        aggregate = self._aggregates.get(aggregate_id)
        if aggregate is None:
            if aggregate_id in self._absent:
                return None
            aggregate = self._load(aggregate_id, cls)
            if aggregate is None:
                self._absent.add(aggregate_id)
                return None
            self._aggregates[aggregate_id] = aggregate
        self._step[aggregate_id] = aggregate
        assert isinstance(aggregate, cls), f"{aggregate_id} is a {type(aggregate).__name__}, not a {cls.__name__}"
        return aggregate

    def peek(self, aggregate_id: UUID) -> LooplineAggregate | None:
        """An aggregate already loaded in this unit of work, without loading or touching it."""
        return self._aggregates.get(aggregate_id)

    def prefetch(self, aggregate_ids: Iterable[UUID]) -> None:
        """Loads many aggregates at once where the store can (PostgreSQL: two queries for all of
        them); the steps that follow find them here instead of querying one by one."""
        wanted = [i for i in dict.fromkeys(aggregate_ids) if i not in self._aggregates and i not in self._absent]
        select_latest = getattr(self.app.recorder, "select_latest", None)
        if not wanted or select_latest is None:
            return
        loaded: dict[UUID, Any] = {}
        for aggregate_id in wanted:
            if (cached := self.app.cache.take(aggregate_id)) is not None:
                loaded[aggregate_id] = cached
        snapshots_table = getattr(getattr(self.app.snapshots, "recorder", None), "events_table_name", None)
        stored_snapshots, stored_events = select_latest(
            wanted, snapshots_table, after={i: aggregate.version for i, aggregate in loaded.items()}
        )
        for stored in stored_snapshots:
            loaded[stored.originator_id] = self.app.mapper.to_domain_event(stored).mutate(None)
        for stored in stored_events:
            event = self.app.mapper.to_domain_event(stored)
            loaded[stored.originator_id] = event.mutate(loaded.get(stored.originator_id))
        for aggregate_id in wanted:
            if aggregate_id in loaded:
                self._aggregates[aggregate_id] = loaded[aggregate_id]
            else:
                self._absent.add(aggregate_id)

    def _load(self, aggregate_id: UUID, cls: type[A]) -> A | None:
        """From the cache plus newer events, else from a snapshot where the type has them, else
        straight from its events (one query, not two)."""
        cached = self.app.cache.take(aggregate_id)
        if cached is not None:
            for event in self.app.events.get(aggregate_id, gt=cached.version):
                cached = event.mutate(cached)
            return cached
        if cls in self.app.snapshotting_intervals:
            try:
                return self.app.repository.get(aggregate_id)
            except AggregateNotFoundError:
                return None
        aggregate = None
        for event in self.app.events.get(aggregate_id):
            aggregate = event.mutate(aggregate)
        return aggregate

    def unsaved_events(self) -> int:
        """How many events the aggregates in hand triggered that no step collected yet: the same count before and
        after a call means the call changed nothing."""
        return sum(len(aggregate.pending_events) for aggregate in self._aggregates.values())

    def stepped(self) -> list[LooplineAggregate]:
        """The aggregates the current step got or added, changed or not."""
        return list(self._step.values())

    def get_or_create(self, aggregate_id: UUID, cls: type[A], create: Callable[[], A]) -> A:
        return self.get(aggregate_id, cls) or self.add(create())

    def add(self, aggregate: A) -> A:
        self._absent.discard(aggregate.id)
        self._aggregates[aggregate.id] = aggregate
        self._step[aggregate.id] = aggregate
        return aggregate

    def end_step(self, *, everything: bool = False) -> None:
        """Collects the step's events in the order they were triggered across aggregates."""
        touched = self._aggregates if everything else self._step
        ordered = [pair for aggregate in touched.values() for pair in aggregate.collect_ordered_events()]
        self._collected.extend(event for _, event in sorted(ordered, key=lambda pair: pair[0]))
        self._step = {}

    def rollback_step(self, *, touched: bool = False) -> None:
        """Rebuilds every aggregate the failed step changed (with `touched`, every one it got, since
        an unexpected error may leave one half-changed) from what is stored plus earlier steps."""
        step, self._step = self._step, {}
        for aggregate_id, aggregate in step.items():
            if not (touched or aggregate.pending_events):
                continue
            del self._aggregates[aggregate_id]
            earlier = self.collected(aggregate_id)
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

    def collected(self, aggregate_id: UUID) -> list[Any]:
        """The aggregate's events that earlier steps of this unit of work triggered, not saved yet."""
        return [event for event in self._collected if event.originator_id == aggregate_id]

    def commit(self, tracking: Tracking | None = None) -> int:
        """Saves every collected event (and the position, if given) atomically; returns the event count."""
        self.end_step(everything=True)
        events, self._collected = self._collected, []
        if events or tracking is not None:
            self.app.events.put(events, tracking=tracking)
        due: dict[UUID, LooplineAggregate] = {}
        for event in events:
            aggregate = self._aggregates.get(event.originator_id)
            interval = self.app.snapshotting_intervals.get(type(aggregate))
            if aggregate is not None and interval and event.originator_version % interval == 0:
                due[aggregate.id] = aggregate
        if due and self.app.snapshots is not None:
            # From the aggregates in hand, as they stand after this commit: no reload from the store.
            self.app.snapshots.put([
                getattr(type(aggregate), "Snapshot", self.app.snapshot_class).take(aggregate) for aggregate in due.values()
            ])
        self.app.cache.put(self._aggregates.values())
        self._aggregates, self._absent = {}, set()
        return len(events)
