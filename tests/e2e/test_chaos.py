"""Chaos at scale: workers SIGKILLed every few seconds while commands and signals stream in, one
PostgreSQL restart and one broker restart at quiet points; the end state equals a single-process
embedded run of the same messages, and delivery resumes within the session timeout after a kill.

The test supervises the workers as compose.yml does (`restart: unless-stopped`): a worker that
exits, killed or not, is replaced.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from sqlalchemy import select

from loopline.adapters.leader import PostgresLeader
from loopline.processors.followers.delivery import TOPICS as DELIVERED_TOPICS
from loopline.projections.open_loops import open_loops
from loopline.projections.tasks import task_inbox, tasks
from loopline.runtime.system import System
from tests.conftest import build_system, command, publish, signal
from tests.e2e.scale import ScaleDeployment, Worker, wait_until_settled
from tests.servers import Broker, Postgres

AT = "2026-03-13T10:00:00Z"
REPLY_AT = "2026-03-14T09:00:00Z"
WORKERS = 3
CHAOS_SECONDS = 60.0
KILL_EVERY = 4.0
ROUND_EVERY = 0.5
SESSION_TIMEOUT = 10.0  # aiokafka's session_timeout_ms: a killed worker's partitions move after it
QUIET_POINTS = {"postgres": 20.0, "broker": 40.0}  # seconds into the chaos


def round_messages(n: int) -> list[dict[str, Any]]:
    """Round n: three new tenants email a contact (a loop) and complete a second task (a notice);
    replies to the loops of round n-4 (notices when they resolve); now and then a repeated id."""
    messages: list[dict[str, Any]] = []
    for tenant in (f"r{n:03d}t{i}" for i in range(3)):
        contact = f"contact@{tenant}.example"
        messages += [
            command(f"{tenant}-c1", "task.create", AT, tenant, task_id="task_a", title=f"Meet {tenant}", contact=contact),
            command(f"{tenant}-c2", "action.record", AT, tenant, task_id="task_a", action="send_email", to=contact,
                    thread_id=f"thread-{tenant}"),
            command(f"{tenant}-c3", "task.create", AT, tenant, task_id="task_b", title="Invoice"),
            command(f"{tenant}-c4", "task.complete", AT, tenant, task_id="task_b", summary="paid"),
        ]
    if n >= 4:
        for i in range(2):  # two of round n-4's three tenants reply
            tenant = f"r{n - 4:03d}t{i}"
            messages.append(signal(f"{tenant}-s1", "email.received", REPLY_AT, tenant, sender=f"contact@{tenant}.example",
                                   thread_id=f"thread-{tenant}"))
    if n % 5 == 0:
        messages.append(messages[0])  # delivered twice: acknowledged and ignored
    return messages


def distinct(messages: list[dict[str, Any]]) -> int:
    return len({(m["tenant"], m["id"]) for m in messages})


class Supervisor:
    """Keeps WORKERS workers running; kills one every KILL_EVERY seconds, the leader's every other time,
    and records when each leader's worker was killed."""

    def __init__(self, loopline: ScaleDeployment) -> None:
        self.loopline = loopline
        self.live: list[Worker] = [loopline.start_worker() for _ in range(WORKERS)]
        self.leader_kills: list[float] = []  # when a leader's worker was killed with deliveries waiting
        self.takeovers: list[float] = []  # seconds from a leader's kill until another worker's leader holds the lock
        self.kills = 0
        self._random = random.Random(9)

    def replace_exited(self) -> None:
        for worker in list(self.live):
            if worker.process.poll() is not None:
                self.live.remove(worker)
                self.live.append(self.loopline.start_worker())

    def kill_one(self) -> None:
        leading = self.leading_worker()
        victim = leading if self.kills % 2 == 0 and leading is not None else self._random.choice(self.live)
        undelivered = victim is leading and self.undelivered()
        victim.kill()
        killed = time.monotonic()
        self.kills += 1
        self.replace_exited()
        if victim is leading:
            if undelivered:
                self.leader_kills.append(killed)
            while self.leading_worker() is None and time.monotonic() - killed < 2 * SESSION_TIMEOUT:
                time.sleep(0.05)
            self.takeovers.append(time.monotonic() - killed)

    def undelivered(self) -> bool:
        app = self.loopline.system.app
        return bool(app.process_recorder.select_notifications(
            start=app.position("delivery") + 1, limit=1, topics=DELIVERED_TOPICS
        ))

    def leading_worker(self) -> Worker | None:
        """The worker whose leader child holds the leader lock (its session names the worker, `host:pid`)."""
        holder = PostgresLeader(self.loopline.environ["LOOPLINE_EVENT_STORE"]).holder() or ""
        return next((worker for worker in self.live if holder.endswith(f":{worker.process.pid}")), None)

    def settle(self, inbound: int, timeout: float = 120.0) -> None:
        """Waits until every message is applied, projected, relayed and delivered, replacing exited workers."""
        wait_until_settled(self._status, inbound, timeout, self._worker_logs)

    def _status(self) -> dict[str, Any]:
        """The deployment's status once exited workers are replaced, or the error of a server still coming back."""
        self.replace_exited()
        try:
            return self.loopline.status()
        except Exception as error:  # noqa: BLE001 - a server still coming back: ask again
            self.loopline.reconnect()
            return {"error": repr(error)}  # unsettled: the settling poll asks again

    def _worker_logs(self) -> str:
        return "\n".join(f"--- worker {i} ({'alive' if w in self.live else 'gone'}):\n{notable(w.log())}"
                         for i, w in enumerate(self.loopline.workers))


