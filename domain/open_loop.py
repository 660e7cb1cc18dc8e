"""The OpenLoop aggregate: an expectation of what should happen next, with a deadline and the action its passing takes."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from eventsourcing.domain import Aggregate

from loopline.domain.base import LoopEvent, LooplineAggregate
from loopline.domain.errors import DomainError
from loopline.domain.expectations import DEADLINE_ACTIONS, LOOPLINE_ONLY_ACTIONS
from loopline.domain.channels import channel_rule
from loopline.domain.wording import awaited_from_watch

RESOLVED_BY = ("signal_match", "task_completed", "cancelled", "expired", "manual", "superseded", "suppressed")


class LoopAlreadyResolved(DomainError):
    pass


class InvalidDeadlineAction(DomainError):
    pass


class OpenLoop(LooplineAggregate):
    OWNER = {"tenant": "tenant", "task_ref": "task_ref", "loop_ref": "ref"}

    class Registered(Aggregate.Created):
        """Version 2 adds who the loop waits on (`contact`, `contact_name`) and the `action` that opened it."""

        class_version = 2

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
        action: str | None
        contact: str | None
        contact_name: str | None

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            state.update(action=None, contact=None, contact_name=None)  # unknown then: plain words stand in

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
        action: str | None,
        contact: str | None,
        contact_name: str | None,
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
        self.action = action
        """The agent action that implied the loop; None for a loop registered by hand."""
        self.contact = contact
        """Who the loop waits on (an address), when a message said so: a reminder goes there."""
        self.contact_name = contact_name
        """Their name, when a message gave one: a follow-up greets them by it."""
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
        action: str | None = None,
        contact: str | None = None,
        contact_name: str | None = None,
        **fields: Any,
    ) -> OpenLoop:
        """Validates the watch against its channel's schema and the deadline action before anything is stored."""
        channel_rule(channel).check_watch(watch)
        if if_unresolved not in DEADLINE_ACTIONS and LOOPLINE_ONLY_ACTIONS.get(if_unresolved) != fields.get("origin"):
            raise InvalidDeadlineAction(
                f"if_unresolved {if_unresolved!r} is not a deadline action; use one of {', '.join(DEADLINE_ACTIONS)}"
            )
        if if_unresolved == "draft_followup_email" and channel != "email":
            raise InvalidDeadlineAction(f"draft_followup_email needs an email loop, not {channel}")
        return cls._create(
            cls.Registered, id=id, timestamp=now, channel=channel, watch=watch, if_unresolved=if_unresolved,
            subject=subject, message_id=message_id, action=action, contact=contact, contact_name=contact_name,
            **fields,
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

    def awaited(self) -> str:
        """What the loop waits for in the owner's words (registered by hand without a description: its watch)."""
        return self.description or awaited_from_watch(self.channel, self.watch)

    def is_overdue(self, now: datetime) -> bool:
        return not self.resolved and self.deadline <= now
