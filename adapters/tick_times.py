"""How long the last scheduler tick took and when it ended, beside the heartbeats in the event store's database:
ticks run one at a time across every process (the scheduling lock), so one row says it for the deployment, and
every `serve` process's `/metrics` reads the same value."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from sqlalchemy import Column, DateTime, Float, Integer, MetaData, String, Table, insert, select, update
from sqlalchemy.engine import Engine

metadata = MetaData()
ticks = Table(
    "loopline_ticks", metadata,
    Column("scheduler", String(40), primary_key=True),
    Column("duration", Float, nullable=False),
    Column("actions", Integer, nullable=False),
    Column("ticked_for", DateTime(timezone=True), nullable=False),
    Column("finished_at", DateTime(timezone=True), nullable=False),
)
SCHEDULER = "scheduler"
"""The one row: a deployment has one scheduler, whichever process ticks it."""


def create_tables(engine: Engine) -> None:
    """Run with every other table of the start-up, under the schema lock (runtime/stores.py)."""
    metadata.create_all(engine)


@dataclass(frozen=True)
class LastTick:
    duration: float
    """Seconds the tick took: the scheduler's scan and the drain of what it caused."""
    actions: int
    ticked_for: datetime
    """The time the tick ran as of (`loopline tick --now`)."""
    finished_at: datetime


class TickTimes:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def record(self, tick: LastTick) -> None:
        row = {**tick.__dict__, "scheduler": SCHEDULER}
        with self.engine.begin() as conn:
            if not conn.execute(update(ticks).where(ticks.c.scheduler == SCHEDULER).values(**row)).rowcount:
                conn.execute(insert(ticks).values(**row))

    def last(self) -> LastTick | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(ticks).where(ticks.c.scheduler == SCHEDULER)).first()
        if row is None:
            return None
        return LastTick(row.duration, row.actions, _utc(row.ticked_for), _utc(row.finished_at))


def _utc(moment: datetime) -> datetime:
    """SQLite gives back naive datetimes; they were written in UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
