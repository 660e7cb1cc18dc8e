"""A scale deployment for end-to-end tests: its own database and topic prefix, real `loopline run` workers.

Workers are subprocesses; the test process builds the same system in-process to publish messages
and to read the event store, the read models and the processing status.
"""

from __future__ import annotations

import json
import os
import re
import signal as signals
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any
from uuid import uuid4

import psycopg
from eventsourcing.utils import get_topic
from sqlalchemy import select

from loopline.adapters.config import Settings
from loopline.adapters.messages import parse_message
from loopline.processors.followers.agent import TOPICS as REQUESTED_TOPICS
from loopline.processors.followers.delivery import TOPICS as DELIVERED_TOPICS
from loopline.processors.followers.router import INBOUND_TOPIC
from loopline.projections.open_loops import open_loops
from loopline.projections.tasks import task_inbox, tasks
from loopline.runtime.bootstrap import build
from loopline.runtime.system import System
from tests.servers import Broker, Postgres

ROOT = Path(__file__).resolve().parents[2]
PARTITIONS = 4
SETTLE_TIMEOUT = 90.0
POLL = 0.2
APPLIED = re.compile(r"^applied (\d+) ", re.MULTILINE)


class Worker:
    """One `loopline run` process; its output goes to a file the test can read while it runs."""

    def __init__(self, environ: dict[str, str], output: Path) -> None:
        self.output = output
        with output.open("wb") as sink:
            # No wall-clock ticks: test messages are dated in the past, and no deadline may pass unasked.
            self.process = subprocess.Popen(
                [sys.executable, "-c", "from loopline.cli.main import main; main()", "run", "--interval", "0.2", "--tick-every", "0"],
                cwd=ROOT, env=environ, stdout=sink, stderr=subprocess.STDOUT,
            )

    def log(self) -> str:
        return self.output.read_text(encoding="utf-8", errors="replace")

    def events(self, name: str) -> list[dict[str, Any]]:
        """The worker's structured log lines (JSON on standard error) of one event."""
        found = []
        for line in self.log().splitlines():
            if line.startswith("{"):
                entry = json.loads(line)
                if entry["event"] == name:
                    found.append(entry)
        return found

    def applied(self) -> int:
        """Messages this worker applied, from its "applied N ..." batch reports."""
        return sum(int(n) for n in APPLIED.findall(self.log()))

    def kill(self) -> None:
        self.process.send_signal(signals.SIGKILL)
        self.process.wait()

    def terminate(self) -> None:
        """Asks the worker to stop (it finishes its pass, stops its leader and leaves its group), without waiting."""
        if self.process.poll() is None:
            self.process.terminate()

    def stop(self) -> None:
        self.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.kill()


