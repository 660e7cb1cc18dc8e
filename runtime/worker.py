"""`loopline run`: embedded, one process doing everything; at scale, a Kafka consumer in every worker and the
singleton duties in the leader. Either way the worker logs what it does as JSON lines (runtime/worker_log.py)
and writes a heartbeat row on every progress tick (adapters/heartbeats.py) for `loopline status`.

A worker is two processes, so consuming and the leader's duties (relay, delivery, projections,
scheduler tick) each get a core instead of sharing one interpreter: the parent consumes; a child
takes the leader lock when it is free and does the duties while it holds it.

The child must never outlive its parent nor hold the lock while stuck: the kernel kills it when
its parent dies (PR_SET_PDEATHSIG on Linux), even inside a blocked call, and a watchdog thread ends
it when its parent is gone or its main loop has made no progress for `leader_stall_timeout`
seconds. Ending the process ends its PostgreSQL session, and the advisory lock with it, so
another worker takes over. The parent starts a new leader after a stall and stops on any other
exit of the child.
"""

from __future__ import annotations

import asyncio
import ctypes
import faulthandler
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from sqlalchemy.exc import OperationalError

from loopline.adapters.channels import ConsoleChannel
from loopline.adapters.clock import SystemClock
from loopline.adapters.config import Settings
from loopline.adapters.heartbeats import Heartbeat, Heartbeats
from loopline.adapters.kafka_log import Topics
from loopline.adapters.kafka_worker import BatchReport, KafkaWorker
from loopline.adapters.leader import PostgresLeader
from loopline.runtime.bootstrap import build
from loopline.runtime.system import System
from loopline.runtime.worker_log import configure, event, worker_id

STALLED = 75  # the exit code of a leader its watchdog found stuck: the parent starts a new one
ORPHANED = 76  # the exit code of a leader whose parent is gone
PR_SET_PDEATHSIG = 1
WATCH_EVERY = 0.5  # seconds between the watchdog's checks
out = Console(markup=False)  # what the worker did, on standard output, printed as the CLI prints


@dataclass
class Counts:
    """What this worker has done since it started, for its progress lines and heartbeat."""

    applied: int = 0
    duplicates: int = 0
    dead_lettered: int = 0
    batches: int = 0


class Pulse:
    """The periodic progress line and heartbeat row; cheap enough to run every second (one row written)."""

    def __init__(self, system: System, worker: str, deployment: str, every: float) -> None:
        self.heartbeats = Heartbeats(system.ledger_engine)
        self.worker = worker
        self.deployment = deployment
        self.every = every
        self.clock = SystemClock()
        self.started_at = self.clock.now()
        self.last = float("-inf")
        self.counts = Counts()

    def due(self) -> bool:
        return time.monotonic() - self.last >= self.every

    def beat(self, partitions: list[str], lag: int | None) -> None:
        self.last = time.monotonic()
        event("progress", **self.counts.__dict__, partitions=partitions, lag=lag)
        host, pid = self.worker.rsplit(":", 1)
        try:
            self.heartbeats.beat(Heartbeat(
                self.worker, host, int(pid), self.deployment, partitions, self.counts.applied, lag, self.every,
                self.started_at, self.clock.now(),
            ))
        except OperationalError as error:  # the worker goes on; the next tick tries again
            event("heartbeat.failed", logging.WARNING, error=str(error).splitlines()[0])

    def stop(self) -> None:
        """A cleanly stopped worker is gone, not silent."""
        try:
            self.heartbeats.forget(self.worker)
        except OperationalError as error:
            event("heartbeat.failed", logging.WARNING, error=str(error).splitlines()[0])
        event("worker.stopped", **self.counts.__dict__)


