"""Graceful degradation (seed 002 §34): a tenant's view of an upstream it depends on (the model), from the
decisions that reached it. Failing `UPSTREAM_FAILURES` times in a row puts the tenant in degraded mode for that
upstream; the first success ends it by itself.

Degraded, nothing is guessed and nothing dropped: a decision that fails is not escalated to the owner after its
retries but asked again every `DEGRADED_RETRY` (`domain/safety_limits.py`) until the model answers, and nothing
is sent without one.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from eventsourcing.domain import Aggregate

from loopline.domain.base import LooplineAggregate, TenantEvent
from loopline.domain.safety_limits import UPSTREAM_FAILURES


class UpstreamHealth(LooplineAggregate):
    """One tenant's health of one upstream; kept as plain values, so a snapshot (JSON) would restore it unchanged."""

    OWNER = {"tenant": "tenant", "upstream": "upstream"}

    class Opened(Aggregate.Created):
        tenant: str
        upstream: str

    class Failed(TenantEvent):
        upstream: str
        error: str
        failures: int
        """Failures in a row, this one included."""
        degraded: bool
        """Whether the upstream is degraded after it."""

        def apply(self, health: UpstreamHealth) -> None:
            health.failures = self.failures
            health.last_error = self.error
            if self.degraded and health.degraded_since is None:
                health.degraded_since = self.timestamp.isoformat()

    class Recovered(TenantEvent):
        """The upstream answered after `failures` failures in a row: healthy again."""

        upstream: str
        failures: int
        was_degraded: bool

        def apply(self, health: UpstreamHealth) -> None:
            health.failures = 0
            health.degraded_since = None

    def __init__(self, tenant: str, upstream: str) -> None:
        self.tenant = tenant
        self.upstream = upstream
        self.failures = 0
        self.last_error: str | None = None
        self.degraded_since: str | None = None

    @classmethod
    def open(cls, *, id: Any, tenant: str, upstream: str, now: datetime) -> UpstreamHealth:  # noqa: A002
        return cls._create(cls.Opened, id=id, timestamp=now, tenant=tenant, upstream=upstream)

    @property
    def degraded(self) -> bool:
        return self.degraded_since is not None

    def failed(self, error: str, now: datetime) -> bool:
        """Counts a failure; True when this one makes the upstream degraded."""
        was, failures = self.degraded, self.failures + 1
        self.trigger_event(self.Failed, timestamp=now, error=error, failures=failures,
                           degraded=was or failures >= UPSTREAM_FAILURES)
        return self.degraded and not was

    def succeeded(self, now: datetime) -> bool:
        """Ends a run of failures (nothing recorded when there was none); True when it ends degraded mode."""
        if self.failures == 0:
            return False
        was = self.degraded
        self.trigger_event(self.Recovered, timestamp=now, failures=self.failures, was_degraded=was)
        return was
