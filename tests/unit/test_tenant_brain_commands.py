"""`tenant.goal` and `tenant.memory` on the in-memory store: what the tenant tells the proactive brain is kept on its
run, replaced by key, and a dropped goal leaves the synthesis context."""

from __future__ import annotations

from loopline.domain import ids
from loopline.domain.proactive_run import ProactiveRun
from loopline.processors.application import UnitOfWork
from tests.conftest import command
from tests.unit.in_memory import InMemoryLoopline

AT = "2026-03-14T08:00:00Z"


def run_of(loopline: InMemoryLoopline) -> ProactiveRun:
    run = UnitOfWork(loopline.app).get(ids.run_id("user_xyz"), ProactiveRun)
    assert run is not None
    return run


def test_goals_are_kept_by_key_and_a_dropped_goal_leaves_the_context():
    loopline = InMemoryLoopline()
    loopline.publish(
        command("g1", "tenant.goal", AT, key="retention", goal="Keep churn under 3%"),
        command("g2", "tenant.goal", AT, key="growth", goal="Fill the 7am class"),
        command("g3", "tenant.goal", AT, key="retention", goal="Keep churn under 2%"),
        command("g4", "tenant.goal", AT, key="growth", goal="Fill the 7am class", active=False),
    )
    assert run_of(loopline).goals == {"retention": "Keep churn under 2%"}


def test_a_memory_noted_again_replaces_the_note_and_becomes_the_latest():
    loopline = InMemoryLoopline()
    loopline.publish(
        command("m1", "tenant.memory", AT, key="busy", note="Saturdays are busy"),
        command("m2", "tenant.memory", AT, key="coach", note="Coach Mike is away in June"),
        command("m3", "tenant.memory", AT, key="busy", note="Saturdays and Mondays are busy"),
    )
    assert list(run_of(loopline).memory.items()) == [
        ("coach", "Coach Mike is away in June"), ("busy", "Saturdays and Mondays are busy"),
    ]