def notable(log: str) -> str:
    """A worker's log without its per-batch reports: what it said about partitions, leadership and errors."""
    return "\n".join(line for line in log.splitlines() if not line.startswith("applied "))[-4000:]


class DeliveryWatch:
    """Notes, from a thread, each time the delivery position moves: how long delivery pauses after a kill."""

    def __init__(self, loopline: ScaleDeployment) -> None:
        self.url = loopline.environ["LOOPLINE_EVENT_STORE"]
        self.table = loopline.system.app.process_recorder.tracking_table_name  # type: ignore[attr-defined]
        self.moves: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        position = None
        while not self._stop.wait(0.05):
            try:
                with psycopg.connect(self.url, connect_timeout=2) as conn:
                    while not self._stop.wait(0.05):
                        row = conn.execute(
                            f'SELECT notification_id FROM "{self.table}" WHERE application_name = %s', ("delivery",)
                        ).fetchone()
                        if row is not None and row[0] != position:
                            position = row[0]
                            self.moves.append(time.monotonic())
            except psycopg.OperationalError:
                continue  # PostgreSQL restarting

    def resumed_after(self, moment: float) -> float | None:
        return next((t - moment for t in self.moves if t > moment), None)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def read_models(system: System) -> dict[str, list[dict[str, Any]]]:
    found = {}
    with system.projections.engine.connect() as conn:
        for table in (tasks, task_inbox, open_loops):
            rows = [dict(row._mapping) for row in conn.execute(select(table))]
            found[table.name] = sorted(rows, key=lambda row: json.dumps(row, sort_keys=True, default=str))
    return found


def outbox(home: Path) -> list[dict[str, Any]]:
    path = home / "outbox.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture
def chaos(postgres: Postgres, broker: Broker, tmp_path: Path) -> Iterator[ScaleDeployment]:
    if postgres.external or broker.external:
        pytest.skip("the chaos test restarts the servers the suite started itself")
    deployment = ScaleDeployment(postgres, broker, tmp_path / "scale")
    # A leader stuck on a restarted server is replaced within the settle wait, and prints where it was stuck.
    deployment.environ["LOOPLINE_LEADER_STALL_TIMEOUT"] = "45"
    yield deployment
    deployment.close()


@pytest.mark.slow
def test_workers_killed_every_few_seconds_and_servers_restarted_end_as_one_process_would(
    chaos: ScaleDeployment, postgres: Postgres, broker: Broker, tmp_path: Path
) -> None:
    loopline = chaos
    supervisor = Supervisor(loopline)
    watch = DeliveryWatch(loopline)
    published: list[dict[str, Any]] = []
    started = time.monotonic()
    paused = 0.0  # time spent at quiet points does not count as chaos
    next_kill = started + KILL_EVERY
    restarted: list[str] = []
    n = 0
    try:
        while time.monotonic() - started - paused < CHAOS_SECONDS:
            elapsed = time.monotonic() - started - paused
            for server, at in QUIET_POINTS.items():
                if elapsed >= at and server not in restarted:
                    quiet_from = time.monotonic()
                    supervisor.settle(distinct(published))
                    (postgres if server == "postgres" else broker).restart()
                    loopline.reconnect()
                    restarted.append(server)
                    paused += time.monotonic() - quiet_from
                    next_kill = time.monotonic() + KILL_EVERY
            messages = round_messages(n)
            loopline.publish(messages)
            published += messages
            n += 1
            if time.monotonic() >= next_kill:
                supervisor.kill_one()
                next_kill += KILL_EVERY
            supervisor.replace_exited()
            time.sleep(ROUND_EVERY)
        last = [signal(f"r{m:03d}t{i}-s1", "email.received", REPLY_AT, f"r{m:03d}t{i}",
                       sender=f"contact@r{m:03d}t{i}.example", thread_id=f"thread-r{m:03d}t{i}")
                for m in range(max(n - 4, 0), n) for i in range(2)]
        loopline.publish(last)
        published += last
        supervisor.settle(distinct(published))
    finally:
        watch.stop()

    reference = build_system(tmp_path / "reference")
    try:
        publish(reference, *published)
        expected = read_models(reference)
    finally:
        reference.close()
    assert restarted == ["postgres", "broker"]
    assert supervisor.kills >= 10 and len(supervisor.takeovers) >= 3, (supervisor.kills, supervisor.takeovers)
    actual = read_models(loopline.system)
    for table, rows in expected.items():
        extra = [row for row in actual[table] if row not in rows]
        missing = [row for row in rows if row not in actual[table]]
        assert not extra and not missing, f"{table}: {len(extra)} too many {extra[:2]}, {len(missing)} missing {missing[:2]}"
    notices = outbox(loopline.home)
    assert len(notices) == len({notice["key"] for notice in notices}), "a key was delivered twice"
    by_key = lambda notice: notice["key"]  # noqa: E731
    assert sorted(notices, key=by_key) == sorted(outbox(tmp_path / "reference"), key=by_key)
    assert all(takeover <= SESSION_TIMEOUT for takeover in supervisor.takeovers), supervisor.takeovers
    gaps = [watch.resumed_after(kill) for kill in supervisor.leader_kills]  # kills with deliveries waiting
    assert all(gap is not None and gap <= SESSION_TIMEOUT for gap in gaps), gaps
