"""eventsourcing's PostgreSQL process recorder, writing without psycopg's pipeline mode, and
moving positions by compare-and-set.

The library sends a transaction's events as one large statement inside a pipeline; with
psycopg 3.3 a statement larger than the socket buffers can stall there, the client waiting
for a reply while part of the statement is unsent, holding the events table lock. The same
statements (tracking, table lock, insert with RETURNING) sent one after another in a plain
transaction have no such limit, so a batch of any size is still one atomic save.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from eventsourcing.persistence import IntegrityError, StoredEvent, Tracking
from eventsourcing.postgres import PostgresFactory, PostgresProcessRecorder

from loopline.adapters.postgres_session import SESSION
from loopline.processors.application import Position


class TimeoutsPostgresFactory(PostgresFactory):
    """eventsourcing's PostgreSQL factory, its connections made with Loopline's timeouts and keepalives.

    The library passes only its own connection settings to the pool; the pool opens on first use, so
    settings added here apply to every connection. Checked against eventsourcing 9.5.6.
    """

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        self.datastore.pool.kwargs.update(SESSION)


class UnpipelinedProcessRecorder(PostgresProcessRecorder):
    def insert_events(self, stored_events: Sequence[StoredEvent], **kwargs: Any) -> Sequence[int] | None:
        notification_ids: Sequence[int] | None = None
        with self.datastore.get_connection() as conn, conn.transaction(), conn.cursor() as curs:
            self._insert_events(curs, stored_events, **kwargs)  # the tracking record, if any
            if stored_events:
                self._insert_stored_events(curs, stored_events, **kwargs)
                notification_ids = self._fetch_ids_after_insert_events(curs, stored_events, **kwargs)
        return notification_ids

    def _insert_tracking(self, curs: Any, tracking: Tracking) -> None:
        # eventsourcing 9.5.6 single-row tracking stores any position higher than the stored one, so a
        # batch read just before another process committed it would be applied again on top of it.
        # A `Position` states the position it read; it is stored only where that is still the stored
        # one. Checked against eventsourcing 9.5.6 (`PostgresTrackingRecorder._insert_tracking`).
        if not isinstance(tracking, Position):
            super()._insert_tracking(curs, tracking)
            return
        from psycopg.sql import SQL, Identifier

        curs.execute(
            SQL(
                "INSERT INTO {schema}.{table} VALUES (%(name)s, %(position)s) "
                "ON CONFLICT (application_name) DO UPDATE SET notification_id = %(position)s "
                "WHERE {schema}.{table}.notification_id = %(previous)s RETURNING notification_id"
            ).format(schema=Identifier(self.datastore.schema), table=Identifier(self.tracking_table_name)),
            {"name": tracking.application_name, "position": tracking.notification_id, "previous": tracking.previous},
        )
        if curs.fetchone() is None:
            raise IntegrityError(f"position {tracking.application_name} moved from {tracking.previous} meanwhile")
        for name, value in tracking.marks:
            curs.execute(
                SQL(
                    "INSERT INTO {schema}.{table} VALUES (%s, %s) "
                    "ON CONFLICT (application_name) DO UPDATE SET notification_id = EXCLUDED.notification_id"
                ).format(schema=Identifier(self.datastore.schema), table=Identifier(self.tracking_table_name)),
                (name, value),
            )

    def select_latest(
        self, originator_ids: Sequence[Any], snapshots_table: str | None, after: dict[Any, int] | None = None
    ) -> tuple[list[StoredEvent], list[StoredEvent]]:
        """For many aggregates in two queries: their latest snapshots, and their events after those
        (or after the version given in `after`, for aggregates the caller already holds)."""
        after = dict(after or {})
        unknown = [i for i in originator_ids if i not in after]
        from psycopg.sql import SQL, Identifier

        schema = Identifier(self.datastore.schema)
        events = Identifier(self.events_table_name)
        snapshots: list[StoredEvent] = []
        with self.datastore.get_connection() as conn, conn.cursor() as curs:
            if snapshots_table and unknown:
                curs.execute(
                    SQL(
                        "SELECT DISTINCT ON (originator_id) * FROM {schema}.{table} WHERE originator_id = ANY(%s) "
                        "ORDER BY originator_id, originator_version DESC"
                    ).format(schema=schema, table=Identifier(snapshots_table)),
                    (unknown,),
                )
                snapshots = [self._stored(row) for row in curs.fetchall()]
            after.update((s.originator_id, s.originator_version) for s in snapshots)
            curs.execute(
                SQL(
                    "SELECT e.* FROM unnest(%s::uuid[], %s::int[]) AS wanted(id, after) "
                    "JOIN {schema}.{events} e ON e.originator_id = wanted.id AND e.originator_version > wanted.after "
                    "ORDER BY e.originator_id, e.originator_version"
                ).format(schema=schema, events=events),
                (list(originator_ids), [after.get(i, 0) for i in originator_ids]),
            )
            return snapshots, [self._stored(row) for row in curs.fetchall()]

    def count_by_topic(self, topics: Sequence[str] = ()) -> dict[str, int]:
        """How many events of each topic (of the given ones, or all) the store holds."""
        from psycopg.sql import SQL, Identifier

        only = SQL(" WHERE topic = ANY(%s)" if topics else "")
        with self.datastore.get_connection() as conn, conn.cursor() as curs:
            curs.execute(SQL("SELECT topic, count(*) AS n FROM {schema}.{events}{only} GROUP BY topic").format(
                schema=Identifier(self.datastore.schema), events=Identifier(self.events_table_name), only=only),
                (list(topics),) if topics else None)
            return {row["topic"]: row["n"] for row in curs.fetchall()}

    @staticmethod
    def _stored(row: Any) -> StoredEvent:
        return StoredEvent(
            originator_id=row["originator_id"], originator_version=row["originator_version"], topic=row["topic"],
            state=bytes(row["state"]),
        )
