"""Delivers what Loopline itself sends (follow-ups to contacts, owner notifications, wake-ups for the
agent runtime) through every channel that takes it.

The outbox is the event store: each outbound message is derived from a stored event
(Task.UserNotified, Task.ActionRecorded by Loopline, Task.WokenUp, Task.SignalReceived), and that event was committed in the same transaction as its cause. Its
idempotency key is `<originator_id>:<originator_version>`. Per key and channel the durable
delivery ledger says whether it was delivered; a channel's send is claimed there first and
marked the moment the channel accepted it, one by one, so a crash resends at most the one message
that was in flight, with the same key, which each destination uses to drop the repeat. A failed
send is retried with backoff from the ledger (it never holds up other messages) and after the last
attempt parked as failed, visible in `loopline status`. A contact email the SMTP channel cannot take
at all is parked at once and given back: the task and the send ledgers stop counting it and the owner
is told (`processors/handlers/undelivered.py`).

An owner notice that asks the owner to act is looked at again just before each send: when the owner
acted on its task after it (or the task closed), it is withdrawn (`domain/notices.py`), marked so in the
ledger on every channel, and never delivered late. With the tenant's `owner_email` set, a notice also
goes to the owner by email (`adapters/smtp.py`). An email the send recorded in dry run (`tenant.configure`
`dry_run`) is marked `dry_run` in the ledger on every channel and never sent. The owner's emails are paced by
their daily budgets and quiet hours (`processors/followers/owner_emails.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from uuid import UUID

from eventsourcing.application import AggregateNotFoundError
from eventsourcing.persistence import IntegrityError, Tracking
from eventsourcing.utils import get_topic

from loopline.domain import ids
from loopline.domain.actions import ACTIONS
from loopline.domain.notices import moot_by
from loopline.domain.notification_hold import NotificationHold
from loopline.domain.safety_limits import DELIVERY_ATTEMPTS, DELIVERY_BACKOFF_SECONDS
from loopline.domain.task import Task
from loopline.domain.tenant import Tenant, TenantSettings
from loopline.domain.timeutil import format_time
from loopline.processors.application import Loopline
from loopline.processors.bus import is_infrastructure
from loopline.processors.followers.owner_emails import OwnerEmails, folded
from loopline.processors.handlers.undelivered import give_back_undelivered
from loopline.processors.ports import Attempt, Clock, DeliveryFailed, DeliveryLedger, OutboundChannel

TOPICS = [
    get_topic(Task.UserNotified), get_topic(Task.ActionRecorded), get_topic(Task.WokenUp), get_topic(Task.SignalReceived),
    get_topic(Tenant.DigestRecorded), get_topic(NotificationHold.Sent), get_topic(NotificationHold.DigestSent),
]
ROUTING = "routing"
"""The ledger's channel for an event that failed to become a message (parked; a retry routes it again)."""
DAILY_DIGEST = "daily_digest"
"""The kind of the owner's daily digest (`Tenant.DigestRecorded`)."""
BRAIN_NOTICE, RETURN_DIGEST = "brain_notice", "return_digest"
"""The kinds of the tenant-level notices the notification hold sent (`processors/handlers/owner_notices.py`)."""
EMAIL = "smtp"
"""The channel that emails: a contact email it cannot take is given back (`processors/handlers/undelivered.py`)."""
CONTACT_EMAILS = ("send_reminder", *(name for name, profile in ACTIONS.items() if profile.channel == EMAIL))
"""The actions Loopline emails to a contact: outreach's reminders and the registry's actions SMTP carries."""


