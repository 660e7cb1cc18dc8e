"""The five deterministic `if_unresolved` actions taken when a loop's deadline passes (seed 000 Part 2)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from loopline.domain.expectations import EXPECTATIONS, WAKE_TASK, DeadlineAction
from loopline.domain.open_loop import OpenLoop
from loopline.domain.task import Task
from loopline.domain.timeutil import format_time
from loopline.processors.application import UnitOfWork
from loopline.processors.loops import close_loop, close_task_loops, proactive_run, register_loop, schedule_run
from loopline.processors.ports import Drafter
from loopline.processors.wakeups import wake_on_condition

ESCALATION_RUN_DELAY = timedelta(hours=4)
FOLLOWUP_IF_UNRESOLVED = DeadlineAction.NOTIFY_USER.value


def take_deadline_action(uow: UnitOfWork, loop: OpenLoop, task: Task, drafter: Drafter, now: datetime) -> str:
    """Closes the overdue loop as `expired` and takes its action, in the same save."""
    action = loop.if_unresolved
    reason = (
        f"deadline {format_time(loop.deadline)} passed with no matching {loop.channel} signal; "
        f"if_unresolved={action}"
    )
    close_loop(uow, loop, task, resolved_by="expired", reason=reason, now=now)
    ACTIONS[action](uow, loop, task, drafter, now)
    return f"{loop.ref}: {action}"


def _draft_followup_email(uow: UnitOfWork, loop: OpenLoop, task: Task, drafter: Drafter, now: datetime) -> None:
    contact = loop.watch["sender"]
    draft = drafter.draft_followup(
        task_title=task.title, contact=contact, original_subject=loop.subject,
        days_waiting=(now - loop.created_on).days,
    )
    details = {"to": contact, "subject": draft.subject, "body": draft.body, "decided_by": draft.decided_by,
               "follow_up_of": loop.ref}
    if loop.watch.get("thread_id"):
        details["thread_id"] = loop.watch["thread_id"]
    if loop.message_id:
        details["in_reply_to"] = loop.message_id
    task.record_action(
        action="send_email", details=details, summary=f"Sent follow-up to {contact}", performed_by="loopline", now=now
    )
    register_loop(
        uow, task, loop_ref=f"{loop.ref}/followup", channel=loop.channel, watch=dict(loop.watch),
        deadline=now + EXPECTATIONS["send_email"].default_deadline, if_unresolved=FOLLOWUP_IF_UNRESOLVED,
        description=f"Reply to follow-up from {contact}", origin="followup", now=now, subject=loop.subject,
        message_id=loop.message_id,
    )
    task.notify_user(kind="followup_sent", message=f"{contact} hasn't replied. I sent a follow-up.", now=now)


def _send_reminder(uow: UnitOfWork, loop: OpenLoop, task: Task, drafter: Drafter, now: datetime) -> None:
    task.record_action(
        action="send_reminder", details={"channel": loop.channel, "watch": dict(loop.watch), "reminder_for": loop.ref},
        summary=f"Sent a reminder: still waiting for {loop.description}", performed_by="loopline", now=now,
    )
    task.notify_user(kind="reminder_sent", message=f"Still waiting for {loop.description}; I sent a reminder.", now=now)


def _notify_user(uow: UnitOfWork, loop: OpenLoop, task: Task, drafter: Drafter, now: datetime) -> None:
    task.notify_user(
        kind="loop_expired",
        message=f"'{task.title}': no {loop.description} by {format_time(loop.deadline)}. What next?",
        now=now,
    )


def _cancel_task(uow: UnitOfWork, loop: OpenLoop, task: Task, drafter: Drafter, now: datetime) -> None:
    reason = f"loop {loop.ref} passed its deadline with cancel_task"
    close_task_loops(uow, task, resolved_by="cancelled", reason=f"task cancelled: {reason}", now=now)
    task.cancel(reason=reason, now=now)
    task.notify_user(kind="task_cancelled", message=f"Stopped tracking '{task.title}': {reason}.", now=now)


def _escalate_to_loop(uow: UnitOfWork, loop: OpenLoop, task: Task, drafter: Drafter, now: datetime) -> None:
    run = proactive_run(uow, task.tenant, now)
    run.queue_escalation(task_ref=task.ref, loop_ref=loop.ref, reason=f"no {loop.description} by deadline", now=now)
    if run.next_run_at > now + ESCALATION_RUN_DELAY:
        schedule_run(uow, run, requested_at=now + ESCALATION_RUN_DELAY, reason=f"escalated loop {loop.ref}", now=now)


def _wake_task(uow: UnitOfWork, loop: OpenLoop, task: Task, drafter: Drafter, now: datetime) -> None:
    wake_on_condition(
        task, loop.ref, cause="time", reason=f"wake-up time {format_time(loop.deadline)} came before {loop.description}", now=now
    )


ACTIONS: dict[str, Callable[[UnitOfWork, OpenLoop, Task, Drafter, datetime], None]] = {
    DeadlineAction.DRAFT_FOLLOWUP_EMAIL: _draft_followup_email,
    DeadlineAction.SEND_REMINDER: _send_reminder,
    DeadlineAction.NOTIFY_USER: _notify_user,
    DeadlineAction.CANCEL_TASK: _cancel_task,
    DeadlineAction.ESCALATE_TO_LOOP: _escalate_to_loop,
    WAKE_TASK: _wake_task,
}
if set(ACTIONS) != {*DeadlineAction, WAKE_TASK}:  # a loop could name an action no deadline could take
    raise ImportError(f"deadline ACTIONS misses {sorted({*DeadlineAction, WAKE_TASK} - set(ACTIONS))}")
