"""The scheduler behind `tick --now T`: deadlines, task expiry and due proactive runs.

Work follows the timer wheel, so a tick touches due items only. Each bucket is handed to the bus
as one batch (its due timers, `TimerFired`, and once its hour has passed its closing), and every
timer checks its aggregate's state first (`processors/handlers/timer_firings.py`), which makes a tick
idempotent: running it again, or after a crash half-way, changes nothing that was already done.

A filing reads the wheel without writing it, so one that read it just before a tick swept past the timer's
hour can open that hour's bucket after the tick looked for it: the wheel never comes back to it. Each tick
therefore also follows the buckets opened since the last one, and sweeps those behind the wheel.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

from eventsourcing.utils import get_topic

from loopline.domain import ids
from loopline.domain.safety_limits import STEPS_PER_TICK
from loopline.domain.task import Task
from loopline.domain.timers import SHARDS, TimerBucket, TimerKind, TimerWheel
from loopline.domain.timeutil import HOUR, floor_hour
from loopline.domain.wording import count, when
from loopline.processors.application import Loopline, Position, UnitOfWork
from loopline.processors.bus import Batch, Bus
from loopline.processors.messages import BucketSwept, RunRescue, TimerFired, WheelSwept
from loopline.processors.handlers.outreach import has_step, priority_rank
from loopline.processors.handlers.timer_firings import TIMERS

SWEEPS = 5
OPENINGS = "timer-openings"
"""The scheduler's position in the stored bucket openings (`TimerBucket.Opened`)."""
OPENINGS_BATCH = 1_000


@dataclass
class TickReport:
    now: datetime
    actions: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    buckets_swept: int = 0
    done: Counter[str] = field(default_factory=Counter)
    """How many timers of each kind did something, for the summary."""

    def summary(self) -> str:
        """One line counting what this tick actually did."""
        parts = [count(self.done[kind], *row.done) for kind, row in TIMERS.items() if self.done[kind]]
        parts += [count(len(self.refused), "timer refused", "timers refused")] if self.refused else []
        return f"tick: {', '.join(parts)}" if parts else "tick: nothing was due"


@dataclass
class BucketSweep:
    """One timer bucket's due timers as the bus reads them: read again (with the bucket) after a conflict."""

    app: Loopline
    hour: datetime
    shard: int
    now: datetime
    stepping: set[UUID]
    events: list[Any] | None = None  # the bucket's events as the tick read them when it chose the steps
    only: tuple[str, UUID, datetime] | None = None  # one due timer, when the bucket is swept one timer at a time
    last: bool = True  # whether this sweep ends the bucket's (the bucket may then close)

    @property
    def bucket_id(self) -> UUID:
        return ids.timer_bucket_id(self.hour, self.shard)

    def read(self) -> Batch | None:
        reader = UnitOfWork(self.app)
        bucket = reader.get(self.bucket_id, TimerBucket)
        reader.commit()  # saves nothing: puts the bucket back in this process's cache, for the bus's unit of work
        if bucket is None or bucket.closed:
            return None
        events, self.events = self.events, None
        if events is None or len(events) != bucket.version:
            events = list(self.app.events.get(self.bucket_id))
        firings: list[Any] = self._in_step_order([
            TimerFired(self.bucket_id, kind, target_id, due, self.now,
                       stepping=kind == TimerKind.TASK_STEP and target_id in self.stepping)
            for kind, target_id, due in TimerBucket.due(events, self.now)
        ])
        if self.only is not None:
            firings = [firing for firing in firings if (firing.kind, firing.target_id, firing.due) == self.only]
        return Batch(firings + ([BucketSwept(self.bucket_id, self.hour, bucket.size, self.now)] if self.last else []))

    def one_by_one(self, batch: Batch) -> Iterator[BucketSweep]:
        firings = [message for message in batch.messages if isinstance(message, TimerFired)]
        for place, firing in enumerate(firings):
            yield BucketSweep(self.app, self.hour, self.shard, self.now, self.stepping,
                              only=(firing.kind, firing.target_id, firing.due), last=place == len(firings) - 1)

    @staticmethod
    def _in_step_order(timers: list[TimerFired]) -> list[TimerFired]:
        """The chosen task steps first, so the tasks picked by priority take theirs before anything else changes them."""
        return sorted(timers, key=lambda timer: not timer.stepping)


@dataclass(frozen=True)
class WheelSweep:
    """The wheel's mark that every bucket up to `until` was swept, as one batch of its own."""

    until: datetime
    now: datetime
    app: Loopline
    openings_read: int
    """The last bucket opening this tick looked at: the scheduler's position in them moves there with the mark."""

    def read(self) -> Batch:
        previous = self.app.position(OPENINGS)
        moves = self.openings_read > previous
        return Batch([WheelSwept(self.until, self.now)],
                     Position(OPENINGS, self.openings_read, previous=previous) if moves else None)

    def one_by_one(self, batch: Batch) -> Iterator[WheelSweep]:
        yield self


@dataclass
class Rescues:
    """The supervisor's rescues of stale proactive runs, as one batch (one by one after a conflict)."""

    run_ids: list[UUID]
    now: datetime

    def read(self) -> Batch:
        return Batch([RunRescue(run_id, self.now) for run_id in self.run_ids])

    def one_by_one(self, batch: Batch) -> Iterator[Rescues]:
        yield from (Rescues([run_id], self.now) for run_id in self.run_ids)


