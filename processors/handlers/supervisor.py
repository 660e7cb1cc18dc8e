"""The proactive run's supervisor (seed 000 Part 3, never dies): each tick, a run more than 48 h past its wake-up
(its timer parked, refused or lost) is made due now and its timer filed again."""

from __future__ import annotations

from loopline.domain.errors import DomainError
from loopline.domain.proactive_run import ProactiveRun
from loopline.domain.timers import TimerKind
from loopline.processors.application import UnitOfWork
from loopline.processors.bus import Fault, Handler
from loopline.processors.handlers.loops_and_timers import set_timer
from loopline.processors.messages import RunRescue


def _rescue(uow: UnitOfWork, rescue: RunRescue) -> str | None:
    """The read model may lag: the run itself says whether it is still stale."""
    run = uow.get(rescue.run_id, ProactiveRun)
    if run is None or not run.rescue(now=rescue.now):
        return None
    set_timer(uow, kind=TimerKind.PROACTIVE_RUN, target_id=run.id, due=rescue.now, now=rescue.now)
    return f"proactive run for {run.tenant} rescued: it was more than 48 h past its wake-up"


def _refused(uow: UnitOfWork, rescue: RunRescue, error: DomainError) -> None:
    raise error  # a rescue breaks no rule: a refusal here is a bug, and stops the tick


def _failed(uow: UnitOfWork, rescue: RunRescue, fault: Fault) -> None:
    """A rescue that cannot be recorded stops the tick, to be run again (the run stays stale, so it is found again)."""
    raise fault.error


RUN_RESCUE: Handler[RunRescue] = Handler(apply=_rescue, refuse=_refused, park=_failed)
