"""Signal matching: a signal resolves every matching open loop of its tenant registered no later than
the signal happened (one signal may move several tasks at once), and is kept for loops registered later.

An email from a contact with open acting tasks always reaches one of them, whatever its status and
whether or not it has a loop open (`domain/reply_routing.py` chooses which); the contact's other tasks
keep it in their context without answering it. A reply reaches the owner when the task is theirs."""

from __future__ import annotations

from collections import defaultdict

from loopline.domain import ids
from loopline.domain.contact_index import ContactIndex
from loopline.domain.reply_routing import answering_task
from loopline.domain.watch_index import WatchIndex
from loopline.domain.status import TaskStatus
from loopline.domain.task import Task
from loopline.domain.channels import CHANNEL_BY_SIGNAL
from loopline.domain.open_loop import OpenLoop
from loopline.domain.wording import when
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.loops_and_timers import load_task, resolve_by_signal, watch_index
from loopline.processors.handlers.owner_notices import owner_seen
from loopline.processors.messages import Message
from loopline.processors.handlers.outcome_signals import on_outcome_observed
from loopline.processors.handlers.outreach import automatic_reply, on_reply, pause_for_auto_reply
from loopline.processors.handlers.routines import trigger_routines
from loopline.processors.handlers.suppression import (
    SUPPRESSING_SIGNALS,
    opt_out_words,
    suppress_contact,
    suppressed_why,
)

WORKED = frozenset({TaskStatus.READY, TaskStatus.EXECUTING, TaskStatus.WAITING, TaskStatus.DORMANT})
"""The statuses in which Loopline itself answers an acting task's reply (not one with the owner)."""
LATE_REPLY_PREVIEW = 200


def reply_words(msg: Message) -> str:
    """What the contact wrote, whole: the notice quotes it (`quote`)."""
    return str(msg.data.get("body") or msg.data.get("subject") or "").strip()


def words(msg: Message) -> str:
    """What the contact wrote, quoted in a notice's sentence (cut at `LATE_REPLY_PREVIEW` characters)."""
    text = reply_words(msg)
    preview = text[:LATE_REPLY_PREVIEW] + ("…" if len(text) > LATE_REPLY_PREVIEW else "")
    return f"“{preview}”" if preview else "(an empty message)"


def _contact_tasks(uow: UnitOfWork, msg: Message) -> list[Task]:
    """The sender's acting tasks (the contact index lists the latest of each type, also of the types that send
    nothing, such as a staff call, which no reply is for), open or closed."""
    index = uow.get(ids.contact_index_id(msg.tenant, str(msg.data["sender"])), ContactIndex)
    if index is None:
        return []
    tasks = (uow.get(ids.task_id(msg.tenant, ref), Task) for ref in index.tasks.values())
    return [task for task in tasks if task is not None and task.is_acting]


def notify_late_reply(uow: UnitOfWork, msg: Message) -> bool:
    """A reply from the contact of a closed acting task: the owner is told; nothing reopens."""
    closed = [task for task in _contact_tasks(uow, msg) if task.is_closed]
    if not closed:
        return False
    task = max(closed, key=lambda t: t.last_activity_at)
    task.notify_user(
        kind="late_reply",
        message=f"'{task.title}': {msg.data['sender']} replied after the task was {task.status}: {words(msg)}. "
        "Nothing was reopened; decide whether to answer.",
        now=msg.at, quote=reply_words(msg),
    )
    return True


OWNERS = frozenset({TaskStatus.ESCALATED, TaskStatus.PENDING_REVIEW})
"""The statuses in which a reply is the owner's to read (the agent does not answer it)."""


def answer(uow: UnitOfWork, task: Task, msg: Message, resolved_loops: list[str], *, agents: bool) -> None:
    """The reply joins the task's conversation; Loopline evaluates it while it works the task (unless it answers
    a loop the outside agent registered, `agents`: that agent reads it), and the owner reads it while the task is
    theirs (escalated, or awaiting their review)."""
    status = task.status
    task.receive_signal(signal_ref=msg.ref, signal_type=msg.type, data=dict(msg.data), resolved_loops=resolved_loops,
                        now=msg.at)
    contact = msg.data["sender"]
    if status in WORKED and not agents:
        on_reply(uow, task, signal_ref=msg.ref, data=msg.data, now=msg.at)
    elif status in OWNERS and (away := automatic_reply(uow, task, msg.data, msg.at)) is not None:
        # An auto-responder's words are nobody's: the task keeps them, the owner is not called for them.
        back = f", back on {away.returns_on.isoformat()}" if away.returns_on else ""
        if status is TaskStatus.ESCALATED:
            task.escalate(reason=f"{task.escalation_reason}\n\n{contact} is away ({away.sign}{back})",
                          cause=task.escalation_cause or "contact_replied", now=msg.at)
    elif status is TaskStatus.ESCALATED:
        task.escalate(reason=f"{task.escalation_reason}\n\n{contact} wrote again {when(msg.at)}: {words(msg)}",
                      cause=task.escalation_cause or "contact_replied", now=msg.at)
        task.notify_user(kind="escalation_reply",
                         message=f"'{task.title}' still needs your decision, and {contact} wrote again: {words(msg)}. "
                         "Give guidance (task.guidance) and the agent drafts the answer with it.", now=msg.at,
                         quote=reply_words(msg))
    elif status is TaskStatus.PENDING_REVIEW:
        task.notify_user(kind="reply_in_review",
                         message=f"'{task.title}' awaits your review, and {contact} wrote: {words(msg)}. "
                         "Approve it (task.approve) to let the agent answer, or reject it (task.reject).", now=msg.at,
                         quote=reply_words(msg))


