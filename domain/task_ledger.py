"""The task ledger: the tasks Loopline works that a tenant created (per local day, per origin) and has open.

One `TenantTasks` per tenant is loaded and changed in the unit of work of every `task.create` of a task
Loopline works, so two creations racing meet as a version conflict on it, never as one task too many
(seed 002 §7.9, §7.13). `CREATION_CHECKS` are the limits a creation passes, in order, the first that
holds deciding; a held creation is recorded (`CreationHeld`) with its rule and reason, and creates nothing.
A task's close is not written here: the open tasks are looked at again when the ledger is at its limit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any, Literal

from eventsourcing.domain import Aggregate

from loopline.domain.base import LooplineAggregate, TenantEvent
from loopline.domain.onboarding import RAMP
from loopline.domain.safety_limits import TASKS_PER_RUN, TASKS_PER_SIGNAL
from loopline.domain.tenant import TenantSettings

OriginKind = Literal["run", "signal", "task"]
KEEP_DAYS = 2
"""Days behind the latest creation's day whose counts (and origins) are kept: enough for today's limits."""


@dataclass(frozen=True)
class Origin:
    """What led the agent to create a task: one analysis run, one signal, or another task's work (spawned)."""

    kind: OriginKind
    id: str

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.id}"


class TenantTasks(LooplineAggregate):
    """Counts of the tasks Loopline works that one tenant created, and the refs of those still open."""

    OWNER = {"tenant": "tenant"}

    class Created(Aggregate.Created):
        tenant: str

    class Counted(TenantEvent):
        """One task created on `day` (ISO date, the tenant's local day), with its origin's key if it named one."""

        task_ref: str
        day: str
        origin: str | None
        spawned: bool

        def apply(self, ledger: TenantTasks) -> None:
            ledger.created[self.day] = ledger.created.get(self.day, 0) + 1
            if self.spawned:
                ledger.spawned[self.day] = ledger.spawned.get(self.day, 0) + 1
            if self.origin is not None:
                ledger.origins[self.origin] = [self.day, ledger.origins.get(self.origin, [self.day, 0])[1] + 1]
            ledger.active.append(self.task_ref)
            ledger._forget_before((date.fromisoformat(max(ledger.created)) - timedelta(days=KEEP_DAYS)).isoformat())

    class Released(TenantEvent):
        """Open tasks found closed when the ledger was next at its limit of open tasks."""

        task_refs: list[str]

        def apply(self, ledger: TenantTasks) -> None:
            closed = set(self.task_refs)
            ledger.active = [ref for ref in ledger.active if ref not in closed]

    class CreationHeld(TenantEvent):
        """A `task.create` a limit held: nothing was created; `rule` names the limit (`domain/safety_limits.py`)."""

        task_ref: str
        rule: str
        reason: str
        task_type: str
        contact: str
        origin: str | None

        def apply(self, ledger: TenantTasks) -> None:
            """Changes no count: only what was created counts."""

    def __init__(self, tenant: str) -> None:
        self.tenant = tenant
        self.created: dict[str, int] = {}
        """ISO date -> tasks created that local day, for the days kept."""
        self.spawned: dict[str, int] = {}
        """ISO date -> of those, tasks spawned from another task's work."""
        self.origins: dict[str, list[Any]] = {}
        """Origin key -> [the day it last created a task, tasks it created]."""
        self.active: list[str] = []
        """Refs of the tasks created that were open when last looked at, oldest first."""

    @classmethod
    def open(cls, *, id: Any, tenant: str, now: datetime) -> TenantTasks:  # noqa: A002
        return cls._create(cls.Created, id=id, timestamp=now, tenant=tenant)

    def _forget_before(self, horizon: str) -> None:
        self.created = {day: n for day, n in self.created.items() if day >= horizon}
        self.spawned = {day: n for day, n in self.spawned.items() if day >= horizon}
        self.origins = {key: seen for key, seen in self.origins.items() if seen[0] >= horizon}

    def count(self, *, task_ref: str, day: date, origin: Origin | None, now: datetime) -> None:
        self.trigger_event(
            self.Counted, timestamp=now, task_ref=task_ref, day=day.isoformat(), origin=origin.key if origin else None,
            spawned=origin is not None and origin.kind == "task",
        )

    def release(self, task_refs: list[str], *, now: datetime) -> None:
        if task_refs:
            self.trigger_event(self.Released, timestamp=now, task_refs=list(task_refs))

    def hold(self, held: Held, *, task_ref: str, task_type: str, contact: str, origin: Origin | None,
             now: datetime) -> None:
        self.trigger_event(
            self.CreationHeld, timestamp=now, task_ref=task_ref, rule=held.rule, reason=held.reason,
            task_type=task_type, contact=contact, origin=origin.key if origin else None,
        )

    def created_on(self, day: date) -> int:
        return self.created.get(day.isoformat(), 0)

    def spawned_on(self, day: date) -> int:
        return self.spawned.get(day.isoformat(), 0)

    def created_by(self, origin: Origin) -> int:
        return self.origins.get(origin.key, [None, 0])[1]


