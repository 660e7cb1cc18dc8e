"""Messages per second through the HTTP edge, `POST /v1/messages`, against the same lines published directly.

    python -m bench.http_ingest [--deployment embedded] [--signals 5000] [--clients 4] [--loops 10000]

Two fresh embedded homes are seeded alike with open email loops, as `bench.signals` seeds them, one tenant per
client. On the first, `loopline serve`'s app runs under uvicorn on 127.0.0.1 and each client, with its tenant's key,
posts that tenant's replies (each resolves one loop) in bodies of 100 JSONL lines; a request answers once its lines
are applied and projected, so the clock stops at the last answer. On the second, the same lines go body by body
through `runtime.publishing` in-process, as serve's publisher calls it: the raw limit the HTTP edge adds to. Each home
first takes one unmeasured reply per tenant, so neither clock includes the first request's one-time costs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from contextlib import AbstractContextManager
import time

import httpx

from bench.common import close, load_open_loops, new_system
from bench.signals import replies
from loopline.adapters.api_keys import ApiKeys
from loopline.adapters.clock import SystemClock
from loopline.adapters.kafka_log import envelope
from loopline.processors.messages import Message
from loopline.runtime import publishing
from loopline.runtime.local_servers import serving_in_thread
from loopline.runtime.system import System
from loopline.web.app import ServeOptions, create_app

LINES_PER_BODY = 100


def bodies_by_tenant(messages: list[Message]) -> dict[str, list[bytes]]:
    """Each tenant's messages as JSONL bodies of up to 100 lines, in the order they were made."""
    lines: dict[str, list[bytes]] = {}
    for message in messages:
        lines.setdefault(message.tenant, []).append(json.dumps(envelope(message)).encode())
    return {tenant: [b"\n".join(own[i:i + LINES_PER_BODY]) + b"\n" for i in range(0, len(own), LINES_PER_BODY)]
            for tenant, own in lines.items()}


def seeded(loops: int, tenants: int) -> System:
    system = new_system()
    load_open_loops(system, loops, tenants=tenants)
    system.drain()
    return system


def served(system: System) -> AbstractContextManager[str]:
    """The app `loopline serve` runs, under uvicorn on a free port of 127.0.0.1 in a background thread."""
    return serving_in_thread(create_app(system, ServeOptions()))


async def post_all(url: str, keys: dict[str, str], bodies: dict[str, list[bytes]]) -> None:
    """One client per tenant, each posting its bodies one after the other; every line must take effect."""
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=httpx.Limits(max_connections=len(keys))) as client:
        async def one_client(tenant: str) -> None:
            headers = {"Authorization": f"Bearer {keys[tenant]}", "Content-Type": "application/x-ndjson"}
            for body in bodies[tenant]:
                answer = await client.post("/v1/messages", content=body, headers=headers)
                took_effect = [line for line in answer.json().get("accepted", []) if line["status"] == "took effect"]
                if answer.status_code != 202 or len(took_effect) != body.count(b"\n"):
                    raise RuntimeError(f"POST /v1/messages answered {answer.status_code}: {answer.text[:500]}")

        await asyncio.gather(*(one_client(tenant) for tenant in bodies))


def through_http(system: System, warm_up: dict[str, list[bytes]], bodies: dict[str, list[bytes]]) -> float:
    now = SystemClock().now()
    api_keys = ApiKeys(system.ledger_engine)
    keys = {tenant: api_keys.create(tenant=tenant, operator=False, label="bench", now=now).token for tenant in bodies}
    with served(system) as url:
        asyncio.run(post_all(url, keys, warm_up))
        start = time.perf_counter()
        asyncio.run(post_all(url, keys, bodies))
        return time.perf_counter() - start


def directly(system: System, warm_up: dict[str, list[bytes]], bodies: dict[str, list[bytes]]) -> float:
    """Body by body, as serve's publisher calls `runtime.publishing` (one request at a time, applied and projected)."""
    def publish_all(each: dict[str, list[bytes]]) -> None:
        for body in (body for own in each.values() for body in own):
            done = publishing.publish(system, publishing.parse_lines(body), "bench", serving=True)
            if done.rejected() or len(done.own_outcomes()) != body.count(b"\n"):
                raise RuntimeError(f"publishing refused lines: {done.rejected()[:3]}")

    publish_all(warm_up)
    start = time.perf_counter()
    publish_all(bodies)
    return time.perf_counter() - start


def run(loops: int, signal_count: int, clients: int) -> dict[str, float]:
    warm_up = bodies_by_tenant(replies(clients, clients, start=loops - clients))
    bodies = bodies_by_tenant(replies(signal_count, clients))
    elapsed = {}
    for name, path in (("http", through_http), ("direct", directly)):
        system = seeded(loops, clients)
        try:
            elapsed[name] = path(system, warm_up, bodies)
        finally:
            close(system)
    return {"http_per_s": signal_count / elapsed["http"], "direct_per_s": signal_count / elapsed["direct"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deployment", choices=["embedded"], default="embedded")
    parser.add_argument("--loops", type=int, default=10_000)
    parser.add_argument("--signals", type=int, default=5_000)
    parser.add_argument("--clients", type=int, default=4)
    args = parser.parse_args()
    if args.signals > args.loops - args.clients:
        parser.error("--signals must leave --clients of the --loops for the warm-up replies")
    result = run(args.loops, args.signals, args.clients)
    print(
        f"{args.deployment}: {result['http_per_s']:,.0f} messages/s through POST /v1/messages "
        f"({args.signals:,} messages, bodies of {LINES_PER_BODY} lines, {args.clients} clients); "
        f"the same lines through runtime/publishing directly: {result['direct_per_s']:,.0f} messages/s; "
        f"ratio {result['http_per_s'] / result['direct_per_s']:.2f}"
    )


if __name__ == "__main__":
    main()
