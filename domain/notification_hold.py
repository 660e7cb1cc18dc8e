"""The owner's notification hold (seed 000 Part 3, Anti-Spam): what the proactive brain tells the owner goes now,
waits (quiet hours, an owner away) or is skipped (sent within 24 h); held notices come back as one digest."""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any

from eventsourcing.domain import Aggregate

from loopline.domain.activity_tier import Tier, is_return, tier_of
from loopline.domain.base import LooplineAggregate, TenantEvent
from loopline.domain.notice_budget import quiet_until
from loopline.domain.safety_limits import DIGEST_ITEMS, HOLD_CAP, SAME_CONTENT_WINDOW

DEFAULT_QUIET_HOURS = "22:00-07:00"
"""The brain's quiet hours when the owner set none (`owner_quiet_hours`, which governs the owner emails, wins)."""


def content_hash(text: str) -> str:
    """The same notice written with other spacing or case is the same content."""
    return hashlib.sha256(" ".join(text.lower().split()).encode()).hexdigest()[:16]


class NotificationHold(LooplineAggregate):
    OWNER = {"tenant": "tenant"}

    class Created(Aggregate.Created):
        tenant: str

    class Seen(TenantEvent):
        returned: bool

        def apply(self, hold: NotificationHold) -> None:
            hold.last_seen_at = self.timestamp
            if self.returned:
                hold.returned_at = self.timestamp

    class Sent(TenantEvent):
        text: str
        content: str

        def apply(self, hold: NotificationHold) -> None:
            hold._sent([self.content], self.timestamp)

    class Skipped(TenantEvent):
        text: str
        content: str
        reason: str

    class Held(TenantEvent):
        text: str
        content: str
        reason: str

        def apply(self, hold: NotificationHold) -> None:
            hold.queue.append({"text": self.text, "content": self.content, "at": self.timestamp})

    class Dropped(TenantEvent):
        """The oldest held notice, pushed out because the hold keeps at most 50."""

        text: str
        content: str

        def apply(self, hold: NotificationHold) -> None:
            del hold.queue[0]

    class DigestSent(TenantEvent):
        items: list[str]
        contents: list[str]
        discarded: int

        def apply(self, hold: NotificationHold) -> None:
            hold.queue.clear()
            hold._sent(self.contents, self.timestamp)

    def __init__(self, tenant: str) -> None:
        self.tenant = tenant
        self.last_seen_at: datetime | None = None
        self.returned_at: datetime | None = None
        self.queue: list[dict[str, Any]] = []
        self.sent_at: dict[str, datetime] = {}

    def _sent(self, contents: list[str], at: datetime) -> None:
        """Remembers what went out, and forgets what went out more than 24 h ago (it may go again)."""
        self.sent_at = {c: moment for c, moment in self.sent_at.items() if at - moment < SAME_CONTENT_WINDOW}
        self.sent_at.update(dict.fromkeys(contents, at))

    @classmethod
    def open(cls, *, id: Any, tenant: str, now: datetime) -> NotificationHold:  # noqa: A002
        return cls._create(cls.Created, id=id, timestamp=now, tenant=tenant)

    def seen(self, now: datetime) -> bool:
        """Notes the owner was seen; True when this is a return after a day or more away."""
        returned = is_return(self.last_seen_at, now)
        self.trigger_event(self.Seen, timestamp=now, returned=returned)
        return returned

    def offer(self, text: str, *, now: datetime, zone: str, quiet_hours: str | None) -> str:
        """Sends, holds or skips one notice, and says which: `sent`, `held` or `skipped`."""
        content = content_hash(text)
        last = self.sent_at.get(content)
        if last is not None and now - last < SAME_CONTENT_WINDOW:
            self.trigger_event(self.Skipped, timestamp=now, text=text, content=content,
                               reason=f"the same notice went out at {last.isoformat()}, within 24 h")
            return "skipped"
        reason = self._hold_reason(now, zone, quiet_hours)
        if reason is None:
            self.trigger_event(self.Sent, timestamp=now, text=text, content=content)
            return "sent"
        if len(self.queue) >= HOLD_CAP:
            oldest = self.queue[0]
            self.trigger_event(self.Dropped, timestamp=now, text=oldest["text"], content=oldest["content"])
        self.trigger_event(self.Held, timestamp=now, text=text, content=content, reason=reason)
        return "held"

    def _hold_reason(self, now: datetime, zone: str, quiet_hours: str | None) -> str | None:
        hours = quiet_hours or DEFAULT_QUIET_HOURS
        until = quiet_until(now, zone, hours)
        if until is not None:
            return f"quiet hours ({hours}, {zone}) until {until.isoformat()}"
        tier = Tier.CHURNED if self.last_seen_at is None else tier_of(self.last_seen_at, now)
        return None if tier is Tier.ACTIVE else f"the owner is {tier.value}: held for the return digest"

    def is_active(self, now: datetime) -> bool:
        """Whether the owner was seen within the active tier's day."""
        return self.last_seen_at is not None and tier_of(self.last_seen_at, now) is Tier.ACTIVE

    def release(self, *, now: datetime, zone: str, quiet_hours: str | None) -> list[str]:
        """Outside quiet hours, with the owner active, sends the held notices as one digest, the newest first, none
        sent within 24 h: every notice held while the owner was active (quiet hours hold, never drop), and of those
        held before the owner's return at most 5 (the return digest); the rest are discarded as stale (counted)."""
        if not self.queue or self._hold_reason(now, zone, quiet_hours) is not None:
            return []
        fresh: dict[str, tuple[str, bool]] = {}
        for held in reversed(self.queue):
            last = self.sent_at.get(held["content"])
            if (last is None or now - last >= SAME_CONTENT_WINDOW) and held["content"] not in fresh:
                away = self.returned_at is not None and held["at"] <= self.returned_at
                fresh[held["content"]] = (held["text"], away)
        # One message, not one each: the owner wakes to one digest instead of a burst at the end of quiet hours.
        picked = [(c, text) for c, (text, away) in fresh.items() if not away]
        picked += [(c, text) for c, (text, away) in fresh.items() if away][:DIGEST_ITEMS]
        self.trigger_event(self.DigestSent, timestamp=now, items=[text for _, text in picked],
                           contents=[content for content, _ in picked], discarded=len(self.queue) - len(picked))
        return [text for _, text in picked]
