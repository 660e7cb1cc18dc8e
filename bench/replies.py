"""Replies per second evaluated by the offline policy, end to end (embedded):
publish → match the reply loop → decision requested → evaluated → its effects → projected.

    python -m bench.replies [--tasks 2000] [--tenants 100]

`--tasks` churn_risk tasks (in `auto` mode, each with its first message given at creation, so
loading asks no model) are sent their first touch by one tick, which opens their reply loops. The
clock starts when the replies are published, one per task with texts that lead to each kind of
evaluation, and stops when every reply has its recorded decision (a STOP: its suppression) and every read model caught up.
The raw batched insert rate of SQLite on the same disk is measured in the same run, and the ratio
printed beside it, as in `bench.signals`.
"""

from __future__ import annotations

import argparse
import time
from datetime import timedelta

from eventsourcing.utils import get_topic

from bench.common import T0, close, new_system, sqlite_raw_insert_rate
from loopline.domain.send_ledger import ContactSends
from loopline.domain.task import Task
from loopline.processors.messages import Message
from loopline.runtime.system import System

REPLY_TEXTS = (
    "Yes! I'll be there Monday for the 6pm class.",
    "Maybe, what are the class times this week?",
    "Please stop emailing me.",
    "Thanks, I've been busy with work.",
)


def count(system: System, event_class: type) -> int:
    return len(system.app.recorder.select_notifications(start=1, limit=10_000_000, topics=[get_topic(event_class)]))


def acting_tasks(count_: int, tenants: int) -> list[Message]:
    configure = [
        Message("command", f"cfg{t}", "tenant.configure", f"tenant{t}", T0 - timedelta(hours=1),
                {"execution_mode": "limited_auto", "daily_send_limit": 100_000, "daily_task_limit": 100_000,
                 "active_task_limit": 100_000})
        for t in range(tenants)
    ]
    tasks = [
        Message("command", f"create{i}", "task.create", f"tenant{i % tenants}", T0, {
            "task_id": f"task{i}", "title": f"Win back member {i}", "task_type": "churn_risk",
            "contact": f"member{i}@example.com", "to_name": f"Member {i}", "confidence": 0.95,
            "draft": {"subject": "We miss you", "body": "Hi, it has been a while. Come to a class this week?"},
        })
        for i in range(count_)
    ]
    return configure + tasks


def replies(count_: int, tenants: int) -> list[Message]:
    at = T0 + timedelta(hours=2)
    return [
        Message("signal", f"reply{i}", "email.received", f"tenant{i % tenants}", at, {
            "sender": f"member{i}@example.com", "subject": "Re: We miss you", "body": REPLY_TEXTS[i % len(REPLY_TEXTS)],
        })
        for i in range(count_)
    ]


def first_touches(system: System, tasks: int) -> None:
    """Ticks a minute at a time until every task's first touch went out (a tick steps a bounded number per tenant)."""
    now = T0
    while count(system, Task.TouchSent) < tasks:
        now += timedelta(minutes=1)
        system.scheduler.tick(now)
        system.drain()
        if now > T0 + timedelta(hours=1):
            raise RuntimeError(f"only {count(system, Task.TouchSent)} of {tasks} first touches went out")


def run(tasks: int, tenants: int) -> dict[str, float]:
    system = new_system()
    try:
        system.log.append(acting_tasks(tasks, tenants), "load")
        system.drain()
        first_touches(system, tasks)
        decided_before = count(system, Task.DecisionRecorded)
        start = time.perf_counter()
        system.log.append(replies(tasks, tenants), "bench")
        system.drain()
        elapsed = time.perf_counter() - start
        # A STOP is handled by the opt-out rule (the contact suppressed, the task closed), never by the model.
        evaluated = count(system, Task.DecisionRecorded) - decided_before + count(system, ContactSends.Suppressed)
        if evaluated != tasks:
            raise RuntimeError(f"{evaluated} of {tasks} replies were evaluated")
        raw = sqlite_raw_insert_rate(system.settings.home / "raw.db")
    finally:
        close(system)
    return {"replies_per_s": tasks / elapsed, "raw_inserts_per_s": raw, "elapsed": elapsed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=2_000)
    parser.add_argument("--tenants", type=int, default=100)
    args = parser.parse_args()
    result = run(args.tasks, args.tenants)
    print(
        f"embedded: {result['replies_per_s']:,.0f} replies/s evaluated end to end by the offline policy "
        f"({args.tasks:,} replies in {result['elapsed']:.1f} s, {args.tenants} tenants); "
        f"raw batched inserts {result['raw_inserts_per_s']:,.0f} rows/s; "
        f"ratio {result['replies_per_s'] / result['raw_inserts_per_s']:.4f}"
    )


if __name__ == "__main__":
    main()