def replies_before_creation(uow: UnitOfWork, task: Task) -> None:
    """At scale commands and signals travel on different topics, so a contact's email written after their task was
    created may be applied before the creation. Such an email that reached no task reaches the new task now, as it
    would have in order: evaluated, or shown to the owner while the task awaits review."""
    assert task.contact is not None
    rule = CHANNEL_BY_SIGNAL["email.received"]
    key = rule.signal_key({"sender": task.contact})
    index = uow.get(ids.watch_index_id(task.tenant, rule.channel, key), WatchIndex) if key else None
    if index is None:
        return
    for kept in list(index.kept):
        if kept["type"] == rule.signal_type and not kept["tasks"] and kept["at"] >= task.created_on:
            index.mark_delivered(kept["ref"], task.ref, now=kept["at"])
            early = Message(kind="signal", ref=kept["ref"], type=kept["type"], tenant=task.tenant, at=kept["at"],
                            data=dict(kept["data"]))
            answer(uow, task, early, [], agents=False)


def handle_signal(uow: UnitOfWork, msg: Message) -> str:
    trigger_routines(uow, msg)
    if msg.type == "user.seen":
        owner_seen(uow, msg.tenant, msg.at)
        return "tenant activity noted"
    if msg.type in SUPPRESSING_SIGNALS:
        return SUPPRESSING_SIGNALS[msg.type](uow, msg)
    if msg.type == "outcome.observed":
        return on_outcome_observed(uow, msg)
    rule = CHANNEL_BY_SIGNAL.get(msg.type)
    if rule is None:
        return f"{msg.type} recorded; it resolves no loops"
    key = rule.signal_key(msg.data)
    if key is None:
        return "no loop can watch this signal"
    index = watch_index(uow, msg.tenant, rule.channel, key, msg.at)
    loops = []
    for loop_ref in index.loop_refs:
        loop = uow.get(ids.loop_id(msg.tenant, loop_ref), OpenLoop)
        assert loop is not None and not loop.resolved, f"match index lists {loop_ref}, which is not open"
        # Event time: a reply cannot answer what had not been sent when it was written.
        if loop.created_on <= msg.at and rule.matches(loop.watch, msg.data):
            loops.append(loop)
    # The contact's acting tasks, and any whose reply loop matched; event time again: an email written before a
    # task existed is not about it.
    acting = [task for task in _contact_tasks(uow, msg) if not task.is_closed and task.created_on <= msg.at
              ] if rule.channel == "email" else []
    acting += [task for ref in dict.fromkeys(loop.task_ref for loop in loops if loop.origin == "outreach")
               if (task := load_task(uow, msg.tenant, ref)) not in acting]
    answering = answering_task(acting, msg.data)
    stop = opt_out_words(uow, msg) if rule.channel == "email" else None
    matched: dict[str, list[str]] = defaultdict(list)
    agents: set[str] = set()  # tasks with a loop of the outside agent's (not Loopline's reply loop) resolved
    for loop in loops:
        if loop.origin == "outreach" and (answering is None or loop.task_ref != answering.ref):
            continue  # another task of the contact answers this reply; this one goes on waiting for its own
        resolve_by_signal(loop, signal_ref=msg.ref, signal_type=msg.type, at=msg.at)
        matched[loop.task_ref].append(loop.ref)
        if loop.origin != "outreach":
            agents.add(loop.task_ref)
    reached = [*matched, *([answering.ref] if answering is not None and answering.ref not in matched else [])]
    index.keep(
        signal_ref=msg.ref, signal_type=msg.type, data=dict(msg.data),
        resolved_loops=[ref for refs in matched.values() for ref in refs], tasks=reached, at=msg.at,
    )
    for task_ref, loop_refs in matched.items():
        if answering is None or task_ref != answering.ref:
            load_task(uow, msg.tenant, task_ref).receive_signal(
                signal_ref=msg.ref, signal_type=msg.type, data=dict(msg.data), resolved_loops=loop_refs, now=msg.at
            )
    if answering is not None:
        if stop is None:
            answer(uow, answering, msg, matched.get(answering.ref, []), agents=answering.ref in agents)
        else:  # not evaluated: the task keeps the reply and closes below
            answering.receive_signal(signal_ref=msg.ref, signal_type=msg.type, data=dict(msg.data),
                                     resolved_loops=matched.get(answering.ref, []), now=msg.at)
        for other in acting:
            if other is not answering:
                other.note_reply(signal_ref=msg.ref, data=dict(msg.data), answered_by=answering.ref, now=msg.at)
                if other.status in WORKED and stop is None:  # a contact away is away for every task
                    pause_for_auto_reply(uow, other, msg.data, msg.at)
    if stop is not None and (reached or suppressed_why(uow, msg.tenant, str(msg.data["sender"])) is None):
        # A rule, before any model call (seed 002 §22.3): every task of the contact closes in this step. A contact
        # suppressed already who writes to no open task is heard as any late reply below: the owner reads it.
        return suppress_contact(uow, msg.tenant, msg.data["sender"], reason="member_request", source="inbound_reply",
                                words=stop, now=msg.at, quote=reply_words(msg), told_on=answering)
    if not reached:
        if rule.channel == "email" and notify_late_reply(uow, msg):
            return "no open loop matched; the owner was told of a reply to a closed task"
        return "no open loop matched; kept for loops registered later"
    if not matched:
        return f"no open loop matched; the reply reached task {reached[0]}"
    return f"resolved {sum(map(len, matched.values()))} loop(s) on task(s) {', '.join(sorted(matched))}"