def run_embedded(system: System, *, interval: float, tick_every: float, progress_every: float, once: bool,
                 console: bool = False) -> None:
    """Drains and ticks in passes, each holding the home lock; logs and beats unless it runs `--once`."""
    if console:
        system.delivery.add_channel(ConsoleChannel(print_delivered))
    pulse: Pulse | None = None
    if not once:
        worker = worker_id()
        configure(worker)
        event("worker.started", deployment="embedded", interval=interval, tick_every=tick_every,
              progress_every=progress_every)
        pulse = Pulse(system, worker, "embedded", progress_every)
    clock = SystemClock()
    last_tick = float("-inf")
    stopping = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):  # stop between passes, and exit 0
        signal.signal(signum, lambda *_: stopping.set())
    try:
        while not stopping.is_set():
            with system.leader.writing():  # one pass at a time on this home; the lock is free while sleeping
                report = system.drain()
                if report.outcomes:
                    out.print(f"processed {len(report.outcomes)} message(s), {len(report.rejected)} rejected")
                if (tick_every > 0 and time.monotonic() - last_tick >= tick_every) or once:
                    for action in system.tick(clock.now()).actions:
                        out.print(action, highlight=False)
                    last_tick = time.monotonic()
                if pulse is not None:
                    pulse.counts.applied += len(report.outcomes)
                    pulse.counts.batches += bool(report.outcomes)
                    if pulse.due():
                        pulse.beat(["embedded log"], sum(row["pending"] for row in system.input_lag()))
            if once:
                return
            stopping.wait(interval)
    finally:
        if pulse is not None:
            pulse.stop()


def run_scale(system: System, *, interval: float, tick_every: float, progress_every: float, console: bool = False) -> None:
    worker = worker_id()
    configure(worker)
    event("worker.started", deployment="scale", interval=interval, tick_every=tick_every, progress_every=progress_every)
    pulse = Pulse(system, worker, "scale", progress_every)

    def start_leader() -> multiprocessing.process.BaseProcess:
        leader = multiprocessing.get_context("spawn").Process(
            target=lead, args=(system.settings, interval, tick_every, os.getpid(), worker, console),
            name="loopline-leader", daemon=True,
        )
        leader.start()
        return leader

    leaders = [start_leader()]
    try:
        asyncio.run(_consume(system, leaders, start_leader, pulse))
    finally:
        leaders[-1].terminate()  # it stops after its current pass, releasing the lead
        leaders[-1].join(timeout=10)
        pulse.stop()


async def _consume(
    system: System, leaders: list[multiprocessing.process.BaseProcess],
    start_leader: Callable[[], multiprocessing.process.BaseProcess], pulse: Pulse,
) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    assert system.settings.kafka is not None
    worker = KafkaWorker(system.app, system.settings.kafka, Topics(system.settings.kafka_topic_prefix))

    def on_batch(report: BatchReport) -> None:
        pulse.counts.applied += len(report.applied)
        pulse.counts.duplicates += report.duplicates
        pulse.counts.dead_lettered += report.dead_lettered
        pulse.counts.batches += 1
        _report(report)

    consuming = asyncio.create_task(worker.run(stop, on_batch=on_batch))
    while not stop.is_set() and not consuming.done():
        if pulse.due():
            await asyncio.to_thread(pulse.beat, worker.partitions(), worker.lag())
        leader = leaders[-1]
        if not leader.is_alive():
            leader.join()
            if leader.exitcode == STALLED:
                leaders.append(start_leader())
                event("leader.restarted", logging.WARNING, stuck_pid=leader.pid, pid=leaders[-1].pid)
                continue
            stop.set()
            await consuming
            raise RuntimeError(f"the leader process exited with code {leader.exitcode}; restart the worker")
        try:
            await asyncio.wait_for(stop.wait(), timeout=min(1.0, pulse.every))
        except TimeoutError:
            pass
    stop.set()
    await consuming  # re-raises a crashed consumer, visibly


