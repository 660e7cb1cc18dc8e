"""What each due timer does when the tick fires it, one row per timer kind with its words.

Every firing checks its aggregate's state first, so firing a timer again (a tick run twice, or after
a crash half-way) changes nothing that was already done. A firing the domain refuses, or that keeps
failing, is kept on its bucket as refused with the rule (or error) that stopped it, so it never
fires again, and the task's owner is told.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from loopline.domain import ids
from loopline.domain.errors import DomainError
from loopline.domain.open_loop import OpenLoop
from loopline.domain.outreach import Escalate
from loopline.domain.status import TaskStatus
from loopline.domain.task import Task
from loopline.domain.task_history import expiry_reason
from loopline.domain.task_types import task_type
from loopline.domain.timers import TimerBucket, TimerKind, TimerWheel
from loopline.domain.timeutil import HOUR
from loopline.domain.wording import count, when
from loopline.processors.application import UnitOfWork
from loopline.processors.bus import Fault, Handler
from loopline.processors.handlers.categories import fire_recurrence
from loopline.processors.handlers.commands import create_task
from loopline.processors.handlers.actions import fire_task_actions
from loopline.processors.handlers.daily_digest import record_daily_digest
from loopline.processors.handlers.deadline_actions import draft_followup, send_followup, take_deadline_action
from loopline.processors.handlers.escalation import escalate, escalation_timeout
from loopline.processors.handlers.routines import fire_routine
from loopline.processors.handlers.loops_and_timers import (
    close_task_loops,
    load_task,
    proactive_run,
    schedule_stall_check,
    set_timer,
    task_history,
)
from loopline.processors.messages import BucketSwept, TimerFired, WheelSwept
from loopline.processors.handlers.pausing import hold_step
from loopline.processors.handlers.proactive import proactive_run as proactive_run_firing
from loopline.processors.handlers.questions import climb_question
from loopline.processors.handlers.outcome_signals import dormant_check, verify_outcome
from loopline.processors.handlers.outreach import has_step, retry_due_decisions, step_task
from loopline.processors.ports import Draft, Drafter
from loopline.processors.handlers.wakeups import wake_due

REFILE_AFTER = timedelta(minutes=1)

Fire = Callable[[UnitOfWork, TimerFired, Drafter], "str | None"]


@dataclass(frozen=True)
class TimerRow:
    """A timer kind: what firing it does, what it is called when refused, and how a tick counts it."""

    fire: Fire
    words: str
    done: tuple[str, str]


def _loop_deadline(uow: UnitOfWork, timer: TimerFired, drafter: Drafter) -> str | None:
    loop = uow.get(timer.target_id, OpenLoop)
    if loop is None or not loop.is_overdue(timer.now):
        return None
    return take_deadline_action(uow, loop, load_task(uow, loop.tenant, loop.task_ref), drafter, timer.now)


def _task_expiry(uow: UnitOfWork, timer: TimerFired, drafter: Drafter) -> str | None:
    """Takes the outcome the task's status gives its expiry (`domain/status.py` AT_EXPIRY)."""
    task, now = uow.get(timer.target_id, Task), timer.now
    if task is None or not task.is_due_to_expire(now):
        return None
    if task.is_acting and task.status not in (TaskStatus.PENDING_REVIEW, TaskStatus.ESCALATED):
        # Its budget's end, while Loopline works it: the outreach rules end it as its cadence says (dormant, …).
        return step_task(uow, task, now)
    age = (now - task.created_on).days
    if task.expiry_outcome() is TaskStatus.ESCALATED:
        if task.open_loops:
            awaited = " and ".join(_loop(uow, task, ref).awaited() for ref in task.open_loops)
            waiting, label = f"still waiting for {awaited}", "reached its expiry still waiting"
        else:
            waiting, label = f"while with the owner ({task.escalation_reason})", "reached its expiry while escalated"
        reason = f"reached its expiry after {count(age, 'day')} {waiting}; decide: extend, notify or cancel"
        escalate(uow, task, Escalate(reason, "expiry"), now)
        return f"'{task.title}': escalated to the owner ({label})"
    reason = expiry_reason(
        task_history(uow, task), created_on=task.created_on, last_activity_at=task.last_activity_at,
        status=task.status, now=now,
    )
    close_task_loops(uow, task, resolved_by="expired", reason=f"task expired: {reason}", now=now)
    task.expire(reason=reason, now=now)
    task.notify_user(kind="task_expired", message=f"Task '{task.title}' {reason}.", now=now)
    return f"'{task.title}': {reason}"


def _loop(uow: UnitOfWork, task: Task, loop_ref: str) -> OpenLoop:
    loop = uow.get(ids.loop_id(task.tenant, loop_ref), OpenLoop)
    assert loop is not None, f"task {task.ref} links loop {loop_ref} that does not exist"
    return loop


