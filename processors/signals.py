"""Signal matching: a signal resolves every matching open loop of its tenant (seed 000, multi-task fan-out)."""

from __future__ import annotations

from collections import defaultdict

from loopline.domain import ids
from loopline.domain.matching import CHANNEL_BY_SIGNAL
from loopline.domain.open_loop import OpenLoop
from loopline.domain.watch_index import WatchIndex
from loopline.processors.application import UnitOfWork
from loopline.processors.loops import load_task, proactive_run, watch_index
from loopline.processors.messages import Message


def handle_signal(uow: UnitOfWork, msg: Message) -> str:
    if msg.type == "user.seen":
        proactive_run(uow, msg.tenant, msg.at)
        return "tenant activity noted"
    rule = CHANNEL_BY_SIGNAL.get(msg.type)
    if rule is None:
        return f"{msg.type} recorded; it resolves no loops"
    key = rule.signal_key(msg.data)
    index = uow.get(ids.watch_index_id(msg.tenant, rule.channel, key), WatchIndex) if key is not None else None
    if index is None:
        return "no open loop watches this signal"
    matched: dict[str, list[str]] = defaultdict(list)
    for loop_ref in list(index.loop_refs):
        loop = uow.get(ids.loop_id(msg.tenant, loop_ref), OpenLoop)
        assert loop is not None and not loop.resolved, f"match index lists {loop_ref}, which is not open"
        if not rule.matches(loop.watch, msg.data):
            continue
        loop.resolve(
            resolved_by="signal_match", reason=f"{msg.type} {msg.ref} matched", signal_ref=msg.ref, rule=rule.rule,
            now=msg.at,
        )
        watch_index(uow, msg.tenant, rule.channel, key, msg.at).unwatch(loop_ref, now=msg.at)
        matched[loop.task_ref].append(loop_ref)
    for task_ref, loop_refs in matched.items():
        load_task(uow, msg.tenant, task_ref).receive_signal(
            signal_ref=msg.ref, signal_type=msg.type, data=dict(msg.data), resolved_loops=loop_refs, now=msg.at
        )
    if not matched:
        return "no open loop matched"
    return f"resolved {sum(map(len, matched.values()))} loop(s) on task(s) {', '.join(sorted(matched))}"