@dataclass(frozen=True)
class Held:
    rule: str
    reason: str


@dataclass(frozen=True)
class CreationAttempt:
    """One task Loopline would work, about to be created, with everything the checks read."""

    ledger: TenantTasks
    limits: TenantSettings
    day: date
    """Today, in the tenant's time zone."""
    origin: Origin | None


def active_task_limit(attempt: CreationAttempt) -> Held | None:
    limit, open_now = attempt.limits.active_task_limit, len(attempt.ledger.active)
    if open_now < limit:
        return None
    return Held("active_task_limit", f"{open_now} task(s) are open (limit {limit} at once); one must close first")


def daily_task_limit(attempt: CreationAttempt) -> Held | None:
    limit, created = attempt.limits.daily_task_limit, attempt.ledger.created_on(attempt.day)
    if created < limit:
        return None
    return Held("daily_task_limit", f"{created} task(s) were created on {attempt.day.isoformat()} (limit {limit} a day)")


def onboarding_task_limit(attempt: CreationAttempt) -> Held | None:
    """A tenant's onboarding phase (seed 002 §26) creates fewer tasks a day than its own limit."""
    phase = attempt.limits.ramp_phase
    limit, created = RAMP[phase].tasks_a_day, attempt.ledger.created_on(attempt.day)
    if limit is None or created < limit:
        return None
    return Held("onboarding_task_limit", f"{created} task(s) were created on {attempt.day.isoformat()} and the "
                                         f"onboarding phase {phase} allows {limit} a day")


def daily_spawned_task_limit(attempt: CreationAttempt) -> Held | None:
    if attempt.origin is None or attempt.origin.kind != "task":
        return None
    limit, spawned = attempt.limits.daily_spawned_task_limit, attempt.ledger.spawned_on(attempt.day)
    if spawned < limit:
        return None
    day = attempt.day.isoformat()
    return Held("daily_spawned_task_limit",
                f"{spawned} task(s) were spawned from other tasks' work on {day} (limit {limit} a day)")


def _per_origin(kind: OriginKind, rule: str, limit: int, what: str) -> Callable[[CreationAttempt], Held | None]:
    def check(attempt: CreationAttempt) -> Held | None:
        origin = attempt.origin
        if origin is None or origin.kind != kind or attempt.ledger.created_by(origin) < limit:
            return None
        return Held(rule, f"{what} {origin.id} created {attempt.ledger.created_by(origin)} task(s) (limit {limit})")

    check.__name__ = rule
    return check


run_task_limit = _per_origin("run", "run_task_limit", TASKS_PER_RUN, "analysis run")
signal_task_limit = _per_origin("signal", "signal_task_limit", TASKS_PER_SIGNAL, "signal")

CreationCheck = Callable[[CreationAttempt], Held | None]

CREATION_CHECKS: tuple[CreationCheck, ...] = (
    active_task_limit, daily_task_limit, onboarding_task_limit, daily_spawned_task_limit, run_task_limit,
    signal_task_limit,
)
"""In order: the first that holds decides, so the reason names the widest limit first met."""


def first_held(attempt: CreationAttempt) -> Held | None:
    return next((held for check in CREATION_CHECKS if (held := check(attempt)) is not None), None)
