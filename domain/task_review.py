"""What the owner decides about a task: approval or rejection of a proposal, guidance, escalation to them, and
answering the contact in the agent's place."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from loopline.domain.base import TaskEvent, TaskMoved
from loopline.domain.errors import DomainError
from loopline.domain.status import TaskStatus

if TYPE_CHECKING:
    from loopline.domain.task import Task


class NothingToAnswer(DomainError):
    """The owner asked to send something the task has no place for (no contact it writes to, no draft held back)."""


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
            task._hold(None)  # the agent writes anew with the guidance
            task._moved(self.status, self.timestamp)

    class Escalated(TaskEvent):
        reason: str
        cause: str
        status: str

        def apply(self, task: Task) -> None:
            task.escalation_reason = self.reason
            task.escalation_cause = self.cause
            task._moved(self.status, self.timestamp)

    class DraftHeldBack(TaskEvent):
        """A message the agent wrote and did not send (too unsure, or no budget left) waits for the owner's
        `task.approve`, which sends it as it is or as the owner edited it."""

        draft: dict[str, Any]

        def apply(self, task: Task) -> None:
            task._hold(dict(self.draft))

    class FirstDraftEdited(TaskEvent):
        """The owner approved a task with their own first message: it goes out as touch 1 instead of the agent's."""

        draft: dict[str, Any]

        def apply(self, task: Task) -> None:
            assert task.outreach is not None, f"task {task.ref} has no outreach plan to take a first draft"
            task.outreach = {**task.outreach, "draft": dict(self.draft)}

    class OwnerAnswered(TaskEvent):
        """The owner answers the contact in the agent's place (`how`: a held-back draft approved or edited, or
        their own words): what the agent had in hand for the contact (a decision being written, a draft held back
        or deferred) is dropped, and an escalation is over."""

        how: str
        reason: str
        status: str

        def apply(self, task: Task) -> None:
            task.escalation_reason = None
            task._hold(None)
            task.pending_decisions = {}
            task.deferred = None
            task._moved(self.status, self.timestamp)

    @property
    def held_draft(self) -> dict[str, Any] | None:
        """A message the agent wrote and did not send, waiting for the owner's `task.approve` (`DraftHeldBack`)."""
        return self.outreach.get("held_draft") if self.outreach else None

    def _hold(self, draft: dict[str, Any] | None) -> None:
        """Kept in the outreach plan, which only an acting task has (the one that drafts), so older snapshots
        need no upcasting."""
        if self.outreach is not None and (draft is not None or self.outreach.get("held_draft") is not None):
            self.outreach = {**self.outreach, "held_draft": draft}

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

    def hold_draft(self, draft: dict[str, Any], *, now: datetime) -> None:
        self.check_open()
        self.trigger_event(self.DraftHeldBack, timestamp=now, draft=dict(draft))

    def edit_first_draft(self, *, subject: str, body: str, now: datetime) -> None:
        """Only before touch 1 of a task Loopline works: later, the owner answers with `task.reply`."""
        if self.outreach is None or self.touch > 0:
            raise NothingToAnswer(f"draft: task {self.ref} has no first message to replace: "
                                  + ("it sent its first already; use task.reply" if self.outreach else
                                     "Loopline sends nothing for it (no task_type that sends, or no address)"))
        self.trigger_event(self.FirstDraftEdited, timestamp=now,
                           draft={"subject": subject, "body": body, "decided_by": "owner"})

    def answer_for_owner(self, *, how: str, reason: str, now: datetime) -> None:
        """Readies the task for the owner's message to the contact; the send that follows records the message."""
        self.check_open()
        if self.outreach is None or not self.contact:
            raise NothingToAnswer(f"task {self.ref} has no contact Loopline writes to (it is not a task Loopline "
                                  "works); write to them yourself and record it with action.record")
        if self.status is TaskStatus.PENDING_REVIEW:
            raise NothingToAnswer(f"task {self.ref} is pending_review: approve it first (task.approve, with a `draft` "
                                  "to send your own first message)")
        status = self._target(TaskStatus.EXECUTING) if self.status is TaskStatus.ESCALATED else self.status
        self.trigger_event(self.OwnerAnswered, timestamp=now, how=how, reason=reason, status=status)
