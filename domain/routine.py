"""The Routine aggregate: a background task run on a schedule (interval or cron), on a signal, or once (seed 003).

It owns its schedule, its run count against `max_runs`, the retry-once-then-pause rule and the result hash that
decides an `on_change` notification; the runner that does the work records each finished run here.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from fnmatch import fnmatchcase
from hashlib import sha256
from typing import Any, ClassVar

from eventsourcing.domain import Aggregate

from loopline.domain.base import LooplineAggregate, TenantEvent
from loopline.domain.cron import next_firing, parse_cron
from loopline.domain.errors import DomainError

KINDS = ("scheduled", "event", "oneshot")
NOTIFY = ("on_change", "always", "on_failure", "never")
OUTCOMES = ("success", "failure")
RETRY_DELAY = timedelta(minutes=5)
"""A failed run is tried once more after this; a second failure in a row pauses the routine (seed 003 §2)."""
FAILURES_BEFORE_PAUSE = 2
DEFAULT_TIMEOUT = timedelta(minutes=5)
HISTORY_MAX_AGE = timedelta(days=30)
"""Runs older than this are dropped by compaction; the latest run is always kept."""


class InvalidRoutine(DomainError):
    """A routine whose kind, schedule, pattern, notify mode or limits do not fit together."""


class RoutineEvent(TenantEvent):
    routine_ref: str


class RoutineStopped(RoutineEvent):
    """The routine stops running, into the status its subclass names: paused, done or disabled."""

    STATUS: ClassVar[str]
    reason: str

    def apply(self, routine: Routine) -> None:
        routine.status = self.STATUS
        routine.next_run_at = None
        routine.report_due_at = None


def result_hash(output: str) -> str:
    """The fingerprint `on_change` compares: the output with surrounding whitespace ignored."""
    return sha256(output.strip().encode()).hexdigest()


def should_notify(notify: str, outcome: str, new_hash: str | None, last_hash: str | None) -> bool:
    """Whether a finished run is worth telling the owner about, by the routine's notify mode."""
    if notify == "always":
        return True
    if notify == "on_failure":
        return outcome == "failure"
    if notify == "on_change":
        return outcome == "success" and new_hash != last_hash
    return False


