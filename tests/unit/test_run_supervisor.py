"""The supervisor (seed 000 Part 3, never dies): a proactive run more than 48 h past its wake-up runs again."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest

from loopline.domain import ids
from loopline.domain.proactive_run import RESCUE_REASON, ProactiveRun
from loopline.domain.timers import TimerKind
from loopline.domain.timeutil import format_time
from loopline.processors.application import UnitOfWork
from loopline.processors.followers.scheduler import Scheduler
from loopline.processors.handlers.timer_firings import TIMERS
from tests.conftest import signal
from tests.unit.in_memory import InMemoryLoopline

DAY0 = datetime(2026, 5, 4, 9, 0, tzinfo=timezone.utc)


def _run(loopline: InMemoryLoopline) -> ProactiveRun:
    run = UnitOfWork(loopline.app).get(ids.run_id("gym"), ProactiveRun)
    assert run is not None
    return run


def test_a_run_whose_timer_was_refused_is_rescued_after_48_hours_and_runs_again(monkeypatch: pytest.MonkeyPatch):
    loopline = InMemoryLoopline()
    loopline.publish(signal("s1", "user.seen", format_time(DAY0), tenant="gym"))
    broken = replace(TIMERS[TimerKind.PROACTIVE_RUN], fire=lambda uow, timer, drafter: 1 / 0)
    with monkeypatch.context() as down:
        down.setitem(TIMERS, TimerKind.PROACTIVE_RUN, broken)
        loopline.tick(DAY0 + timedelta(minutes=30))  # the run's timer fails every try and is refused: no next run
    run_id = _run(loopline).id
    loopline.scheduler = Scheduler(loopline.scheduler.bus, stale_runs=lambda now: [run_id])

    loopline.tick(DAY0 + timedelta(days=1))  # a day late: not stale yet
    assert _run(loopline).next_run_at == DAY0 + timedelta(minutes=30)
    rescued = DAY0 + timedelta(days=3)
    assert loopline.tick(rescued) == ["proactive run for gym rescued: it was more than 48 h past its wake-up"]
    assert (_run(loopline).next_run_at, _run(loopline).next_run_reason) == (rescued, RESCUE_REASON)
    loopline.tick(rescued + timedelta(minutes=1))
    assert _run(loopline).last_run_at == rescued + timedelta(minutes=1)
    assert [type(e) for e in loopline.events() if isinstance(e, ProactiveRun.Rescued)] == [ProactiveRun.Rescued]


def test_a_run_waiting_for_its_model_is_not_rescued_until_a_day_after_it_asked():
    run = ProactiveRun.start(id=ids.run_id("gym"), tenant="gym", now=DAY0)
    asked = DAY0 + timedelta(days=3)  # the run fires three days late and asks the model
    run.request_synthesis(turn=1, context="2 loops expired", tool_results=[], now=asked)
    assert not run.rescue(now=asked)  # its wake-up is long past, but it is thinking, not lost
    assert not run.rescue(now=asked + timedelta(hours=70))
    assert run.rescue(now=asked + timedelta(hours=73))  # no answer, and its day-later close never came
