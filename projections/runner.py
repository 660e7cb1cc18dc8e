"""Keeps read models up to date from the event store, recording each one's position in the same transaction."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from eventsourcing.utils import get_topic
from sqlalchemy import Column, Integer, MetaData, String, Table, select
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError

from loopline.processors.application import Loopline
from loopline.projections import writes

metadata = MetaData()
positions = Table(
    "projection_positions", metadata, Column("name", String(64), primary_key=True), Column("position", Integer, nullable=False)
)

MAX_CONFLICTS = 20
REBUILD_BATCH = 10_000


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
    def __init__(self, app: Loopline, engine: Engine, projections: Sequence[Projection], batch_size: int = 1000) -> None:
        self.app = app
        self.engine = engine
        self.projections = list(projections)
        self.batch_size = batch_size
        self.topics = sorted({get_topic(cls) for projection in self.projections for cls in projection.handlers})
        positions.create(engine, checkfirst=True)
        for projection in self.projections:
            for table in projection.tables:
                table.create(engine, checkfirst=True)

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
        with self.engine.begin() as conn:
            current = self._positions(conn)
            start = min(current.values(), default=head) + 1
            if start > head:
                return 0
            notifications = self.app.process_recorder.select_notifications(
                start=start, limit=batch_size, stop=head, topics=self.topics
            )
            writes.discard(conn)
            events = [(notification.id, self.app.mapper.to_domain_event(notification)) for notification in notifications]
            for projection in self.projections:
                prefetch = getattr(projection, "prefetch", None)
                if prefetch is not None:
                    prefetch(conn, [event for position, event in events if current[projection.name] < position])
            for position, event in events:
                for projection in self.projections:
                    handler = projection.handlers.get(type(event))
                    if handler is not None and current[projection.name] < position:
                        handler(conn, event, position)
            writes.flush(conn)
            reached = notifications[-1].id if len(notifications) == batch_size else head
            self._advance(conn, current, reached)
            return len(notifications)

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

    def head(self) -> int:
        return self.app.process_recorder.max_notification_id() or 0

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
        return [p.name for p in chosen]

    def only(self, names: Sequence[str]) -> ProjectionRunner:
        """A runner for some of these read models (same store and database)."""
        return ProjectionRunner(self.app, self.engine, [p for p in self.projections if p.name in names], self.batch_size)

    def rebuild(self, names: Sequence[str] = (), progress: Callable[[int], None] | None = None) -> int:
        """Drops the named read models (all by default) and projects them again from the event store."""
        chosen = self.reset(names)
        # Larger batches than live projection: most rows are then inserted and changed in memory, and written once.
        return self.only(chosen).catch_up(progress, batch_size=REBUILD_BATCH)

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
