"""`projections rebuild` throughput from the PostgreSQL event store.

    python -m bench.rebuild [--loops 50000]

Fills a PostgreSQL event store through the real write path (tasks, open loops, then replies
that resolve a third of them), rebuilds every read model from it as `loopline projections
rebuild` does (one process per core, each taking a share of the read models), and prints
events/s alongside the same server's raw COPY rate measured in the same run. Events/s counts
each stored event the read models follow once, however many read models project it.
"""

from __future__ import annotations

import argparse
import time

from bench.common import close, durable_postgres, load_open_loops, new_system, postgres_copy_rate
from bench.signals import replies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--loops", type=int, default=50_000)
    args = parser.parse_args()

    postgres = durable_postgres()
    database = postgres.new_database()
    system = new_system(LOOPLINE_EVENT_STORE=database, LOOPLINE_READ_MODEL=database)
    try:
        load_open_loops(system, args.loops)
        system.log.append(replies(args.loops // 3, 100), "bench")
        system.drain()
        events = system.app.recorder.max_notification_id()
        start = time.perf_counter()
        read = system.rebuild().events_read
        elapsed = time.perf_counter() - start
        copy_rate = postgres_copy_rate(database)
    finally:
        close(system)
        postgres.stop()  # and delete its data: runs add up
    print(
        f"rebuild: {read:,} of {events:,} stored events projected in {elapsed:.1f} s = {read / elapsed:,.0f} events/s; "
        f"raw COPY {copy_rate:,.0f} rows/s; ratio {read / elapsed / copy_rate:.3f}"
    )


if __name__ == "__main__":
    main()
