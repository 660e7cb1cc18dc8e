"""The scorecard read model on SQLite and PostgreSQL: escalations and reviews make the escalation rate and the
needs-attention list, guidance takes a task off it, and a rebuild gives the same scorecard."""

from __future__ import annotations

from loopline.domain.periods import parse_period
from loopline.projections.scorecard_numbers import scorecard
from loopline.runtime.system import System
from tests.conftest import command, publish

GYM = "gym"
AT = "2026-03-05T15:00:00Z"


def card(system: System, period: str = "2026-03-05") -> dict:
    with system.projections.engine.connect() as conn:
        return scorecard(conn, GYM, parse_period(period))


def test_escalated_and_reviewed_tasks_wait_on_the_owner_until_answered(system: System) -> None:
    publish(system, *[command(f"c{n}", "task.create", AT, GYM, task_id=f"t{n}", title=f"Task {n}", confidence=confidence)
                      for n, confidence in ((1, 0.9), (2, 0.3), (3, 0.9))])
    publish(system, command("u1", "task.update", AT, GYM, task_id="t1", status="escalated", notes="needs a price"))

    day = card(system)
    assert day["numbers"]["tasks_created"] == 3 and day["numbers"]["escalation_rate"] == 0.3333
    assert [(item["task_id"], item["why"], item["reason"]) for item in day["needs_attention"]] == [
        ("t1", "escalated", "needs a price"), ("t2", "in review", day["needs_attention"][1]["reason"])]
    assert card(system, "2026-W10")["numbers"] == day["numbers"] == card(system, "2026-03")["numbers"]
    assert card(system, "2026-03-06")["numbers"]["tasks_created"] == 0

    publish(system, command("g1", "task.guidance", AT, GYM, task_id="t1", text="offer the usual price"))
    answered = card(system)
    assert [item["task_id"] for item in answered["needs_attention"]] == ["t2"]
    assert answered["numbers"]["escalation_rate"] == 0.3333  # it escalated once, answered or not

    system.projections.reset()
    system.projections.catch_up()
    assert card(system) == answered
