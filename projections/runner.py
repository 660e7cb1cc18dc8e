"""Keeps read models up to date from the event store, recording each one's position in the same transaction."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from eventsourcing.persistence import ApplicationRecorder, Mapper
from eventsourcing.utils import get_topic
from sqlalchemy import Column, Integer, MetaData, String, Table, inspect, select
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError

from loopline.projections import writes
from loopline.projections.parked import (
    DROPPED,
    RETRIED,
    close_parked,
    is_outage,
    park_projection_event,
    parked_events,
    record_failure,
)

metadata = MetaData()
positions = Table(
    "projection_positions", metadata, Column("name", String(64), primary_key=True), Column("position", Integer, nullable=False)
)

MAX_CONFLICTS = 20
REBUILD_BATCH = 10_000  # a rebuild's batches: most rows are then inserted and changed in memory, and written once


def _columns_written(engine: Engine) -> dict[str, set[str]]:
    """The columns of every table the database holds, by table name (one query on PostgreSQL)."""
    found = inspect(engine).get_multi_columns()
    return {table: {column["name"] for column in columns} for (_, table), columns in found.items()}


class ParkedEventClosed(Exception):
    """The parked event was retried or dropped already."""


class ConcurrentProjection(RuntimeError):
    """Another runner projected the same batch first; this one's transaction is rolled back."""


Handler = Callable[[Connection, Any, int], None]


class Projection(Protocol):
    """A read model: a module with a name, its tables, and a handler per event class it follows.
    It may also define `prefetch(conn, events)`, called once per batch before the handlers, to
    read in bulk the rows they will need (see `projections.writes.preload`), and `cost`, its
    relative rebuild work, used to share a parallel rebuild evenly."""

    name: str
    tables: tuple[Table, ...]
    handlers: dict[type, Handler]


@dataclass(frozen=True)
class ProjectionStatus:
    name: str
    position: int
    head: int

    @property
    def lag(self) -> int:
        return self.head - self.position


