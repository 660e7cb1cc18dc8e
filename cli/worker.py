"""`loopline run` at scale: a Kafka consumer in every worker, the singleton duties in the leader."""

from __future__ import annotations

import asyncio
import signal
import time

from adapters.clock import SystemClock
from adapters.kafka_log import Topics
from adapters.kafka_worker import BatchReport, KafkaWorker
from cli.bootstrap import System
from cli.output import out


def run_scale(system: System, *, interval: float, tick_every: float) -> None:
    asyncio.run(_run(system, interval=interval, tick_every=tick_every))


async def _run(system: System, *, interval: float, tick_every: float) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    assert system.settings.kafka is not None
    worker = KafkaWorker(system.app, system.settings.kafka, Topics(system.settings.kafka_topic_prefix))
    consuming = asyncio.create_task(worker.run(stop, on_batch=_report))
    try:
        await _lead(system, stop, interval=interval, tick_every=tick_every, consuming=consuming)
    finally:
        stop.set()
        await consuming


async def _lead(system: System, stop: asyncio.Event, *, interval: float, tick_every: float, consuming: asyncio.Task) -> None:
    """While this worker holds the leader lock: relay, deliver, project, and tick at wall-clock time."""
    clock = SystemClock()
    last_tick = float("-inf")
    while not stop.is_set():
        if consuming.done():
            consuming.result()  # a crashed consumer takes the worker down, visibly
        if await asyncio.to_thread(system.leader.try_lead):
            await asyncio.to_thread(system.drain)
            if tick_every > 0 and time.monotonic() - last_tick >= tick_every:
                report = await asyncio.to_thread(system.tick, clock.now())
                last_tick = time.monotonic()
                for action in report.actions:
                    out.print(action, highlight=False)
        try:
            await asyncio.wait_for(stop.wait(), timeout=interval)
        except TimeoutError:
            pass


def _report(report: BatchReport) -> None:
    rejected = sum(not outcome.accepted for outcome in report.applied)
    out.print(
        f"applied {len(report.applied)} ({rejected} rejected), {report.duplicates} duplicate(s), "
        f"{report.dead_lettered} dead-lettered, {report.skipped} already done",
        highlight=False,
    )
