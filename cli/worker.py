"""`loopline run` at scale: a Kafka consumer in every worker, the singleton duties in the leader.

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
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from loopline.adapters.channels import ConsoleChannel
from loopline.adapters.clock import SystemClock
from loopline.adapters.config import Settings
from loopline.adapters.kafka_log import Topics
from loopline.adapters.kafka_worker import BatchReport, KafkaWorker
from loopline.cli.bootstrap import System, build
from loopline.cli.output import out

STALLED = 75  # the exit code of a leader its watchdog found stuck: the parent starts a new one
ORPHANED = 76  # the exit code of a leader whose parent is gone
PR_SET_PDEATHSIG = 1
WATCH_EVERY = 0.5  # seconds between the watchdog's checks


def run_scale(system: System, *, interval: float, tick_every: float, console: bool = False) -> None:
    def start_leader() -> multiprocessing.process.BaseProcess:
        leader = multiprocessing.get_context("spawn").Process(
            target=lead, args=(system.settings, interval, tick_every, os.getpid(), console), name="loopline-leader",
            daemon=True,
        )
        leader.start()
        return leader

    leaders = [start_leader()]
    try:
        asyncio.run(_consume(system, leaders, start_leader))
    finally:
        leaders[-1].terminate()
        leaders[-1].join(timeout=10)


async def _consume(
    system: System, leaders: list[multiprocessing.process.BaseProcess],
    start_leader: Callable[[], multiprocessing.process.BaseProcess],
) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    assert system.settings.kafka is not None
    worker = KafkaWorker(system.app, system.settings.kafka, Topics(system.settings.kafka_topic_prefix))
    consuming = asyncio.create_task(worker.run(stop, on_batch=_report))
    while not stop.is_set() and not consuming.done():
        leader = leaders[-1]
        if not leader.is_alive():
            leader.join()
            if leader.exitcode == STALLED:
                out.print(f"the leader process {leader.pid} was stuck and exited; starting a new one", highlight=False)
                leaders.append(start_leader())
                continue
            stop.set()
            await consuming
            raise RuntimeError(f"the leader process exited with code {leader.exitcode}; restart the worker")
        try:
            await asyncio.wait_for(stop.wait(), timeout=1.0)
        except TimeoutError:
            pass
    stop.set()
    await consuming  # re-raises a crashed consumer, visibly


def lead(settings: Settings, interval: float, tick_every: float, parent: int, console: bool = False) -> None:
    """While this process holds the leader lock: relay, deliver, project, and tick at wall-clock time."""
    die_with(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when the worker stops
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
    if console:
        system.delivery.add_channel(ConsoleChannel(print_delivered))
    hang = os.environ.get("LOOPLINE_TEST_LEADER_HANG")  # test-only: see hang_once
    clock = SystemClock()
    last_tick = float("-inf")
    leading = False
    try:
        while True:
            leads = system.leader.try_lead()
            if leads and not leading:
                out.print(f"leader process {os.getpid()} holds the leader lock", highlight=False)
            leading = leads
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
            time.sleep(interval)
    finally:
        system.close()


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
                print(f"leader process {os.getpid()} made no progress for {stalled:.0f} s: exiting, which releases "
                      "the leader lock; where it was stuck:", file=sys.stderr, flush=True)
                faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
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
