"""A write-side timer wheel: due times filed in hour buckets, so a scan touches only what is due.

`TimerWheel` (one for the deployment) remembers the first hour not yet swept. A timer is filed in
the bucket of its due hour, or in the first unswept hour when its time has already been swept.
A bucket whose hour has fully passed is closed by the sweep; filing into a closed bucket is
refused, so a timer can never land where no sweep will look again.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from enum import StrEnum
from typing import Any
from uuid import UUID

from eventsourcing.domain import Aggregate

from loopline.domain.base import LooplineAggregate
from loopline.domain.errors import DomainError
from loopline.domain.timeutil import floor_hour

SHARDS = 8


class TimerKind(StrEnum):
    """Every kind of timer; the tick fires each through `processors/handlers/timer_firings.py` TIMERS."""

    LOOP_DEADLINE = "loop_deadline"
    TASK_EXPIRY = "task_expiry"
    PROACTIVE_RUN = "proactive_run"
    TASK_STALL_CHECK = "task_stall_check"
    TASK_WAKEUP = "task_wakeup"
    TASK_STEP = "task_step"
    RECURRENCE = "recurrence"
    TASK_ACTIONS = "task_actions"
    DORMANT_CHECK = "dormant_check"
    OUTCOME_VERIFICATION = "outcome_verification"
    DAILY_DIGEST = "daily_digest"
    ESCALATION_TIMEOUT = "escalation_timeout"
    QUESTION_LADDER = "question_ladder"
    ROUTINE = "routine"


class BucketClosed(DomainError):
    pass


def shard_of(target_id: UUID) -> int:
    return target_id.int % SHARDS


class TimerWheel(LooplineAggregate):
    class Created(Aggregate.Created):
        first_unswept: datetime

    class ExtendedBack(Aggregate.Event):
        first_unswept: datetime

        def apply(self, wheel: TimerWheel) -> None:
            wheel.first_unswept = self.first_unswept

    class Swept(Aggregate.Event):
        first_unswept: datetime

        def apply(self, wheel: TimerWheel) -> None:
            wheel.first_unswept = self.first_unswept
            wheel.has_swept = True

    def __init__(self, first_unswept: datetime) -> None:
        self.first_unswept = first_unswept
        self.has_swept = False

    @classmethod
    def start(cls, *, id: Any, due: datetime, now: datetime) -> TimerWheel:  # noqa: A002
        return cls._create(cls.Created, id=id, timestamp=now, first_unswept=floor_hour(due))

    def place(self, due: datetime, *, now: datetime) -> datetime:
        """The hour bucket a timer belongs in; before the first sweep an earlier timer moves the start back."""
        hour = floor_hour(due)
        if hour >= self.first_unswept:
            return hour
        if not self.has_swept:
            self.trigger_event(self.ExtendedBack, timestamp=now, first_unswept=hour)
            return hour
        return self.first_unswept

    def swept_until(self, hour: datetime, *, now: datetime) -> None:
        if hour > self.first_unswept or not self.has_swept:
            self.trigger_event(self.Swept, timestamp=now, first_unswept=max(hour, self.first_unswept))


class TimerBucket(LooplineAggregate):
    """One hour (and shard) of timers. Its state stays small (the timers live in its events), so
    filing a timer never replays a large state; the sweep reads the timers from the events."""

    class Opened(Aggregate.Created):
        hour: datetime
        shard: int

    class TimerSet(Aggregate.Event):
        kind: str
        target_id: UUID
        due: datetime

        def apply(self, bucket: TimerBucket) -> None:
            bucket.size += 1

    class TimerRefused(Aggregate.Event):
        """A timer whose firing the domain refused: kept with the rule and reason, and never fired again."""

        kind: str
        target_id: UUID
        due: datetime
        rule: str
        reason: str

    class Closed(Aggregate.Event):
        def apply(self, bucket: TimerBucket) -> None:
            bucket.closed = True

    def __init__(self, hour: datetime, shard: int) -> None:
        self.hour = hour
        self.shard = shard
        self.size = 0
        self.closed = False

    @classmethod
    def open(cls, *, id: Any, hour: datetime, shard: int, now: datetime) -> TimerBucket:  # noqa: A002
        return cls._create(cls.Opened, id=id, timestamp=now, hour=hour, shard=shard)

    def set_timer(self, *, kind: TimerKind, target_id: UUID, due: datetime, now: datetime) -> None:
        """Files a timer; the same timer filed twice fires once (see `due`), and firing is idempotent anyway."""
        kind = TimerKind(kind)  # an unknown kind is refused here, never met by a tick
        if self.closed:
            raise BucketClosed(f"timer bucket {self.hour.isoformat()}#{self.shard} has been swept and closed")
        self.trigger_event(self.TimerSet, timestamp=now, kind=str(kind), target_id=target_id, due=due)

    def refuse_timer(self, *, kind: str, target_id: UUID, due: datetime, rule: str, reason: str, now: datetime) -> None:
        self.trigger_event(self.TimerRefused, timestamp=now, kind=kind, target_id=target_id, due=due, rule=rule, reason=reason)

    @staticmethod
    def due(events: Iterable[Any], now: datetime) -> list[tuple[str, UUID, datetime]]:
        """The distinct timers among a bucket's events that are due at `now` and were never refused, earliest first."""
        timers: set[tuple[str, UUID, datetime]] = set()
        refused: set[tuple[str, UUID, datetime]] = set()
        for e in events:
            if isinstance(e, TimerBucket.TimerSet) and e.due <= now:
                timers.add((e.kind, e.target_id, e.due))
            elif isinstance(e, TimerBucket.TimerRefused):
                refused.add((e.kind, e.target_id, e.due))
        return sorted(timers - refused, key=lambda timer: (timer[2], timer[0], str(timer[1])))

    def close(self, *, now: datetime) -> None:
        if not self.closed:
            self.trigger_event(self.Closed, timestamp=now)
