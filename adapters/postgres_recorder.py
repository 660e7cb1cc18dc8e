"""eventsourcing's PostgreSQL process recorder, writing without psycopg's pipeline mode.

The library sends a transaction's events as one large statement inside a pipeline; with
psycopg 3.3 a statement larger than the socket buffers can stall there, the client waiting
for a reply while part of the statement is unsent, holding the events table lock. The same
statements (tracking, table lock, insert with RETURNING) sent one after another in a plain
transaction have no such limit, so a batch of any size is still one atomic save.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from eventsourcing.persistence import StoredEvent
from eventsourcing.postgres import PostgresProcessRecorder


class UnpipelinedProcessRecorder(PostgresProcessRecorder):
    def insert_events(self, stored_events: Sequence[StoredEvent], **kwargs: Any) -> Sequence[int] | None:
        notification_ids: Sequence[int] | None = None
        with self.datastore.get_connection() as conn, conn.transaction(), conn.cursor() as curs:
            self._insert_events(curs, stored_events, **kwargs)  # the tracking record, if any
            if stored_events:
                self._insert_stored_events(curs, stored_events, **kwargs)
                notification_ids = self._fetch_ids_after_insert_events(curs, stored_events, **kwargs)
        return notification_ids
