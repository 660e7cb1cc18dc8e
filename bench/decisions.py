"""Model decisions per second against a local Messages API server that answers each call after 500 ms.

    python -m bench.decisions --deployment scale      # PostgreSQL + Kafka broker, one `loopline run` worker
    python -m bench.decisions --deployment embedded   # `loopline tick` in one process

`--tasks` churn_risk tasks without a first message (so each first touch is drafted by the model)
are stepped by one tick; the clock starts before the tick and stops when every task has its
recorded decision. One call takes `--delay` seconds, so the rate shows how many calls were in
flight: the target is ≥ 20 decisions/s at 0.5 s, i.e. at least ten at once. The raw limit is the
same server called directly by the same SDK with the same concurrency, measured in the same run,
and the ratio is printed beside it. Then: every task was emailed exactly once, the server was
called exactly once per decision, and (at scale) another tenant's messages kept being processed
while the model was slow: their latency is measured before and during the decisions.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

from eventsourcing.utils import get_topic

from bench.common import T0, close, durable_postgres, new_system, start_worker, stop
from loopline.domain.task import Task
from loopline.processors.messages import Message
from loopline.processors.followers.router import INBOUND_TOPIC
from loopline.runtime.system import System
from tests.messages_api import MessagesApi

CONCURRENCY = 16
"""The decision processor's default (`LOOPLINE_MODEL_CONCURRENCY`), used for the raw limit too."""
MODEL = "claude-bench-model"
SLOW_TENANTS = 30
"""Tenants the tasks are spread over: a tick steps at most 20 tasks of a tenant, so one tick asks for every decision."""


def count(system: System, event_class: type) -> int:
    return len(system.app.recorder.select_notifications(start=1, limit=10_000_000, topics=[get_topic(event_class)]))


def inbound(system: System) -> int:
    return len(system.app.recorder.select_notifications(start=1, limit=10_000_000, topics=[INBOUND_TOPIC]))


def load(tasks: int) -> list[Message]:
    """Tenants in `limited_auto` mode with room to send, and their tasks with no draft: the model writes touch 1."""
    configure = [
        Message("command", f"cfg-{name}", "tenant.configure", name, T0 - timedelta(hours=1),
                {"execution_mode": "limited_auto", "daily_send_limit": 100_000, "daily_task_limit": 100_000,
                 "active_task_limit": 100_000})
        for name in [*(f"slow{t}" for t in range(SLOW_TENANTS)), "other"]
    ]
    return configure + [
        Message("command", f"create{i}", "task.create", f"slow{i % SLOW_TENANTS}", T0, {
            "task_id": f"task{i}", "title": f"Win back member {i}", "task_type": "churn_risk",
            "contact": f"member{i}@example.com", "to_name": f"Member {i}", "confidence": 0.95,
        })
        for i in range(tasks)
    ]


def other_tenant_message(n: int) -> Message:
    """Work of a tenant the slow model has nothing to do with: a follow-through task."""
    return Message("command", f"other{n}", "task.create", "other", T0, {"task_id": f"other{n}", "title": f"Errand {n}"})


def latency(system: System, n: int, timeout: float = 60.0) -> float:
    """Seconds from publishing one message of the other tenant until a worker recorded it."""
    before = inbound(system)
    start = time.perf_counter()
    system.log.append([other_tenant_message(n)], "latency")
    while inbound(system) <= before:
        if time.perf_counter() - start > timeout:
            raise TimeoutError(f"the other tenant's message {n} was not processed within {timeout} s")
        time.sleep(0.01)
    return time.perf_counter() - start


def raw_call_rate(url: str, calls: int) -> float:
    """Calls/s of the same server through the same SDK with the decision processor's concurrency."""
    import anthropic

    client = anthropic.Anthropic(api_key="bench", base_url=url, max_retries=0)
    tool = {"name": "draft_message", "description": "bench", "input_schema": {"type": "object"}}

    def call(_: int) -> None:
        client.messages.create(
            model=MODEL, max_tokens=200, messages=[{"role": "user", "content": "bench"}], tools=[tool],
            tool_choice={"type": "tool", "name": "draft_message"},
        )

    start = time.perf_counter()
    with ThreadPoolExecutor(CONCURRENCY) as pool:
        list(pool.map(call, range(calls)))
    return calls / (time.perf_counter() - start)


def emails_per_task(home: Path) -> Counter[str]:
    path = home / "outbox.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    return Counter(line["task_id"] for line in lines if line["kind"] == "send_email")


def wait_for(condition, what: str, timeout: float = 600.0) -> None:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.05)


def check_exactly_once(system: System, api: MessagesApi, tasks: int) -> None:
    wait_for(lambda: sum(emails_per_task(system.settings.home).values()) >= tasks, "every first touch to be delivered")
    time.sleep(1.0)  # a repeat would be delivered within the next polls
    sent = emails_per_task(system.settings.home)
    assert sorted(sent) == sorted(f"task{i}" for i in range(tasks)), "some task was not emailed"
    assert set(sent.values()) == {1}, f"tasks emailed more than once: {[t for t, n in sent.items() if n > 1]}"
    assert count(system, Task.DecisionRecorded) == tasks
    calls = len([r for r in api.requests if r["path"] == "/v1/messages"])
    assert calls == tasks, f"{calls} model calls for {tasks} decisions"


