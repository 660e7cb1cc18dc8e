"""The five deterministic `if_unresolved` actions taken when a loop's deadline passes (seed 000 Part 2).

What the owner reads says what the agent did, to whom, what it waited for and since when; what
a contact reads (a follow-up, a reminder) names no task title or id.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from loopline.domain.expectations import EXPECTATIONS, NEXT_TOUCH, WAKE_TASK, DeadlineAction
from loopline.domain.open_loop import OpenLoop
from loopline.domain.send_checks import Deferral
from loopline.domain.task import Task
from loopline.domain.timers import TimerKind
from loopline.domain.timeutil import format_time
from loopline.domain.wording import CONTACT_ASKS, NEXT_STEP, when
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.loops_and_timers import (
    close_loop,
    close_task_loops,
    proactive_run,
    register_loop,
    schedule_run,
)
from loopline.processors.handlers.outreach import NO_END_WAIT, open_reply_loop, plan_of, step_task
from loopline.processors.handlers.model_calls import held_reason, request_decision
from loopline.processors.ports import Draft, Drafter
from loopline.processors.handlers.pausing import hold_step
from loopline.processors.handlers.sending import Deferred, keep_for_later, send_deferral, send_to_contact
from loopline.processors.handlers.suppression import not_sent, suppressed_why
from loopline.processors.handlers.tenants import tenant_settings
from loopline.processors.handlers.wakeups import wake_on_condition

ESCALATION_RUN_DELAY = timedelta(hours=4)
FOLLOWUP_IF_UNRESOLVED = DeadlineAction.NOTIFY_USER.value


KEPT_OPEN_UNTIL_SENT = frozenset({DeadlineAction.DRAFT_FOLLOWUP_EMAIL.value})
"""Actions whose overdue loop stays open until their message is sent: a reply while the follow-up is being
drafted or held back by a limit still resolves the loop, and the follow-up is dropped (`Task.SignalReceived`)."""


SENDS_OR_ASKS = frozenset({DeadlineAction.DRAFT_FOLLOWUP_EMAIL.value, DeadlineAction.SEND_REMINDER.value, NEXT_TOUCH})
"""Actions that email a contact or ask the model: held whole while the tenant is paused."""


def take_deadline_action(uow: UnitOfWork, loop: OpenLoop, task: Task, drafter: Drafter, now: datetime) -> str:
    """Closes the overdue loop as `expired` (or, for a follow-up, once it is sent) and takes its action, in the
    same save; says what it did."""
    action = loop.if_unresolved
    if action in SENDS_OR_ASKS:
        held = hold_step(uow, task, TimerKind.LOOP_DEADLINE, loop.id, now)
        if held:  # the loop stays open and overdue: its action is taken at the resume
            return held
    if action not in KEPT_OPEN_UNTIL_SENT:
        _expire(uow, loop, task, now)
    done = ACTIONS[action](uow, loop, task, drafter, now)
    task.end_wait(reason=f"no sign of {loop.awaited()}, and nothing else to wait for", now=now)
    return f"'{task.title}': no sign of {loop.awaited()} by {when(loop.deadline)}; {done}"


def _expire(uow: UnitOfWork, loop: OpenLoop, task: Task, now: datetime) -> None:
    reason = f"no sign of {loop.awaited()} by {when(loop.deadline)}; next: {NEXT_STEP[loop.if_unresolved]}"
    close_loop(uow, loop, task, resolved_by="expired", reason=reason, now=now)


def _who(loop: OpenLoop, contact: str) -> str:
    return f"{loop.contact_name} ({contact})" if loop.contact_name else contact


def _draft_followup_email(uow: UnitOfWork, loop: OpenLoop, task: Task, drafter: Drafter, now: datetime) -> str:
    return draft_followup(uow, loop, task, now)


def draft_followup(uow: UnitOfWork, loop: OpenLoop, task: Task, now: datetime) -> str:
    """Asks the model for the follow-up (`processors/followers/agent.py` sends it with `send_followup`), unless a send
    check would hold it back: then it is drafted when the check frees up, so no draft is paid for that waits."""
    contact = loop.watch["sender"]
    task.check_may_act()
    if (why := suppressed_why(uow, task.tenant, contact)) is not None:
        return not_sent(uow, task, loop, why, "follow-up", now)
    kept = task.deferred["draft"] if task.deferred is not None else {}
    if kept.get("follow_up_of") == loop.ref and "body" in kept:
        return f"a follow-up to {contact} is already drafted and waits for a send limit"
    deferral = send_deferral(uow, task, contact=contact, now=now, settings=tenant_settings(uow, task.tenant))
    if deferral is not None:
        return _followup_waits(uow, loop, task, deferral, {"follow_up_of": loop.ref}, now)
    held = request_decision(
        uow, task, request_ref=f"{loop.ref}/followup", point="draft_message", purpose="followup", touch=None,
        tone=None, reason=f"no reply from {contact} by {when(loop.deadline)}", now=now, loop_ref=loop.ref,
    )
    if held is not None:
        return f"a follow-up to {contact} is due; {held_reason(held)}"
    return f"drafting a follow-up to {contact}"


def send_followup(uow: UnitOfWork, loop: OpenLoop, task: Task, draft: Draft, now: datetime) -> str:
    """Sends the follow-up drafted for an overdue email loop through the send checks, then waits for its reply
    (loop `<loop>/followup`) and tells the owner; a send a limit defers keeps its draft for later."""
    contact = loop.watch["sender"]
    # A follow-up answers the email it follows in its thread: it keeps that subject, whatever the draft's.
    subject = f"Re: {loop.subject}" if loop.subject else draft.subject
    details = {"to": contact, "subject": subject, "body": draft.body, "decided_by": draft.decided_by,
               "follow_up_of": loop.ref}
    if loop.contact_name:
        details["to_name"] = loop.contact_name
    if loop.watch.get("thread_id"):
        details["thread_id"] = loop.watch["thread_id"]
    if loop.message_id:
        details["in_reply_to"] = loop.message_id
    sent = send_to_contact(uow, task, details=details, now=now, settings=tenant_settings(uow, task.tenant),
                           summary=f"Sent follow-up to {contact}")
    if isinstance(sent, Deferred):
        if sent.deferral.rule == "suppressed":
            return not_sent(uow, task, loop, sent.deferral.reason, "follow-up", now)
        return _followup_waits(uow, loop, task, sent.deferral, {
            "subject": subject, "body": draft.body, "decided_by": draft.decided_by, "follow_up_of": loop.ref}, now)
    _expire(uow, loop, task, now)
    deadline = now + EXPECTATIONS["send_email"].default_deadline
    _wait_again(uow, loop, task, "followup", now, deadline=deadline, if_unresolved=FOLLOWUP_IF_UNRESOLVED,
                description=f"a reply from {contact} to my follow-up", action="send_email", contact=contact)
    task.notify_user(
        kind="followup_sent",
        message=f"'{task.title}': {_who(loop, contact)} hasn't replied to my email of {when(loop.created_on)}. "
        f"I sent a follow-up and will tell you if there is no reply by {when(deadline)}.",
        now=now,
    )
    return f"sent a follow-up to {contact}"


def _followup_waits(uow: UnitOfWork, loop: OpenLoop, task: Task, deferral: Deferral, draft: dict[str, Any],
                    now: datetime) -> str:
    """Keeps the follow-up a send check holds back (its draft, or only its loop when none was asked for yet) for when
    the check frees up, and tells the owner."""
    contact = loop.watch["sender"]
    until = keep_for_later(uow, task, deferral, draft, now)
    task.notify_user(kind="followup_deferred", message=f"'{task.title}': a follow-up to {_who(loop, contact)} waits "
                     f"until {until}: {deferral.reason}.", now=now)
    return f"deferred the follow-up to {contact} until {until}"


def _send_reminder(uow: UnitOfWork, loop: OpenLoop, task: Task, drafter: Drafter, now: datetime) -> str:
    """Reminds the contact the loop waits on and waits as long again; with nobody to remind, asks the owner."""
    since = when(loop.created_on)
    if not loop.contact:
        task.notify_user(
            kind="reminder_needed",
            message=f"'{task.title}': I have been waiting for {loop.awaited()} since {since}, and nothing came by "
            f"{when(loop.deadline)}. I have nobody's address to send a reminder to: please nudge them, "
            "or tell me what to do next.",
            now=now,
        )
        return "asked the owner to remind them (no address known)"
    about, ask = CONTACT_ASKS[loop.action if loop.action in CONTACT_ASKS else None]
    draft = drafter.draft_reminder(
        contact_name=loop.contact_name, about=about, ask=ask, original_subject=loop.subject,
        days_waiting=(now - loop.created_on).days,
    )
    details = {"to": loop.contact, "subject": draft.subject, "body": draft.body, "decided_by": draft.decided_by,
               "reminder_for": loop.ref}
    sent = send_to_contact(uow, task, details=details, now=now, settings=tenant_settings(uow, task.tenant),
                           summary=f"Sent a reminder to {loop.contact}: still waiting for {loop.awaited()}",
                           action="send_reminder")
    if isinstance(sent, Deferred):
        return _reminder_held(uow, loop, task, sent, now)
    deadline = now + (loop.deadline - loop.created_on)
    _wait_again(uow, loop, task, "reminder", now, deadline=deadline, if_unresolved=DeadlineAction.NOTIFY_USER.value,
                description=loop.awaited())
    task.notify_user(
        kind="reminder_sent",
        message=f"'{task.title}': still waiting for {loop.awaited()} since {since}. I sent {_who(loop, loop.contact)} "
        f"a reminder and will tell you if nothing comes by {when(deadline)}.",
        now=now,
    )
    return f"sent a reminder to {loop.contact}"


def _reminder_held(uow: UnitOfWork, loop: OpenLoop, task: Task, held: Deferred, now: datetime) -> str:
    """A send check holds the reminder back: it is tried again when the limit frees up (the loop waits until then);
    a limit that never frees up leaves the reminding to the owner."""
    assert loop.contact is not None
    if held.deferral.rule == "suppressed":
        return not_sent(uow, task, loop, held.deferral.reason, "reminder", now)
    if held.deferral.until is None:
        task.notify_user(
            kind="reminder_needed",
            message=f"'{task.title}': I have been waiting for {loop.awaited()} since {when(loop.created_on)}, and a "
            f"reminder to {_who(loop, loop.contact)} is held back: {held.deferral.reason}. Please nudge them, or tell "
            "me what to do next.",
            now=now,
        )
        return f"asked the owner to remind {loop.contact} ({held.deferral.rule})"
    _wait_again(uow, loop, task, "reminder", now, deadline=held.deferral.until,
                if_unresolved=DeadlineAction.SEND_REMINDER.value, description=loop.awaited())
    return f"the reminder to {loop.contact} waits until {when(held.deferral.until)} ({held.deferral.reason})"


def _wait_again(uow: UnitOfWork, loop: OpenLoop, task: Task, origin: str, now: datetime, **changed: Any) -> None:
    """Registers the loop that goes on waiting after a follow-up or a reminder (`<loop>/<origin>`): it
    watches what `loop` watched, about the same email and contact unless `changed` says otherwise."""
    details = {"subject": loop.subject, "message_id": loop.message_id, "action": loop.action, "contact": loop.contact,
               "contact_name": loop.contact_name, **changed}
    register_loop(uow, task, loop_ref=f"{loop.ref}/{origin}", channel=loop.channel, watch=dict(loop.watch),
                  origin=origin, now=now, **details)


def _notify_user(uow: UnitOfWork, loop: OpenLoop, task: Task, drafter: Drafter, now: datetime) -> str:
    task.notify_user(
        kind="loop_expired",
        message=f"'{task.title}': I have been waiting for {loop.awaited()} since {when(loop.created_on)}, "
        f"and nothing came by {when(loop.deadline)}. What should I do next?",
        now=now,
    )
    return "told the owner"


def _cancel_task(uow: UnitOfWork, loop: OpenLoop, task: Task, drafter: Drafter, now: datetime) -> str:
    reason = f"no sign of {loop.awaited()} by {when(loop.deadline)}, and that wait was set to cancel the task"
    close_task_loops(uow, task, resolved_by="cancelled", reason=f"task cancelled: {reason}", now=now)
    task.cancel(reason=reason, now=now)
    task.notify_user(kind="task_cancelled", message=f"Stopped tracking '{task.title}': {reason}.", now=now)
    return "cancelled the task"


def _escalate_to_loop(uow: UnitOfWork, loop: OpenLoop, task: Task, drafter: Drafter, now: datetime) -> str:
    reason = f"no sign of {loop.awaited()} by {when(loop.deadline)}"
    task.notify_user(kind="escalation", message=f"'{task.title}' needs your decision: {reason}", now=now)
    run = proactive_run(uow, task.tenant, now)
    run.queue_escalation(task_ref=task.ref, loop_ref=loop.ref, reason=reason, now=now)
    if run.next_run_at > now + ESCALATION_RUN_DELAY:
        schedule_run(uow, run, requested_at=now + ESCALATION_RUN_DELAY, reason=f"'{task.title}' escalated: {reason}", now=now)
    return "escalated to the owner"


def _wake_task(uow: UnitOfWork, loop: OpenLoop, task: Task, drafter: Drafter, now: datetime) -> str:
    wake_on_condition(
        task, loop.ref, cause="time", reason=f"wake-up time {format_time(loop.deadline)} came before {loop.awaited()}", now=now
    )
    return "woke the task"


def _next_touch(uow: UnitOfWork, loop: OpenLoop, task: Task, drafter: Drafter, now: datetime) -> str:
    """An acting task's reply loop passed its deadline: the cadence's next step (a touch, or closing)."""
    done = step_task(uow, task, now)
    if task.is_acting and not task.is_closed and not task.open_loops and task.contact:
        # The next message is not out yet (the model drafts it, or a limit deferred it): the contact's reply
        # must still find the task meanwhile, or it would be lost. The next send supersedes this loop.
        open_reply_loop(uow, task, deadline=plan_of(task).ends_at or now + NO_END_WAIT, now=now)
    # The deadline's line already names the task: say only what the step did.
    return done.removeprefix(f"'{task.title}': ") if done else "nothing more to do yet"


ACTIONS: dict[str, Callable[[UnitOfWork, OpenLoop, Task, Drafter, datetime], str]] = {
    DeadlineAction.DRAFT_FOLLOWUP_EMAIL: _draft_followup_email,
    DeadlineAction.SEND_REMINDER: _send_reminder,
    DeadlineAction.NOTIFY_USER: _notify_user,
    DeadlineAction.CANCEL_TASK: _cancel_task,
    DeadlineAction.ESCALATE_TO_LOOP: _escalate_to_loop,
    WAKE_TASK: _wake_task,
    NEXT_TOUCH: _next_touch,
}
"""One row per deadline action a loop may take (`DeadlineAction` and `LOOPLINE_ONLY_ACTIONS`), its words in
`domain/wording.py` NEXT_STEP; tests/unit/test_contracts.py holds the three equal."""
