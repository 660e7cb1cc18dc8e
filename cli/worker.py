"""`loopline run` at scale: a Kafka consumer in every worker, the singleton duties in the leader.

A worker is two processes, so consuming and the leader's duties (relay, delivery,
projections, scheduler tick) each get a core instead of sharing one interpreter: the parent
consumes; a child takes the leader lock when it is free and does the duties while it holds
it. Either ends the other: the child exits when its parent is gone (a SIGKILLed worker
leaves no orphan holding the lock), and the parent stops when the child dies.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import time

from loopline.adapters.channels import ConsoleChannel
from loopline.adapters.clock import SystemClock
from loopline.adapters.config import Settings
from loopline.adapters.kafka_log import Topics
from loopline.adapters.kafka_worker import BatchReport, KafkaWorker
from loopline.cli.bootstrap import System, build
from loopline.cli.output import out


def run_scale(system: System, *, interval: float, tick_every: float, console: bool = False) -> None:
    leader = multiprocessing.get_context("spawn").Process(
        target=lead, args=(system.settings, interval, tick_every, os.getpid(), console), name="loopline-leader",
        daemon=True,
    )
    leader.start()
    try:
        asyncio.run(_consume(system, leader))
    finally:
        leader.terminate()
        leader.join(timeout=10)


async def _consume(system: System, leader: multiprocessing.process.BaseProcess) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    assert system.settings.kafka is not None
    worker = KafkaWorker(system.app, system.settings.kafka, Topics(system.settings.kafka_topic_prefix))
    consuming = asyncio.create_task(worker.run(stop, on_batch=_report))
    while not stop.is_set() and not consuming.done():
        if not leader.is_alive():
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
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when the worker stops
    system = build(settings)
    if console:
        system.delivery.add_channel(ConsoleChannel(print_delivered))
    clock = SystemClock()
    last_tick = float("-inf")
    try:
        while os.getppid() == parent:
            if system.leader.try_lead():
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
