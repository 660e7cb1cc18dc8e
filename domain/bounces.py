"""The tenant's bounce rate (seed 002 §33.2–§33.3): above `BOUNCE_RATE_PERCENT` of its recent sends, it is paused.

`TenantBounces` counts the hard bounces (three soft ones of a contact count as one) per tenant-local day, for the
same days `TenantSends` counts sends, so the rate is bounces over sends of the last `KEEP_DAYS` days. Below
`BOUNCE_RATE_MIN_SENDS` sends the rate says nothing yet.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from eventsourcing.domain import Aggregate

from loopline.domain.base import LooplineAggregate, TenantEvent
from loopline.domain.safety_limits import BOUNCE_RATE_MIN_SENDS, BOUNCE_RATE_PERCENT
from loopline.domain.send_ledger import KEEP_DAYS, TenantSends



class TenantBounces(LooplineAggregate):
    """How many emails of one tenant bounced (hard) on each recent tenant-local calendar day."""

    OWNER = {"tenant": "tenant"}

    class Created(Aggregate.Created):
        tenant: str

    class Bounced(TenantEvent):
        contact: str
        day: str

        def apply(self, ledger: TenantBounces) -> None:
            ledger.per_day[self.day] = ledger.per_day.get(self.day, 0) + 1
            horizon = (date.fromisoformat(max(ledger.per_day)).toordinal() - KEEP_DAYS)
            ledger.per_day = {day: n for day, n in ledger.per_day.items() if date.fromisoformat(day).toordinal() >= horizon}

    def __init__(self, tenant: str) -> None:
        self.tenant = tenant
        self.per_day: dict[str, int] = {}
        """ISO date -> hard bounces that day, for the KEEP_DAYS days up to the latest bounce's day."""

    @classmethod
    def open(cls, *, id: Any, tenant: str, now: datetime) -> TenantBounces:  # noqa: A002
        return cls._create(cls.Created, id=id, timestamp=now, tenant=tenant)

    def record(self, *, contact: str, day: date, now: datetime) -> None:
        self.trigger_event(self.Bounced, timestamp=now, contact=contact, day=day.isoformat())


def bounce_rate(bounces: TenantBounces, sends: TenantSends | None, today: date) -> tuple[int, int]:
    """(bounces, sends) on the KEEP_DAYS days up to `today`; days the send ledger forgot count no sends."""
    days = [date.fromordinal(today.toordinal() - back).isoformat() for back in range(KEEP_DAYS)]
    bounced = sum(bounces.per_day.get(day, 0) for day in days)
    sent = sum(sends.per_day.get(day, 0) for day in days) if sends is not None else 0
    return bounced, sent


def too_many_bounces(bounced: int, sent: int) -> bool:
    return sent >= BOUNCE_RATE_MIN_SENDS and 100 * bounced > BOUNCE_RATE_PERCENT * sent
