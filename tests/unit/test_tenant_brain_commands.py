"""`tenant.goal` and `tenant.memory` on the in-memory store: what the tenant tells the proactive brain is kept on its
run, replaced by key, and a dropped goal leaves the synthesis context."""

from __future__ import annotations

from loopline.domain import ids
from loopline.domain.proactive_run import ProactiveRun
from loopline.processors.application import UnitOfWork
from tests.conftest import command
from tests.unit.in_memory import InMemoryLoopline

AT = "2026-03-14T08:00:00Z"


def told(type_: str, *said: dict) -> ProactiveRun:
    """The tenant's run after it was told each of `said` (the command's data) with `type_`, in order."""
    loopline = InMemoryLoopline()
    loopline.publish(*(command(f"m{n}", type_, AT, **data) for n, data in enumerate(said)))
    run = UnitOfWork(loopline.app).get(ids.run_id("user_xyz"), ProactiveRun)
    assert run is not None
    return run


def test_goals_are_kept_by_key_and_a_dropped_goal_leaves_the_context():
    run = told("tenant.goal", {"key": "retention", "goal": "Keep churn under 3%"},
               {"key": "growth", "goal": "Fill the 7am class"}, {"key": "retention", "goal": "Keep churn under 2%"},
               {"key": "growth", "goal": "Fill the 7am class", "active": False})
    assert run.goals == {"retention": "Keep churn under 2%"}


def test_a_memory_noted_again_replaces_the_note_and_becomes_the_latest():
    run = told("tenant.memory", {"key": "busy", "note": "Saturdays are busy"},
               {"key": "coach", "note": "Coach Mike is away in June"},
               {"key": "busy", "note": "Saturdays and Mondays are busy"})
    assert list(run.memory.items()) == [("coach", "Coach Mike is away in June"), ("busy", "Saturdays and Mondays are busy")]

