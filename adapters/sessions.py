"""Dashboard sessions, kept beside the API keys: the signed cookie carries only a random session id, and this table
decides whether it is still live, so logging out, 2 hours idle, the 12-hour cap or revoking the key ends it on every
serve process at once. The secret the cookies are signed with lives here too, in a one-row table of its own."""

from __future__ import annotations

import secrets
from datetime import timedelta

from sqlalchemy import Column, DateTime, Integer, MetaData, String, Table, delete, insert, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from loopline.adapters.api_keys import KeyRecord, api_keys, record_of, sha256_hex
from loopline.adapters.clock import SystemClock
from loopline.domain.timeutil import parse_time
from loopline.processors.ports import Clock

IDLE = timedelta(hours=2)
CAP = timedelta(hours=12)
SEEN_EVERY = timedelta(minutes=1)
"""How stale `last_seen` may get before a request writes it again: a page refreshing itself writes once a minute."""

metadata = MetaData()
sessions = Table(
    "loopline_sessions", metadata,
    Column("session_sha256", String(64), primary_key=True),  # the cookie's id hashed: the table alone opens none
    Column("key_id", String(32), nullable=False, index=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("last_seen", DateTime(timezone=True), nullable=False),
    Column("ended_at", DateTime(timezone=True)),
)
cookie_secret = Table(
    "loopline_session_secret", metadata,
    Column("id", Integer, primary_key=True),  # always 1: one secret per database, shared by every serve process
    Column("secret", String(64), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
)


def create_tables(engine: Engine) -> None:
    """Run with every other table of the start-up, under the schema lock (runtime/stores.py)."""
    metadata.create_all(engine)


class Sessions:
    def __init__(self, engine: Engine, clock: Clock | None = None) -> None:
        self.engine = engine
        self.clock = clock or SystemClock()

    def start(self, key_id: str) -> str:
        """A new live session for the key; its id goes into the signed cookie, only its hash into the table. Sessions
        past the cap are dropped here, so the table holds at most twelve hours of logins."""
        session_id, now = secrets.token_urlsafe(32), self.clock.now()
        with self.engine.begin() as conn:
            conn.execute(delete(sessions).where(sessions.c.created_at < now - CAP))
            conn.execute(insert(sessions).values(session_sha256=sha256_hex(session_id), key_id=key_id, created_at=now,
                                                 last_seen=now, ended_at=None))
        return session_id

    def key_of(self, session_id: str) -> KeyRecord | None:
        """The session's key while the session is live: not ended, used within the idle time, younger than the cap,
        and its key not revoked. Marks it seen (at most once a minute, to keep writes few)."""
        digest, now = sha256_hex(session_id), self.clock.now()
        query = (select(api_keys, sessions.c.created_at.label("session_created"), sessions.c.last_seen)
                 .join(api_keys, api_keys.c.key_id == sessions.c.key_id)
                 .where(sessions.c.session_sha256 == digest, sessions.c.ended_at.is_(None),
                        api_keys.c.revoked_at.is_(None)))
        with self.engine.connect() as conn:
            row = conn.execute(query).mappings().first()
        if row is None:
            return None
        last_seen = parse_time(row["last_seen"])
        if now - last_seen > IDLE or now - parse_time(row["session_created"]) > CAP:
            return None
        if now - last_seen >= SEEN_EVERY:
            with self.engine.begin() as conn:
                conn.execute(update(sessions).where(sessions.c.session_sha256 == digest).values(last_seen=now))
        return record_of(row)

    def end(self, session_id: str) -> None:
        """Ends the session for every serve process (a copy of the cookie is refused from now on)."""
        with self.engine.begin() as conn:
            conn.execute(update(sessions).where(sessions.c.session_sha256 == sha256_hex(session_id),
                                                sessions.c.ended_at.is_(None)).values(ended_at=self.clock.now()))

    def cookie_secret(self) -> str:
        """The secret every serve process signs session cookies with: made by the first to ask, then shared."""
        with self.engine.connect() as conn:
            found = conn.execute(select(cookie_secret.c.secret).where(cookie_secret.c.id == 1)).scalar()
        if found:
            return found
        try:
            with self.engine.begin() as conn:
                conn.execute(insert(cookie_secret).values(id=1, secret=secrets.token_hex(32),
                                                          created_at=self.clock.now()))
        except IntegrityError:
            pass  # another serve process made it first: use theirs
        return self.cookie_secret()
