"""The model-call ledger: how many model decisions each tenant asked for on each recent tenant-local day.

`TenantModelCalls` (one per tenant) is loaded and changed in the unit of work of the step that asks
for a decision (`processors/handlers/model_calls.py`), so two steps asking at once meet as a version
conflict, never as one call over the daily limit (seed 002 §7.12). Like `TenantSends`, it keeps only
the recent days, so it stays small however long a tenant runs.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

from eventsourcing.domain import Aggregate

from loopline.domain.base import LooplineAggregate, TenantEvent

KEEP_DAYS = 7
"""Days behind the latest call's day whose counts are kept."""


class TenantModelCalls(LooplineAggregate):
    """How many model calls Loopline asked for one tenant on each recent tenant-local calendar day."""

    OWNER = {"tenant": "tenant"}

    class Created(Aggregate.Created):
        tenant: str

    class Called(TenantEvent):
        """One model call asked for by the task it names, on `day` (ISO date) in the tenant's time zone."""

        task_ref: str
        day: str

        def apply(self, ledger: TenantModelCalls) -> None:
            ledger.per_day[self.day] = ledger.per_day.get(self.day, 0) + 1
            horizon = (date.fromisoformat(max(ledger.per_day)) - timedelta(days=KEEP_DAYS)).isoformat()
            ledger.per_day = {day: calls for day, calls in ledger.per_day.items() if day >= horizon}

    def __init__(self, tenant: str) -> None:
        self.tenant = tenant
        self.per_day: dict[str, int] = {}
        """ISO date -> model calls asked for that day, for the KEEP_DAYS days up to the latest call's day."""

    @classmethod
    def open(cls, *, id: Any, tenant: str, now: datetime) -> TenantModelCalls:  # noqa: A002
        return cls._create(cls.Created, id=id, timestamp=now, tenant=tenant)

    def record(self, *, task_ref: str, day: date, now: datetime) -> None:
        self.trigger_event(self.Called, timestamp=now, task_ref=task_ref, day=day.isoformat())

    def calls_on(self, day: date) -> int:
        """Calls asked for on that local day (a day before the kept ones counts none: it is past)."""
        return self.per_day.get(day.isoformat(), 0)
