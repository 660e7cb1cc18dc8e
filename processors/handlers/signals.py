"""Signal matching: a signal resolves every matching open loop of its tenant registered no later than
the signal happened (one signal may move several tasks at once), and is kept for loops registered later."""

from __future__ import annotations

from collections import defaultdict

from loopline.domain import ids
from loopline.domain.contact_index import ContactIndex
from loopline.domain.status import TaskStatus
from loopline.domain.task import Task
from loopline.domain.channels import CHANNEL_BY_SIGNAL
from loopline.domain.open_loop import OpenLoop
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.loops_and_timers import load_task, proactive_run, resolve_by_signal, watch_index
from loopline.processors.messages import Message
from loopline.processors.handlers.outreach import on_reply

WORKED = frozenset({TaskStatus.READY, TaskStatus.EXECUTING, TaskStatus.WAITING, TaskStatus.DORMANT})
"""The statuses in which Loopline itself answers an acting task's reply (not one with the owner)."""
LATE_REPLY_PREVIEW = 200


def reply_words(data: dict) -> str:
    """What the contact wrote, as the owner is shown it: the body, else the subject."""
    return str(data.get("body") or data.get("subject") or "").strip()


def notify_late_reply(uow: UnitOfWork, msg: Message) -> bool:
    """A reply from the contact of a closed acting task: the owner is told; nothing reopens."""
    index = uow.get(ids.contact_index_id(msg.tenant, str(msg.data["sender"])), ContactIndex)
    if index is None:
        return False
    closed = [task for ref in index.tasks.values()
              if (task := uow.get(ids.task_id(msg.tenant, ref), Task)) is not None and task.is_closed]
    if not closed:
        return False
    task = max(closed, key=lambda t: t.last_activity_at)
    text = reply_words(msg.data)
    preview = text[:LATE_REPLY_PREVIEW] + ("…" if len(text) > LATE_REPLY_PREVIEW else "")
    task.notify_user(
        kind="late_reply",
        message=f"'{task.title}': {msg.data['sender']} replied after the task was {task.status}"
        f"{f': “{preview}”' if preview else ''}. Nothing was reopened; decide whether to answer.",
        now=msg.at, quote=text,
    )
    return True


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
    replies: set[str] = set()  # tasks whose outreach reply loop this signal answers
    for loop_ref in index.loop_refs:
        loop = uow.get(ids.loop_id(msg.tenant, loop_ref), OpenLoop)
        assert loop is not None and not loop.resolved, f"match index lists {loop_ref}, which is not open"
        # Event time: a reply cannot answer what had not been sent when it was written.
        if loop.created_on > msg.at or not rule.matches(loop.watch, msg.data):
            continue
        resolve_by_signal(loop, signal_ref=msg.ref, signal_type=msg.type, at=msg.at)
        matched[loop.task_ref].append(loop_ref)
        if loop.origin == "outreach":
            replies.add(loop.task_ref)
    index.keep(
        signal_ref=msg.ref, signal_type=msg.type, data=dict(msg.data),
        resolved_loops=[ref for refs in matched.values() for ref in refs], tasks=list(matched), at=msg.at,
    )
    for task_ref, loop_refs in matched.items():
        task = load_task(uow, msg.tenant, task_ref)
        worked = task.status in WORKED
        task.receive_signal(
            signal_ref=msg.ref, signal_type=msg.type, data=dict(msg.data), resolved_loops=loop_refs, now=msg.at
        )
        if task_ref in replies and worked and task.is_acting:
            on_reply(uow, task, signal_ref=msg.ref, now=msg.at, quote=reply_words(msg.data))
    if not matched:
        if rule.channel == "email" and notify_late_reply(uow, msg):
            return "no open loop matched; the owner was told of a reply to a closed task"
        return "no open loop matched; kept for loops registered later"
    return f"resolved {sum(map(len, matched.values()))} loop(s) on task(s) {', '.join(sorted(matched))}"