def run_scale(tasks: int, delay: float) -> dict[str, float]:
    from tests.servers import Broker

    postgres, broker, api = durable_postgres(), Broker(), MessagesApi(delay=delay)
    database = postgres.new_database()
    environ = {
        "LOOPLINE_EVENT_STORE": database, "LOOPLINE_READ_MODEL": database, "LOOPLINE_KAFKA": broker.bootstrap,
        "LOOPLINE_KAFKA_TOPIC_PREFIX": f"bench{uuid.uuid4().hex[:6]}.", "LOOPLINE_KAFKA_PARTITIONS": "6",
        "ANTHROPIC_API_KEY": "sk-ant-bench", "ANTHROPIC_BASE_URL": api.url, "LOOPLINE_MODEL": MODEL,
    }
    system = new_system(**environ)
    worker = None
    try:
        worker = start_worker(system, environ)
        messages = load(tasks)
        system.log.append(messages, "load")
        wait_for(lambda: inbound(system) >= len(messages), "the tasks to be created")
        quiet = [latency(system, n) for n in range(20)]

        start = time.perf_counter()
        system.scheduler.tick(T0 + timedelta(minutes=1))  # `loopline tick` at scale: the host steps, the leader decides
        assert count(system, Task.DecisionRequested) == tasks, "one tick should ask for every first touch"
        busy, n = [], 20
        while count(system, Task.DecisionRecorded) < tasks:
            if time.perf_counter() - start > 300:
                raise TimeoutError(f"only {count(system, Task.DecisionRecorded)} of {tasks} decisions recorded")
            busy.append(latency(system, n))
            n += 1
            time.sleep(0.1)
        elapsed = time.perf_counter() - start
        in_flight = api.max_in_flight
        check_exactly_once(system, api, tasks)
        raw = raw_call_rate(api.url, tasks)
    finally:
        stop(worker, system, api, broker, postgres)
    return {
        "decisions_per_s": tasks / elapsed, "raw_calls_per_s": raw, "elapsed": elapsed, "in_flight": in_flight,
        "quiet_median": statistics.median(quiet), "busy_median": statistics.median(busy), "busy_max": max(busy),
        "busy_samples": len(busy),
    }


def run_embedded(tasks: int, delay: float) -> dict[str, float]:
    api = MessagesApi(delay=delay)
    # The SDK reads the address from the environment, as `loopline` run by a user does.
    os.environ.update({"ANTHROPIC_API_KEY": "sk-ant-bench", "ANTHROPIC_BASE_URL": api.url, "LOOPLINE_MODEL": MODEL})
    system = new_system(ANTHROPIC_API_KEY="sk-ant-bench", ANTHROPIC_BASE_URL=api.url, LOOPLINE_MODEL=MODEL)
    try:
        system.log.append(load(tasks), "load")
        system.drain()
        start = time.perf_counter()
        system.scheduler.tick(T0 + timedelta(minutes=1))
        assert count(system, Task.DecisionRequested) == tasks, "one tick should ask for every first touch"
        system.drain()
        elapsed = time.perf_counter() - start
        in_flight = api.max_in_flight
        check_exactly_once(system, api, tasks)
        raw = raw_call_rate(api.url, tasks)
    finally:
        close(system)
        api.stop()
    return {"decisions_per_s": tasks / elapsed, "raw_calls_per_s": raw, "elapsed": elapsed, "in_flight": in_flight}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deployment", choices=["embedded", "scale"], default="scale")
    parser.add_argument("--tasks", type=int, default=300)
    parser.add_argument("--delay", type=float, default=0.5, help="seconds the server takes to answer each call")
    args = parser.parse_args()
    run = run_embedded if args.deployment == "embedded" else run_scale
    result = run(args.tasks, args.delay)
    print(
        f"{args.deployment}: {result['decisions_per_s']:,.1f} decisions/s ({args.tasks} decisions in "
        f"{result['elapsed']:.1f} s, each call {args.delay} s, up to {result['in_flight']} calls in flight); "
        f"raw SDK calls {result['raw_calls_per_s']:,.1f}/s at {CONCURRENCY} in flight; "
        f"ratio {result['decisions_per_s'] / result['raw_calls_per_s']:.2f}; every task emailed exactly once"
    )
    if "busy_median" in result:
        print(
            f"another tenant's messages: recorded after {result['quiet_median'] * 1000:.0f} ms (median) with the model "
            f"idle, {result['busy_median'] * 1000:.0f} ms (median, max {result['busy_max'] * 1000:.0f} ms, "
            f"{result['busy_samples']} messages) while it was deciding"
        )


if __name__ == "__main__":
    main()
