"""Pause and stop (seed 002 §7.6, §7.14): a paused tenant, or the whole system paused, sends nothing and asks no
model. What falls due meanwhile is held, not dropped: the pause keeps a list of the held work (a timer to fire
again, a decision to ask again) and resuming hands it back.

`SystemSwitch` is the one switch for every tenant (a singleton); a tenant's own pause lives on `Tenant`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from eventsourcing.domain import Aggregate

from loopline.domain.base import LooplineAggregate
from loopline.domain.wording import when
from loopline.domain.timers import TimerKind


@dataclass(frozen=True)
class Pause:
    """Who is paused (`tenant gym`, or `Loopline` for the whole system), why, by whom and since when (ISO 8601)."""

    scope: str
    reason: str
    by: str
    since: str

    def says(self) -> str:
        since = when(datetime.fromisoformat(self.since))
        return f"{self.scope} is paused since {since} by {self.by} ({self.reason}): nothing is sent until it resumes"


def held_timer(kind: str, target_id: Any, task_ref: str) -> dict[str, str]:
    """Work held by a pause: a timer (`domain/timers.py` TimerKind) of the task's, filed again at resume."""
    return {"timer": str(kind), "target": str(target_id), "task_ref": task_ref}


def held_routine(routine_id: Any, routine_ref: str, task_ref: str | None) -> dict[str, str | None]:
    """Work held by a pause: a routine's run (its `routine` timer), filed again at resume. A tenant's routine has no
    task (`task_ref` None), so only the system's or the tenant's pause holds it, and its trail is the routine's."""
    return {"timer": str(TimerKind.ROUTINE), "target": str(routine_id), "task_ref": task_ref, "routine": routine_ref}


def held_decision(task_id: Any, task_ref: str, request_ref: str, attempt: int) -> dict[str, Any]:
    """Work held by a pause: a model decision the agent did not ask for, asked at resume."""
    return {"decision": request_ref, "attempt": attempt, "target": str(task_id), "task_ref": task_ref}


class Pausable:
    """What `Tenant` and `SystemSwitch` do with their `Paused`, `Resumed` and `WorkHeld` events: both keep the pause
    as `pause_record` and the work it holds as `held`, plain values a snapshot (JSON) would restore unchanged."""

    pause_record: dict[str, str] | None
    held: list[dict[str, Any]]
    pause_scope: str
    """Who is paused, in the words of `Pause.says` (a property of each aggregate)."""
    Paused: Any
    Resumed: Any
    WorkHeld: Any
    trigger_event: Any

    @property
    def paused(self) -> Pause | None:
        return Pause(scope=self.pause_scope, **self.pause_record) if self.pause_record is not None else None

    def pause(self, reason: str, by: str, now: datetime) -> bool:
        """Records the pause; False (nothing recorded) when it is paused already, so the first reason stays."""
        if self.pause_record is not None:
            return False
        self.trigger_event(self.Paused, timestamp=now, reason=reason, by=by)
        return True

    def resume(self, reason: str, by: str, now: datetime) -> list[dict[str, Any]] | None:
        """Lifts the pause and returns the held work to hand back; None (nothing recorded) when not paused."""
        if self.pause_record is None:
            return None
        released = list(self.held)
        self.trigger_event(self.Resumed, timestamp=now, reason=reason, by=by, released=released)
        return released

    def hold(self, work: dict[str, Any], now: datetime, **fields: Any) -> bool:
        """Keeps `work` for the resume (`fields`: the event's own, such as whose work it is); False when it is held
        already."""
        if work in self.held:
            return False
        self.trigger_event(self.WorkHeld, timestamp=now, work=dict(work), **fields)
        return True


class SystemSwitch(Pausable, LooplineAggregate):
    """The global emergency stop (§7.14): every tenant is paused while it is on."""

    class Created(Aggregate.Created):
        pass

    class Paused(Aggregate.Event):
        reason: str
        by: str

        def apply(self, switch: SystemSwitch) -> None:
            switch.pause_record = {"reason": self.reason, "by": self.by, "since": self.timestamp.isoformat()}

    class Resumed(Aggregate.Event):
        reason: str
        by: str
        released: list[dict[str, Any]]
        """The held work handed back, in the order it was held."""

        def apply(self, switch: SystemSwitch) -> None:
            switch.pause_record = None
            switch.held = []

    class WorkHeld(Aggregate.Event):
        tenant: str
        work: dict[str, Any]

        def apply(self, switch: SystemSwitch) -> None:
            switch.held.append(self.work)

    def __init__(self) -> None:
        self.pause_record: dict[str, str] | None = None
        self.held: list[dict[str, Any]] = []

    @classmethod
    def install(cls, *, id: Any, now: datetime) -> SystemSwitch:  # noqa: A002
        return cls._create(cls.Created, id=id, timestamp=now)

    @property
    def pause_scope(self) -> str:
        return "Loopline"
