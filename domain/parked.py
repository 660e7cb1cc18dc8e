"""Messages whose handling failed with something other than a domain refusal, set aside so the stream goes on."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from eventsourcing.domain import Aggregate

from loopline.domain.base import LooplineAggregate, TenantEvent
from loopline.domain.errors import DomainError

PARKED, RETRIED, DROPPED = "parked", "retried", "dropped"


class ParkedMessageClosed(DomainError):
    """A parked message was retried or dropped already; the message says by whom."""


class ParkedMessage(LooplineAggregate):
    """One command or signal that made its handler fail (after bounded retries), with the error and
    where it came from; an operator retries it (applied once) or drops it. Keyed by its message."""

    OWNER = {"tenant": "tenant"}

    class Parked(Aggregate.Created):
        tenant: str
        kind: str
        ref: str
        type: str
        data: dict[str, Any]
        at: str
        source: str
        position: str
        error_type: str
        error: str
        trace: str
        attempts: int

    class RetryFailed(TenantEvent):
        error_type: str
        error: str
        trace: str
        by: str

        def apply(self, parked: ParkedMessage) -> None:
            parked.error_type, parked.error, parked.trace = self.error_type, self.error, self.trace
            parked.attempts += 1

    class Retried(TenantEvent):
        outcome: str
        by: str

        def apply(self, parked: ParkedMessage) -> None:
            parked.status, parked.closed_by = RETRIED, self.by

    class Dropped(TenantEvent):
        by: str

        def apply(self, parked: ParkedMessage) -> None:
            parked.status, parked.closed_by = DROPPED, self.by

    def __init__(
        self, tenant: str, kind: str, ref: str, type: str, data: dict[str, Any], at: str, source: str,  # noqa: A002
        position: str, error_type: str, error: str, trace: str, attempts: int,
    ) -> None:
        self.tenant, self.kind, self.ref, self.type, self.data, self.at = tenant, kind, ref, type, data, at
        self.source, self.position, self.attempts = source, position, attempts
        self.error_type, self.error, self.trace = error_type, error, trace
        self.status = PARKED
        self.closed_by: str | None = None

    @classmethod
    def park(cls, *, id: Any, now: datetime, **fields: Any) -> ParkedMessage:  # noqa: A002
        return cls._create(cls.Parked, id=id, timestamp=now, **fields)

    def check_open(self) -> None:
        if self.status != PARKED:
            raise ParkedMessageClosed(f"it was {self.status} already (by {self.closed_by}); nothing to do")

    def retry_failed(self, *, error_type: str, error: str, trace: str, by: str, now: datetime) -> None:
        self.check_open()
        self.trigger_event(self.RetryFailed, timestamp=now, error_type=error_type, error=error, trace=trace, by=by)

    def retried(self, *, outcome: str, by: str, now: datetime) -> None:
        self.check_open()
        self.trigger_event(self.Retried, timestamp=now, outcome=outcome, by=by)

    def drop(self, *, by: str, now: datetime) -> None:
        self.check_open()
        self.trigger_event(self.Dropped, timestamp=now, by=by)

