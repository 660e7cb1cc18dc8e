"""The maintenance scan behind `tick --now T`: deadlines, task expiry and due proactive runs.

Work follows the timer wheel, so a tick touches due items only. Each bucket is swept in one
transaction (its due timers' effects and, once its hour has passed, its closing), and every
timer checks its aggregate's state first, which makes a tick idempotent: running it again, or
after a crash half-way, changes nothing that was already done. Each firing is a step of the one
batch path (`processors/steps.py`): a firing the domain refuses is undone, kept on its bucket
with the rule that refused it (so it never fires again), and told to the task's owner.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from eventsourcing.persistence import IntegrityError

from loopline.domain import ids
from loopline.domain.open_loop import OpenLoop
from loopline.domain.proactive_run import ProactiveRun
from loopline.domain.status import TaskStatus
from loopline.domain.task import Task
from loopline.domain.task_history import expiry_reason
from loopline.domain.task_types import PRIORITY_ORDER, task_type
from loopline.domain.timers import SHARDS, TimerBucket, TimerKind, TimerWheel
from loopline.domain.timeutil import HOUR, floor_hour
from loopline.domain.wording import count, when
from loopline.processors.application import Loopline, UnitOfWork
from loopline.processors.deadline_actions import send_followup, take_deadline_action
from loopline.processors.loops import close_task_loops, load_task, proactive_run, schedule_stall_check, set_timer
from loopline.processors.ports import Draft, Drafter
from loopline.processors.outreach import has_step, retry_due_decisions, step_task
from loopline.processors.steps import Fault, apply_steps
from loopline.processors.wakeups import wake_due

RETRIES = 5
TIMER_WORDS: dict[str, str] = {
    TimerKind.LOOP_DEADLINE: "the action at a loop's deadline",
    TimerKind.TASK_EXPIRY: "the task's expiry",
    TimerKind.PROACTIVE_RUN: "the proactive run",
    TimerKind.TASK_STALL_CHECK: "the stall check",
    TimerKind.TASK_WAKEUP: "the wake-up",
    TimerKind.TASK_STEP: "the task's next step",
}
DONE_WORDS: dict[TimerKind, tuple[str, str]] = {
    TimerKind.LOOP_DEADLINE: ("passed deadline acted on", "passed deadlines acted on"),
    TimerKind.TASK_EXPIRY: ("task reached its expiry", "tasks reached their expiry"),
    TimerKind.PROACTIVE_RUN: ("proactive run", "proactive runs"),
    TimerKind.TASK_STALL_CHECK: ("task flagged stalled", "tasks flagged stalled"),
    TimerKind.TASK_WAKEUP: ("task woken", "tasks woken"),
    TimerKind.TASK_STEP: ("task step taken", "task steps taken"),
}
STEPS_PER_TICK = 20
"""At most this many acting tasks of one tenant take a step in one tick (seed 002 §6.3); the rest wait a minute."""
REFILE_AFTER = timedelta(minutes=1)


@dataclass
class TickReport:
    now: datetime
    actions: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    buckets_swept: int = 0
    done: Counter[str] = field(default_factory=Counter)
    """How many timers of each kind did something, for the summary."""

    def summary(self) -> str:
        """One line counting what this tick actually did."""
        parts = [count(self.done[kind], *DONE_WORDS[kind]) for kind in DONE_WORDS if self.done[kind]]
        parts += [count(len(self.refused), "timer refused", "timers refused")] if self.refused else []
        return f"tick: {', '.join(parts)}" if parts else "tick: nothing was due"


class Maintenance:
    def __init__(self, app: Loopline, drafter: Drafter) -> None:
        self.app = app
        self.drafter = drafter
        self._steps_allowed: set[UUID] = set()
        self._bucket_events: dict[UUID, list[Any]] = {}

    def tick(self, now: datetime, progress: Callable[[int, int], None] | None = None) -> TickReport:
        report = TickReport(now)
        wheel = UnitOfWork(self.app).get(ids.timer_wheel_id(), TimerWheel)
        if wheel is None:
            return report
        last = floor_hour(now)
        hours = int((last - wheel.first_unswept) / HOUR) + 1
        self._choose_steps([wheel.first_unswept + step * HOUR for step in range(max(hours, 0))], now)
        for step in range(max(hours, 0)):
            hour = wheel.first_unswept + step * HOUR
            for shard in range(SHARDS):
                self._sweep_bucket(hour, shard, now, report)
            if progress:
                progress(step + 1, hours)
        self._retrying(lambda uow: uow.get(ids.timer_wheel_id(), TimerWheel).swept_until(last, now=now))
        return report

    def _sweep_bucket(self, hour: datetime, shard: int, now: datetime, report: TickReport) -> None:
        """Fires every due timer of a bucket and, once its hour has passed, closes it: one transaction."""
        bucket_id = ids.timer_bucket_id(hour, shard)
        for _ in range(RETRIES):
            uow = UnitOfWork(self.app)
            bucket = uow.get(bucket_id, TimerBucket)
            if bucket is None or bucket.closed:
                return
            size = bucket.size
            events = self._bucket_events.pop(bucket_id, None)
            if events is None or len(events) != bucket.version:
                events = list(self.app.events.get(bucket_id))
            firings = [
                TimerFiring(self, bucket_id, kind, target_id, due, now)
                for kind, target_id, due in self._in_step_order(TimerBucket.due(events, now))
            ]
            outcomes = apply_steps(uow, firings)
            bucket = uow.get(bucket_id, TimerBucket)  # a refused step may have rebuilt it
            assert bucket is not None
            closing = hour + HOUR <= now and bucket.size == size  # a timer filed while firing: sweep again first
            if closing:
                bucket.close(now=now)
            try:
                uow.commit()
            except IntegrityError:
                continue  # a concurrent writer changed the bucket or a target: sweep it again
            report.actions += [o.detail for o in outcomes if o.accepted and o.detail]
            report.done.update(o.step.kind for o in outcomes if o.accepted and o.detail)
            report.refused += [f"{TIMER_WORDS[o.step.kind]} due {when(o.step.due)} refused: {o.detail}"
                               for o in outcomes if not o.accepted]
            report.buckets_swept += closing
            if closing or hour + HOUR > now:
                return
        raise RuntimeError(f"timer bucket {hour.isoformat()}#{shard} kept changing; tick again")

    def _choose_steps(self, hours: list[datetime], now: datetime) -> None:
        """Reads the buckets this tick sweeps and picks the acting tasks that step in it: per tenant, those
        with something to do, critical first, at most `STEPS_PER_TICK` (the sweep then reuses what was read)."""
        due_steps: dict[UUID, datetime] = {}
        self._bucket_events = {}
        for hour in hours:
            for shard in range(SHARDS):
                bucket_id = ids.timer_bucket_id(hour, shard)
                events = list(self.app.events.get(bucket_id))
                self._bucket_events[bucket_id] = events
                for kind, target_id, due in TimerBucket.due(events, now):
                    if kind == TimerKind.TASK_STEP:
                        due_steps.setdefault(target_id, due)
        uow = UnitOfWork(self.app)
        uow.prefetch(due_steps)
        by_tenant: dict[str, list[tuple[int, datetime, str, UUID]]] = {}
        for task_id, due in due_steps.items():
            task = uow.get(task_id, Task)
            if task is None or not has_step(task, now):
                continue
            rank = PRIORITY_ORDER.get(task.priority or task_type(task.task_type).priority, len(PRIORITY_ORDER))
            by_tenant.setdefault(task.tenant, []).append((rank, due, task.ref, task_id))
        self._steps_allowed = {
            task_id for steps in by_tenant.values() for *_, task_id in sorted(steps)[:STEPS_PER_TICK]
        }

    def _in_step_order(self, timers: list[tuple[str, UUID, datetime]]) -> list[tuple[str, UUID, datetime]]:
        """The chosen task steps first, so the tasks picked by priority take theirs before anything else changes them."""
        return sorted(timers, key=lambda timer: timer[0] != TimerKind.TASK_STEP or timer[1] not in self._steps_allowed)

    def _retrying(self, step: Callable[[UnitOfWork], str | None]) -> str | None:
        """Runs one step in its own transaction, redoing it when a concurrent writer got there first."""
        for _ in range(RETRIES):
            uow = UnitOfWork(self.app)
            outcome = step(uow)
            try:
                uow.commit()
                return outcome
            except IntegrityError:
                continue
        raise RuntimeError("maintenance step kept conflicting with concurrent writers; tick again")

    def _loop_deadline(self, uow: UnitOfWork, loop_id: UUID, now: datetime) -> str | None:
        loop = uow.get(loop_id, OpenLoop)
        if loop is None or not loop.is_overdue(now):
            return None
        return take_deadline_action(uow, loop, load_task(uow, loop.tenant, loop.task_ref), self.drafter, now)

    def _task_expiry(self, uow: UnitOfWork, task_id: UUID, now: datetime) -> str | None:
        """Takes the outcome the task's status gives its expiry (`domain/status.py` AT_EXPIRY)."""
        task = uow.get(task_id, Task)
        if task is None or not task.is_due_to_expire(now):
            return None
        if task.is_acting and task.status not in (TaskStatus.PENDING_REVIEW, TaskStatus.ESCALATED):
            # Its budget's end, while Loopline works it: the outreach rules close it (unresponsive).
            return step_task(uow, task, now)
        age = (now - task.created_on).days
        if task.expiry_outcome() is TaskStatus.ESCALATED:
            if task.open_loops:
                awaited = " and ".join(self._loop(uow, task, ref).awaited() for ref in task.open_loops)
                waiting, label = f"still waiting for {awaited}", "reached its expiry still waiting"
            else:
                waiting, label = f"while with the owner ({task.escalation_reason})", "reached its expiry while escalated"
            reason = f"reached its expiry after {count(age, 'day')} {waiting}; decide: extend, notify or cancel"
            task.escalate(reason=reason, cause="expiry", now=now)
            proactive_run(uow, task.tenant, now).queue_escalation(task_ref=task.ref, loop_ref=None, reason=reason, now=now)
            return f"'{task.title}': escalated to the owner ({label})"
        reason = expiry_reason(
            self._history(task), created_on=task.created_on, last_activity_at=task.last_activity_at,
            status=task.status, now=now,
        )
        close_task_loops(uow, task, resolved_by="expired", reason=f"task expired: {reason}", now=now)
        task.expire(reason=reason, now=now)
        task.notify_user(kind="task_expired", message=f"Task '{task.title}' {reason}.", now=now)
        return f"'{task.title}': {reason}"

    @staticmethod
    def _loop(uow: UnitOfWork, task: Task, loop_ref: str) -> OpenLoop:
        loop = uow.get(ids.loop_id(task.tenant, loop_ref), OpenLoop)
        assert loop is not None, f"task {task.ref} links loop {loop_ref} that does not exist"
        return loop

    def _history(self, task: Task) -> list[Any]:
        """The task's events, stored and not yet saved (an expiry reads them once, then never again)."""
        saved = task.version - len(task.pending_events)
        return [*self.app.events.get(task.id, lte=saved), *task.pending_events]

    def _proactive_run(self, uow: UnitOfWork, run_id: UUID, now: datetime) -> str | None:
        run = uow.get(run_id, ProactiveRun)
        if run is None or not run.is_due(now):
            return None
        escalations = list(run.pending_escalations)
        for escalation in escalations:
            task = load_task(uow, run.tenant, escalation["task_ref"])
            task.notify_user(kind="escalation", message=f"'{task.title}' needs your decision: {escalation['reason']}", now=now)
            if not task.is_closed:  # seed 000 lifecycle 6: the escalation is the context of the task's next wake-up
                task.wake("escalation", cause="escalation", reason=escalation["reason"], now=now)
        summary = (f"surfaced {count(len(escalations), 'escalation')} to the owner" if escalations
                   else "no escalation was waiting for the owner")
        run.record_run(mode="maintenance", summary=summary, escalations_handled=len(escalations), now=now)
        set_timer(uow, kind=TimerKind.PROACTIVE_RUN, target_id=run.id, due=run.next_run_at, now=now)
        return f"proactive run for {run.tenant}: {summary}"

    def _stall_check(self, uow: UnitOfWork, task_id: UUID, now: datetime) -> str | None:
        """Flags a task idle for its type's `stalled_after_days` for the proactive run, then checks again
        one idle period after its last activity (so one timer per task is outstanding, not one per event)."""
        task = uow.get(task_id, Task)
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
        idle = (now - task.last_activity_at).days
        proactive_run(uow, task.tenant, now).queue_escalation(
            task_ref=task.ref, loop_ref=None, reason=f"stalled: no activity for {idle} days", now=now
        )
        return f"'{task.title}': flagged stalled, nothing happened for {count(idle, 'day')}"

    def _wakeup(self, uow: UnitOfWork, task_id: UUID, now: datetime) -> str | None:
        return wake_due(uow, task_id, now)

    def _task_step(self, uow: UnitOfWork, task_id: UUID, now: datetime) -> str | None:
        """An acting task's next step; one not chosen for this tick (its tenant's share is taken) waits a minute."""
        task = uow.get(task_id, Task)
        if task is None or task.is_closed:
            return None
        if not task.is_acting:  # a follow-through task's follow-up: a failed draft asked again, or a deferred send
            return retry_due_decisions(uow, task, now) or self._deferred_followup(uow, task, now)
        if task_id not in self._steps_allowed:
            if has_step(task, now):
                set_timer(uow, kind=TimerKind.TASK_STEP, target_id=task_id, due=now + REFILE_AFTER, now=now)
            return None
        return step_task(uow, task, now)

    @staticmethod
    def _deferred_followup(uow: UnitOfWork, task: Task, now: datetime) -> str | None:
        deferred = task.deferred
        if deferred is None or deferred["until"] > now or "follow_up_of" not in deferred["draft"]:
            return None
        draft = deferred["draft"]
        loop = uow.get(ids.loop_id(task.tenant, draft["follow_up_of"]), OpenLoop)
        assert loop is not None, f"task {task.ref} deferred a follow-up of loop {draft['follow_up_of']}, which does not exist"
        return send_followup(uow, loop, task, Draft(draft["subject"], draft["body"], draft["decided_by"]), now)


