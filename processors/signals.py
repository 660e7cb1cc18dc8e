"""Signal matching: a signal resolves every matching open loop of its tenant registered no later than
the signal happened (seed 000, multi-task fan-out), and is kept for loops registered later."""

from __future__ import annotations

from collections import defaultdict

from loopline.domain import ids
from loopline.domain.matching import CHANNEL_BY_SIGNAL
from loopline.domain.open_loop import OpenLoop
from loopline.processors.application import UnitOfWork
from loopline.processors.loops import load_task, proactive_run, resolve_by_signal, watch_index
from loopline.processors.messages import Message


def handle_signal(uow: UnitOfWork, msg: Message) -> str:
    if msg.type == "user.seen":
        proactive_run(uow, msg.tenant, msg.at)
        return "tenant activity noted"
    rule = CHANNEL_BY_SIGNAL.get(msg.type)
    if rule is None:
        return f"{msg.type} recorded; it resolves no loops"
    key = rule.signal_key(msg.data)
    if key is None:
        return "no loop can watch this signal"
    index = watch_index(uow, msg.tenant, rule.channel, key, msg.at)
    matched: dict[str, list[str]] = defaultdict(list)
    for loop_ref in index.loop_refs:
        loop = uow.get(ids.loop_id(msg.tenant, loop_ref), OpenLoop)
        assert loop is not None and not loop.resolved, f"match index lists {loop_ref}, which is not open"
        # Event time: a reply cannot answer what had not been sent when it was written.
        if loop.created_on > msg.at or not rule.matches(loop.watch, msg.data):
            continue
        resolve_by_signal(loop, signal_ref=msg.ref, signal_type=msg.type, at=msg.at)
        matched[loop.task_ref].append(loop_ref)
    index.keep(
        signal_ref=msg.ref, signal_type=msg.type, data=dict(msg.data),
        resolved_loops=[ref for refs in matched.values() for ref in refs], tasks=list(matched), at=msg.at,
    )
    for task_ref, loop_refs in matched.items():
        load_task(uow, msg.tenant, task_ref).receive_signal(
            signal_ref=msg.ref, signal_type=msg.type, data=dict(msg.data), resolved_loops=loop_refs, now=msg.at
        )
    if not matched:
        return "no open loop matched; kept for loops registered later"
    return f"resolved {sum(map(len, matched.values()))} loop(s) on task(s) {', '.join(sorted(matched))}"
