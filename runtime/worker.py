"""`loopline run`: embedded, one process doing everything; at scale, a Kafka consumer in every worker and the
singleton duties in the leader. Either way the worker logs what it does as JSON lines (runtime/worker_log.py)
and writes a heartbeat row on every progress tick (adapters/heartbeats.py) for `loopline status`.

A worker is two processes, so consuming and the leader's duties (relay, delivery, projections,
scheduler tick) each get a core instead of sharing one interpreter: the parent consumes; a child
(runtime/leading.py) takes the leader lock when it is free and does the duties while it holds it.
The parent starts a new leader after a stall or a failure.

An unexpected failure, in the worker or its leader, is one logged line (`worker.failed`,
`leader.failed`) and a restart after a pause that grows while failures follow each other; a
failure the CLI can explain (bad settings, a server that does not answer) ends the worker.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass

from sqlalchemy.exc import OperationalError

from loopline.adapters.channels import ConsoleChannel
from loopline.adapters.clock import SystemClock
from loopline.adapters.heartbeats import Heartbeat, Heartbeats
from loopline.adapters.kafka_log import Topics
from loopline.adapters.kafka_worker import BatchReport, KafkaWorker
from loopline.runtime.leading import FAILED, STALLED, lead
from loopline.runtime.system import System
from loopline.runtime.worker_log import configure, event, messages_set_aside, one_line, out, print_delivered, worker_id

MAX_PAUSE = 10.0  # seconds, at most, between an unexpected failure and the restart
HEALTHY_AFTER = 60.0  # seconds of running after which a failure starts the pauses over from one second


class Backoff:
    """The pause before a restart: one second, doubling while failures follow each other closely."""

    def __init__(self) -> None:
        self.failures = 0
        self.started = time.monotonic()

    def restarted(self) -> None:
        self.started = time.monotonic()

    def failed(self) -> float:
        self.failures = self.failures + 1 if time.monotonic() - self.started < HEALTHY_AFTER else 1
        return min(2.0 ** (self.failures - 1), MAX_PAUSE)


def serve(
    open_system: Callable[[], AbstractContextManager[System]], expected: Callable[[BaseException], bool], *,
    interval: float, tick_every: float, progress_every: float, console: bool = False,
) -> None:
    """`loopline run` until stopped, on a system opened anew after each unexpected failure (one logged line,
    then a pause); a failure `expected` names is raised, for the CLI to report."""
    configure(worker_id())
    backoff = Backoff()
    stopping = threading.Event()
    while True:
        backoff.restarted()
        try:
            with open_system() as system:
                if system.is_scale:
                    run_scale(system, interval=interval, tick_every=tick_every, progress_every=progress_every,
                              console=console)
                else:
                    run_embedded(system, interval=interval, tick_every=tick_every, progress_every=progress_every,
                                 once=False, console=console)
            return
        except Exception as error:
            if expected(error):
                raise
            pause = backoff.failed()
            event("worker.failed", logging.ERROR, error=one_line(error), restart_in=pause)
        for signum in (signal.SIGINT, signal.SIGTERM):  # stopped while pausing: exit 0
            signal.signal(signum, lambda *_: stopping.set())
        if stopping.wait(pause):
            return


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
        event("worker.started", deployment="embedded", interval=interval, tick_every=tick_every,
              progress_every=progress_every)
        pulse = Pulse(system, worker_id(), "embedded", progress_every)
    clock = SystemClock()
    last_tick = float("-inf")
    stopping = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):  # stop between passes, and exit 0
        signal.signal(signum, lambda *_: stopping.set())
    while not stopping.is_set():
        with system.leader.writing():  # one pass at a time on this home; the lock is free while sleeping
            report = system.drain()
            messages_set_aside(report)
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
    if pulse is not None:  # stopped, not failed: a failed worker restarts under the same id and row
        pulse.stop()


def run_scale(system: System, *, interval: float, tick_every: float, progress_every: float, console: bool = False) -> None:
    worker = worker_id()
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
    pulse.stop()  # stopped, not failed: a failed worker restarts under the same id and row


async def _consume(
    system: System, leaders: list[multiprocessing.process.BaseProcess],
    start_leader: Callable[[], multiprocessing.process.BaseProcess], pulse: Pulse,
) -> None:
    stop = asyncio.Event()
    backoff = Backoff()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    assert system.settings.kafka is not None
    worker = KafkaWorker(system.bus, system.settings.kafka, Topics(system.settings.kafka_topic_prefix))

    def on_batch(report: BatchReport) -> None:
        pulse.counts.applied += len(report.outcomes)
        pulse.counts.duplicates += report.duplicates
        pulse.counts.dead_lettered += report.dead_lettered
        pulse.counts.batches += 1
        messages_set_aside(report)
        _report(report)

    consuming = asyncio.create_task(worker.run(stop, on_batch=on_batch))
    while not stop.is_set() and not consuming.done():
        if pulse.due():
            await asyncio.to_thread(pulse.beat, worker.partitions(), worker.lag())
        leader = leaders[-1]
        if not leader.is_alive():
            leader.join()
            if leader.exitcode not in (STALLED, FAILED):
                stop.set()
                await consuming
                raise RuntimeError(f"the leader process exited with code {leader.exitcode}")
            if leader.exitcode == FAILED:
                try:  # a pause, so a leader that cannot start does not fail in a tight loop
                    await asyncio.wait_for(stop.wait(), timeout=backoff.failed())
                except TimeoutError:
                    pass
                if stop.is_set():
                    break
            leaders.append(start_leader())
            backoff.restarted()
            ended = "stuck_pid" if leader.exitcode == STALLED else "failed_pid"
            event("leader.restarted", logging.WARNING, **{ended: leader.pid}, pid=leaders[-1].pid)
            continue
        try:
            await asyncio.wait_for(stop.wait(), timeout=min(1.0, pulse.every))
        except TimeoutError:
            pass
    stop.set()
    await consuming  # re-raises a crashed consumer, visibly


def _report(report: BatchReport) -> None:
    out.print(
        f"applied {len(report.outcomes)} ({len(report.rejected)} rejected, {len(report.parked)} parked), "
        f"{report.duplicates} duplicate(s), {report.dead_lettered} dead-lettered, {report.skipped} already done",
        highlight=False,
    )