@dataclass(frozen=True)
class TimerFiring:
    """One due timer as a step; refused, its bucket keeps it as refused and the task's owner is told."""

    maintenance: Maintenance
    bucket_id: UUID
    kind: str
    target_id: UUID
    due: datetime
    now: datetime

    def apply(self, uow: UnitOfWork) -> str | None:
        return FIRE[self.kind](self.maintenance, uow, self.target_id, self.now)

    def park(self, uow: UnitOfWork, fault: Fault) -> None:
        """A timer whose handler keeps failing is refused like one the domain refused, with the error
        as its rule (`loopline audit` shows it and the owner is told), so the tick goes on."""
        self.refuse(uow, fault.error)

    def refuse(self, uow: UnitOfWork, error: Exception) -> None:
        rule = type(error).__name__
        bucket = uow.get(self.bucket_id, TimerBucket)
        assert bucket is not None
        bucket.refuse_timer(kind=self.kind, target_id=self.target_id, due=self.due, rule=rule, reason=str(error), now=self.now)
        task = self._task(uow)
        if task is not None:
            task.notify_user(
                kind="timer_refused",
                message=f"'{task.title}': {TIMER_WORDS[self.kind]} due {when(self.due)} was refused by rule {rule}: "
                f"{error}. It will not be tried again; decide what should happen next.",
                now=self.now,
            )

    def _task(self, uow: UnitOfWork) -> Task | None:
        if self.kind == TimerKind.LOOP_DEADLINE:
            loop = uow.get(self.target_id, OpenLoop)
            return uow.get(ids.task_id(loop.tenant, loop.task_ref), Task) if loop is not None else None
        if self.kind == TimerKind.PROACTIVE_RUN:
            return None
        return uow.get(self.target_id, Task)


FIRE: dict[TimerKind, Callable[[Maintenance, UnitOfWork, UUID, datetime], str | None]] = {
    TimerKind.LOOP_DEADLINE: Maintenance._loop_deadline,
    TimerKind.TASK_EXPIRY: Maintenance._task_expiry,
    TimerKind.PROACTIVE_RUN: Maintenance._proactive_run,
    TimerKind.TASK_STALL_CHECK: Maintenance._stall_check,
    TimerKind.TASK_WAKEUP: Maintenance._wakeup,
    TimerKind.TASK_STEP: Maintenance._task_step,
}
if not set(FIRE) == set(TIMER_WORDS) == set(DONE_WORDS) == set(TimerKind):  # a kind no tick could fire or tell
    raise ImportError(f"maintenance FIRE, TIMER_WORDS or DONE_WORDS miss timer kinds "
                      f"{sorted(set(TimerKind) - (set(FIRE) & set(TIMER_WORDS) & set(DONE_WORDS)))}")