class Scheduler:
    """Sweeps the timer wheel's due buckets through the bus, in the order they fall due."""

    def __init__(self, bus: Bus, stale_runs: Callable[[datetime], list[UUID]] | None = None) -> None:
        self.bus = bus
        self.app = bus.app
        self.stale_runs = stale_runs
        """The proactive runs more than 48 h past their wake-up, from the read model (None where none is kept)."""

    def tick(self, now: datetime, progress: Callable[[int, int], None] | None = None) -> TickReport:
        report = TickReport(now)
        wheel = UnitOfWork(self.app).get(ids.timer_wheel_id(), TimerWheel)
        if wheel is None:
            return report
        last = floor_hour(now)
        hours = [wheel.first_unswept + step * HOUR for step in range(max(int((last - wheel.first_unswept) / HOUR) + 1, 0))]
        opened_late, openings_read = self._opened_behind(wheel.first_unswept)
        in_turn = [(hour, shard) for hour in hours for shard in range(SHARDS)]
        read, stepping = self._choose_steps(opened_late + in_turn, now)
        for hour, shard in opened_late:
            events = read.pop(ids.timer_bucket_id(hour, shard))
            self._sweep_bucket(BucketSweep(self.app, hour, shard, now, stepping, events), report)
        for step, hour in enumerate(hours):
            for shard in range(SHARDS):
                events = read.pop(ids.timer_bucket_id(hour, shard), None)
                self._sweep_bucket(BucketSweep(self.app, hour, shard, now, stepping, events), report)
            if progress:
                progress(step + 1, len(hours))
        self.bus.process(WheelSweep(last, now, self.app, openings_read))
        self._supervise(now, report)
        return report

    def _supervise(self, now: datetime, report: TickReport) -> None:
        """The supervisor's step: runs the read model shows stale are made due now (each checks itself first)."""
        stale = self.stale_runs(now) if self.stale_runs is not None else []
        if stale:
            outcomes = self.bus.process(Rescues(stale, now))
            report.actions += [outcome.detail for outcome in outcomes if outcome.accepted and outcome.detail]

    def _opened_behind(self, first_unswept: datetime) -> tuple[list[tuple[datetime, int]], int]:
        """The buckets opened since the last tick looked for an hour the wheel had already swept past (the
        timer's filing read the wheel just before a tick moved it: no sweep would ever reach them), and the
        position of the last opening read."""
        position = self.app.position(OPENINGS)
        behind: list[tuple[datetime, int]] = []
        while batch := self.app.process_recorder.select_notifications(
            start=position + 1, limit=OPENINGS_BATCH, topics=[get_topic(TimerBucket.Opened)]
        ):
            for notification in batch:
                opened = self.app.mapper.to_domain_event(notification)
                if opened.hour < first_unswept:
                    behind.append((opened.hour, opened.shard))
            position = batch[-1].id
        return behind, position

    def _sweep_bucket(self, sweep: BucketSweep, report: TickReport) -> None:
        """Fires every due timer of a bucket and, once its hour has passed, closes it: one transaction, swept
        again while a firing files a timer in the bucket it sweeps."""
        for _ in range(SWEEPS):
            outcomes = self.bus.process(sweep)
            firings = [o for o in outcomes if isinstance(o.step, TimerFired)]
            report.actions += [o.detail for o in firings if o.accepted and o.detail]
            report.done.update(o.step.kind for o in firings if o.accepted and o.detail)
            report.refused += [f"{TIMERS[o.step.kind].words} due {when(o.step.due)} refused: {o.detail}"
                               for o in firings if not o.accepted]
            closed = any(isinstance(o.step, BucketSwept) and o.detail for o in outcomes)
            report.buckets_swept += closed
            if not outcomes or closed or sweep.hour + HOUR > sweep.now:
                return
        raise RuntimeError(f"timer bucket {sweep.hour.isoformat()}#{sweep.shard} kept changing; tick again")

    def _choose_steps(
        self, buckets: list[tuple[datetime, int]], now: datetime
    ) -> tuple[dict[UUID, list[Any]], set[UUID]]:
        """Reads the buckets this tick sweeps and picks the acting tasks that step in it: per tenant, those
        with something to do, critical first, at most `STEPS_PER_TICK` (the sweep then reuses what was read)."""
        due_steps: dict[UUID, datetime] = {}
        read: dict[UUID, list[Any]] = {}
        for hour, shard in buckets:
            bucket_id = ids.timer_bucket_id(hour, shard)
            events = list(self.app.events.get(bucket_id))
            read[bucket_id] = events
            for kind, target_id, due in TimerBucket.due(events, now):
                if kind == TimerKind.TASK_STEP:
                    due_steps.setdefault(target_id, due)
        uow = UnitOfWork(self.app)
        uow.prefetch(due_steps)
        by_tenant: dict[str, list[tuple[int, datetime, str, UUID]]] = {}
        for task_id, due in due_steps.items():
            task = uow.get(task_id, Task)
            if task is None or not has_step(task, now):
                continue
            by_tenant.setdefault(task.tenant, []).append((priority_rank(task), due, task.ref, task_id))
        return read, {task_id for steps in by_tenant.values() for *_, task_id in sorted(steps)[:STEPS_PER_TICK]}
