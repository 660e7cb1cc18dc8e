"""Which `loopline run` workers are alive: each writes its row on every progress tick, beside the events.

A worker deletes its row when it stops cleanly; a killed one's row stays and ages, so `loopline
status` shows it as silent once it has missed a few ticks, and the next heartbeat of any worker
removes rows unseen for a day. Beside them, `loopline_ticks` keeps how long the last scheduler tick took: ticks run
one at a time across every process (the scheduling lock), so one row says it for the deployment and every
`serve` process's `/metrics` reads the same value.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from sqlalchemy import Column, DateTime, Float, Integer, MetaData, String, Table, Text, delete, insert, select, update
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError

metadata = MetaData()
heartbeats = Table(
    "worker_heartbeats", metadata,
    Column("worker", String(255), primary_key=True),
    Column("host", String(255), nullable=False),
    Column("pid", Integer, nullable=False),
    Column("deployment", String(16), nullable=False),
    Column("partitions", Text, nullable=False),  # a JSON list of "topic[partition]"
    Column("applied", Integer, nullable=False),
    Column("lag", Integer),
    Column("every", Float, nullable=False),
    Column("started_at", DateTime(timezone=True), nullable=False),
    Column("last_seen", DateTime(timezone=True), nullable=False),
)
ticks = Table(
    "loopline_ticks", metadata,
    Column("scheduler", String(40), primary_key=True),  # one row: a deployment has one scheduler
    Column("duration", Float, nullable=False),
    Column("actions", Integer, nullable=False),
    Column("ticked_for", DateTime(timezone=True), nullable=False),
    Column("finished_at", DateTime(timezone=True), nullable=False),
)
SCHEDULER = "scheduler"
MISSED_BEATS = 3  # a worker unseen for this many progress intervals (and SLACK seconds) is reported silent
SLACK = 2.0
FORGET_AFTER = timedelta(days=1)


def create_tables(engine: Engine) -> None:
    """Run with every other table of the start-up, under the schema lock (runtime/stores.py)."""
    metadata.create_all(engine)


@dataclass(frozen=True)
class Heartbeat:
    worker: str
    host: str
    pid: int
    deployment: str
    partitions: list[str]
    applied: int
    lag: int | None
    every: float
    started_at: datetime
    last_seen: datetime


class Heartbeats:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def beat(self, beat: Heartbeat) -> None:
        with self.engine.begin() as conn:
            _put(conn, heartbeats.c.worker, {**beat.__dict__, "partitions": json.dumps(beat.partitions)})
            conn.execute(delete(heartbeats).where(heartbeats.c.last_seen < beat.last_seen - FORGET_AFTER))

    def forget(self, worker: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(delete(heartbeats).where(heartbeats.c.worker == worker))

    def workers(self, now: datetime) -> list[dict[str, Any]]:
        """Every worker with a row, oldest first, with how long ago it was seen and whether that is recent."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(heartbeats).order_by(heartbeats.c.started_at, heartbeats.c.worker)).all()
        found = []
        for row in rows:
            last_seen = _utc(row.last_seen)
            ago = max((now - last_seen).total_seconds(), 0.0)
            found.append({
                "worker": row.worker, "host": row.host, "pid": row.pid, "deployment": row.deployment,
                "partitions": json.loads(row.partitions), "applied": row.applied, "lag": row.lag,
                "started_at": _utc(row.started_at), "last_seen": last_seen, "seen_seconds_ago": round(ago, 1),
                "alive": ago <= MISSED_BEATS * row.every + SLACK,
            })
        return found


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
        try:
            with self.engine.begin() as conn:
                _put(conn, ticks.c.scheduler, row)
        except IntegrityError:  # two ticks ending together both found no row: the other inserted it, so update it
            with self.engine.begin() as conn:
                conn.execute(update(ticks).where(ticks.c.scheduler == SCHEDULER).values(**row))

    def last(self) -> LastTick | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(ticks).where(ticks.c.scheduler == SCHEDULER)).first()
        if row is None:
            return None
        return LastTick(row.duration, row.actions, _utc(row.ticked_for), _utc(row.finished_at))


def _put(conn: Connection, key: Column[Any], row: dict[str, Any]) -> None:
    """Updates the row with the key's value, or inserts it."""
    table = key.table
    if not conn.execute(update(table).where(key == row[key.name]).values(**row)).rowcount:
        conn.execute(insert(table).values(**row))


def _utc(moment: datetime) -> datetime:
    """SQLite gives back naive datetimes; they were written in UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
