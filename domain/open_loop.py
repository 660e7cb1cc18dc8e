"""The OpenLoop aggregate: an expectation of what should happen next, with a deadline (seed 000 Part 2)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from eventsourcing.domain import Aggregate

from loopline.domain.base import LoopEvent, LooplineAggregate
from loopline.domain.errors import DomainError
from loopline.domain.expectations import DEADLINE_ACTIONS, WAKE_TASK
from loopline.domain.matching import channel_rule

RESOLVED_BY = ("signal_match", "task_completed", "cancelled", "expired", "manual")


class LoopAlreadyResolved(DomainError):
    pass


class InvalidDeadlineAction(DomainError):
    pass


class OpenLoop(LooplineAggregate):
    OWNER = {"tenant": "tenant", "task_ref": "task_ref", "loop_ref": "ref"}

    class Registered(Aggregate.Created):
        tenant: str
        ref: str
        task_ref: str
        channel: str
        watch: dict[str, Any]
        deadline: datetime
        if_unresolved: str
        description: str
        origin: str
        subject: str | None
        message_id: str | None

    class Resolved(LoopEvent):
        resolved_by: str
        reason: str
        signal_ref: str | None
        rule: str | None

        def apply(self, loop: OpenLoop) -> None:
            loop.resolved = True
            loop.resolved_at = self.timestamp
            loop.resolved_by = self.resolved_by

    def __init__(
        self,
        tenant: str,
        ref: str,
        task_ref: str,
        channel: str,
        watch: dict[str, Any],
        deadline: datetime,
        if_unresolved: str,
        description: str,
        origin: str,
        subject: str | None,
        message_id: str | None,
    ) -> None:
        self.tenant = tenant
        self.ref = ref
        self.task_ref = task_ref
        self.channel = channel
        self.watch = watch
        self.deadline = deadline
        self.if_unresolved = if_unresolved
        self.description = description
        self.origin = origin
        self.subject = subject
        """What the awaited reply is about (an email's subject), for follow-ups."""
        self.message_id = message_id
        """The Message-ID of the email that opened the thread, so a follow-up replies in it."""
        self.resolved = False
        self.resolved_at: datetime | None = None
        self.resolved_by: str | None = None

    @classmethod
    def register(
        cls,
        *,
        id: Any,  # noqa: A002
        now: datetime,
        channel: str,
        watch: dict[str, Any],
        if_unresolved: str,
        subject: str | None = None,
        message_id: str | None = None,
        **fields: Any,
    ) -> OpenLoop:
        """Validates the watch against its channel's schema and the deadline action before anything is stored."""
        channel_rule(channel).check_watch(watch)
        if if_unresolved not in DEADLINE_ACTIONS and not (if_unresolved == WAKE_TASK and fields.get("origin") == "wakeup"):
            raise InvalidDeadlineAction(
                f"if_unresolved {if_unresolved!r} is not a deadline action; use one of {', '.join(DEADLINE_ACTIONS)}"
            )
        if if_unresolved == "draft_followup_email" and channel != "email":
            raise InvalidDeadlineAction(f"draft_followup_email needs an email loop, not {channel}")
        return cls._create(
            cls.Registered, id=id, timestamp=now, channel=channel, watch=watch, if_unresolved=if_unresolved,
            subject=subject, message_id=message_id, **fields,
        )

    def check_open(self) -> None:
        if self.resolved:
            raise LoopAlreadyResolved(f"loop {self.ref} was already resolved ({self.resolved_by})")

    def resolve(
        self, *, resolved_by: str, reason: str, now: datetime, signal_ref: str | None = None, rule: str | None = None
    ) -> None:
        self.check_open()
        if resolved_by not in RESOLVED_BY:
            raise ValueError(f"resolved_by must be one of {RESOLVED_BY}")
        self.trigger_event(
            self.Resolved, timestamp=now, resolved_by=resolved_by, reason=reason, signal_ref=signal_ref, rule=rule
        )

    def is_overdue(self, now: datetime) -> bool:
        return not self.resolved and self.deadline <= now
