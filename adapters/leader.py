"""Which process runs the singleton duties, on PostgreSQL advisory locks, however many workers run.

* The leader lock (relay, delivery) is held for as long as the process lives; a killed
  leader's session ends, its lock with it, and another worker takes over.
* The scheduler lock is held for one tick at a time, so a worker's periodic tick and a
  `loopline tick` from the CLI never scan together, and neither waits long for the other.
* The schema lock is held while a process creates every table at start-up (runtime/stores.py).

`checked_at` says when the lock was last checked: a leader checks it before every batch, so a
watchdog can tell a leader that stopped making progress (runtime/leading.py). `losses` counts the
times a check found the lock gone, whichever check it was: the leader's loop says so even when a
check within its drain found the loss and its own next check took the lock again.

The embedded deployment leads in whichever process holds the home lock: an exclusive `flock` on
`$LOOPLINE_HOME/lock` that every writing pass (publish, tick, each pass of `loopline run`)
holds, so two processes never write or deliver at once; a second one waits and says who holds it.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any, ContextManager

LEADER_KEY = 0x6C6F6F70  # "loop"
SCHEDULER_KEY = 0x7469636B  # "tick"
SCHEMA_KEY = 0x73636865  # "sche"


NOTICE_AFTER = 1.0  # seconds a writer waits for the home lock before saying who holds it


class HomeLock:
    """An exclusive lock on a Loopline home, re-entrant within the process that holds it.

    The holder writes its pid and command beside the lock file, so a waiting process can say
    which one it waits for.
    """

    def __init__(self, home: Path) -> None:
        self.path = home / "lock"
        self.holder_path = home / "lock.holder"
        self._fd: int | None = None
        self._depth = 0

    @contextmanager
    def held(self) -> Iterator[None]:
        if self._depth == 0:
            self._acquire()
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
            if self._depth == 0:
                self._release()

    def _acquire(self) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        started, told = time.monotonic(), False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not told and time.monotonic() - started >= NOTICE_AFTER:
                    print(f"waiting for {self.path.parent}: {self._holder()} is writing to it", file=sys.stderr, flush=True)
                    told = True
                time.sleep(0.05)
        if told:
            print(f"{self.path.parent} is free; going on", file=sys.stderr, flush=True)
        self._fd = fd
        command = " ".join(["loopline", *sys.argv[1:]])
        self.holder_path.write_text(json.dumps({"pid": os.getpid(), "command": command}))

    def _holder(self) -> str:
        try:
            holder = json.loads(self.holder_path.read_text())
            return f"process {holder['pid']} ({holder['command']})"
        except (OSError, ValueError, KeyError):
            return "another process"

    def _release(self) -> None:
        assert self._fd is not None
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None


class SoleLeader:
    """The embedded deployment: the process holding the home lock writes, ticks and delivers."""

    def __init__(self, home: Path) -> None:
        self.lock = HomeLock(home)
        self.checked_at = time.monotonic()
        self.losses = 0  # the home lock is held by each pass and let go of by it, never lost

    def try_lead(self) -> bool:
        self.checked_at = time.monotonic()
        return True

    def writing(self) -> ContextManager[None]:
        """Held by every pass that writes to the home: appending, draining, ticking."""
        return self.lock.held()

    def scheduling(self) -> ContextManager[None]:
        return self.lock.held()

    def creating_schema(self) -> ContextManager[None]:
        """Processes starting together on a new home would both create the read-model tables."""
        return self.lock.held()

    def close(self) -> None:
        return None


class PostgresLeader:
    def __init__(self, url: str) -> None:
        self.url = url
        self._conn: Any = None
        self.checked_at = time.monotonic()
        self.holds = False  # what the last check found
        self.losses = 0
        # Shown in pg_stat_activity; a worker's leader process names its worker (see `leader_holder`).
        self.label = f"loopline {os.getpid()}"

    def _connect(self) -> Any:
        import psycopg

        from loopline.adapters.postgres_session import SESSION

        # Named, so pg_stat_activity shows which process holds the leader lock.
        return psycopg.connect(self.url, autocommit=True, application_name=self.label[:63], **SESSION)

    def writing(self) -> ContextManager[None]:
        """At scale the event store keeps concurrent writers apart (positions and versions compare-and-set)."""
        return nullcontext()

    def try_lead(self) -> bool:
        """True while this process holds the leader lock (taking it if it is free)."""
        self.checked_at = time.monotonic()
        leads = self._lock_held_or_taken()
        if self.holds and not leads:
            self.losses += 1
        self.holds = leads
        return leads

    def _lock_held_or_taken(self) -> bool:
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
        from loopline.adapters.postgres_session import LOCK_WAIT_TIMEOUT_MS

        with self._connect() as conn:
            conn.execute(f"SET statement_timeout = {LOCK_WAIT_TIMEOUT_MS}")
            conn.execute("SELECT pg_advisory_lock(%s)", (key,))
            try:
                yield
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (key,))

    def holder(self) -> str | None:
        """Who holds the leader lock: the worker id its leader process gave (`lead_as`), else its session's name."""
        with self._connect() as conn:
            row = conn.execute(
                "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
                "WHERE l.locktype = 'advisory' AND l.objid = %s AND l.granted "
                # advisory locks are per database: another deployment on the same server has a leader of its own
                "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())", (LEADER_KEY,),
            ).fetchone()
        if row is None:
            return None
        name = (row[0] or "").split()
        return name[1] if len(name) == 4 and name[2] == "leader" else " ".join(name) or "an unnamed session"

    def lead_as(self, worker: str) -> None:
        """Names the lock's session after the worker this process leads for (`holder` reads it), and this process."""
        self.close()
        self.label = f"loopline {worker} leader {os.getpid()}"

    def close(self) -> None:
        if self._conn is not None and not self._conn.closed:
            self._conn.close()
        self._conn = None


def leader_for(event_store_url: str, home: Path) -> SoleLeader | PostgresLeader:
    if event_store_url.startswith(("postgresql://", "postgres://")):
        return PostgresLeader(event_store_url)
    return SoleLeader(home)