class ScaleDeployment:
    def __init__(self, postgres: Postgres, broker: Broker, home: Path, *, empty: bool = False) -> None:
        database = postgres.new_database(empty=empty)
        self.home = home
        self.environ = {
            "LOOPLINE_HOME": str(home),
            "LOOPLINE_EVENT_STORE": database,
            "LOOPLINE_READ_MODEL": database,
            "LOOPLINE_KAFKA": broker.bootstrap,
            "LOOPLINE_KAFKA_TOPIC_PREFIX": f"t{uuid4().hex[:8]}.",
            "LOOPLINE_KAFKA_PARTITIONS": str(PARTITIONS),
        }
        self.workers: list[Worker] = []
        self._system: System | None = None

    @property
    def system(self) -> System:
        """Built on first use (which creates the topics), and again after `reconnect`."""
        if self._system is None:
            home = self.home
            home.mkdir(parents=True, exist_ok=True)
            self._system = build(Settings.load(self.environ, config_file=home / "loopline.toml"))
        return self._system

    def reconnect(self) -> None:
        """Drops the in-process system's Kafka clients, e.g. after the broker restarted."""
        if self._system is not None:
            self._system.close()
            self._system = None

    def start_worker(self) -> Worker:
        self.system  # noqa: B018 - topics exist before any worker subscribes
        environ = {**os.environ, **self.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"}
        worker = Worker(environ, self.home / f"worker-{len(self.workers)}.log")
        self.workers.append(worker)
        return worker

    def publish(self, messages: list[dict[str, Any]]) -> None:
        self.system.log.append([parse_message(json.dumps(m)) for m in messages], "test")

    def close(self) -> None:
        for worker in self.workers:  # all asked at once, as compose stops its replicas: they shut down side by side
            worker.terminate()
        for worker in self.workers:
            worker.stop()
        self.reconnect()

    # What the event store holds.

    def notifications(self, topics: list[str] | None = None) -> list[Any]:
        recorder = self.system.app.process_recorder
        found: list[Any] = []
        while True:
            batch = recorder.select_notifications(start=(found[-1].id + 1) if found else 1, limit=5000, topics=topics or ())
            found += batch
            if len(batch) < 5000:
                return found

    def events(self, cls: type) -> list[Any]:
        """Every stored event of one class, as domain events."""
        mapper = self.system.app.mapper
        return [mapper.to_domain_event(n) for n in self.notifications([get_topic(cls)])]

    def event_counts(self) -> Counter[str]:
        return Counter(n.topic for n in self.notifications())

    def inbound_count(self) -> int:
        """How many distinct messages the workers recorded (polled often, so counted in SQL)."""
        recorder = self.system.app.process_recorder
        with psycopg.connect(self.environ["LOOPLINE_EVENT_STORE"]) as conn:
            query = f'SELECT count(*) FROM "{recorder.events_table_name}" WHERE topic = %s'  # type: ignore[attr-defined]
            return conn.execute(query, (INBOUND_TOPIC,)).fetchone()[0]

    # What the read models hold.

    def rows(self, table: Any) -> list[dict[str, Any]]:
        with self.system.projections.engine.connect() as conn:
            found = [dict(row._mapping) for row in conn.execute(select(table))]
        return sorted(found, key=lambda row: json.dumps(row, sort_keys=True, default=str))

    def read_models(self) -> dict[str, list[dict[str, Any]]]:
        return {table.name: self.rows(table) for table in (tasks, task_inbox, open_loops)}

    def outbox(self) -> list[dict[str, Any]]:
        path = self.home / "outbox.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]

    # Waiting for the workers.

    def status(self) -> dict[str, Any]:
        """What `loopline status --json` reports, plus the leader's relay and delivery backlog."""
        system = self.system
        app = system.app
        head = app.process_recorder.max_notification_id() or 0
        undelivered = app.process_recorder.select_notifications(
            start=app.position("delivery") + 1, limit=1, topics=DELIVERED_TOPICS
        )
        return {
            "inputs": system.input_lag(),
            "read_models": [{"name": s.name, "position": s.position, "head": s.head, "lag": s.lag}
                            for s in system.projections.status()],
            "relay_lag": head - app.position("relay"),
            "undelivered": len(undelivered),
            "inbound_messages": self.inbound_count(),
        }

    def settle(self, inbound: int, timeout: float = SETTLE_TIMEOUT, *, decided: bool = False) -> None:
        """Waits until `inbound` messages are recorded, every lag is 0, and that stays so for a moment; `decided`:
        and the leader's agent has answered every decision request (its decisions send).

        Input lag alone is not enough: the test broker (Tansu) reports a partition's end offset as
        its last record batch's base offset + 1, so a partition can show lag 0 with work left.
        """
        wait_until_settled(self._decided_status if decided else self._live_status, inbound, timeout, self._worker_logs)

    def _decided_status(self) -> dict[str, Any]:
        app = self.system.app
        undecided = app.process_recorder.select_notifications(
            start=app.position("agent") + 1, limit=1, topics=REQUESTED_TOPICS
        )
        return {**self._live_status(), "undecided": len(undecided)}

    def _live_status(self) -> dict[str, Any]:
        """`status`, once no worker has died: a killed worker has its return code already, a crashed one not yet."""
        for worker in self.workers:
            if worker.process.returncode is None and worker.process.poll() is not None:
                raise AssertionError(f"a worker died:\n{worker.log()[-3000:]}")
        return self.status()

    def _worker_logs(self) -> str:
        return "\n".join(f"--- worker {i}:\n{w.log()[-2000:]}" for i, w in enumerate(self.workers))


def wait_until_settled(
    status: Callable[[], dict[str, Any]], inbound: int, timeout: float, logs: Callable[[], str]
) -> None:
    """Polls `status` until it shows `inbound` messages settled and it stays so for a second; past `timeout`
    the test fails with the last status and `logs`. A status with an "error" (a server coming back) is unsettled."""
    deadline = time.monotonic() + timeout
    quiet_since: float | None = None
    last: dict[str, Any] = {}
    while time.monotonic() < deadline:
        last = status()
        if "error" in last or not is_settled(last, inbound):
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since >= 1.0:
            return
        time.sleep(POLL)
    raise AssertionError(
        f"not settled within {timeout:.0f} s (expected {inbound} inbound messages); last status:\n"
        f"{json.dumps(last, indent=1, default=str)}\n{logs()}"
    )


def is_settled(status: dict[str, Any], inbound: int) -> bool:
    """`inbound` messages recorded and nothing left to apply, project, relay or deliver."""
    return (
        status["inbound_messages"] == inbound
        and all(row["pending"] == 0 for row in status["inputs"])
        and all(row["lag"] == 0 for row in status["read_models"])
        and status["relay_lag"] == 0 and status["undelivered"] == 0 and status.get("undecided", 0) == 0
    )
