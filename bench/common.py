"""Shared pieces of the benchmark harness: fresh systems, bulk loading, timing, raw database limits."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from rich.progress import Progress

from loopline.adapters.config import Settings
from loopline.domain import ids
from loopline.domain.task import Task
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.loops_and_timers import register_loop
from loopline.runtime.bootstrap import build
from loopline.runtime.system import System

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
LOAD_BATCH = 2_000
ROOT = Path(__file__).resolve().parents[1]


def new_system(**environ: str) -> System:
    home = Path(tempfile.mkdtemp(prefix="loopline-bench-"))
    return build(Settings.load({"LOOPLINE_HOME": str(home), **environ}, config_file=home / "loopline.toml"))


def close(system: System) -> None:
    """Closes the system and deletes its home: a 1M-loop store is gigabytes, and runs add up."""
    system.close()
    shutil.rmtree(system.settings.home, ignore_errors=True)


def start_worker(system: System, environ: dict[str, str]) -> subprocess.Popen[bytes]:
    """One `loopline run` worker on the system's home and deployment, polling fast and never ticking itself."""
    return subprocess.Popen(
        [sys.executable, "-c", "from loopline.cli.main import main; main()", "run", "--interval", "0.05", "--tick-every", "0"],
        cwd=ROOT, env={**os.environ, "LOOPLINE_HOME": str(system.settings.home), **environ},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )


def durable_postgres() -> Any:
    """The suite's embedded PostgreSQL with fsync and full-page writes back on, as a deployment runs it.

    The suite turns durability off on its test server; the benchmarks measure what a user's server
    does on every commit, and stay comparable with the figures measured before it was turned off."""
    import psycopg

    from tests.servers import DURABILITY_OFF, Postgres

    postgres = Postgres()
    if not postgres.external:
        with psycopg.connect(postgres.url, autocommit=True) as conn:
            for name in DURABILITY_OFF:
                conn.execute(f"ALTER SYSTEM RESET {name}")
            conn.execute("SELECT pg_reload_conf()")
    return postgres


def stop(worker: subprocess.Popen[bytes] | None, system: System, *servers: Any) -> None:
    """Stops the worker, closes the system, then stops each server (a database server deletes its data: runs add up)."""
    if worker:
        worker.terminate()
        worker.wait(timeout=30)
    close(system)
    for server in servers:
        server.stop()


@contextmanager
def timed() -> Iterator[list[float]]:
    box: list[float] = []
    start = time.perf_counter()
    yield box
    box.append(time.perf_counter() - start)


def load_open_loops(
    system: System, count: int, *, tenants: int = 100, loops_per_task: int = 100, deadline_of=None, label: str = "loops"
) -> None:
    """Registers `count` email loops through the application (the real write path), in large batches."""
    deadline_of = deadline_of or (lambda i: T0 + timedelta(days=3) + timedelta(seconds=i * 2))
    with Progress(transient=True) as progress:
        bar = progress.add_task(f"registering {count:,} {label}", total=count)
        for start in range(0, count, LOAD_BATCH):
            uow = UnitOfWork(system.app)
            for i in range(start, min(start + LOAD_BATCH, count)):
                tenant = f"tenant{i % tenants}"
                task_ref = f"task{i // (tenants * loops_per_task)}"
                task_id = ids.task_id(tenant, task_ref)
                task = uow.get(task_id, Task) or uow.add(Task.create(
                    id=task_id, now=T0, tenant=tenant, ref=task_ref, title=f"bench {task_ref}", description="",
                    task_type="ad_hoc", status="executing", expires_at=None, priority=None, contact=None,
                    confidence=None, context={}, reason="bench",
                ))
                register_loop(
                    uow, task, loop_ref=f"loop{i}", channel="email", watch={"sender": f"contact{i}@example.com"},
                    deadline=deadline_of(i), if_unresolved="notify_user", description="bench", origin="explicit", now=T0,
                )
                uow.end_step()
            uow.commit()
            progress.advance(bar, min(LOAD_BATCH, count - start))


def sqlite_raw_insert_rate(path: Path, rows: int = 200_000, batch: int = 2_000) -> float:
    """Rows/s of batched inserts of event-sized rows into a plain SQLite table on the same disk."""
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE raw (id INTEGER PRIMARY KEY, originator TEXT, version INTEGER, topic TEXT, state BLOB)")
    payload = b"x" * 300
    start = time.perf_counter()
    for offset in range(0, rows, batch):
        conn.executemany(
            "INSERT INTO raw (originator, version, topic, state) VALUES (?, ?, ?, ?)",
            [(f"{i:032x}", 1, "loopline.domain.task:Task.Created", payload) for i in range(offset, offset + batch)],
        )
        conn.commit()
    elapsed = time.perf_counter() - start
    conn.close()
    return rows / elapsed


def postgres_raw_insert_rate(url: str, rows: int = 200_000, batch: int = 2_000) -> float:
    """Rows/s of batched multi-row inserts of event-sized rows into a plain PostgreSQL table."""
    import psycopg

    payload = b"x" * 300
    with psycopg.connect(url, autocommit=False) as conn:
        conn.execute("CREATE TEMP TABLE raw (id BIGSERIAL PRIMARY KEY, originator TEXT, version INT, topic TEXT, state BYTEA)")
        start = time.perf_counter()
        with conn.cursor() as cur:
            for offset in range(0, rows, batch):
                cur.executemany(
                    "INSERT INTO raw (originator, version, topic, state) VALUES (%s, %s, %s, %s)",
                    [(f"{i:032x}", 1, "loopline.domain.task:Task.Created", payload) for i in range(offset, offset + batch)],
                )
                conn.commit()
        return rows / (time.perf_counter() - start)


def postgres_copy_rate(url: str, rows: int = 500_000) -> float:
    """Rows/s of COPY of event-sized rows into a plain PostgreSQL table: the database's raw bulk limit."""
    import psycopg

    payload = b"x" * 300
    with psycopg.connect(url) as conn:
        conn.execute("CREATE TEMP TABLE raw_copy (id BIGINT, originator TEXT, version INT, topic TEXT, state BYTEA)")
        start = time.perf_counter()
        with conn.cursor() as cur, cur.copy("COPY raw_copy FROM STDIN") as copy:
            for i in range(rows):
                copy.write_row((i, f"{i:032x}", 1, "loopline.domain.task:Task.Created", payload))
        conn.commit()
        return rows / (time.perf_counter() - start)