class Routine(LooplineAggregate):
    OWNER = {"tenant": "tenant", "routine_ref": "ref"}

    class Created(Aggregate.Created):
        tenant: str
        ref: str
        owner_task_ref: str | None
        action: str
        params: dict[str, Any]
        kind: str
        interval_minutes: int | None
        cron: str | None
        zone: str
        signal_pattern: str | None
        max_runs: int | None
        timeout_seconds: int
        notify: str
        next_run_at: datetime | None

    class RunRecorded(RoutineEvent):
        outcome: str
        started_at: datetime
        output: str
        error: str | None
        result_hash: str | None
        notify_owner: bool
        next_run_at: datetime | None

        def apply(self, routine: Routine) -> None:
            routine.run_count += 1
            routine.last_run_at = self.timestamp
            routine.history.append({"at": self.timestamp, "outcome": self.outcome, "error": self.error,
                                    "result_hash": self.result_hash})
            if self.outcome == "success":
                routine.consecutive_failures = 0
                routine.last_result_hash = self.result_hash
            else:
                routine.consecutive_failures += 1
            routine.next_run_at = self.next_run_at
            routine.report_due_at = None
            routine.last_run_notifies = self.notify_owner

    class Paused(RoutineStopped):
        STATUS = "paused"

    class Resumed(RoutineEvent):
        next_run_at: datetime | None

        def apply(self, routine: Routine) -> None:
            routine.status = "active"
            routine.consecutive_failures = 0
            routine.next_run_at = self.next_run_at

    class RunRequested(RoutineEvent):
        reason: str

        def apply(self, routine: Routine) -> None:
            routine.next_run_at = self.timestamp

    class Finished(RoutineStopped):
        STATUS = "done"

    class Disabled(RoutineStopped):
        STATUS = "disabled"

    class Adopted(RoutineEvent):
        """A task took over a tenant's routine: its outputs go to the task's memory, its closing disables it."""

        task_ref: str
        next_run_at: datetime | None

        def apply(self, routine: Routine) -> None:
            routine.owner_task_ref = self.task_ref
            routine.next_run_at = self.next_run_at
            routine.report_due_at = None

    class Dispatched(RoutineEvent):
        """A tenant's routine came due on the ticks: its external runner reports the run by `report_due_at`."""

        report_due_at: datetime

        def apply(self, routine: Routine) -> None:
            routine.next_run_at = None
            routine.report_due_at = self.report_due_at

    class RunHeld(RoutineEvent):
        """A pause held the tenant when its dispatched run's report fell due: the runner was told to stop, so the run
        did not fail; it is due again, dispatched when the pause ends."""

        reason: str

        def apply(self, routine: Routine) -> None:
            routine.next_run_at = self.timestamp
            routine.report_due_at = None

    class HistoryCompacted(RoutineEvent):
        dropped: int
        before: datetime

        def apply(self, routine: Routine) -> None:
            del routine.history[: self.dropped]

    def __init__(self, tenant: str, ref: str, owner_task_ref: str | None, action: str, params: dict[str, Any], kind: str,
                 interval_minutes: int | None, cron: str | None, zone: str, signal_pattern: str | None,
                 max_runs: int | None, timeout_seconds: int, notify: str, next_run_at: datetime | None) -> None:
        self.tenant = tenant
        self.ref = ref
        self.owner_task_ref = owner_task_ref
        self.action = action
        self.params = params
        self.kind = kind
        self.interval_minutes = interval_minutes
        self.cron = cron
        self.zone = zone
        self.signal_pattern = signal_pattern
        self.max_runs = max_runs
        self.timeout_seconds = timeout_seconds
        self.notify = notify
        self.next_run_at = next_run_at
        self.status = "active"
        self.run_count = 0
        self.consecutive_failures = 0
        self.last_run_at: datetime | None = None
        self.last_result_hash: str | None = None
        self.last_run_notifies = False
        """Whether the last run's result is worth telling the owner about, by the notify mode."""
        self.report_due_at: datetime | None = None
        """While a dispatched run of a tenant's routine waits for its runner's report: when it counts as failed."""
        self.history: list[dict[str, Any]] = []

    @classmethod
    def create(cls, *, id: Any, tenant: str, ref: str, action: str, kind: str, now: datetime,  # noqa: A002
               owner_task_ref: str | None = None, interval_minutes: int | None = None, cron: str | None = None,
               zone: str = "UTC", signal_pattern: str | None = None, run_at: datetime | None = None,
               max_runs: int | None = None, timeout: timedelta = DEFAULT_TIMEOUT, notify: str = "on_change",
               params: dict[str, Any] | None = None) -> Routine:
        """A new active routine; a one-shot runs once (at `run_at`, or now), an event routine waits for a signal."""
        _check(kind, interval_minutes, cron, signal_pattern, notify, max_runs, timeout)
        if kind == "oneshot":
            max_runs, first = 1, run_at or now
        elif kind == "event":
            first = None
        else:
            first = _next_scheduled(interval_minutes, cron, zone, now)
        return cls._create(
            cls.Created, id=id, timestamp=now, tenant=tenant, ref=ref, owner_task_ref=owner_task_ref, action=action,
            params=params or {}, kind=kind, interval_minutes=interval_minutes, cron=cron, zone=zone, signal_pattern=signal_pattern,
            max_runs=max_runs, timeout_seconds=int(timeout.total_seconds()), notify=notify, next_run_at=first,
        )

    def is_due(self, now: datetime) -> bool:
        return self.status == "active" and self.next_run_at is not None and self.next_run_at <= now

    def matches(self, signal_kind: str) -> bool:
        """Whether a signal of this kind triggers this event routine (a shell-style pattern, e.g. `github.*`)."""
        return self.status == "active" and self.kind == "event" and fnmatchcase(signal_kind, self.signal_pattern or "")

    def record_run(self, *, started_at: datetime, outcome: str, output: str, now: datetime,
                   error: str | None = None) -> None:
        """Records a finished run: a run longer than the timeout failed; a failure is retried once, then pauses."""
        if outcome not in OUTCOMES:
            raise InvalidRoutine(f"outcome {outcome!r:.40} is not one of {', '.join(OUTCOMES)}")
        if self.status != "active":
            raise InvalidRoutine(f"routine {self.ref!r} is {self.status}; resume it before recording a run")
        if now - started_at > timedelta(seconds=self.timeout_seconds):
            outcome, error = "failure", f"timed out after {self.timeout_seconds} s"
        new_hash = result_hash(output) if outcome == "success" else None
        failures = self.consecutive_failures + 1 if outcome == "failure" else 0
        retry = failures == 1
        # The one retry runs even past max_runs: a limit counts the routine's work, not its transient failures.
        exhausted = not retry and self.max_runs is not None and self.run_count + 1 >= self.max_runs
        self.trigger_event(
            self.RunRecorded, timestamp=now, outcome=outcome, started_at=started_at, output=output, error=error,
            result_hash=new_hash, notify_owner=should_notify(self.notify, outcome, new_hash, self.last_result_hash),
            next_run_at=None if exhausted or failures >= FAILURES_BEFORE_PAUSE else self._next_after(now, retry=retry),
        )
        if failures >= FAILURES_BEFORE_PAUSE:
            self.trigger_event(self.Paused, timestamp=now, reason=f"{failures} consecutive failures: {error or output}"[:300])
        elif exhausted:
            self.trigger_event(self.Finished, timestamp=now, reason=f"ran {self.run_count} of max_runs {self.max_runs}")

    def pause(self, *, reason: str, now: datetime) -> None:
        self._require("active", "pause")
        self.trigger_event(self.Paused, timestamp=now, reason=reason)

    def resume(self, *, now: datetime) -> None:
        self._require("paused", "resume")
        first = None if self.kind == "event" else (
            self.next_run_at or now if self.kind == "oneshot" else _next_scheduled(
                self.interval_minutes, self.cron, self.zone, now))
        self.trigger_event(self.Resumed, timestamp=now, next_run_at=first)

    def run_now(self, *, reason: str, now: datetime) -> None:
        self._require("active", "run now")
        self.trigger_event(self.RunRequested, timestamp=now, reason=reason)

    def disable(self, *, reason: str, now: datetime) -> None:
        """Stops the routine for good, e.g. because the task that owns it closed; disabling twice is a no-op."""
        if self.status not in ("disabled", "done"):
            self.trigger_event(self.Disabled, timestamp=now, reason=reason)

    def adopt(self, *, task_ref: str, now: datetime) -> None:
        """A task takes over a tenant's routine; a run waiting for its external runner is run by the task instead."""
        if self.owner_task_ref is not None:
            raise InvalidRoutine(f"routine {self.ref!r} is owned by task {self.owner_task_ref!r}; only a tenant's "
                                 "routine can be adopted")
        if self.status in ("disabled", "done"):
            raise InvalidRoutine(f"routine {self.ref!r} is {self.status}; create a new one for the task")
        next_run = now if self.report_due_at is not None else self.next_run_at
        self.trigger_event(self.Adopted, timestamp=now, task_ref=task_ref, next_run_at=next_run)

    def dispatch(self, *, now: datetime) -> None:
        """A due run of a tenant's routine is handed to its external runner, who has the timeout to report it."""
        self.trigger_event(self.Dispatched, timestamp=now,
                           report_due_at=now + timedelta(seconds=self.timeout_seconds))

    def hold_run(self, *, reason: str, now: datetime) -> None:
        """The dispatched run's report deadline passed while a pause held the tenant (`reason`): not a failure."""
        self.trigger_event(self.RunHeld, timestamp=now, reason=reason)

    def report_overdue(self, now: datetime) -> bool:
        return self.status == "active" and self.report_due_at is not None and self.report_due_at <= now

    def compact_history(self, *, now: datetime, max_age: timedelta = HISTORY_MAX_AGE) -> None:
        """Drops runs older than `max_age`, keeping the latest one so the routine's last outcome stays known."""
        before = now - max_age
        dropped = sum(1 for run in self.history[:-1] if run["at"] < before)
        if dropped:
            self.trigger_event(self.HistoryCompacted, timestamp=now, dropped=dropped, before=before)

    def _next_after(self, now: datetime, *, retry: bool) -> datetime | None:
        if retry:
            return now + RETRY_DELAY
        if self.kind == "scheduled":
            return _next_scheduled(self.interval_minutes, self.cron, self.zone, now)
        return None

    def _require(self, status: str, doing: str) -> None:
        if self.status != status:
            raise InvalidRoutine(f"routine {self.ref!r} is {self.status}; only a {status} routine can {doing}")


