"""What a task tells its owner: the notice event and the command that emits it (`domain/notices.py` says what
each kind offers and when one is moot)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from loopline.domain.base import TaskEvent
from loopline.domain.notices import actions_for

if TYPE_CHECKING:
    from loopline.domain.task import Task


class TaskNotices:
    """A direct base of `Task`: its notices to the owner; eventsourcing redefines the event as `Task.UserNotified`."""

    class UserNotified(TaskEvent):
        """A notice to the owner: what happened, what the contact wrote, the agent's draft and the commands
        the owner can answer with."""

        class_version = 2
        kind: str
        message: str
        quote: str | None
        draft: dict[str, Any] | None
        actions: list[dict[str, Any]]

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            """A version-1 notice was its words only."""
            state.update(quote=None, draft=None, actions=[])

        def apply(self, task: Task) -> None:
            task.notifications += 1

    def notify_user(self, *, kind: str, message: str, now: datetime, quote: str | None = None,
                    draft: dict[str, Any] | None = None, action_key: str | None = None,
                    question_ref: str | None = None) -> None:
        """Tells the owner, quoting the contact (`quote`) and the agent's `draft` when there is one; the commands
        offered follow from the kind, naming the action (`action_key`) or the question (`question_ref`) a notice is
        about."""
        self.trigger_event(
            self.UserNotified, timestamp=now, kind=kind, message=message, quote=quote or None,
            draft=dict(draft) if draft else None,
            actions=actions_for(kind, self.ref, acting=self.is_acting, held_draft=bool(draft), action_key=action_key,
                                question_ref=question_ref),
        )