class ProjectionRunner:
    """Reads the event store through its recorder and mapper (eventsourcing's), never through the write side."""

    def __init__(
        self, recorder: ApplicationRecorder, mapper: Mapper, engine: Engine, projections: Sequence[Projection],
        batch_size: int = 1000,
    ) -> None:
        self.recorder = recorder
        self.mapper = mapper
        self.engine = engine
        self.projections = list(projections)
        self.batch_size = batch_size
        self.topics = sorted({get_topic(cls) for projection in self.projections for cls in projection.handlers})
        self.applied: Counter[str] = Counter()  # events each read model's handlers applied (committed), since built

    def create_tables(self) -> list[str]:
        """Creates what is missing; a read model whose tables an older release wrote without some table or
        column is dropped and created anew (read models are derived). Returns the read models that start
        from nothing, to be caught up. Run under the schema lock: PostgreSQL's DDL is not safe to race."""
        positions.create(self.engine, checkfirst=True)
        parked_events.create(self.engine, checkfirst=True)
        written = _columns_written(self.engine)
        stale = [
            p.name for p in self.projections
            if any({column.name for column in table.columns} - written.get(table.name, set()) for table in p.tables)
        ]
        if stale:
            self.reset(stale)
        return stale

    def _positions(self, conn: Connection) -> dict[str, int]:
        stored = dict(conn.execute(select(positions.c.name, positions.c.position)).all())
        return {p.name: stored.get(p.name, 0) for p in self.projections}

    def catch_up(self, progress: Callable[[int], None] | None = None, batch_size: int | None = None) -> int:
        """Projects every event not yet projected, one transaction per batch; returns how many were read."""
        total = conflicts = 0
        while True:
            try:
                batch = self._project_batch(batch_size or self.batch_size)
            except (ConcurrentProjection, IntegrityError):
                conflicts += 1  # someone else projected it; read the positions again
                if conflicts > MAX_CONFLICTS:
                    raise
                continue
            if not batch:
                break
            total += batch
            if progress:
                progress(batch)
        return total

    def _project_batch(self, batch_size: int) -> int:
        head = self.head()  # read first: anything appended later is left for the next batch
        try:
            return self._project_together(batch_size, head)
        except (ConcurrentProjection, IntegrityError):
            raise
        except Exception as error:
            if is_outage(error):
                raise
            # One event made a handler or the batch's writes fail: find it, one event and read model at a time.
            return self._project_one_by_one(batch_size, head)

    def _read_batch(
        self, conn: Connection, batch_size: int, head: int
    ) -> tuple[dict[str, int], list[tuple[int, Any]]] | None:
        """The positions and the next batch of events the read models follow; None when all are at the head."""
        current = self._positions(conn)
        start = min(current.values(), default=head) + 1
        if start > head:
            return None
        notifications = self.recorder.select_notifications(
            start=start, limit=batch_size, stop=head, topics=self.topics
        )
        return current, [(notification.id, self.mapper.to_domain_event(notification)) for notification in notifications]

    def _project_together(self, batch_size: int, head: int) -> int:
        """The whole batch in one transaction: every read model's rows and positions."""
        with self.engine.begin() as conn:
            batch = self._read_batch(conn, batch_size, head)
            if batch is None:
                return 0
            current, events = batch
            writes.discard(conn)
            applied: Counter[str] = Counter()
            for projection in self.projections:
                prefetch = getattr(projection, "prefetch", None)
                if prefetch is not None:
                    prefetch(conn, [event for position, event in events if current[projection.name] < position])
            for position, event in events:
                for projection in self.projections:
                    handler = projection.handlers.get(type(event))
                    if handler is not None and current[projection.name] < position:
                        handler(conn, event, position)
                        applied[projection.name] += 1
            writes.flush(conn)
            reached = events[-1][0] if len(events) == batch_size else head
            self._advance(conn, current, reached)
        self.applied.update(applied)  # only once committed: a rolled-back batch applied nothing
        return len(events)

    def _project_one_by_one(self, batch_size: int, head: int) -> int:
        """The same batch, each (event, read model) in a transaction of its own with that read model's
        position; one that fails is parked for that read model (in the same transaction as the
        position passing it) and the rest go on. Slow, and only taken after a batch failed."""
        with self.engine.connect() as conn:
            batch = self._read_batch(conn, batch_size, head)
        if batch is None:
            return 0
        current, events = batch
        for position, event in events:
            for projection in self.projections:
                handler = projection.handlers.get(type(event))
                if handler is None or current[projection.name] >= position:
                    continue
                old = {projection.name: current[projection.name]}
                try:
                    with self.engine.begin() as conn:
                        writes.discard(conn)
                        handler(conn, event, position)
                        writes.flush(conn)
                        self._advance(conn, old, position)
                    self.applied[projection.name] += 1
                except (ConcurrentProjection, IntegrityError):
                    raise
                except Exception as error:
                    if is_outage(error):
                        raise
                    with self.engine.begin() as conn:
                        park_projection_event(conn, projection.name, position, event, error)
                        self._advance(conn, old, position)
                current[projection.name] = position
        reached = events[-1][0] if len(events) == batch_size else head
        with self.engine.begin() as conn:
            self._advance(conn, current, reached)
        return len(events)

    def _advance(self, conn: Connection, current: dict[str, int], position: int) -> None:
        """Moves positions forward only from the values this batch read, so two runners never both apply a batch."""
        for name, old in current.items():
            if old >= position:
                continue
            moved = conn.execute(
                positions.update().where(positions.c.name == name, positions.c.position == old).values(position=position)
            ).rowcount
            if not moved:
                if old:
                    raise ConcurrentProjection(f"read model {name} was advanced by another runner; batch rolled back")
                conn.execute(positions.insert().values(name=name, position=position))

    def retry_parked(self, name: str, position: int, *, by: str, now: datetime) -> None:
        """Projects one parked event again for its read model, in one transaction with the mark that it
        was retried (a compare-and-set: two retries project it once). Failing again, it stays parked
        with the new error, which is raised."""
        (projection,) = [p for p in self.projections if p.name == name]
        try:
            with self.engine.begin() as conn:
                if not close_parked(conn, name, position, status=RETRIED, by=by, now=now):
                    raise ParkedEventClosed(f"event {position} of read model {name} is not parked (retried or dropped already)")
                [notification] = self.recorder.select_notifications(start=position, limit=1, stop=position)
                event = self.mapper.to_domain_event(notification)
                writes.discard(conn)
                projection.handlers[type(event)](conn, event, position)
                writes.flush(conn)
        except ParkedEventClosed:
            raise
        except Exception as error:
            if is_outage(error):
                raise
            with self.engine.begin() as conn:
                record_failure(conn, name, position, error)
            raise

    def drop_parked(self, name: str, position: int, *, by: str, now: datetime) -> None:
        with self.engine.begin() as conn:
            if not close_parked(conn, name, position, status=DROPPED, by=by, now=now):
                raise ParkedEventClosed(f"event {position} of read model {name} is not parked (retried or dropped already)")

    def head(self) -> int:
        return self.recorder.max_notification_id() or 0

    def status(self) -> list[ProjectionStatus]:
        head = self.head()
        with self.engine.connect() as conn:
            current = self._positions(conn)
        return [ProjectionStatus(name, position, head) for name, position in current.items()]

    def reset(self, names: Sequence[str] = ()) -> list[str]:
        """Drops and recreates the named read models (all by default) with their positions at zero."""
        unknown = set(names) - {p.name for p in self.projections}
        if unknown:
            raise ValueError(f"unknown read model(s) {', '.join(sorted(unknown))}; known: {', '.join(p.name for p in self.projections)}")
        chosen = [p for p in self.projections if not names or p.name in names]
        with self.engine.begin() as conn:
            for projection in chosen:
                for table in reversed(projection.tables):
                    table.drop(conn, checkfirst=True)
                for table in projection.tables:
                    table.create(conn)
                conn.execute(positions.delete().where(positions.c.name == projection.name))
                conn.execute(parked_events.delete().where(parked_events.c.projection == projection.name))
        return [p.name for p in chosen]

    def only(self, names: Sequence[str]) -> ProjectionRunner:
        """A runner for some of these read models (same store and database)."""
        return ProjectionRunner(self.recorder, self.mapper, self.engine, [p for p in self.projections if p.name in names], self.batch_size)

    def split(self, names: Sequence[str], parts: int) -> list[list[str]]:
        """Read models in `parts` groups of about equal work (by each one's measured `cost`, or the
        number of event types it follows), the group that follows the most event types first."""

        def cost(projection: Projection) -> float:
            return float(getattr(projection, "cost", len(projection.handlers)))

        groups: list[list[Projection]] = [[] for _ in range(min(parts, len(names)))]
        for projection in sorted((p for p in self.projections if p.name in names), key=lambda p: -cost(p)):
            min(groups, key=lambda group: sum(cost(p) for p in group)).append(projection)
        groups.sort(key=lambda group: -len({cls for p in group for cls in p.handlers}))
        return [[p.name for p in group] for group in groups if group]