def _next_scheduled(interval_minutes: int | None, cron: str | None, zone: str, now: datetime) -> datetime:
    if cron:
        return next_firing(parse_cron(cron), now, zone)
    assert interval_minutes is not None, "a scheduled routine was checked to have an interval or a cron"
    return now + timedelta(minutes=interval_minutes)


def _check(kind: str, interval_minutes: int | None, cron: str | None, signal_pattern: str | None, notify: str,
           max_runs: int | None, timeout: timedelta) -> None:
    if kind not in KINDS:
        raise InvalidRoutine(f"kind {kind!r:.40} is not one of {', '.join(KINDS)}")
    if notify not in NOTIFY:
        raise InvalidRoutine(f"notify {notify!r:.40} is not one of {', '.join(NOTIFY)}")
    if kind == "scheduled" and (interval_minutes is None) == (cron is None):
        raise InvalidRoutine("a scheduled routine needs exactly one of interval_minutes or cron")
    if interval_minutes is not None and interval_minutes < 1:
        raise InvalidRoutine("interval_minutes must be at least 1")
    if cron:
        parse_cron(cron)
    if kind == "event" and not signal_pattern:
        raise InvalidRoutine("an event routine needs signal_pattern, the signal kind that triggers it (e.g. github.*)")
    if max_runs is not None and max_runs < 1:
        raise InvalidRoutine("max_runs must be at least 1, or left out for no limit")
    if timeout <= timedelta(0):
        raise InvalidRoutine("timeout must be positive")
