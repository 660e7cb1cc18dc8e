"""The no-lost-reply property (issue 18, item 1), shared by both deployments: random interleavings of
tasks for a few members, their replies, ticks (touches, deadlines, deferrals, wake-ups), changing send
limits, escalations and the owner's guidance, approvals, own words and take-overs, unsubscribes, bounces,
complaints and opt-ins, pauses and resumes of the tenant and of the system, and the rules every run must keep, read from the tasks' events (the send rails of
issue 19 are `tests/rails_held.py`'s):

* every reply from a member with an acting task reaches a task's conversation, or the owner in words;
* the task it reached then acts on it: the model evaluates it, the owner is told or handed the task,
  (an out-of-office reply) the task pauses, or (a STOP) it closes as the member is suppressed;
* no other task answers it (one reply, one answer);
* no message Loopline starts goes to the member over a reply nobody has read yet;
* no member gets two messages Loopline starts on one local day (answers to what they wrote aside);
* no follow-up of an outside agent's email (seed 000) goes to a member after they replied.

The replies' words choose what the offline policy decides (answer, wait, close, escalate), so the same
scenario means the same on the embedded store, in memory and at scale.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from hypothesis import strategies as st

from loopline.domain import ids
from loopline.domain.reply_routing import answered_signal
from loopline.domain.send_ledger import local_day
from loopline.domain.task import Task
from loopline.domain.timeutil import format_time
from tests.conftest import command, signal

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
GYM = "gym"
MEMBERS = ("ann@example.com", "ben@example.com", "rahul@company.com")
TYPES = ("win_back", "churn_risk", "lead_followup")
REPLIES = (
    "Thanks, sounds good",  # answered
    "Maybe, I'm busy this month",  # wait, the cadence resumes
    "Is the discount still on?",  # a question: the owner answers
    "Please stop emailing me",  # opt-out: closed
    "Yes, I'll be there Monday",  # commitment: closed
    "hmm",  # nothing the policy knows: the owner reads it
    "I am out of the office until 20 March",  # an automatic reply: the task pauses
)
AUTO_REPLY = 6
ZONES = ("UTC", "America/New_York", "Asia/Tokyo")
SUPPRESSIONS = ("unsubscribe", "complaint", "hard_bounce", "soft_bounce", "resubscribe")
"""What suppresses a member besides a STOP reply (issue 19 item 1), and the opt-in that lifts it."""
PAUSES = ("tenant.pause", "tenant.resume", "system.pause", "system.resume")

member = st.integers(0, len(MEMBERS) - 1)
task_ref = st.tuples(st.sampled_from(TYPES), member)


def interleavings(max_size: int) -> st.SearchStrategy[list[tuple]]:
    """Lists of up to `max_size` operations, in any order."""
    return st.lists(
        st.one_of(
            st.tuples(st.just("create"), task_ref, st.booleans(), st.sampled_from([0.3, 0.95])),
            st.tuples(st.just("reply"), member, st.integers(0, len(REPLIES) - 1), st.none() | st.sampled_from(TYPES)),
            st.tuples(st.just("tick"), st.integers(1, 72)),
            st.tuples(st.just("limits"), st.integers(1, 3), st.integers(1, 4)),
            st.tuples(st.sampled_from(["guidance", "approve", "owner_reply", "takeover"]), task_ref),
            st.tuples(st.just("wake"), task_ref, st.integers(1, 48)),
            st.tuples(st.just("model_down"), st.booleans()),
            st.tuples(st.just("agent_email"), member),
            st.tuples(st.sampled_from(SUPPRESSIONS), member),
            st.tuples(st.sampled_from(PAUSES)),
        ),
        min_size=4, max_size=max_size,
    )


zone = st.sampled_from(ZONES)
SETTLE_DAYS = 40
"""After the operations, ticks run this long: every cadence, deferral, wake-up and budget runs out."""


def ref_of(task: tuple[str, int]) -> str:
    return f"{task[0]}-{task[1]}"


def configure(at: datetime, timezone_name: str, weekly: int = 3, daily: int = 15, tenant: str = GYM) -> dict[str, Any]:
    return command(f"cfg-{format_time(at)}", "tenant.configure", format_time(at), tenant, execution_mode="limited_auto",
                   timezone=timezone_name, member_weekly_limit=weekly, daily_send_limit=daily)


def messages_of(n: int, op: tuple, at: datetime, timezone_name: str, tenant: str = GYM) -> list[dict[str, Any]]:
    """The messages an operation publishes (none for a tick or a model outage, which the driver does itself)."""
    message = _message_of(n, op, at, timezone_name, tenant)
    return message if isinstance(message, list) else [message] if message is not None else []


def _message_of(n: int, op: tuple, at: datetime, timezone_name: str, tenant: str) -> Any:
    kind, *args = op
    stamp, ref = format_time(at), f"m{n}"
    if kind == "create":
        task, with_draft, confidence = args
        draft = {"draft": {"subject": f"Hello from the gym ({task[0]})", "body": "Hi, we'd love to see you."}}
        return command(ref, "task.create", stamp, tenant, task_id=ref_of(task), title=f"{task[0]} member {task[1]}",
                       task_type=task[0], contact=MEMBERS[task[1]], confidence=confidence,
                       **(draft if with_draft else {}))
    if kind == "reply":
        who, text, answers = args
        # The thread of one of the member's tasks, named by the Message-ID of a message it sent (`adapters/smtp.py`).
        thread = {"thread_id": f"<loopline.{ids.task_id(tenant, ref_of((answers, who)))}.2@gym.example>"} if answers else {}
        return signal(f"reply-{n}", "email.received", stamp, tenant, sender=MEMBERS[who], subject="Re: hello",
                      body=f"{REPLIES[text]} ({n})", **thread)
    if kind in PAUSES:
        return command(ref, kind, stamp, tenant, reason="the owner's call")
    if kind in SUPPRESSIONS:
        return _suppression(ref, kind, MEMBERS[args[0]], stamp, tenant)
    if kind == "limits":
        return configure(at, timezone_name, weekly=args[0], daily=args[1], tenant=tenant) | {"id": ref}
    if kind == "agent_email":  # seed 000: an outside agent emailed the member; Loopline follows up if no reply comes
        who = MEMBERS[args[0]]
        return [command(f"{ref}-task", "task.create", stamp, tenant, task_id=f"meet-{n}", title=f"Meet {who}"),
                command(f"{ref}-email", "action.record", stamp, tenant, task_id=f"meet-{n}", action="send_email", to=who,
                        subject="Meeting next week?")]
    if kind == "guidance":
        return command(ref, "task.guidance", stamp, tenant, task_id=ref_of(args[0]), text="Tell them the offer stands")
    if kind == "approve":
        return command(ref, "task.approve", stamp, tenant, task_id=ref_of(args[0]))
    if kind == "owner_reply":
        return command(ref, "task.reply", stamp, tenant, task_id=ref_of(args[0]), body="Hi, it's Sam: come by any time.")
    if kind == "takeover":
        return command(ref, "task.takeover", stamp, tenant, task_id=ref_of(args[0]), reason="I called them")
    if kind == "wake":
        task, hours = args
        wake = command(ref, "task.wake", stamp, tenant, task_id=ref_of(task), reason="check back on them")
        wake["data"]["at"] = format_time(at + timedelta(hours=hours))  # the wake-up's time, not the message's
        return wake
    return None


def _suppression(ref: str, kind: str, who: str, stamp: str, tenant: str) -> dict[str, Any]:
    if kind == "resubscribe":
        return command(ref, "contact.resubscribe", stamp, tenant, contact=who, reason="asked to hear from us again")
    if kind.endswith("bounce"):
        return signal(ref, "email.bounced", stamp, tenant, contact=who, bounce_type=kind.removesuffix("_bounce"),
                      detail="550 5.1.1 mailbox unavailable")
    return signal(ref, {"unsubscribe": "contact.unsubscribed", "complaint": "email.complained"}[kind], stamp, tenant,
                  contact=who)


def resumed(at: datetime, tenant: str = GYM) -> list[dict[str, Any]]:
    """Lifts any pause the operations left, before the settling ticks: what a pause held must then go out."""
    stamp = format_time(at)
    return [command(f"resume-{kind}-{stamp}", kind, stamp, tenant, reason="settling") for kind in PAUSES[1::2]]


@dataclass(frozen=True)
class Reply:
    ref: str
    sender: str
    words: str
    at: datetime


def replies_in(messages: Iterable[dict[str, Any]]) -> list[Reply]:
    return [Reply(m["id"], m["data"]["sender"], m["data"]["body"], datetime.fromisoformat(m["at"].replace("Z", "+00:00")))
            for m in messages if m["kind"] == "signal" and m["type"] == "email.received"]


def broken_rules(replies: list[Reply], events: list[Any], timezone_name: str) -> list[str]:
    """Every rule of the module docstring that the tasks' `events` (all of them, in the order stored) break."""
    by_task: dict[Any, list[Any]] = {}
    for event in events:
        by_task.setdefault(event.originator_id, []).append(event)
    created = {task_id: history[0] for task_id, history in by_task.items() if isinstance(history[0], Task.Created)}
    acting = {task_id for task_id, history in by_task.items() if any(isinstance(e, Task.OutreachPlanned) for e in history)}
    notices = [e.message for e in events if isinstance(e, Task.UserNotified)]
    broken = []
    for reply in replies:
        members_tasks = [task_id for task_id in acting if str(created[task_id].contact).lower() == reply.sender.lower()
                         and created[task_id].timestamp <= reply.at]
        if not members_tasks:
            continue
        reached = [task_id for task_id in members_tasks if _received(by_task[task_id], reply) is not None]
        anywhere = any(_received(history, reply) is not None for history in by_task.values())  # an agent's task too
        if not anywhere and not any(reply.words in notice for notice in notices):
            broken.append(f"{reply.ref} ({reply.words!r}) reached no task and not the owner")
        for task_id in reached:
            history = by_task[task_id]
            received = history[_received(history, reply)]
            after = history[_received(history, reply) + 1:]
            if not _acted_on(after, reply) and not _kept_for_the_owner(received, reply):
                broken.append(f"{reply.ref} ({reply.words!r}) reached {created[task_id].ref}, which never acted on it")
            early = _send_before_reading(after)
            if early:
                broken.append(f"{created[task_id].ref} emailed {early!r} over {reply.ref} ({reply.words!r}) before reading it")
        evaluating = {created[task_id].ref for task_id in members_tasks
                      if any(isinstance(e, Task.DecisionRequested) and e.point == "evaluate_reply"
                             and answered_signal(e.request_ref) == reply.ref for e in by_task[task_id])}
        if len(evaluating) > 1:
            broken.append(f"{reply.ref} ({reply.words!r}) was answered by {sorted(evaluating)}")
    following = {task_id: [e for e in history if isinstance(e, Task.ActionRecorded) and e.performed_by == "agent"]
                 for task_id, history in by_task.items() if task_id in created and task_id not in acting}
    for reply in replies:
        for task_id, emailed in following.items():
            asked = [e for e in emailed if str(e.details.get("to", "")).lower() == reply.sender.lower() and e.timestamp <= reply.at]
            late = [e for e in by_task[task_id] if asked and isinstance(e, Task.ActionRecorded)
                    and e.performed_by == "loopline" and e.action == "send_email" and e.timestamp > reply.at]
            if late:
                broken.append(f"{created[task_id].ref} sent a follow-up to {reply.sender} after their reply {reply.ref}")
    started = Counter(
        (str(created[e.originator_id].contact).lower(), local_day(e.timestamp, timezone_name))
        for e in events if isinstance(e, Task.ActionRecorded) and e.action == "send_email"
        and e.performed_by in ("loopline", "owner") and e.originator_id in acting and not _answers(e)
    )
    broken += [f"{who} got {count} messages Loopline started on {day}" for (who, day), count in started.items() if count > 1]
    return broken


