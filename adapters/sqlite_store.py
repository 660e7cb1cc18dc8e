"""eventsourcing's SQLite persistence with a page cache sized for a large event store, and
positions moved by compare-and-set.

SQLite's default page cache is 2 MiB per connection. Once the store holds millions of events,
the upper levels of its indexes no longer stay in it, and every aggregate load pays for reading
them again. `SQLITE_CACHE_MIB` (default 64) sets each connection's cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from eventsourcing.persistence import IntegrityError, Tracking
from eventsourcing.sqlite import (
    SQLiteConnection,
    SQLiteConnectionPool,
    SQLiteCursor,
    SQLiteFactory,
    SQLiteProcessRecorder,
)

from loopline.processors.application import Position

CACHE_MIB = "SQLITE_CACHE_MIB"


class CachingSQLiteConnectionPool(SQLiteConnectionPool):
    def __init__(self, *, cache_mib: int, **kwargs: Any) -> None:
        self.cache_mib = cache_mib
        super().__init__(**kwargs)

    def _create_connection(self) -> SQLiteConnection:
        connection = super()._create_connection()
        connection._sqlite_conn.execute(f"PRAGMA cache_size = -{self.cache_mib * 1024}")
        return connection


class ComparingSQLiteProcessRecorder(SQLiteProcessRecorder):
    # eventsourcing 9.5.6 single-row tracking stores any position higher than the stored one, so a
    # batch read just before another process committed it would be applied again on top of it.
    # A `Position` states the position it read; it is stored only where that is still the stored
    # one. Checked against eventsourcing 9.5.6 (`SQLiteTrackingRecorder._insert_tracking`).
    compare_and_set_statement = (
        "INSERT INTO tracking VALUES (:application_name, :notification_id) "
        "ON CONFLICT (application_name) DO UPDATE SET notification_id = :notification_id "
        "WHERE tracking.notification_id = :previous "
        "RETURNING notification_id"
    )
    mark_statement = (
        "INSERT INTO tracking VALUES (:application_name, :notification_id) "
        "ON CONFLICT (application_name) DO UPDATE SET notification_id = :notification_id"
    )

    def _insert_tracking(self, c: SQLiteCursor, tracking: Tracking) -> None:
        if not isinstance(tracking, Position):
            super()._insert_tracking(c, tracking)
            return
        c.execute(self.compare_and_set_statement, {
            "application_name": tracking.application_name, "notification_id": tracking.notification_id,
            "previous": tracking.previous,
        })
        if c.fetchone() is None:
            raise IntegrityError(f"position {tracking.application_name} moved from {tracking.previous} meanwhile")
        for name, value in tracking.marks:
            c.execute(self.mark_statement, {"application_name": name, "notification_id": value})


    def count_by_topic(self, topics: Sequence[str] = ()) -> dict[str, int]:
        """How many events of each topic (of the given ones, or all) the store holds."""
        only = f" WHERE topic IN ({', '.join('?' * len(topics))})" if topics else ""
        with self.datastore.transaction(commit=False) as c:
            c.execute(f"SELECT topic, count(*) FROM {self.events_table_name}{only} GROUP BY topic", tuple(topics))
            return {row[0]: row[1] for row in c.fetchall()}


class CachingSQLiteFactory(SQLiteFactory):
    process_recorder_class = ComparingSQLiteProcessRecorder

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        default = self.datastore.pool
        self.datastore.pool = CachingSQLiteConnectionPool(
            cache_mib=int(self.env.get(CACHE_MIB) or 64), db_name=default.db_name, lock_timeout=default.lock_timeout
        )
        default.close()
