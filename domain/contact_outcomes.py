"""The outcome signals a tenant observed for one contact (`outcome.observed`), kept on the write side so a task can
re-read them without a read model: the stale guard before a send (seed 002 §30) and the dormant check (§6.4)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from eventsourcing.domain import Aggregate

from loopline.domain.base import LooplineAggregate, TenantEvent
from loopline.domain.completion import ObservedSignal

KEEP_FOR = timedelta(days=180)
"""Longer than any task waits for a signal: the longest budget, dormancy and attribution window together."""
KEEP_AT_MOST = 50
"""The newest signals kept, so a contact who checks in daily keeps a small state."""


class ContactOutcomes(LooplineAggregate):
    OWNER = {"tenant": "tenant"}

    class Created(Aggregate.Created):
        tenant: str
        contact: str

    class Observed(TenantEvent):
        """An outcome signal about the contact; signals older than `KEEP_FOR` before it are let go."""

        contact: str
        signal_ref: str
        kind: str
        value: float | None
        account: str | None

        def apply(self, outcomes: ContactOutcomes) -> None:
            kept = [s for s in outcomes.signals if s["at"] > self.timestamp - KEEP_FOR]
            kept.append({"ref": self.signal_ref, "kind": self.kind, "value": self.value, "at": self.timestamp,
                         "account": self.account})
            outcomes.signals = sorted(kept, key=lambda s: s["at"])[-KEEP_AT_MOST:]

    def __init__(self, tenant: str, contact: str) -> None:
        self.tenant = tenant
        self.contact = contact
        self.signals: list[dict[str, Any]] = []
        """The kept signals, oldest first: ref, kind, value, at, account."""

    @classmethod
    def create(cls, *, id: Any, tenant: str, contact: str, now: datetime) -> ContactOutcomes:  # noqa: A002
        return cls._create(cls.Created, id=id, timestamp=now, tenant=tenant, contact=contact.lower())

    def observe(self, signal: ObservedSignal) -> None:
        if any(kept["ref"] == signal.ref for kept in self.signals):
            return
        self.trigger_event(self.Observed, timestamp=signal.at, contact=self.contact, signal_ref=signal.ref,
                           kind=signal.kind, value=signal.value, account=signal.account)

    def since(self, at: datetime) -> list[ObservedSignal]:
        """The kept signals that happened at `at` or later, oldest first."""
        return [ObservedSignal(ref=s["ref"], kind=s["kind"], value=s["value"], at=s["at"], account=s["account"])
                for s in self.signals if s["at"] >= at]
