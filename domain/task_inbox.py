"""What reaches a task from the world: the signals it receives into its inbox, and the replies it notes
that another task of the same contact answers (a base of `Task`)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from loopline.domain.base import TaskEvent
from loopline.domain.status import TaskStatus

if TYPE_CHECKING:
    from loopline.domain.task import Task


class TaskInbox:
    """A direct base of `Task`; eventsourcing redefines its events as `Task.<Name>`."""

    class SignalReceived(TaskEvent):
        signal_ref: str
        signal_type: str
        data: dict[str, Any]
        resolved_loops: list[str]
        status: str

        def apply(self, task: Task) -> None:
            task.inbox_count += 1
            task.heard_from_contact()
            for loop_ref in self.resolved_loops:
                task.open_loops.remove(loop_ref)
            # The contact answered what a follow-up was to chase: the follow-up being drafted or held back goes.
            for ref, pending in list(task.pending_decisions.items()):
                if pending["loop_ref"] in self.resolved_loops:
                    del task.pending_decisions[ref]
            if task.deferred is not None and task.deferred["draft"].get("follow_up_of") in self.resolved_loops:
                task.deferred = None
            task._moved(self.status, self.timestamp)

    class ReplyNoted(TaskEvent):
        """The contact wrote, and another of their tasks answers it: this one keeps it in its inbox and its
        context, and neither answers it nor stops waiting for a reply of its own."""

        signal_ref: str
        data: dict[str, Any]
        answered_by: str

        def apply(self, task: Task) -> None:
            task.inbox_count += 1
            task.heard_from_contact()

    def receive_signal(
        self, *, signal_ref: str, signal_type: str, data: dict[str, Any], resolved_loops: list[str], now: datetime
    ) -> None:
        """Stores the signal in the inbox and wakes a waiting or dormant task."""
        status = self.status
        if status in (TaskStatus.WAITING, TaskStatus.DORMANT):
            status = self._target(TaskStatus.EXECUTING)
        resolved = [ref for ref in resolved_loops if ref in self.open_loops]
        self.trigger_event(
            self.SignalReceived, timestamp=now, signal_ref=signal_ref, signal_type=signal_type, data=data,
            resolved_loops=resolved, status=status,
        )
        self._wake_for_signal(resolved, signal_ref=signal_ref, signal_type=signal_type, now=now)

    def note_reply(self, *, signal_ref: str, data: dict[str, Any], answered_by: str, now: datetime) -> None:
        """Keeps a reply another task of the same contact answers (`ReplyNoted`)."""
        self.trigger_event(self.ReplyNoted, timestamp=now, signal_ref=signal_ref, data=data, answered_by=answered_by)

    def close_loop_by_signal_in_inbox(self, loop_ref: str, *, signal_ref: str, signal_type: str, now: datetime) -> None:
        """A signal this task already received resolves one more of its loops (registered late): no second
        inbox entry, but the loop closes and its wake-up wakes as if both had been resolved together."""
        self.close_loop(loop_ref, resolved_by="signal_match", now=now)
        self._wake_for_signal([loop_ref], signal_ref=signal_ref, signal_type=signal_type, now=now)

    def _wake_for_signal(self, resolved: list[str], *, signal_ref: str, signal_type: str, now: datetime) -> None:
        for wake_ref, wakeup in list(self.wakeups.items()):
            if wakeup["loop_ref"] in resolved:
                self.wake(wake_ref, cause="signal", reason=f"{signal_type} {signal_ref} came first", now=now)
