"""Property: any interleaving of registrations, signals, completions and ticks resolves exactly what it should.

A plain model says, for every loop, how it must end (which signal resolved it, or that it
expired or was closed with its task); the real system (embedded, SQLite) must agree exactly,
never resolve a loop twice, and never let one tenant's signal touch another tenant's loop.
"""

from __future__ import annotations

import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopline.domain.open_loop import OpenLoop
from loopline.domain.timeutil import format_time
from tests.conftest import build_system, command, publish, signal

T0 = datetime(2026, 3, 13, 10, 0, tzinfo=timezone.utc)
TENANTS = ("acme", "globex")
TASKS = ("t1", "t2")
SENDERS = ("ana@x.com", "ben@x.com")
THREADS = (None, "th1")


@dataclass
class Loop:
    tenant: str
    task: str
    sender: str
    thread: str | None
    deadline: datetime
    end: tuple[str, str | None] | None = None  # (resolved_by, signal id)


register = st.tuples(
    st.just("register"), st.sampled_from(TENANTS), st.sampled_from(TASKS), st.sampled_from(SENDERS),
    st.sampled_from(THREADS), st.integers(1, 6),
)
reply = st.tuples(st.just("signal"), st.sampled_from(TENANTS), st.sampled_from(SENDERS), st.sampled_from(THREADS))
complete = st.tuples(st.just("complete"), st.sampled_from(TENANTS), st.sampled_from(TASKS))
tick = st.tuples(st.just("tick"))
operations = st.lists(st.one_of(register, register, reply, reply, complete, tick), min_size=8, max_size=40)


def _matches(loop: Loop, sender: str, thread: str | None) -> bool:
    return loop.sender == sender.lower() and (loop.thread is None or loop.thread == thread)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operations, st.integers(1, 4))
def test_any_interleaving_resolves_every_matching_loop_once_and_only_in_its_tenant(ops, batch) -> None:
    home = Path(tempfile.mkdtemp(prefix="loopline-prop-"))  # one per example: tmp_path is one per test
    system = build_system(home)
    try:
        loops: dict[tuple[str, str], Loop] = {}
        closed_tasks: set[tuple[str, str]] = set()
        now = T0
        pending: list[dict] = [
            command(f"c-{tenant}-{task}", "task.create", format_time(T0), tenant=tenant, task_id=task, title=task)
            for tenant in TENANTS for task in TASKS
        ]

        def flush() -> None:
            if pending:
                publish(system, *pending)
                pending.clear()

        for n, op in enumerate(ops):
            now += timedelta(hours=1)
            at = format_time(now)
            if op[0] == "register":
                _, tenant, task, sender, thread, days = op
                watch = {"sender": sender, **({"thread_id": thread} if thread else {})}
                pending.append(command(
                    f"r{n}", "loop.register", at, tenant=tenant, task_id=task, loop_id=f"loop{n}", channel="email",
                    watch=watch, deadline=format_time(now + timedelta(hours=days * 8)), if_unresolved="notify_user",
                ))
                if (tenant, task) not in closed_tasks:  # a closed task refuses new loops
                    loops[(tenant, f"loop{n}")] = Loop(tenant, task, sender, thread, now + timedelta(hours=days * 8))
            elif op[0] == "signal":
                _, tenant, sender, thread = op
                ref = f"{tenant}-s{n}"
                pending.append(signal(ref, "email.received", at, tenant=tenant, sender=sender.upper(),
                                      **({"thread_id": thread} if thread else {})))
                for loop in loops.values():
                    if loop.end is None and loop.tenant == tenant and _matches(loop, sender, thread):
                        loop.end = ("signal_match", ref)
            elif op[0] == "complete":
                _, tenant, task = op
                pending.append(command(f"k{n}", "task.complete", at, tenant=tenant, task_id=task, summary="done"))
                if (tenant, task) not in closed_tasks:
                    closed_tasks.add((tenant, task))
                    for loop in loops.values():
                        if loop.end is None and (loop.tenant, loop.task) == (tenant, task):
                            loop.end = ("task_completed", None)
            else:
                flush()
                system.scheduler.tick(now)
                system.drain()
                for loop in loops.values():
                    if loop.end is None and loop.deadline <= now:
                        loop.end = ("expired", None)
            if len(pending) >= batch:
                flush()
        flush()

        resolutions = [
            event for event in (system.app.mapper.to_domain_event(n) for n in system.app.recorder.select_notifications(start=1, limit=100_000))
            if isinstance(event, OpenLoop.Resolved)
        ]
        assert not [i for i, count in Counter(e.originator_id for e in resolutions).items() if count > 1], "a loop resolved twice"
        for (tenant, loop_ref), expected in loops.items():
            from loopline.domain import ids

            actual = system.app.repository.get(ids.loop_id(tenant, loop_ref))
            assert isinstance(actual, OpenLoop)
            got = (actual.resolved_by, next((e.signal_ref for e in resolutions if e.originator_id == actual.id), None)) if actual.resolved else None
            assert got == expected.end, f"{tenant}/{loop_ref}: expected {expected.end}, got {got}"
            if got and got[1]:
                assert got[1].startswith(f"{tenant}-"), "a signal resolved another tenant's loop"
    finally:
        system.close()
        shutil.rmtree(home)
