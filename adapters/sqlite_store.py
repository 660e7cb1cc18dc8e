"""eventsourcing's SQLite persistence with a page cache sized for a large event store.

SQLite's default page cache is 2 MiB per connection. Once the store holds millions of events,
the upper levels of its indexes no longer stay in it, and every aggregate load pays for reading
them again. `SQLITE_CACHE_MIB` (default 64) sets each connection's cache.
"""

from __future__ import annotations

from typing import Any

from eventsourcing.sqlite import SQLiteConnection, SQLiteConnectionPool, SQLiteFactory

CACHE_MIB = "SQLITE_CACHE_MIB"


class CachingSQLiteConnectionPool(SQLiteConnectionPool):
    def __init__(self, *, cache_mib: int, **kwargs: Any) -> None:
        self.cache_mib = cache_mib
        super().__init__(**kwargs)

    def _create_connection(self) -> SQLiteConnection:
        connection = super()._create_connection()
        connection._sqlite_conn.execute(f"PRAGMA cache_size = -{self.cache_mib * 1024}")
        return connection


class CachingSQLiteFactory(SQLiteFactory):
    def __init__(self, env: Any) -> None:
        super().__init__(env)
        default = self.datastore.pool
        self.datastore.pool = CachingSQLiteConnectionPool(
            cache_mib=int(self.env.get(CACHE_MIB) or 64), db_name=default.db_name, lock_timeout=default.lock_timeout
        )
        default.close()
