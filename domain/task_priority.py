"""A task's priority as the tenant's priority rules set it (seed 004 §3), recorded with the rule and the model
urgency score it read, so the reflection log can later tell which rules were right; and the decision point that asks
the model for that score."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from loopline.domain.base import TaskEvent

if TYPE_CHECKING:
    from loopline.domain.task import Task

SCORE_URGENCY = "score_urgency"
"""The decision point (a tool of `processors/model/tools.py`) that scores a task's urgency."""
URGENCY = "urgency"
"""The purpose of its request: a score, not a message; it holds back no step of the task."""
URGENCY_REF = "/urgency-score"
"""How its request ref ends (`<task ref>/urgency-score`): read models tell it from the task's next action by it."""


def is_urgency_request(request_ref: str) -> bool:
    return request_ref.endswith(URGENCY_REF)


class TaskPriority:
    """A direct base of `Task`; eventsourcing redefines its event as `Task.PriorityRuled`."""

    priority: str | None

    class PriorityRuled(TaskEvent):
        """Rule number `rule` (from 1) of the tenant's `priority_rules` set the priority, replacing `was`;
        `urgency` is the model urgency score the rules read (None when none was given)."""

        priority: str
        was: str | None
        rule: int
        urgency: float | None

        def apply(self, task: Task) -> None:
            task.priority = self.priority

    def rule_priority(self, *, priority: str, rule: int, urgency: float | None, now: datetime) -> None:
        """Records the priority the rule set, with what it replaced."""
        self.trigger_event(self.PriorityRuled, timestamp=now, priority=priority, was=self.priority, rule=rule,
                           urgency=urgency)
