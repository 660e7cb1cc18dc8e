"""The owner's decision on an action the task asked to take and its safety profile held for approval (seed 002
§15.2): the trail on the task, and the task back from review to work."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from loopline.domain.base import TaskEvent
from loopline.domain.status import TaskStatus

if TYPE_CHECKING:
    from loopline.domain.task import Task

APPROVAL = "action_approval"
"""The escalation cause of a task that waits for the owner to approve an action."""


class TaskActions:
    """A direct base of `Task`: eventsourcing redefines its events as `Task.<Name>`."""

    class ActionDecided(TaskEvent):
        """The owner approved (`decision` approved: it is taken now) or rejected a held action (`key`)."""

        key: str
        action: str
        decision: str
        reason: str
        status: str

        def apply(self, task: Task) -> None:
            if self.status != task.status:  # back from the review the action was held for
                task.escalation_reason = None
            task._moved(self.status, self.timestamp)

    def decide_action(self, *, key: str, action: str, approved: bool, reason: str, last: bool, now: datetime) -> None:
        """An escalation for approval ends with the decision on its `last` held action; any other status stays."""
        self.check_open()
        status = self.status
        if last and status is TaskStatus.ESCALATED and self.escalation_cause == APPROVAL:
            status = self._target(TaskStatus.EXECUTING)
        self.trigger_event(self.ActionDecided, timestamp=now, key=key, action=action,
                           decision="approved" if approved else "rejected", reason=reason, status=status)
