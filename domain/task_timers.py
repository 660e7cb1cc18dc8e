"""A task's clocks: wake-ups by time or condition, the stall check and expiry."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from loopline.domain.base import TaskEvent
from loopline.domain.errors import DomainError
from loopline.domain.status import AT_EXPIRY, TaskStatus

if TYPE_CHECKING:
    from loopline.domain.task import Task


class DuplicateWakeup(DomainError):
    """A wake-up ref the task already has pending."""


class TaskTimers:
    """A direct base of `Task`, keeping its `wakeups` and stall flag; eventsourcing redefines its events as `Task.<Name>`."""

    class WakeupScheduled(TaskEvent):
        wake_ref: str
        at: datetime | None
        loop_ref: str | None
        reason: str

        def apply(self, task: Task) -> None:
            task.wakeups[self.wake_ref] = {"at": self.at, "loop_ref": self.loop_ref, "reason": self.reason}

    class WokenUp(TaskEvent):
        wake_ref: str
        cause: str
        reason: str
        status: str

        def apply(self, task: Task) -> None:
            task.wakeups.pop(self.wake_ref, None)  # an escalation wakes without a scheduled wake-up
            if self.cause == "escalation":  # being nudged is not activity: a stalled task stays flagged
                task.status = self.status
            else:
                task._moved(self.status, self.timestamp)

    class StallCheckScheduled(TaskEvent):
        at: datetime

        def apply(self, task: Task) -> None:
            task.next_stall_check = self.at

    class StallFlagged(TaskEvent):
        idle_days: int
        last_activity_at: datetime

        def apply(self, task: Task) -> None:
            task.stalled_since = self.timestamp

    def schedule_wakeup(self, wake_ref: str, *, at: datetime | None, loop_ref: str | None, reason: str, now: datetime) -> None:
        """Time (`at`), condition (`loop_ref`, a registered loop) or both; whichever comes first wakes the task."""
        self.check_open()
        if wake_ref in self.wakeups:
            raise DuplicateWakeup(f"task {self.ref} already has a pending wake-up {wake_ref!r}")
        self.trigger_event(self.WakeupScheduled, timestamp=now, wake_ref=wake_ref, at=at, loop_ref=loop_ref, reason=reason)

    def wake(self, wake_ref: str, *, cause: str, reason: str, now: datetime) -> None:
        """Wakes a waiting or dormant task for a pending wake-up; the wake-up's other trigger is then void."""
        status = self.status
        if status in (TaskStatus.WAITING, TaskStatus.DORMANT):
            status = self._target(TaskStatus.EXECUTING)
        self.trigger_event(self.WokenUp, timestamp=now, wake_ref=wake_ref, cause=cause, reason=reason, status=status)

    def wakeups_due(self, now: datetime) -> list[str]:
        """Time-only wake-ups whose time has come (a wake-up with a condition loop wakes through that loop)."""
        return [
            ref for ref, wakeup in self.wakeups.items()
            if wakeup["loop_ref"] is None and wakeup["at"] is not None and wakeup["at"] <= now
        ]

    def wakeup_for_loop(self, loop_ref: str) -> str | None:
        return next((ref for ref, wakeup in self.wakeups.items() if wakeup["loop_ref"] == loop_ref), None)

    def schedule_stall_check(self, at: datetime, *, now: datetime) -> None:
        self.trigger_event(self.StallCheckScheduled, timestamp=now, at=at)

    def stall_check_due(self, now: datetime) -> bool:
        """False for a check already done: its timer fired before (a repeated tick) and the next one is set."""
        return not self.is_closed and self.next_stall_check is not None and self.next_stall_check <= now

    def check_stalled(self, *, after_days: int, now: datetime) -> bool:
        """Flags the task when it has had no activity for `after_days` and waits for nothing: no open
        loop (whose deadline will act), no pending wake-up and no decision asked of the model. Once, until activity clears it."""
        if (self.is_closed or self.stalled_since is not None or self.open_loops or self.wakeups or self.pending_decisions
                or self.deferred):
            return False  # waiting on a loop, a wake-up, the model or a send limit is not idle
        if self.status in (TaskStatus.ESCALATED, TaskStatus.PENDING_REVIEW):
            return False  # already waiting on the owner
        idle = now - self.idle_since
        if idle.days < after_days:
            return False
        self.trigger_event(self.StallFlagged, timestamp=now, idle_days=idle.days, last_activity_at=self.last_activity_at)
        return True

    @property
    def idle_since(self) -> datetime:
        """Its last activity, or when it last stopped waiting on a loop if that came later (a loop that just
        expired has told the owner already: the task has not been idle all along)."""
        ended = self.last_wait_ended_at
        return max(self.last_activity_at, ended) if ended is not None else self.last_activity_at

    def expiry_outcome(self) -> TaskStatus:
        """The status reaching its expiry leads to from the task's current status (`AT_EXPIRY`)."""
        self.check_open()
        without_loops, with_loops = AT_EXPIRY[self.status]
        return with_loops if self.open_loops else without_loops

    def is_due_to_expire(self, now: datetime) -> bool:
        """Due, and not already escalated for expiry (a task escalated at expiry is not escalated again)."""
        return (
            self.expires_at is not None
            and self.expires_at <= now
            and not self.is_closed
            and not (self.status is TaskStatus.ESCALATED and self.escalation_cause == "expiry")
        )