def _stall_check(uow: UnitOfWork, timer: TimerFired, drafter: Drafter) -> str | None:
    """Flags a task idle for its type's `stalled_after_days` for the proactive run, then checks again
    one idle period after its last activity (so one timer per task is outstanding, not one per event)."""
    task, now = uow.get(timer.target_id, Task), timer.now
    if task is None or not task.stall_check_due(now):
        return None
    after_days = task_type(task.task_type).stalled_after_days
    flagged = task.check_stalled(after_days=after_days, now=now)
    next_check = task.last_activity_at + timedelta(days=after_days)
    if next_check <= now:  # flagged, or idle but waiting on something: look again one period from now
        next_check = now + timedelta(days=after_days)
    schedule_stall_check(uow, task, next_check, now)
    if not flagged:
        return None
    idle = (now - task.idle_since).days
    task.notify_user(kind="stalled", message=f"'{task.title}': nothing has happened for {count(idle, 'day')} and it "
                     "waits for nothing (no reply, wake-up or send is pending). Decide what should happen next.", now=now)
    proactive_run(uow, task.tenant, now).queue_escalation(
        task_ref=task.ref, loop_ref=None, reason=f"stalled: no activity for {idle} days", now=now
    )
    return f"'{task.title}': flagged stalled, nothing happened for {count(idle, 'day')}"


def _wakeup(uow: UnitOfWork, timer: TimerFired, drafter: Drafter) -> str | None:
    return wake_due(uow, timer.target_id, timer.now)


def _escalation_timeout(uow: UnitOfWork, timer: TimerFired, drafter: Drafter) -> str | None:
    task = uow.get(timer.target_id, Task)
    return escalation_timeout(uow, task, timer.now) if task is not None else None


def _task_step(uow: UnitOfWork, timer: TimerFired, drafter: Drafter) -> str | None:
    """An acting task's next step; one not chosen for this tick (its tenant's share is taken) waits a minute."""
    task, now = uow.get(timer.target_id, Task), timer.now
    if task is None or task.is_closed:
        return None
    if not task.is_acting:  # a follow-through task's follow-up: a failed draft asked again, or a deferred send
        return (hold_step(uow, task, TimerKind.TASK_STEP, task.id, now) or retry_due_decisions(uow, task, now)
                or _deferred_followup(uow, task, now))
    if not timer.stepping:
        if has_step(task, now):
            set_timer(uow, kind=TimerKind.TASK_STEP, target_id=task.id, due=now + REFILE_AFTER, now=now)
        return None
    return step_task(uow, task, now)


def _recurrence(uow: UnitOfWork, timer: TimerFired, drafter: Drafter) -> str | None:
    return fire_recurrence(uow, timer.target_id, timer.now, create=create_task)


def _routine(uow: UnitOfWork, timer: TimerFired, drafter: Drafter) -> str | None:
    return fire_routine(uow, timer.target_id, timer.now)


def _deferred_followup(uow: UnitOfWork, task: Task, now: datetime) -> str | None:
    deferred = task.deferred
    if deferred is None or deferred["until"] > now or "follow_up_of" not in deferred["draft"]:
        return None
    draft = deferred["draft"]
    loop = uow.get(ids.loop_id(task.tenant, draft["follow_up_of"]), OpenLoop)
    assert loop is not None, f"task {task.ref} deferred a follow-up of loop {draft['follow_up_of']}, which does not exist"
    if "body" not in draft:  # held before it was drafted: drafted now, if the send checks let it go
        return draft_followup(uow, loop, task, now)
    return send_followup(uow, loop, task, Draft(draft["subject"], draft["body"], draft["decided_by"]), now)


