"""What the owner decides about a task: approval or rejection of a proposal, guidance, and escalation to them."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from loopline.domain.base import TaskEvent, TaskMoved
from loopline.domain.status import TaskStatus

if TYPE_CHECKING:
    from loopline.domain.task import Task


class TaskReview:
    """A direct base of `Task`: the owner's hand in the task; eventsourcing redefines its events as `Task.<Name>`."""

    class Reviewed(TaskMoved):
        decision: str
        reason: str
        rejection_type: str | None
        status: str

    class GuidanceGiven(TaskEvent):
        text: str
        status: str

        def apply(self, task: Task) -> None:
            task.escalation_reason = None
            task._moved(self.status, self.timestamp)

    class Escalated(TaskEvent):
        reason: str
        cause: str
        status: str

        def apply(self, task: Task) -> None:
            task.escalation_reason = self.reason
            task.escalation_cause = self.cause
            task._moved(self.status, self.timestamp)

    def approve(self, *, reason: str, now: datetime) -> None:
        self.trigger_event(
            self.Reviewed, timestamp=now, decision="approved", reason=reason, rejection_type=None,
            status=self._target(TaskStatus.READY),
        )

    def reject(self, *, reason: str, rejection_type: str | None, now: datetime) -> None:
        self.trigger_event(
            self.Reviewed, timestamp=now, decision="rejected", reason=reason, rejection_type=rejection_type,
            status=self._target(TaskStatus.CANCELLED),
        )

    def give_guidance(self, *, text: str, now: datetime) -> None:
        self.trigger_event(self.GuidanceGiven, timestamp=now, text=text, status=self._target(TaskStatus.EXECUTING))

    def escalate(self, *, reason: str, cause: str, now: datetime) -> None:
        """Hands the task to the owner; an escalated task escalated again stays escalated with the newer reason."""
        status = self.status if self.status is TaskStatus.ESCALATED else self._target(TaskStatus.ESCALATED)
        self.trigger_event(self.Escalated, timestamp=now, reason=reason, cause=cause, status=status)
