"""Events a read model could not project, parked per (read model, event) so the others go on.

The runner records one in the same transaction as the read model's position passing it, so it is
never both projected and parked; `loopline parked retry` projects it again once, `drop` gives up.
The table is the runner's bookkeeping, beside the positions: a rebuild of a read model clears its rows.
"""

from __future__ import annotations

import traceback
from datetime import datetime
from typing import Any

from eventsourcing.persistence import PersistenceError
from sqlalchemy import Column, Integer, MetaData, String, Table, Text, func, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DisconnectionError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from loopline.domain.timeutil import format_time

PARKED, RETRIED, DROPPED = "parked", "retried", "dropped"

metadata = MetaData()
parked_events = Table(
    "loopline_parked_projection", metadata,
    Column("projection", String(64), primary_key=True),
    Column("position", Integer, primary_key=True),
    Column("event_type", String(200), nullable=False),
    Column("originator_id", String(64), nullable=False),
    Column("tenant", Text, nullable=True),
    Column("error_type", String(200), nullable=False),
    Column("error", Text, nullable=False),
    Column("trace", Text, nullable=False),
    Column("status", String(20), nullable=False),
    Column("parked_at", String(40), nullable=False),
    Column("closed_by", Text, nullable=True),
    Column("closed_at", String(40), nullable=True),
)


def is_outage(error: BaseException) -> bool:
    """The database or event store is unreachable: the batch is retried later, nothing is parked."""
    return isinstance(error, (OperationalError, InterfaceError, DisconnectionError, PoolTimeout, PersistenceError, OSError))


def describe(error: BaseException) -> tuple[str, str, str]:
    """Type, message (bounded) and the last frames of the traceback."""
    frames = traceback.extract_tb(error.__traceback__)[-4:]
    trace = "\n".join(f"{frame.filename.rsplit('/', 2)[-1]}:{frame.lineno} in {frame.name}" for frame in frames)
    # Text from the event may be in the message (e.g. a NUL the database refused): keep it storable.
    message = str(error)[:1000].replace("\x00", "\\x00")
    return type(error).__name__, message, trace


def park_projection_event(conn: Connection, projection: str, position: int, event: Any, error: BaseException) -> None:
    error_type, message, trace = describe(error)
    tenant = getattr(event, "tenant", None)
    conn.execute(parked_events.insert().values(
        projection=projection, position=position, event_type=type(event).__qualname__,
        originator_id=str(event.originator_id),
        tenant=tenant.replace("\x00", "\\x00") if isinstance(tenant, str) else None,
        error_type=error_type, error=message, trace=trace, status=PARKED, parked_at=format_time(event.timestamp),
    ))


def list_parked(conn: Connection, *, include_closed: bool = False) -> list[dict[str, Any]]:
    query = select(parked_events).order_by(parked_events.c.position, parked_events.c.projection)
    if not include_closed:
        query = query.where(parked_events.c.status == PARKED)
    return [dict(row._mapping) for row in conn.execute(query)]


def count_parked(conn: Connection) -> dict[str, int]:
    rows = conn.execute(
        select(parked_events.c.projection, func.count()).where(parked_events.c.status == PARKED)
        .group_by(parked_events.c.projection)
    )
    return dict(rows.all())


def close_parked(conn: Connection, projection: str, position: int, *, status: str, by: str, now: datetime) -> bool:
    """Compare-and-set from parked: of two operators closing the same one, one wins."""
    return bool(conn.execute(
        update(parked_events)
        .where(parked_events.c.projection == projection, parked_events.c.position == position,
               parked_events.c.status == PARKED)
        .values(status=status, closed_by=by, closed_at=format_time(now))
    ).rowcount)


def record_failure(conn: Connection, projection: str, position: int, error: BaseException) -> None:
    error_type, message, trace = describe(error)
    conn.execute(
        update(parked_events)
        .where(parked_events.c.projection == projection, parked_events.c.position == position)
        .values(error_type=error_type, error=message, trace=trace)
    )
