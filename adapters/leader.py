"""Which process runs the singleton duties, on PostgreSQL advisory locks (seed 002 §7.10).

* The leader lock (relay, delivery) is held for as long as the process lives; a killed
  leader's session ends, its lock with it, and another worker takes over.
* The scheduler lock is held for one tick at a time, so a worker's periodic tick and a
  `loopline tick` from the CLI never scan together, and neither waits long for the other.
* The schema lock is held while a process creates its tables.

The embedded deployment has one process, which always leads.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

LEADER_KEY = 0x6C6F6F70  # "loop"
SCHEDULER_KEY = 0x7469636B  # "tick"
SCHEMA_KEY = 0x73636865  # "sche"


class SoleLeader:
    def try_lead(self) -> bool:
        return True

    @contextmanager
    def scheduling(self) -> Iterator[None]:
        yield

    @contextmanager
    def creating_schema(self) -> Iterator[None]:
        yield

    def close(self) -> None:
        return None


class PostgresLeader:
    def __init__(self, url: str) -> None:
        self.url = url
        self._conn: Any = None

    def _connect(self) -> Any:
        import psycopg

        return psycopg.connect(self.url, autocommit=True)

    def try_lead(self) -> bool:
        """True while this process holds the leader lock (taking it if it is free)."""
        import psycopg

        try:
            if self._conn is None or self._conn.closed:
                self._conn = self._connect()
            held = self._conn.execute(
                "SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND objid = %s AND pid = pg_backend_pid() AND granted",
                (LEADER_KEY,),
            ).fetchone()
            return bool(held) or bool(self._conn.execute("SELECT pg_try_advisory_lock(%s)", (LEADER_KEY,)).fetchone()[0])
        except psycopg.OperationalError:
            self.close()
            return False

    @contextmanager
    def scheduling(self) -> Iterator[None]:
        """Waits for and holds the scheduler lock for the duration of one tick."""
        with self._holding(SCHEDULER_KEY):
            yield

    @contextmanager
    def creating_schema(self) -> Iterator[None]:
        """Processes starting together create tables one at a time (PostgreSQL's DDL is not safe to race)."""
        with self._holding(SCHEMA_KEY):
            yield

    @contextmanager
    def _holding(self, key: int) -> Iterator[None]:
        with self._connect() as conn:
            conn.execute("SELECT pg_advisory_lock(%s)", (key,))
            try:
                yield
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (key,))

    def close(self) -> None:
        if self._conn is not None and not self._conn.closed:
            self._conn.close()
        self._conn = None


def leader_for(event_store_url: str) -> SoleLeader | PostgresLeader:
    if event_store_url.startswith(("postgresql://", "postgres://")):
        return PostgresLeader(event_store_url)
    return SoleLeader()
