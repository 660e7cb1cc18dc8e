"""The `suppressions` read model: each contact a tenant may not email and why, for `loopline contacts suppressed`.

A row per contact ledger that was ever suppressed; a lifted suppression keeps its row with when and why it was
lifted, so the owner sees who opted back in. The send checks never read this view: they read the ledger itself.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Column, String, Table, Text, select
from sqlalchemy.engine import Connection

from loopline.domain.send_ledger import ContactSends
from loopline.domain.suppression import REASONS
from loopline.domain.timeutil import format_time
from loopline.projections import writes
from loopline.projections.runner import metadata

suppressions = Table(
    "suppressions", metadata,
    Column("ledger_id", String(36), primary_key=True),
    Column("tenant", String(200), nullable=False, index=True),
    Column("contact", String(320), nullable=False),
    Column("reason", String(32), nullable=False),
    Column("source", String(32), nullable=False),
    Column("words", Text, nullable=False),
    Column("since", String(40), nullable=False),
    Column("lifted_at", String(40)),
    Column("lifted_because", Text),
)


def _suppressed(conn: Connection, event: ContactSends.Suppressed, position: int) -> None:
    row = {"reason": event.reason, "source": event.source, "words": event.words, "since": format_time(event.timestamp),
           "lifted_at": None, "lifted_because": None}
    key = str(event.originator_id)
    if writes.row(conn, suppressions, key) is None:
        writes.insert(conn, suppressions, {"ledger_id": key, "tenant": event.tenant, "contact": event.contact, **row})
    else:
        writes.update(conn, suppressions, key, set=row)


def _lifted(conn: Connection, event: ContactSends.Unsuppressed, position: int) -> None:
    writes.update(conn, suppressions, str(event.originator_id),
                  set={"lifted_at": format_time(event.timestamp), "lifted_because": event.reason})


name = "suppressions"
cost = 0.1  # seconds to rebuild bench/rebuild.py's store alone: it suppresses nobody
tables = (suppressions,)
handlers = {ContactSends.Suppressed: _suppressed, ContactSends.Unsuppressed: _lifted}


def list_suppressions(conn: Connection, *, tenant: str | None = None, lifted: bool = False) -> list[dict[str, Any]]:
    """The suppressed contacts (with `lifted`, also those who opted back in), by tenant, newest first."""
    query = select(suppressions)
    if tenant is not None:
        query = query.where(suppressions.c.tenant == tenant)
    if not lifted:
        query = query.where(suppressions.c.lifted_at.is_(None))
    rows = conn.execute(query.order_by(suppressions.c.tenant, suppressions.c.since.desc(), suppressions.c.contact))
    return [{
        "tenant": row.tenant, "contact": row.contact, "reason": row.reason, "why": REASONS[row.reason],
        "source": row.source, "words": row.words, "since": row.since, "lifted_at": row.lifted_at,
        "lifted_because": row.lifted_because,
    } for row in rows]
