"""What an operator sees of running workers: their structured logs and `loopline status`, embedded and at scale."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from loopline.adapters.kafka_log import Topics
from loopline.adapters.leader import LEADER_KEY
from tests.conftest import command
from tests.e2e.cli import Cli, run_in_process
from tests.e2e.scale import PARTITIONS, ScaleDeployment, Worker
from tests.e2e.test_scale_workers import email_follow_up, group_members
from tests.servers import Broker, Postgres
from tests.waiting import eventually

PROGRESS_EVERY = "0.5"


@pytest.fixture
def loopline(postgres: Postgres, broker: Broker, tmp_path: Path) -> Iterator[ScaleDeployment]:
    deployment = ScaleDeployment(postgres, broker, tmp_path / "home")
    deployment.environ["LOOPLINE_PROGRESS_EVERY"] = PROGRESS_EVERY
    yield deployment
    deployment.close()


def status(loopline: ScaleDeployment, *options: str) -> subprocess.CompletedProcess[str]:
    return run_in_process(("status", *options), {**os.environ, **loopline.environ, "COLUMNS": "250"}, None)


def status_json(loopline: ScaleDeployment) -> dict[str, Any]:
    result = status(loopline, "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def worker_id(worker: Worker) -> str:
    [started] = worker.events("worker.started")
    return started["worker"]


def holding(worker: Worker) -> list[str]:
    """The partitions the worker last said it holds."""
    changes = worker.events("partitions.assigned") + worker.events("partitions.revoked")
    return max(changes, key=lambda entry: entry["at"])["holding"] if changes else []


def test_workers_log_their_partitions_and_the_lead_and_status_shows_them(loopline: ScaleDeployment) -> None:
    workers = [loopline.start_worker(), loopline.start_worker()]
    eventually(lambda: group_members(loopline) == 2, "both workers to join the consumer group")
    tenants = [f"tenant{n:02d}" for n in range(20)]
    loopline.publish([m for tenant in tenants for m in email_follow_up(tenant)[:2]])
    loopline.settle(inbound=2 * len(tenants))

    ids = [worker_id(worker) for worker in workers]
    assert len(set(ids)) == 2 and all(i.endswith(f":{w.process.pid}") for i, w in zip(ids, workers, strict=True))
    topics = Topics(loopline.environ["LOOPLINE_KAFKA_TOPIC_PREFIX"])
    every_partition = sorted(f"{topic}[{p}]" for topic in (topics.commands, topics.signals) for p in range(PARTITIONS))
    held = [holding(worker) for worker in workers]
    assert all(held) and sorted(held[0] + held[1]) == every_partition
    [leading] = [worker for worker in workers if worker.events("lead.taken")]
    leader_id = worker_id(leading)
    # Every worker's last progress line counts what it applied; together, every message once.
    applied = lambda: sum(worker.events("progress")[-1]["applied"] for worker in workers)  # noqa: E731
    eventually(lambda: applied() == 2 * len(tenants), "the progress lines to count every message")

    shown = eventually(lambda: (s := status_json(loopline)) and all(w["partitions"] for w in s["workers"]) and s,
                       "both workers' heartbeats to list their partitions")
    assert shown["leader"] == leader_id
    rows = {row["worker"]: row for row in shown["workers"]}
    assert set(rows) == set(ids)
    assert all(row["alive"] for row in rows.values())
    assert [worker for worker, row in rows.items() if row["leads"]] == [leader_id]
    assert {worker: sorted(row["partitions"]) for worker, row in rows.items()} == dict(zip(ids, held, strict=True))
    # One record per message: the next offsets to read add up to what was published, and nothing is pending.
    assert sum(row["next"] for row in shown["inputs"]) == 2 * len(tenants)
    assert all(row["pending"] == 0 for row in shown["inputs"])
    assert shown["messages_processed"] == 2 * len(tenants)
    text = status(loopline).stdout
    assert f"leader: {leader_id}" in text
    assert all(worker in text for worker in ids) and "alive, leads" in text
    assert "next" in text and "pending" in text and "messages processed: 40" in text

    leading.stop()  # a clean stop lets go of the lead at once: the other worker takes it
    [other] = [worker for worker in workers if worker is not leading]
    assert leading.events("lead.released") and leading.events("worker.stopped")
    eventually(lambda: other.events("lead.taken"), "the other worker to take the lead", timeout=15)
    shown = status_json(loopline)
    assert shown["leader"] == worker_id(other)
    assert [row["worker"] for row in shown["workers"]] == [worker_id(other)]  # a stopped worker is gone


def test_a_leader_that_loses_its_lock_says_so_and_a_leader_takes_it_again(loopline: ScaleDeployment) -> None:
    worker = loopline.start_worker()
    eventually(lambda: worker.events("lead.taken"), "the worker to take the lead")

    with psycopg.connect(loopline.environ["LOOPLINE_EVENT_STORE"], autocommit=True) as conn:
        ended = conn.execute(
            "SELECT pg_terminate_backend(l.pid) FROM pg_locks l WHERE l.locktype = 'advisory' AND l.objid = %s "
            "AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())",  # not another test's
            (LEADER_KEY,),
        ).fetchall()
    assert ended == [(True,)]

    eventually(lambda: worker.events("lead.lost"), "the leader to notice it lost the lock")
    eventually(lambda: len(worker.events("lead.taken")) == 2, "the lead to be taken again")
    assert status_json(loopline)["leader"] == worker_id(worker)


def test_a_leader_failing_unexpectedly_logs_one_line_and_its_worker_starts_a_new_one(loopline: ScaleDeployment) -> None:
    """Here the delivery ledger lost a column (by hand): the leader fails until the table is put right."""
    loopline.system  # noqa: B018 - the tables and topics
    with psycopg.connect(loopline.environ["LOOPLINE_EVENT_STORE"], autocommit=True) as conn:
        conn.execute("ALTER TABLE loopline_deliveries DROP COLUMN last_error")
    worker = loopline.start_worker()
    eventually(lambda: worker.events("leader.restarted"), "the worker to start a new leader")
    with psycopg.connect(loopline.environ["LOOPLINE_EVENT_STORE"], autocommit=True) as conn:
        conn.execute("DROP TABLE loopline_deliveries")  # the next leader creates it anew
    pids = lambda name: {line["pid"] for line in worker.events(name)}  # noqa: E731
    eventually(lambda: pids("lead.taken") - pids("leader.failed"), "a leader that takes the lead and runs", timeout=60)

    [failed, *_] = worker.events("leader.failed")
    assert failed["error"] == ("ProgrammingError: (psycopg.errors.UndefinedColumn) "
                               "column loopline_deliveries.last_error does not exist")
    assert worker.events("leader.restarted")[0]["failed_pid"] == failed["pid"]
    assert worker.process.poll() is None and "Traceback" not in worker.log()


def test_an_embedded_worker_logs_its_progress_and_status_lists_it_until_it_stops(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "home")
    assert cli("status").returncode == 0  # creates the home before the worker and the publisher share it
    worker = Worker({**os.environ, **cli.environ, "LOOPLINE_PROGRESS_EVERY": PROGRESS_EVERY, "PYTHONUNBUFFERED": "1"},
                    tmp_path / "worker.log")
    try:
        [started] = eventually(lambda: worker.events("worker.started"), "the worker to start")
        assert started["deployment"] == "embedded" and started["worker"].endswith(f":{worker.process.pid}")
        messages = [command(f"m{n}", "task.create", "2026-03-13T10:00:00Z", task_id=f"task_{n}", title=f"Task {n}")
                    for n in range(3)]
        assert cli.publish(tmp_path, messages, "tasks").returncode == 0
        shown = eventually(lambda: (s := cli.json("status")) and s["workers"] and s, "the worker's heartbeat")
        [row] = shown["workers"]
        assert (row["worker"], row["alive"], row["partitions"]) == (started["worker"], True, ["embedded log"])
        assert shown["leader"] is None
        # `publish` processed them itself: positions run past them, nothing is pending, three messages processed.
        [embedded] = shown["inputs"]
        assert embedded["next"] == embedded["end"] > 3 and embedded["pending"] == 0
        assert shown["messages_processed"] == 3
        assert worker.events("progress")
    finally:
        worker.stop()
    assert worker.events("worker.stopped")
    assert cli.json("status")["workers"] == []


def test_a_killed_worker_is_shown_silent_once_it_misses_its_heartbeats(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "home")
    assert cli("status").returncode == 0
    worker = Worker({**os.environ, **cli.environ, "LOOPLINE_PROGRESS_EVERY": PROGRESS_EVERY, "PYTHONUNBUFFERED": "1"},
                    tmp_path / "worker.log")
    try:
        eventually(lambda: (rows := cli.json("status")["workers"]) and rows[0]["alive"], "the worker's heartbeat")
    finally:
        worker.kill()

    [row] = eventually(lambda: [r for r in cli.json("status")["workers"] if not r["alive"]], "the worker to turn silent")
    assert row["worker"] == worker_id(worker) and row["seen_seconds_ago"] > 3 * float(PROGRESS_EVERY)
    assert "silent" in cli("status").stdout
