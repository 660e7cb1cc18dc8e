"""The ProactiveRun aggregate: one per tenant, the heartbeat that never dies: it always has a next run."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from eventsourcing.domain import Aggregate

from loopline.domain.base import TenantEvent, LooplineAggregate

MIN_INTERVAL = timedelta(minutes=30)
MAX_INTERVAL = timedelta(days=7)
FALLBACK_INTERVAL = timedelta(hours=24)
RETURN_REASON = "return digest: the owner is back"


def clamp_next_run(requested: datetime, now: datetime) -> datetime:
    """Bounds a requested wake-up to [now + 30 min, now + 7 days], silently."""
    return min(max(requested, now + MIN_INTERVAL), now + MAX_INTERVAL)


class ProactiveRun(LooplineAggregate):
    OWNER = {"tenant": "tenant"}

    class Started(Aggregate.Created):
        tenant: str
        next_run_at: datetime
        next_run_reason: str

    class NextRunScheduled(TenantEvent):
        requested_at: datetime
        next_run_at: datetime
        reason: str

        def apply(self, run: ProactiveRun) -> None:
            run._next_run(self.next_run_at, self.reason)

    class ReturnRunScheduled(TenantEvent):
        """The owner came back after a day or more away: the next run is now, not the scheduled one (seed 000)."""

        last_seen_at: datetime

        def apply(self, run: ProactiveRun) -> None:
            run._next_run(self.timestamp, RETURN_REASON)

    class EscalationQueued(TenantEvent):
        task_ref: str
        loop_ref: str | None
        reason: str

        def apply(self, run: ProactiveRun) -> None:
            run.pending_escalations.append({"task_ref": self.task_ref, "loop_ref": self.loop_ref, "reason": self.reason})

    class RunRecorded(TenantEvent):
        mode: str
        summary: str
        escalations_handled: int
        next_run_at: datetime
        next_run_reason: str
        fallback_used: bool

        def apply(self, run: ProactiveRun) -> None:
            run.last_run_at = self.timestamp
            run.last_run_summary = self.summary
            run.runs += 1
            del run.pending_escalations[: self.escalations_handled]
            run._next_run(self.next_run_at, self.next_run_reason)

    def __init__(self, tenant: str, next_run_at: datetime, next_run_reason: str) -> None:
        self.tenant = tenant
        self.next_run_at = next_run_at
        self.next_run_reason = next_run_reason
        self.last_run_at: datetime | None = None
        self.last_run_summary: str | None = None
        self.runs = 0
        self.pending_escalations: list[dict[str, Any]] = []

    def _next_run(self, at: datetime, reason: str) -> None:
        """Where the next run and its reason change: scheduled, or set by a finished run."""
        self.next_run_at = at
        self.next_run_reason = reason

    @classmethod
    def start(cls, *, id: Any, tenant: str, now: datetime) -> ProactiveRun:  # noqa: A002
        return cls._create(
            cls.Started, id=id, timestamp=now, tenant=tenant, next_run_at=now + MIN_INTERVAL,
            next_run_reason="first maintenance run",
        )

    def schedule_next(self, *, requested_at: datetime, reason: str, now: datetime) -> None:
        self.trigger_event(
            self.NextRunScheduled, timestamp=now, requested_at=requested_at,
            next_run_at=clamp_next_run(requested_at, now), reason=reason,
        )

    def run_on_return(self, *, last_seen_at: datetime, now: datetime) -> None:
        self.trigger_event(self.ReturnRunScheduled, timestamp=now, last_seen_at=last_seen_at)

    def queue_escalation(self, *, task_ref: str, loop_ref: str | None, reason: str, now: datetime) -> None:
        self.trigger_event(self.EscalationQueued, timestamp=now, task_ref=task_ref, loop_ref=loop_ref, reason=reason)

    def is_due(self, now: datetime) -> bool:
        return self.next_run_at <= now

    def record_run(self, *, mode: str, summary: str, escalations_handled: int, now: datetime) -> None:
        """Records a finished run; with no later wake-up asked for, the 24 h fallback is scheduled."""
        fallback = self.next_run_at <= now
        self.trigger_event(
            self.RunRecorded, timestamp=now, mode=mode, summary=summary, escalations_handled=escalations_handled,
            next_run_at=now + FALLBACK_INTERVAL if fallback else self.next_run_at,
            next_run_reason="fallback: no next run was asked for" if fallback else self.next_run_reason,
            fallback_used=fallback,
        )