TIMERS: dict[str, TimerRow] = {
    TimerKind.LOOP_DEADLINE: TimerRow(_loop_deadline, "the action at a loop's deadline",
                                      ("passed deadline acted on", "passed deadlines acted on")),
    TimerKind.TASK_EXPIRY: TimerRow(_task_expiry, "the task's expiry",
                                    ("task reached its expiry", "tasks reached their expiry")),
    TimerKind.PROACTIVE_RUN: TimerRow(proactive_run_firing, "the proactive run", ("proactive run", "proactive runs")),
    TimerKind.TASK_STALL_CHECK: TimerRow(_stall_check, "the stall check", ("task flagged stalled", "tasks flagged stalled")),
    TimerKind.TASK_WAKEUP: TimerRow(_wakeup, "the wake-up", ("task woken", "tasks woken")),
    TimerKind.TASK_STEP: TimerRow(_task_step, "the task's next step", ("task step taken", "task steps taken")),
    TimerKind.RECURRENCE: TimerRow(_recurrence, "the recurring template's firing",
                                   ("recurring task created", "recurring tasks created")),
    TimerKind.TASK_ACTIONS: TimerRow(fire_task_actions, "the task's deferred actions and to-do reminders",
                                     ("task's actions looked at", "tasks' actions looked at")),
    TimerKind.DORMANT_CHECK: TimerRow(dormant_check, "the dormant task's outcome check",
                                      ("dormant task closed by a signal", "dormant tasks closed by a signal")),
    TimerKind.OUTCOME_VERIFICATION: TimerRow(verify_outcome, "the verification of a provisional outcome",
                                             ("provisional outcome downgraded", "provisional outcomes downgraded")),
    TimerKind.DAILY_DIGEST: TimerRow(record_daily_digest, "the owner's daily digest",
                                     ("daily digest recorded", "daily digests recorded")),
    TimerKind.ESCALATION_TIMEOUT: TimerRow(_escalation_timeout, "the escalation's reminder or cancellation",
                                           ("escalation left alone acted on", "escalations left alone acted on")),
    TimerKind.QUESTION_LADDER: TimerRow(climb_question, "the next step of an unanswered question",
                                        ("unanswered question escalated", "unanswered questions escalated")),
    TimerKind.ROUTINE: TimerRow(_routine, "the routine's run", ("routine run", "routine runs")),
}
"""Every timer kind (`domain/timers.py` TimerKind) and nothing else; tests/unit/test_contracts.py holds them equal."""


def refuse_timer(uow: UnitOfWork, timer: TimerFired, error: Exception) -> None:
    """Keeps the timer on its bucket as refused with the rule that refused it (so it never fires again) and tells the owner."""
    rule = type(error).__name__
    bucket = uow.get(timer.bucket_id, TimerBucket)
    assert bucket is not None
    bucket.refuse_timer(kind=timer.kind, target_id=timer.target_id, due=timer.due, rule=rule, reason=str(error),
                        now=timer.now)
    task = _task_of(uow, timer)
    if task is not None:
        task.notify_user(
            kind="timer_refused",
            message=f"'{task.title}': {TIMERS[timer.kind].words} due {when(timer.due)} was refused by rule {rule}: "
            f"{error}. It will not be tried again; decide what should happen next.",
            now=timer.now,
        )


def park_timer(uow: UnitOfWork, timer: TimerFired, fault: Fault) -> None:
    """A timer whose handler keeps failing is refused like one the domain refused, with the error as
    its rule (`loopline audit` shows it and the owner is told), so the tick goes on."""
    refuse_timer(uow, timer, fault.error)


def _task_of(uow: UnitOfWork, timer: TimerFired) -> Task | None:
    if timer.kind == TimerKind.LOOP_DEADLINE:
        loop = uow.get(timer.target_id, OpenLoop)
        return uow.get(ids.task_id(loop.tenant, loop.task_ref), Task) if loop is not None else None
    if timer.kind in (TimerKind.PROACTIVE_RUN, TimerKind.RECURRENCE, TimerKind.DAILY_DIGEST, TimerKind.ROUTINE):
        return None
    return uow.get(timer.target_id, Task)


def timer_handler(drafter: Drafter) -> Handler[TimerFired]:
    """Due timers fired through `TIMERS`, with the drafter a loop's deadline action may write with."""
    return Handler(apply=lambda uow, timer: TIMERS[timer.kind].fire(uow, timer, drafter),
                   refuse=refuse_timer, park=park_timer)


def _close_swept(uow: UnitOfWork, swept: BucketSwept) -> str | None:
    """Closes the bucket once its hour has passed, unless a firing filed a timer in it (it is swept again first)."""
    bucket = uow.get(swept.bucket_id, TimerBucket)
    assert bucket is not None
    if swept.hour + HOUR > swept.now or bucket.size != swept.size:
        return None
    bucket.close(now=swept.now)
    return "closed"


def _mark_swept(uow: UnitOfWork, swept: WheelSwept) -> None:
    wheel = uow.get(ids.timer_wheel_id(), TimerWheel)
    assert wheel is not None, "a tick sweeps only a wheel that exists"
    wheel.swept_until(swept.until, now=swept.now)


def _sweep_refused(uow: UnitOfWork, swept: BucketSwept | WheelSwept, error: DomainError) -> None:
    raise error  # marking a sweep is not a rule's to refuse: a refusal here is a bug, and stops the tick


def _sweep_failed(uow: UnitOfWork, swept: BucketSwept | WheelSwept, fault: Fault) -> None:
    """A sweep's mark that cannot be made has nothing to keep it on: the tick stops, to be run again."""
    raise fault.error


BUCKET_SWEPT: Handler[BucketSwept] = Handler(apply=_close_swept, refuse=_sweep_refused, park=_sweep_failed)
WHEEL_SWEPT: Handler[WheelSwept] = Handler(apply=_mark_swept, refuse=_sweep_refused, park=_sweep_failed)

