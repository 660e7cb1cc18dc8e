"""The durable delivery state, one row per idempotency key and channel, in the event store's database.

It is write-side state, not a read model: rebuilding the read models never touches it, so a
rebuild never sends anything again. A process claims a row before sending (compare-and-set on
its status and attempt count), so two processes never send one key on one channel at once; a
claim left by a process that died mid-send is taken over (at once when that process is known
dead on this host, else when its lease runs out) and the message is sent again with its key.
"""

from __future__ import annotations

import json
import os
import socket
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from sqlalchemy import (
    Column, Float, Integer, MetaData, String, Table, Text, and_, bindparam, func, or_, select, update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine

from loopline.domain.safety_limits import UPSTREAM_FAILURES
from loopline.processors.ports import Attempt

SENDING, RETRYING, DELIVERED, FAILED, DROPPED = "sending", "retrying", "delivered", "failed", "dropped"
WITHDRAWN = "withdrawn"
"""An owner notice the owner's action made moot before it went out on this channel: it never will."""
DRY_RUN = "dry_run"
"""An email to a contact of a tenant in dry run: recorded as it would have gone, never sent on this channel."""
LEASE_SECONDS = 300.0
"""How long a claim holds against other hosts: longer than a batch of sends takes. (On the claiming
host a dead claimer is seen at once; another host only leads once this one lost the lead.)"""

metadata = MetaData()
deliveries = Table(
    "loopline_deliveries", metadata,
    Column("key", String(200), primary_key=True),
    Column("channel", String(40), primary_key=True),
    Column("status", String(20), nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("next_attempt_at", Float, nullable=True),
    Column("claimed_by", String(300), nullable=True),
    Column("last_error", Text, nullable=True),
    Column("message", Text, nullable=False),
    Column("updated_at", Float, nullable=False),
)
owner_emails = Table(
    "loopline_owner_emails", metadata,
    Column("key", String(200), primary_key=True),
    Column("tenant", String(200), nullable=False, index=True),
    Column("day", String(10), nullable=False),
    Column("category", String(40), nullable=False),
    Column("at", Float, nullable=False),
)
"""The owner notices emailed singly, per tenant, local day and category: what a day's budget has used."""


def create_tables(engine: Engine) -> None:
    """Run with every other table of the start-up, under the schema lock (runtime/stores.py)."""
    metadata.create_all(engine)


def _alive_here(claimed_by: str | None) -> bool | None:
    """Whether the claiming process still runs, when it ran on this host (None: another host, so unknown)."""
    host, _, pid = (claimed_by or "").rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return None
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _exited_unreaped(int(pid))


def _exited_unreaped(pid: int) -> bool:
    """A zombie: the process exited (e.g. a leader that died with its worker) and nobody reaped it yet."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[:1] == ["Z"]


def _claimable(row: Any, now: float) -> bool:
    if row.status == RETRYING:
        return row.next_attempt_at is None or row.next_attempt_at <= now
    if row.status == SENDING:
        alive = _alive_here(row.claimed_by)
        return alive is False or (row.next_attempt_at is not None and row.next_attempt_at <= now)
    return False


class SqlDeliveryLedger:
    """The delivery state table on SQLite or PostgreSQL (SQLAlchemy Core)."""

    def __init__(self, engine: Engine, lease: float = LEASE_SECONDS) -> None:
        self.engine = engine
        self.lease = lease
        self.me = f"{socket.gethostname()}:{os.getpid()}"

    def _insert(self) -> Any:
        dialect = postgresql if self.engine.dialect.name == "postgresql" else sqlite
        return dialect.insert(deliveries).on_conflict_do_nothing()

    def claim(self, wanted: list[tuple[str, str, dict[str, Any]]], *, now: float) -> list[Attempt]:
        """One statement claims every key not seen before; a key seen before is looked at on its own."""
        if not wanted:
            return []
        rows = [
            {"key": key, "channel": channel, "status": SENDING, "attempts": 1, "next_attempt_at": now + self.lease,
             "claimed_by": self.me, "message": json.dumps(message, sort_keys=True), "updated_at": now}
            for key, channel, message in wanted
        ]
        with self.engine.begin() as conn:
            inserted = {tuple(row) for row in conn.execute(
                self._insert().returning(deliveries.c.key, deliveries.c.channel), rows
            )}
        attempts = []
        for key, channel, message in wanted:
            if (key, channel) in inserted:
                attempts.append(Attempt(key=key, channel=channel, message=message, attempts=1))
            elif (attempt := self._claim_seen(key, channel, now)) is not None:
                attempts.append(attempt)
        return attempts

    def _claim_seen(self, key: str, channel: str, now: float) -> Attempt | None:
        with self.engine.connect() as conn:
            row = conn.execute(
                select(deliveries).where(deliveries.c.key == key, deliveries.c.channel == channel)
            ).one()
        return self._take(row, now) if _claimable(row, now) else None

    def _take(self, row: Any, now: float) -> Attempt | None:
        """Compare-and-set on the row as read: of two processes taking it, one wins."""
        with self.engine.begin() as conn:
            taken = conn.execute(
                update(deliveries)
                .where(deliveries.c.key == row.key, deliveries.c.channel == row.channel,
                       deliveries.c.status == row.status, deliveries.c.attempts == row.attempts)
                .values(status=SENDING, attempts=row.attempts + 1, next_attempt_at=now + self.lease,
                        claimed_by=self.me, updated_at=now)
            ).rowcount
        if not taken:
            return None
        return Attempt(key=row.key, channel=row.channel, message=json.loads(row.message), attempts=row.attempts + 1)

    def due(self, *, now: float, limit: int) -> list[Attempt]:
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(deliveries)
                .where(or_(and_(deliveries.c.status == RETRYING, deliveries.c.next_attempt_at <= now),
                           deliveries.c.status == SENDING))
                .order_by(deliveries.c.next_attempt_at)
                .limit(limit)
            ).all()
        attempts = [self._take(row, now) for row in rows if _claimable(row, now)]
        return [attempt for attempt in attempts if attempt is not None]

    def delivered(self, attempts: list[Attempt], *, now: float) -> None:
        if not attempts:
            return
        with self.engine.begin() as conn:
            conn.execute(
                update(deliveries)
                .where(deliveries.c.key == bindparam("k"), deliveries.c.channel == bindparam("c"))
                .values(status=DELIVERED, next_attempt_at=None, last_error=None, claimed_by=None, updated_at=now),
                [{"k": attempt.key, "c": attempt.channel} for attempt in attempts],
            )

    def failed(self, attempt: Attempt, *, error: str, retry_at: float | None, now: float) -> None:
        with self.engine.begin() as conn:
            conn.execute(
                update(deliveries)
                .where(deliveries.c.key == attempt.key, deliveries.c.channel == attempt.channel,
                       deliveries.c.status != DELIVERED)
                .values(status=RETRYING if retry_at is not None else FAILED, next_attempt_at=retry_at,
                        last_error=error[:2000], claimed_by=None, updated_at=now)
            )

    def withdraw(self, attempt: Attempt, *, reason: str, now: float) -> None:
        self._set_aside(attempt, WITHDRAWN, reason, now)

    def dry_run(self, attempt: Attempt, *, now: float) -> None:
        self._set_aside(attempt, DRY_RUN, "dry run: recorded as it would have gone, not sent", now)

    def _set_aside(self, attempt: Attempt, status: str, reason: str, now: float) -> None:
        """A claimed send that will never go out on this channel, with why."""
        with self.engine.begin() as conn:
            conn.execute(
                update(deliveries)
                .where(deliveries.c.key == attempt.key, deliveries.c.channel == attempt.channel,
                       deliveries.c.status != DELIVERED)
                .values(status=status, next_attempt_at=None, last_error=reason[:2000], claimed_by=None,
                        updated_at=now)
            )

    def hold(self, attempt: Attempt, *, until: float, reason: str, message: dict[str, Any], now: float) -> None:
        """Puts a claimed send back until `until`, with the message to send then; the hold uses up no attempt."""
        with self.engine.begin() as conn:
            conn.execute(
                update(deliveries)
                .where(deliveries.c.key == attempt.key, deliveries.c.channel == attempt.channel,
                       deliveries.c.status == SENDING)
                .values(status=RETRYING, attempts=attempt.attempts - 1, next_attempt_at=until, last_error=reason[:2000],
                        message=json.dumps(message, sort_keys=True), claimed_by=None, updated_at=now)
            )

    def owner_emails(self, tenant: str, day: str, category: str) -> list[str]:
        with self.engine.connect() as conn:
            return list(conn.execute(
                select(owner_emails.c.key).where(owner_emails.c.tenant == tenant, owner_emails.c.day == day,
                                                 owner_emails.c.category == category)
            ).scalars())

    def count_owner_email(self, key: str, *, tenant: str, day: str, category: str, now: float) -> None:
        dialect = postgresql if self.engine.dialect.name == "postgresql" else sqlite
        with self.engine.begin() as conn:
            conn.execute(dialect.insert(owner_emails).on_conflict_do_nothing(),
                         {"key": key, "tenant": tenant, "day": day, "category": category, "at": now})

    def park(self, key: str, channel: str, message: dict[str, Any], *, error: str, now: float) -> None:
        """Parks a delivery that never got as far as a send (its event could not become a message)."""
        with self.engine.begin() as conn:
            conn.execute(self._insert(), {
                "key": key, "channel": channel, "status": FAILED, "attempts": 1, "next_attempt_at": None,
                "claimed_by": None, "message": json.dumps(message, sort_keys=True), "last_error": error[:2000],
                "updated_at": now,
            })

    def requeue(self, key: str, channel: str, *, now: float) -> bool:
        """Sends a parked delivery again at the next pass, with a fresh count of attempts; False if it is not parked."""
        return self._close(key, channel, now=now, status=RETRYING, attempts=0, next_attempt_at=now)

    def drop(self, key: str, channel: str, *, by: str, now: float) -> bool:
        """Gives up a parked delivery for good, saying who did; False if it is not parked."""
        with self.engine.connect() as conn:
            row = conn.execute(
                select(deliveries.c.last_error).where(deliveries.c.key == key, deliveries.c.channel == channel)
            ).first()
        error = f"{row.last_error if row else ''} (dropped by {by})"
        return self._close(key, channel, now=now, status=DROPPED, last_error=error[:2000])

    def _close(self, key: str, channel: str, *, now: float, **values: Any) -> bool:
        with self.engine.begin() as conn:
            return bool(conn.execute(
                update(deliveries)
                .where(deliveries.c.key == key, deliveries.c.channel == channel, deliveries.c.status == FAILED)
                .values(claimed_by=None, updated_at=now, **values)
            ).rowcount)

    def failing_channels(self) -> list[dict[str, Any]]:
        """Each channel with deliveries failing since its last delivery (seed 002 §34): degraded after
        `UPSTREAM_FAILURES` failed attempts in a row, and healthy again, by itself, with its next delivery."""
        with self.engine.connect() as conn:
            last = dict(conn.execute(
                select(deliveries.c.channel, func.max(deliveries.c.updated_at))
                .where(deliveries.c.status == DELIVERED).group_by(deliveries.c.channel)
            ).all())
            rows = conn.execute(
                select(deliveries).where(deliveries.c.status.in_([RETRYING, FAILED])).order_by(deliveries.c.updated_at)
            ).all()
        failing: dict[str, list[Any]] = {}
        for row in rows:
            if row.updated_at > last.get(row.channel, float("-inf")):
                failing.setdefault(row.channel, []).append(row)
        return [_channel_health(channel, failed, last.get(channel)) for channel, failed in sorted(failing.items())]

    def counts(self) -> dict[tuple[str, str], int]:
        """(channel, status) -> how many deliveries are in that state now (`/metrics`)."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(deliveries.c.channel, deliveries.c.status, func.count())
                                .group_by(deliveries.c.channel, deliveries.c.status)).all()
        return {(channel, status): count for channel, status, count in rows}

    def parked(self) -> list[dict[str, Any]]:
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(deliveries).where(deliveries.c.status == FAILED).order_by(deliveries.c.updated_at)
            ).all()
        return [_describe(row) for row in rows]


def _channel_health(channel: str, failed: list[Any], last_delivered: float | None) -> dict[str, Any]:
    attempts = sum(row.attempts for row in failed)
    return {
        "channel": channel, "degraded": attempts >= UPSTREAM_FAILURES, "failed_attempts": attempts,
        "messages": len(failed), "last_error": failed[-1].last_error,
        "tenants": sorted({json.loads(row.message).get("tenant") or "" for row in failed}),
        "last_delivered_at": _iso(last_delivered) if last_delivered is not None else None,
    }


def _iso(moment: float) -> str:
    return datetime.fromtimestamp(moment, timezone.utc).isoformat().replace("+00:00", "Z")


def _describe(row: Any) -> dict[str, Any]:
    message = json.loads(row.message)
    return {
        "key": row.key, "channel": row.channel, "attempts": row.attempts, "last_error": row.last_error,
        "parked_at": _iso(row.updated_at),
        "tenant": message.get("tenant"), "task_id": message.get("task_id"), "to": message.get("to"),
        "kind": message.get("kind"),
    }
