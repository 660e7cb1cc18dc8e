"""A task's priority as the tenant's priority rules set it (seed 004 §3), recorded with the rule and the model
urgency score it read, so the reflection log can later tell which rules were right."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from loopline.domain.base import TaskEvent

if TYPE_CHECKING:
    from loopline.domain.task import Task


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
