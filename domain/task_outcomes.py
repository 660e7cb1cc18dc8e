"""What outcome signals do to a task (seed 002 §9, §16): the signal kept as evidence, and the revisions of a closed
task's outcome (a late attribution, a provisional outcome downgraded, a refund undoing a recovery). A revision
changes the outcome, never the status: a closed task stays closed (§16.2)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from loopline.domain.base import TaskEvent
from loopline.domain.errors import DomainError

if TYPE_CHECKING:
    from loopline.domain.task import Task


class TaskStillOpen(DomainError):
    """An outcome is revised only after the task closed; an open task is closed with one instead."""


class OutcomeRevision(TaskEvent):
    """A closed task's outcome becomes `code` (of kind `kind`) instead of `previous`, for `reason`."""

    code: str
    kind: str
    previous: str | None
    reason: str

    def apply(self, task: Task) -> None:
        task.outcome = self.code


class TaskOutcomes:
    """A direct base of `Task`; eventsourcing redefines its events as `Task.<Name>`. It keeps no state of its own:
    a revision sets the task's `outcome`."""

    class OutcomeSignalReceived(TaskEvent):
        """An `outcome.observed` about the task's contact reached it, and what it did (`effect`): the evidence of
        a close or revision, or why it changed nothing."""

        signal_ref: str
        signal_kind: str
        value: float | None
        account: str | None
        effect: str

    class AttributedLate(OutcomeRevision):
        """A signal after the close, inside the type's attribution window, is attributed retroactively (`engaged_late`,
        §16.2): the outcome becomes the signal's."""

        signal_ref: str
        signal_kind: str
        value: float | None

    class OutcomeDowngraded(OutcomeRevision):
        """A provisional outcome (`verbal_commitment`) whose verification window passed with no confirming signal."""

    class OutcomeUndone(OutcomeRevision):
        """A signal that takes back the one the outcome rested on (a refund after a payment)."""

        signal_ref: str
        signal_kind: str
        value: float | None

    def note_outcome_signal(self, *, signal_ref: str, signal_kind: str, value: float | None, account: str | None,
                            effect: str, now: datetime) -> None:
        self.trigger_event(self.OutcomeSignalReceived, timestamp=now, signal_ref=signal_ref, signal_kind=signal_kind,
                           value=value, account=account, effect=effect)

    def attribute_late(self, *, code: str, kind: str, reason: str, signal_ref: str, signal_kind: str,
                       value: float | None, now: datetime) -> None:
        self._check_closed()
        self.trigger_event(self.AttributedLate, timestamp=now, code=code, kind=kind, previous=self.outcome,
                           reason=reason, signal_ref=signal_ref, signal_kind=signal_kind, value=value)

    def downgrade_outcome(self, *, code: str, kind: str, reason: str, now: datetime) -> None:
        self._check_closed()
        self.trigger_event(self.OutcomeDowngraded, timestamp=now, code=code, kind=kind, previous=self.outcome,
                           reason=reason)

    def undo_outcome(self, *, code: str, kind: str, reason: str, signal_ref: str, signal_kind: str,
                     value: float | None, now: datetime) -> None:
        self._check_closed()
        self.trigger_event(self.OutcomeUndone, timestamp=now, code=code, kind=kind, previous=self.outcome,
                           reason=reason, signal_ref=signal_ref, signal_kind=signal_kind, value=value)

    def _check_closed(self) -> None:
        if not self.is_closed:
            raise TaskStillOpen(f"task {self.ref} is {self.status}: its outcome is set when it closes")