class Delivery:
    name = "delivery"

    def __init__(
        self,
        app: Loopline,
        ledger: DeliveryLedger,
        channels: Sequence[OutboundChannel],
        *,
        clock: Clock,
        batch_size: int = 200,
        max_attempts: int = DELIVERY_ATTEMPTS,
        backoff: float = DELIVERY_BACKOFF_SECONDS,
        scorecard_of: Callable[[str, str], str] | None = None,
    ) -> None:
        self.app = app
        self.ledger = ledger
        self.channels = {channel.name: channel for channel in channels}
        self.clock = clock
        self.batch_size = batch_size
        self.max_attempts = max_attempts
        self.backoff = backoff
        self._moot: dict[str, str | None] = {}
        """Why a notice is withdrawn (None: it stands), by key, for one pass: its channels ask once."""
        self._settings: dict[str, TenantSettings] = {}
        """Each tenant's settings, read once a pass."""
        self.scorecard_of = scorecard_of
        self.owner_emails = OwnerEmails(ledger, self._tenant_settings, scorecard_of)

    def _now(self) -> float:
        """Retry times are wall-clock seconds: how long a channel has been down, not business time."""
        return self.clock.now().timestamp()

    def add_channel(self, channel: OutboundChannel) -> None:
        self.channels[channel.name] = channel

    def run_once(self) -> int:
        """Sends the retries that are due, then the messages of the next batch of events; returns how many of each.

        The batch's sends are claimed in one transaction and each is marked as soon as its channel took
        it (`_deliver`), so a crash mid-batch sends again only the message in flight (with its key); the
        rest of the batch is still claimed by the dead process and taken over at once."""
        self._moot, self._settings = {}, {}
        retried = self.owner_emails.fold(self.ledger.due(now=self._now(), limit=self.batch_size),
                                         stands=lambda attempt: self._withdrawn(attempt) is None)
        self._deliver(retried)
        notifications = self.app.process_recorder.select_notifications(
            start=self.app.position(self.name) + 1, limit=self.batch_size, topics=TOPICS
        )
        wanted: list[tuple[str, str, dict[str, Any]]] = []
        for notification in notifications:
            event = self.app.mapper.to_domain_event(notification)
            key = f"{event.originator_id}:{event.originator_version}"
            try:
                wanted += self._wanted(event, key)
            except Exception as error:
                if is_infrastructure(error):
                    raise
                # The event cannot become a message: park it (retried by `loopline parked retry`), go on.
                unroutable = {"tenant": event.tenant, "task_id": getattr(event, "task_ref", None),
                              "kind": type(event).__qualname__, "position": notification.id}
                self.ledger.park(key, ROUTING, unroutable, error=_describe(error), now=self._now())
        self._deliver(self.ledger.claim(wanted, now=self._now()))
        if notifications:
            try:
                self.app.process_recorder.insert_tracking(Tracking(self.name, notifications[-1].id))
            except IntegrityError:
                pass  # another delivering process recorded this position first; the ledger kept the sends single
        return len(retried) + len(notifications)

    def _wanted(self, event: Any, key: str) -> list[tuple[str, str, dict[str, Any]]]:
        """The (key, channel, message) sends an event asks for: none, or one per channel that takes it."""
        message = outbound_message(event)
        if message is None:
            return []
        message = {"tenant": event.tenant, "task_id": getattr(event, "task_ref", None), **message}
        if isinstance(event, Task.UserNotified):
            message.update(self._owner(event))
        if isinstance(event, (NotificationHold.Sent, NotificationHold.DigestSent)):
            message.update(self._tenant_notice(event))
        if isinstance(event, Tenant.DigestRecorded):
            message.update(self._daily_digest(event))
        return self._routes(key, message)

    def _daily_digest(self, digest: Tenant.DigestRecorded) -> dict[str, Any]:
        """The day's scorecard in words (from the read model, when this deployment keeps it), emailed to the owner."""
        told = {"title": f"daily digest of {digest.day}"}
        if self.scorecard_of is not None:
            told["text"] = self.scorecard_of(digest.tenant, digest.day)
        owner_email = self._tenant_settings(digest.tenant).owner_email
        return {**told, "owner_email": owner_email} if owner_email else told

    def _owner(self, notice: Any) -> dict[str, Any]:
        """Where the owner reads a notice by email, and the task's title for its subject: nothing without `owner_email`."""
        owner_email = self._tenant_settings(notice.tenant).owner_email
        if not owner_email:
            return {}
        task = self._get(notice.originator_id)
        return {"owner_email": owner_email, "title": task.title if task is not None else notice.task_ref}

    def _tenant_notice(self, notice: Any) -> dict[str, Any]:
        """A tenant-level notice from the brain (no task): its subject, and where the owner reads it by email."""
        owner_email = self._tenant_settings(notice.tenant).owner_email
        title = "notice" if isinstance(notice, NotificationHold.Sent) else f"{len(notice.items)} held notice(s)"
        return {"title": title, **({"owner_email": owner_email} if owner_email else {})}

    def _tenant_settings(self, tenant: str) -> TenantSettings:
        if tenant not in self._settings:
            found = self._get(ids.tenant_id(tenant))
            self._settings[tenant] = found.current if found is not None else TenantSettings()
        return self._settings[tenant]

    def _get(self, aggregate_id: UUID) -> Any:
        try:
            return self.app.repository.get(aggregate_id)
        except AggregateNotFoundError:
            return None

    def _withdrawn(self, attempt: Attempt) -> str | None:
        """Why an owner notice asking to act is moot now (the owner's or the task's later event), or None."""
        if attempt.message.get("to") != "user" or not attempt.message.get("actions"):
            return None
        if attempt.key not in self._moot:
            originator, _, version = attempt.key.partition(":")
            later = self.app.events.get(UUID(originator), gt=int(version))
            moot = moot_by(attempt.message.get("kind", ""), attempt.message["actions"], later)
            self._moot[attempt.key] = f"withdrawn: the task had {moot} after this notice" if moot else None
        return self._moot[attempt.key]

    def _reroute(self, attempt: Attempt) -> None:
        """Retries an event that could not become a message: routes it again and sends what it asks for."""
        [notification] = self.app.process_recorder.select_notifications(
            start=attempt.message["position"], limit=1, topics=TOPICS
        )
        wanted = self._wanted(self.app.mapper.to_domain_event(notification), attempt.key)
        self._deliver(self.ledger.claim(wanted, now=self._now()))

    def _routes(self, key: str, message: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
        channels = [channel for channel in self.channels.values() if channel.accepts(message)]
        if is_contact_email(message) or is_owner_email(message):
            message["emailed"] = any(channel.name == EMAIL for channel in channels)
        return [(key, channel.name, message) for channel in channels]

    def _deliver(self, attempts: list[Attempt]) -> None:
        """Sends each claimed message and marks it delivered the moment its channel took it, so a crash resends
        at most the one in flight; a channel that never delivers a key twice itself (the JSONL outbox) has its
        sends marked together, in one transaction, after the others."""
        together = []
        for attempt in attempts:
            if not self._send(attempt):
                continue
            channel = self.channels.get(attempt.channel)
            if attempt.channel == ROUTING or (channel is not None and channel.drops_repeats):
                together.append(attempt)
            else:  # a digest of the owner's notices marks those it carried with it
                self.ledger.delivered([attempt, *folded(attempt)], now=self._now())
        self.ledger.delivered(together, now=self._now())

    def _send(self, attempt: Attempt) -> bool:
        """True when the channel took the message; a failure is recorded for a retry, or parked after the last."""
        channel = self.channels.get(attempt.channel)
        try:
            withdrawn = self._withdrawn(attempt)
            if withdrawn:
                self.ledger.withdraw(attempt, reason=withdrawn, now=self._now())
                return False
            if (attempt.message.get("details") or {}).get("dry_run"):
                self.ledger.dry_run(attempt, now=self._now())
                return False
            if attempt.channel == EMAIL and is_owner_email(attempt.message) and self.owner_emails.held(
                attempt, self.clock.now()
            ):
                return False
            if attempt.channel == ROUTING:
                self._reroute(attempt)
            elif channel is None:
                raise DeliveryFailed(f"channel {attempt.channel} is not configured in this process")
            else:
                channel.send(key=attempt.key, message=attempt.message)
        except Exception as error:
            if isinstance(error, DeliveryFailed) or is_infrastructure(error):
                last = attempt.attempts >= self.max_attempts
                retry_at = None if last else self._now() + self.backoff * 2 ** (attempt.attempts - 1)
                self.ledger.failed(attempt, error=str(error), retry_at=retry_at, now=self._now())
            else:  # a bug or a message the channel cannot take: retrying the same way would fail the same way
                if attempt.channel == EMAIL and is_contact_email(attempt.message):
                    give_back_undelivered(self.app, key=attempt.key, reason=_describe(error), now=self.clock.now())
                self.ledger.failed(attempt, error=_describe(error), retry_at=None, now=self._now())
            return False
        return True


def _describe(error: Exception) -> str:
    return f"{type(error).__name__}: {error}"


def is_contact_email(message: dict[str, Any]) -> bool:
    """An email Loopline itself sends to a contact (a follow-up, a reminder, an invitation), as opposed to the owner or
    the agent."""
    return message.get("kind") in CONTACT_EMAILS and "@" in str(message.get("to") or "")


def is_owner_email(message: dict[str, Any]) -> bool:
    """An owner notice for a tenant with an `owner_email`: it is emailed to the owner as well."""
    return message.get("to") == "user" and bool(message.get("owner_email"))


def outbound_message(event: object) -> dict | None:
    if isinstance(event, Task.UserNotified):
        notice = {"quote": event.quote, "draft": event.draft, "actions": event.actions}
        return {"to": "user", "kind": event.kind, "text": event.message, "at": format_time(event.timestamp),
                **{field: value for field, value in notice.items() if value}}
    if isinstance(event, Task.WokenUp):  # the agent runtime resumes the task
        return {"to": "agent", "kind": "task_wakeup", "wake_id": event.wake_ref, "cause": event.cause,
                "text": event.reason, "at": format_time(event.timestamp)}
    if isinstance(event, Task.SignalReceived):
        # Every signal that reaches a task wakes it for the agent runtime, whatever the task was doing
        # when it was processed: that keeps the outbox the same in any processing order.
        return {"to": "agent", "kind": "task_signal", "signal_type": event.signal_type, "signal_id": event.signal_ref,
                "text": f"{event.signal_type} {event.signal_ref} arrived", "at": format_time(event.timestamp)}
    if isinstance(event, NotificationHold.Sent):
        return {"to": "user", "kind": BRAIN_NOTICE, "text": event.text, "at": format_time(event.timestamp)}
    if isinstance(event, NotificationHold.DigestSent):
        return {"to": "user", "kind": RETURN_DIGEST, "text": "\n".join(f"- {item}" for item in event.items),
                "at": format_time(event.timestamp)}
    if isinstance(event, Tenant.DigestRecorded):
        return {"to": "user", "kind": DAILY_DIGEST, "day": event.day, "text": f"the scorecard of {event.day}",
                "at": format_time(event.timestamp)}
    if isinstance(event, Task.ActionRecorded) and event.sent_by_loopline:
        return {"to": event.details.get("to", "counterpart"), "kind": event.action, "text": event.summary,
                "details": event.details, "at": format_time(event.timestamp)}
    return None
