"""The send ledgers: what Loopline emailed each contact and each tenant, read before every send.

`ContactSends` (one per tenant and contact) keeps the send times of a rolling window, for the
member weekly limit; `TenantSends` (one per tenant) counts sends per tenant-local calendar day,
for the daily limit. Both are loaded and changed in the unit of work of the send itself, so two
sends racing to the same contact meet as a version conflict on the ledger, never as one send too
many. Their state keeps only the recent past, so it stays small however long a tenant runs.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from eventsourcing.domain import Aggregate

from loopline.domain.base import LooplineAggregate, TenantEvent
from loopline.domain.suppression import ContactSuppression

WEEK = timedelta(days=7)
KEEP_SENDS_FOR = 2 * WEEK
"""Behind the latest send: a send up to a week older than the latest (a late step, stamped with an
earlier business time) is still judged against every send that can share a week with it."""
KEEP_DAYS = 7
"""Days behind the latest send's day whose counts are kept."""


class ContactSends(ContactSuppression, LooplineAggregate):
    """Times Loopline emailed one contact of one tenant, across all of its tasks, and whether the contact is
    suppressed (`domain/suppression.py`)."""

    OWNER = {"tenant": "tenant"}

    class_version = 2
    """Version 2 adds the suppression and the soft bounces (an older snapshot is of a contact never suppressed)."""

    class Created(Aggregate.Created):
        tenant: str
        contact: str

    class Sent(TenantEvent):
        """One email to the contact at the event's time, by the task it names."""

        task_ref: str

        def apply(self, ledger: ContactSends) -> None:
            sent_at = sorted([*ledger.sent_at, self.timestamp])
            horizon = sent_at[-1] - KEEP_SENDS_FOR
            forgotten = [moment for moment in sent_at if moment <= horizon]
            if forgotten:
                ledger.forgotten_until = max(filter(None, (ledger.forgotten_until, forgotten[-1])))
            ledger.sent_at = sent_at[len(forgotten):]

    class Returned(TenantEvent):
        """The email sent at `sent_at` by the task never left (delivery could not send it): it no longer counts."""

        task_ref: str
        sent_at: datetime

        def apply(self, ledger: ContactSends) -> None:
            if self.sent_at in ledger.sent_at:
                ledger.sent_at.remove(self.sent_at)

    def __init__(self, tenant: str, contact: str) -> None:
        self.tenant = tenant
        self.contact = contact
        self.sent_at: list[datetime] = []
        """Send times of the last KEEP_SENDS_FOR before the latest one, oldest first."""
        self.forgotten_until: datetime | None = None
        """The latest send dropped from `sent_at`: a week after it, every week is known in full."""
        self.suppression: dict[str, Any] | None = None
        """reason, source, words (what made it, e.g. the reply's opt-out phrase) and since (ISO 8601)."""
        self.soft_bounces = 0

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        state.update(suppression=None, soft_bounces=0)

    @classmethod
    def open(cls, *, id: Any, tenant: str, contact: str, now: datetime) -> ContactSends:  # noqa: A002
        return cls._create(cls.Created, id=id, timestamp=now, tenant=tenant, contact=contact.lower())

    def record(self, *, task_ref: str, now: datetime) -> None:
        self.trigger_event(self.Sent, timestamp=now, task_ref=task_ref)

    def give_back(self, *, task_ref: str, sent_at: datetime, now: datetime) -> None:
        self.trigger_event(self.Returned, timestamp=now, task_ref=task_ref, sent_at=sent_at)

    def sent_within_week_of(self, at: datetime) -> int:
        """Sends in the 7 days up to and including `at`: what the contact got "this week"."""
        return sum(1 for moment in self.sent_at if at - WEEK < moment <= at)

    def emailed_on(self, day: date, timezone: str) -> bool:
        """Whether the contact got an email on the local `day` (a day the ledger has forgotten counts as one)."""
        if self.forgotten_until is not None and local_day(self.forgotten_until, timezone) >= day:
            return True
        return any(local_day(moment, timezone) == day for moment in self.sent_at)

    def frees_at(self, limit: int, at: datetime) -> datetime | None:
        """The first time from `at` on at which one more send leaves no 7-day window with more than
        `limit` sends: `at` itself when it fits now, else when the oldest send in the way leaves
        the window. None when no time ever fits (a limit of 0)."""
        if limit <= 0:
            return None
        # Before a week after the latest forgotten send, a week may hold sends no longer known.
        known_from = at if self.forgotten_until is None else max(at, self.forgotten_until + WEEK)
        candidates = sorted({known_from, *(moment + WEEK for moment in self.sent_at)})
        return next(moment for moment in candidates if moment >= known_from and self._fits(limit, moment))

    def _fits(self, limit: int, at: datetime) -> bool:
        """Every window [start, start + 7 days) holding `at` keeps at most `limit` sends with it.
        The fullest such window starts at `at` or at a known send before it, so those are the
        starts to look at."""
        starts = [at, *(moment for moment in self.sent_at if at - WEEK < moment <= at)]
        return all(sum(1 for moment in self.sent_at if start <= moment < start + WEEK) < limit for start in starts)


