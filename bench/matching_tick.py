"""Matching and scheduling must follow the work, not the number of open loops.

    python -m bench.matching_tick [--small 10000] [--large 1000000] [--due 10000] [--signals 300]

For each size it registers that many open loops through the real write path (embedded SQLite
store), `--due` of them already past their deadline, then measures:
  * per-signal matching (load index → match → resolve → save), over signals of all six
    channels, matching and not (multi-channel traffic), median and p95, with the process's
    aggregate cache emptied before each signal so every load goes to the store;
  * one `tick` that acts on the due loops.
It prints both sizes and the large/small ratios (the target is ≤ 1.5 for both).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import Counter
from datetime import timedelta

from bench.common import T0, close, load_open_loops, new_system
from loopline.domain import ids
from loopline.domain.task import Task
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.loops_and_timers import register_loop
from loopline.processors.messages import Message
from loopline.processors.handlers.signals import handle_signal

DUE_AT = T0 + timedelta(days=1)
NOW = DUE_AT + timedelta(hours=2)


def deadline(i: int, due: int):
    """The first `due` loops are past their deadline at NOW; the rest fall due days later."""
    if i < due:
        return DUE_AT + timedelta(seconds=i % 3600)  # due within one hour
    return T0 + timedelta(days=10) + timedelta(seconds=(i - due) * 2)  # the rest later, in time order


EXTRA_LOOPS = 200  # per channel other than email, on each tenant's first task

WATCHES = {
    "webhook": lambda h: {"source": "docusign", "trigger_name": "signed", "match_fields": {"document_id": f"doc{h}"}},
    "slack": lambda h: {"slack_user_id": f"U{h}", "channel_id": f"D{h}", "after_ts": "1710000000.000"},
    "github": lambda h: {"event_type": "pull_request_review", "repo": "org/repo", "resource_id": f"pr_{h}"},
    "calendar": lambda h: {"event_type": "invite_accepted", "event_id": f"cal_{h}"},
    "linear": lambda h: {"event_type": "issue_status_changed", "issue_id": f"LIN-{h}", "target_status": "Done"},
}
SIGNALS = {
    "webhook": ("webhook.received", lambda h: {"source": "docusign", "trigger_name": "signed", "payload": {"document_id": f"doc{h}"}}),
    "slack": ("slack.message", lambda h: {"slack_user_id": f"U{h}", "channel_id": f"D{h}", "ts": "1710000100.000"}),
    "github": ("github.event", lambda h: {"event_type": "pull_request_review", "repo": "org/repo", "resource_id": f"pr_{h}"}),
    "calendar": ("calendar.event", lambda h: {"event_type": "invite_accepted", "event_id": f"cal_{h}"}),
    "linear": ("linear.event", lambda h: {"event_type": "issue_status_changed", "issue_id": f"LIN-{h}", "status": "Done"}),
}


def add_channel_loops(system) -> None:
    """EXTRA_LOOPS loops on each of the five other channels, spread over the tenants."""
    uow = UnitOfWork(system.app)
    for channel, watch in WATCHES.items():
        for h in range(EXTRA_LOOPS):
            tenant = f"tenant{h % 100}"
            task = uow.get(ids.task_id(tenant, "task0"), Task)
            register_loop(
                uow, task, loop_ref=f"{channel}{h}", channel=channel, watch=watch(h),
                deadline=T0 + timedelta(days=40), if_unresolved="notify_user", description="bench", origin="explicit", now=T0,
            )
            uow.end_step()
    uow.commit()


def signals(count: int, due: int, size: int) -> list[Message]:
    """Multi-channel traffic: email replies spread over all email loops, a signal of each other
    channel (each matching one loop), and emails nobody waits for."""
    kinds = ["email", *SIGNALS, "stranger"]
    out = []
    for n in range(count):
        kind = kinds[n % len(kinds)]
        if kind == "email":
            i = (n * 7919) % size
            out.append(Message("signal", f"e{n}", "email.received", f"tenant{i % 100}", NOW, {"sender": f"contact{i}@example.com"}))
        elif kind == "stranger":
            out.append(Message("signal", f"x{n}", "email.received", f"tenant{n % 100}", NOW, {"sender": f"stranger{n}@example.com"}))
        else:
            h = (n // len(kinds)) % EXTRA_LOOPS
            signal_type, data = SIGNALS[kind]
            out.append(Message("signal", f"{kind}{n}", signal_type, f"tenant{h % 100}", NOW, data(h)))
    return out


def measure(size: int, due: int, signal_count: int) -> dict[str, float]:
    system = new_system()
    try:
        load_open_loops(system, size, deadline_of=lambda i: deadline(i, due), label=f"loops (size {size:,})")
        add_channel_loops(system)
        system.app.recorder.max_notification_id()
        timings, resolved = [], Counter()
        for message in signals(signal_count, due, size):
            system.app.cache.clear()  # measure the store, not this process's cache of recently used aggregates
            start = time.perf_counter()
            uow = UnitOfWork(system.app)
            outcome = handle_signal(uow, message)
            uow.commit()
            timings.append(time.perf_counter() - start)
            resolved[message.type] += outcome.startswith("resolved")
        start = time.perf_counter()
        report = system.scheduler.tick(NOW)
        tick_seconds = time.perf_counter() - start
        assert len(report.actions) >= due - signal_count, f"tick acted on {len(report.actions)} of {due} due loops"
        return {
            "match_median_ms": statistics.median(timings) * 1000,
            "match_p95_ms": statistics.quantiles(timings, n=20)[18] * 1000,
            "tick_seconds": tick_seconds,
            "tick_actions": len(report.actions),
            "resolved": dict(resolved),
        }
    finally:
        close(system)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", type=int, default=10_000)
    parser.add_argument("--large", type=int, default=1_000_000)
    parser.add_argument("--due", type=int, default=10_000)
    parser.add_argument("--signals", type=int, default=700)
    args = parser.parse_args()
    results = {size: measure(size, min(args.due, size), args.signals) for size in (args.small, args.large)}
    small, large = results[args.small], results[args.large]
    for size, result in results.items():
        print(f"{size:>9,} open loops: match median {result['match_median_ms']:.2f} ms, p95 {result['match_p95_ms']:.2f} ms; "
              f"tick {result['tick_seconds']:.2f} s for {result['tick_actions']:,} actions")
        print(f"{'':>9}  signals that resolved a loop: "
              + ", ".join(f"{kind} {count}" for kind, count in sorted(result["resolved"].items())))
    per_action = {size: r["tick_seconds"] / r["tick_actions"] for size, r in results.items()}
    print(f"ratio large/small: matching (median) {large['match_median_ms'] / small['match_median_ms']:.2f}, "
          f"tick {large['tick_seconds'] / small['tick_seconds']:.2f} "
          f"(per action {per_action[args.large] / per_action[args.small]:.2f})")


if __name__ == "__main__":
    main()