def lead(settings: Settings, interval: float, tick_every: float, parent: int, worker: str, console: bool = False) -> None:
    """While this process holds the leader lock: relay, deliver, project, and tick at wall-clock time."""
    die_with(parent)
    configure(worker)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when the worker stops
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())  # the parent stopping: finish the pass, then let go
    system: System | None = None
    built_at = 0.0

    def last_progress() -> float:
        """The main loop checks the lock before every batch of every duty (`System.drain`) and every pass;
        building the system is bounded by the connection timeouts instead."""
        return max(built_at, system.leader.checked_at) if system is not None else time.monotonic()

    watch(parent, last_progress, settings.leader_stall_timeout)
    built = build(settings)
    built_at = time.monotonic()
    system = built  # only now does the watchdog look at the leader's checks
    if isinstance(system.leader, PostgresLeader):
        system.leader.lead_as(worker)
    if console:
        system.delivery.add_channel(ConsoleChannel(print_delivered))
    hang = os.environ.get("LOOPLINE_TEST_LEADER_HANG")  # test-only: see hang_once
    clock = SystemClock()
    last_tick = float("-inf")
    leading = False
    holds_lead = threading.Event()
    threading.Thread(target=decide_while_leading, args=(system, holds_lead, stopping, interval),
                     name="loopline-agent", daemon=True).start()
    try:
        while not stopping.is_set():
            leads = system.leader.try_lead()
            if leads != leading:
                event("lead.taken" if leads else "lead.lost", logging.INFO if leads else logging.WARNING)
            leading = leads
            (holds_lead.set if leads else holds_lead.clear)()
            if leads:
                if hang:
                    hang_once(Path(hang))
                report = system.drain(deliver=True)
                if tick_every > 0 and time.monotonic() - last_tick >= tick_every:
                    for action in system.tick(clock.now()).actions:
                        out.print(action, highlight=False)
                    last_tick = time.monotonic()
                if report.relayed or report.projected or report.delivered:
                    continue  # more may be waiting: no pause while catching up
            stopping.wait(interval)
    finally:
        system.close()  # ends the lock's session: another worker may lead
        if leading:
            event("lead.released")


def decide_while_leading(system: System, holds_lead: threading.Event, stopping: threading.Event,
                         interval: float) -> None:
    """The leader's agent: model decisions in a thread of their own, so a slow model never holds up delivery,
    relaying or projections. Its position and the tasks' versions keep every request answered once."""
    assert system.agent is not None
    while not stopping.is_set():
        if not holds_lead.is_set():
            holds_lead.wait(interval)
            continue
        try:
            answered = system.agent.run_once()
            for done in answered.done:
                out.print(done, highlight=False)
            if answered.read:
                continue
        except Exception as error:  # noqa: BLE001 - the next pass retries; the agent's steps park what is poison
            event("agent.failed", logging.ERROR, error=f"{type(error).__name__}: {error}")
        stopping.wait(interval)


def die_with(parent: int) -> None:
    """Has the kernel kill this process when its parent dies, whatever it is blocked in (Linux only;
    elsewhere the watchdog's parent check does it within `WATCH_EVERY`)."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the death signal was armed
        os._exit(ORPHANED)


def watch(parent: int, last_progress: Callable[[], float], stall_timeout: float) -> None:
    """A daemon thread that ends the process when its parent is gone or its main loop is stuck."""

    def check() -> None:
        while True:
            time.sleep(WATCH_EVERY)
            if os.getppid() != parent:
                os._exit(ORPHANED)
            stalled = time.monotonic() - last_progress()
            if stalled > stall_timeout:
                event("leader.stalled", logging.ERROR, stalled_seconds=round(stalled),
                      why="no progress: exiting, which releases the leader lock")
                faulthandler.dump_traceback(file=sys.stderr, all_threads=True)  # where it was stuck
                os._exit(STALLED)

    threading.Thread(target=check, name="loopline-leader-watchdog", daemon=True).start()


def hang_once(flag: Path) -> None:
    """Test-only (LOOPLINE_TEST_LEADER_HANG): the first leader to get here blocks for good, as in a call
    that never returns; it writes its pid to `flag` so the test knows which process hangs."""
    try:
        fd = os.open(flag, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return
    os.write(fd, str(os.getpid()).encode())
    os.close(fd)
    threading.Event().wait()


def print_delivered(line: str) -> None:
    out.print(line, highlight=False, markup=False)


def _report(report: BatchReport) -> None:
    rejected = sum(not (outcome.accepted or outcome.parked) for outcome in report.applied)
    parked = sum(outcome.parked for outcome in report.applied)
    out.print(
        f"applied {len(report.applied)} ({rejected} rejected, {parked} parked), {report.duplicates} duplicate(s), "
        f"{report.dead_lettered} dead-lettered, {report.skipped} already done",
        highlight=False,
    )
