"""A task's goal progress and its evaluation record (seed 002 §8, §27.4, §37): how far it is towards its goal, the
score every close is evaluated with, and the owner's override, reopening and rating of an outcome."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from loopline.domain.base import TaskEvent, TaskMoved
from loopline.domain.errors import DomainError
from loopline.domain.goal_progress import GoalProgress, budget_snapshot, outcome_score
from loopline.domain.status import TaskStatus
from loopline.domain.task_types import task_type

if TYPE_CHECKING:
    from loopline.domain.task import Task

RATINGS = ("up", "down")
DOWN_REASONS = ("never_came_back", "would_have_come_back_anyway", "wrong_member", "other")
"""Why an owner disagrees with an outcome (seed 002 §28.5's thumbs-down choices)."""


class NotClosed(DomainError):
    """An override or a reopening of a task that is still open: the owner closes an open one with its own commands."""


class UnknownOutcome(DomainError):
    """An outcome code the task's type does not have."""


class TaskProgress:
    """A direct base of `Task`: its goal progress, its evaluations and the owner's word on its outcome; eventsourcing
    redefines its events as `Task.<Name>`."""

    class GoalProgressed(TaskEvent):
        """How far the task is towards its goal now (`domain/goal_progress.py` GoalProgress), from a `source`: a goal
        signal, the model's judgment of a reply, or the owner."""

        score: int
        outcome: str | None
        confidence: float
        evidence_type: str
        evidence: str
        milestones: list[str]
        recommended: str
        source: str

        def apply(self, task: Task) -> None:
            task.progress = {"score": self.score, "outcome": self.outcome, "evidence_type": self.evidence_type,
                             "milestones": list(self.milestones), "recommended": self.recommended}

    class Evaluated(TaskEvent):
        """The evaluation record of a close (§8): the outcome, its score from 0 to 100 and why, and what the task used
        of its budgets. Recorded with every close and with every later change of a closed task's outcome."""

        outcome: str | None
        outcome_score: int
        score_reason: str
        budget: dict[str, Any]
        status: str

    class OutcomeOverridden(TaskEvent):
        """The owner's outcome for a closed task (§37.6), replacing `previous`; kept for learning from disagreements."""

        code: str
        kind: str
        previous: str | None
        reason: str
        by: str

        def apply(self, task: Task) -> None:
            task.outcome = self.code

    class Reopened(TaskMoved):
        """A closed task the owner says is not done (§37.6): back to work with its outcome cleared, the messages and
        turns it used still counted, and a fresh span of its time budget (`expires_at`)."""

        previous_status: str
        previous_outcome: str | None
        expires_at: datetime | None
        reason: str
        by: str
        status: str

        def apply(self, task: Task) -> None:
            task.outcome = None
            task.dormant_until = None
            task.expires_at = self.expires_at
            if task.outreach is not None:
                task.outreach["ends_at"] = self.expires_at
            task._moved(self.status, self.timestamp)

    class OutcomeRated(TaskEvent):
        """The owner's thumbs up or down on the task's outcome (§27.4, §28.5), with their note."""

        rating: str
        why: str | None
        note: str | None
        outcome: str | None
        by: str

    def trigger_event(self: Any, event_class: Any, **kwargs: Any) -> None:
        """The one place closes go through: an event that closes the task, or changes a closed task's outcome, is
        followed by its evaluation in the same save, whichever path closed it."""
        was_closed, outcome = self.is_closed, self.outcome
        super().trigger_event(event_class, **kwargs)
        if event_class is not self.Evaluated and self.is_closed and (not was_closed or self.outcome != outcome):
            self._evaluate(now=kwargs["timestamp"])

    def _evaluate(self: Task, *, now: datetime) -> None:
        kind = task_type(self.task_type)
        outcome = kind.outcome(self.outcome) if self.outcome else None
        score, reason = outcome_score(outcome, status=str(self.status), paid_goal=any(
            o.attribute_revenue for o in kind.goal.outcomes), progress=self.progress["score"] if self.progress else None)
        plan = self.outreach
        budget = budget_snapshot(
            messages_used=self.messages_used, messages_max=plan["budget_messages"] if plan else None,
            turns_used=self.turns_used, turns_max=plan["budget_turns"] if plan else None, created=self.created_on,
            ends_at=plan["ends_at"] if plan else self.expires_at, now=now)
        self.trigger_event(self.Evaluated, timestamp=now, outcome=self.outcome, outcome_score=score,
                           score_reason=reason, budget=budget, status=str(self.status))

    def complete(self: Task, *, summary: str, now: datetime) -> None:
        self.trigger_event(self.Completed, timestamp=now, summary=summary, status=self._target(TaskStatus.COMPLETED))

    def cancel(self: Task, *, reason: str, now: datetime) -> None:
        self.trigger_event(self.Cancelled, timestamp=now, reason=reason, status=self._target(TaskStatus.CANCELLED))

    def expire(self: Task, *, reason: str, now: datetime) -> None:
        self.trigger_event(self.Expired, timestamp=now, reason=reason, status=self._target(TaskStatus.EXPIRED))

    @property
    def milestones_reached(self: Task) -> tuple[str, ...]:
        return tuple(self.progress["milestones"]) if self.progress else ()

    def record_progress(self: Task, progress: GoalProgress, *, source: str, now: datetime) -> None:
        self.trigger_event(self.GoalProgressed, timestamp=now, source=source, **progress.as_event_fields())

    def override_outcome(self: Task, *, code: str, reason: str, by: str, now: datetime) -> None:
        """Any outcome of the type's spectrum (or `owner_handled`); an open task is closed with the owner's commands."""
        if not self.is_closed:
            raise NotClosed(f"task_id: task {self.ref} is {self.status}: override the outcome of a closed task; close "
                            "this one with task.takeover, task.complete or task.cancel")
        kind = task_type(self.task_type)
        outcome = kind.outcome(code)
        if outcome is None:
            raise UnknownOutcome(f"outcome: {code!r} is not an outcome of task type {kind.name}; its outcomes are "
                                 f"{', '.join((*kind.outcome_codes, 'owner_handled'))}")
        self.trigger_event(self.OutcomeOverridden, timestamp=now, code=code, kind=outcome.kind, previous=self.outcome,
                           reason=reason, by=by)

    def reopen(self: Task, *, reason: str, by: str, expires_at: datetime | None, now: datetime) -> None:
        if not self.is_closed:
            raise NotClosed(f"task_id: task {self.ref} is {self.status}, not closed: there is nothing to reopen")
        self.trigger_event(self.Reopened, timestamp=now, previous_status=str(self.status),
                           previous_outcome=self.outcome, expires_at=expires_at, reason=reason, by=by,
                           status=str(TaskStatus.EXECUTING))

    def rate_outcome(self: Task, *, rating: str, why: str | None, note: str | None, by: str, now: datetime) -> None:
        """A closed or escalated task's outcome, rated (§28.5); a rating of an open task the agent still works is refused."""
        if not self.is_closed and self.status is not TaskStatus.ESCALATED:
            raise NotClosed(f"task_id: task {self.ref} is {self.status}: rate it once it is closed or escalated")
        self.trigger_event(self.OutcomeRated, timestamp=now, rating=rating, why=why, note=note, outcome=self.outcome,
                           by=by)
