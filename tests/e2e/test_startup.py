"""Start-up: workers started together on a fresh database all start, and a home an older release wrote opens.

The old home (tests/fixtures/home_before_issue_11/) is the README's first scenario (publish, tick,
reply) run by the release before issue 11 (commit bdfff5b), dumped with sqlite3's `iterdump`: its
read models lack the tables and columns issue 11 added (`memory_turns`, the tasks' outreach columns).
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from uuid import uuid4

import psycopg

from tests.e2e.cli import Cli
from tests.e2e.scale import ScaleDeployment, Worker
from tests.servers import Broker, Postgres

ROUNDS = 2  # each round starts WORKERS workers at once on a new database and new topics
WORKERS = 3
OLD_HOME = Path(__file__).resolve().parents[1] / "fixtures" / "home_before_issue_11"


def leader_sessions(database: str) -> int:
    """Leader processes that have built their system and look for the lead (their sessions are named after
    their worker, whether they take the lead or wait for it)."""
    with psycopg.connect(database) as conn:
        return conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE %s",
            ("loopline % leader %",),
        ).fetchone()[0]


def test_workers_started_together_on_a_fresh_database_all_start(postgres: Postgres, broker: Broker, tmp_path: Path) -> None:
    for round_ in range(ROUNDS):
        # A new database without a table (what compose.yml's replicas meet) and new topics.
        deployment = ScaleDeployment(postgres, broker, tmp_path / f"round-{round_}", empty=True)
        deployment.environ["LOOPLINE_PROGRESS_EVERY"] = "0.2"
        deployment.home.mkdir(parents=True)
        environ = {**os.environ, **deployment.environ, "PYTHONUNBUFFERED": "1"}
        workers = [Worker(environ, deployment.home / f"worker-{n}.log") for n in range(WORKERS)]
        deployment.workers += workers
        try:
            database = deployment.environ["LOOPLINE_EVENT_STORE"]
            wait_for(lambda: all(w.events("progress") for w in workers) and leader_sessions(database) == WORKERS,
                     *workers, timeout=90)
            for worker in workers:
                failures = worker.events("worker.failed") + worker.events("leader.failed")
                assert not failures and "Traceback" not in worker.log(), f"round {round_}:\n{worker.log()}"
            assert sum(bool(w.events("lead.taken")) for w in workers) <= 1
        finally:
            deployment.close()  # all at once: each stops its leader and says so before it exits


def test_a_worker_failing_unexpectedly_logs_one_line_and_restarts_until_it_runs(tmp_path: Path) -> None:
    """Here the delivery ledger lost a column (by hand): each pass fails until the table is put right."""
    home = tmp_path / "home"
    cli = Cli(home)
    assert cli("status").returncode == 0  # creates the home and its tables
    with closing(sqlite3.connect(home / "events.db")) as conn:
        conn.execute("ALTER TABLE loopline_deliveries DROP COLUMN last_error")
    environ = {**os.environ, "LOOPLINE_HOME": str(home), "LOOPLINE_PROGRESS_EVERY": "0.2", "PYTHONUNBUFFERED": "1"}
    worker = Worker(environ, tmp_path / "worker.log")
    try:
        wait_for(lambda: len(worker.events("worker.failed")) >= 2, worker)
        with closing(sqlite3.connect(home / "events.db")) as conn:
            conn.execute("DROP TABLE loopline_deliveries")  # the next start creates it anew
        wait_for(lambda: worker.events("progress"), worker)
    finally:
        worker.stop()
    failed = worker.events("worker.failed")
    assert all(line["error"].startswith("OperationalError: (sqlite3.OperationalError) no such column") for line in failed)
    assert [line["restart_in"] for line in failed[:2]] == [1.0, 2.0]
    assert "Traceback" not in worker.log() and worker.process.returncode == 0


def wait_for(condition: Callable[[], object], *workers: Worker, timeout: float = 60.0) -> None:
    """Until `condition` holds, failing with the workers' logs if one of them dies or time runs out."""
    deadline = time.monotonic() + timeout
    while not condition():
        alive = all(worker.process.poll() is None for worker in workers)
        assert alive and time.monotonic() < deadline, "\n".join(worker.log() for worker in workers)
        time.sleep(0.1)


def open_old_home(home: Path) -> None:
    home.mkdir(parents=True)
    for name in ("events", "views"):
        with closing(sqlite3.connect(home / f"{name}.db")) as conn:
            conn.executescript((OLD_HOME / f"{name}.sql").read_text(encoding="utf-8"))


def test_a_home_written_by_the_release_before_issue_11_answers_its_queries(tmp_path: Path) -> None:
    home = tmp_path / "home"
    open_old_home(home)
    with closing(sqlite3.connect(home / "views.db")) as conn:
        old_columns = {row[1] for row in conn.execute("PRAGMA table_info(tasks)")}
        old_tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "touches" not in old_columns and "memory_turns" not in old_tables and "tenants" not in old_tables
    cli = Cli(home)

    listed = cli("tasks", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    [task] = json.loads(listed.stdout)
    assert (task["task_id"], task["title"], task["status"]) == ("task_abc", "Schedule meeting with Rahul", "executing")
    assert (task["actions"], task["inbox"], task["open_loops"], task["touches"]) == (2, 1, 0, None)

    shown = cli("tasks", "show", "task_abc", "--json", "--now", "2026-03-18T00:00:00Z")
    assert shown.returncode == 0, shown.stderr
    conversation = json.loads(shown.stdout)["conversation"]
    assert [turn["author"] for turn in conversation] == ["agent", "agent", "contact"]  # from the rebuilt memory_turns

    tenants = cli("tenants", "list", "--json")
    assert tenants.returncode == 0 and json.loads(tenants.stdout) == [], tenants.stderr  # the old release had none

    published = cli("publish", "-", stdin=json.dumps({
        "kind": "command", "id": f"msg-{uuid4().hex[:6]}", "type": "tenant.configure", "tenant": "user_xyz",
        "at": "2026-03-18T10:00:00Z", "data": {"name": "Xyz", "execution_mode": "limited_auto"},
    }) + "\n")
    assert published.returncode == 0, published.stderr
    [tenant] = json.loads(cli("tenants", "list", "--json").stdout)
    assert (tenant["tenant"], tenant["settings"]["execution_mode"]) == ("user_xyz", "limited_auto")