class TenantSends(LooplineAggregate):
    """How many emails Loopline sent for one tenant on each recent tenant-local calendar day."""

    OWNER = {"tenant": "tenant"}

    class Created(Aggregate.Created):
        tenant: str

    class Sent(TenantEvent):
        """One email at the event's time, on `day` (ISO date) in the tenant's time zone of that moment."""

        task_ref: str
        day: str

        def apply(self, ledger: TenantSends) -> None:
            ledger.per_day[self.day] = ledger.per_day.get(self.day, 0) + 1
            horizon = _days_before(max(ledger.per_day), KEEP_DAYS)
            forgotten = [day for day in ledger.per_day if day < horizon]
            if forgotten:
                ledger.forgotten_through = max(filter(None, (ledger.forgotten_through, *forgotten)))
                ledger.per_day = {day: count for day, count in ledger.per_day.items() if day >= horizon}

    class Returned(TenantEvent):
        """An email counted on `day` never left (delivery could not send it): it no longer counts."""

        task_ref: str
        day: str

        def apply(self, ledger: TenantSends) -> None:
            if ledger.per_day.get(self.day):
                ledger.per_day[self.day] -= 1

    class PauseFenced(TenantEvent):
        """The tenant was paused in the same save (`Tenant.Paused`): a send on another worker that read this ledger
        before meets a version conflict and is checked again, so no send slips past the pause. Changes no count."""

        def apply(self, ledger: TenantSends) -> None:
            pass

    def __init__(self, tenant: str) -> None:
        self.tenant = tenant
        self.per_day: dict[str, int] = {}
        """ISO date -> sends that day, for the KEEP_DAYS days up to the latest send's day."""
        self.forgotten_through: str | None = None
        """The latest day dropped from `per_day`."""

    @classmethod
    def open(cls, *, id: Any, tenant: str, now: datetime) -> TenantSends:  # noqa: A002
        return cls._create(cls.Created, id=id, timestamp=now, tenant=tenant)

    def record(self, *, task_ref: str, day: date, now: datetime) -> None:
        self.trigger_event(self.Sent, timestamp=now, task_ref=task_ref, day=day.isoformat())

    def give_back(self, *, task_ref: str, day: date, now: datetime) -> None:
        self.trigger_event(self.Returned, timestamp=now, task_ref=task_ref, day=day.isoformat())

    def fence_pause(self, now: datetime) -> None:
        self.trigger_event(self.PauseFenced, timestamp=now)

    def sent_on(self, day: date) -> int | None:
        """Sends on that local day; None for a day the ledger has forgotten."""
        if self.forgotten_through is not None and day.isoformat() <= self.forgotten_through:
            return None
        return self.per_day.get(day.isoformat(), 0)


def _days_before(day: str, days: int) -> str:
    return (date.fromisoformat(day) - timedelta(days=days)).isoformat()


def local_day(at: datetime, timezone: str) -> date:
    """The calendar day `at` falls on in the IANA `timezone`."""
    return at.astimezone(ZoneInfo(timezone)).date()


def start_of_day(day: date, timezone: str) -> datetime:
    """The first instant of the local `day` (its midnight, or the end of a DST gap that skips midnight), in UTC."""
    zone = ZoneInfo(timezone)
    midnight = datetime.combine(day, time(0), tzinfo=zone)
    # A skipped midnight reads with the offset before the gap: that instant is the gap's end, the day's start.
    return midnight.astimezone(UTC)