def _answers(action: Any) -> bool:
    """A message that answers what the contact wrote (`send_message` says so in its summary: "(reply…")."""
    return "(reply" in action.summary


def _received(history: list[Any], reply: Reply) -> int | None:
    return next((place for place, e in enumerate(history)
                 if isinstance(e, Task.SignalReceived) and e.signal_ref == reply.ref), None)


def _acted_on(after: list[Any], reply: Reply) -> bool:
    """The model was asked about it (or about a later reply, which reads it too), the task went to the owner,
    the owner was told in the member's words (an opt-out's notice quotes them), the task paused for an automatic
    reply, or it closed because the member is suppressed (a STOP closes every task of theirs, no model asked)."""
    return any(
        (isinstance(e, Task.DecisionRequested) and e.point == "evaluate_reply")
        or isinstance(e, (Task.Escalated, Task.OutOfOfficeReceived))
        or (isinstance(e, Task.OutcomeSet) and e.code in ("opted_out", "undeliverable"))
        or (isinstance(e, Task.UserNotified) and (reply.words in e.message or reply.words == e.quote))
        for e in after
    )


def _kept_for_the_owner(received: Any, reply: Reply) -> bool:
    """An automatic reply to a task with the owner (in review, escalated) is kept in its conversation, without
    calling the owner: an auto-responder's words are nobody's."""
    return reply.words.startswith(REPLIES[AUTO_REPLY]) and received.status in ("pending_review", "escalated")


def _send_before_reading(after: list[Any]) -> str | None:
    """The subject of a message Loopline started (not an answer) sent before any decision on the reply (a pause
    for an automatic one is one) or any word from the owner; None when there is none."""
    for e in after:
        read = (Task.DecisionRecorded, Task.GuidanceGiven, Task.Reviewed, Task.OutOfOfficeReceived)
        if isinstance(e, read) or getattr(e, "performed_by", "") == "owner":
            return None
        if isinstance(e, Task.ActionRecorded) and e.performed_by == "loopline" and not _answers(e):
            return str(e.details.get("subject", ""))
    return None
