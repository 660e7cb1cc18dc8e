"""What `tasks show` and `audit` show of a plan (seed 002 §14): a subtask names its parent and requirement, a parent
lists its subtasks and what they make it, and the trail says each step."""

from __future__ import annotations

from loopline.projections import task_memory, task_queries
from loopline.runtime.system import System
from tests.conftest import command, publish
from tests.integration.helpers import TENANT, task_row, trail

AT = "2026-03-02T09:00:00Z"


def test_a_parent_shows_its_subtasks_and_the_status_they_give_it(system: System) -> None:
    publish(
        system,
        command("c1", "task.create", AT, TENANT, task_id="goal", title="Win back Alex"),
        command("c2", "task.add_subtask", AT, TENANT, parent_id="goal", task_id="research", title="Pull Alex's history"),
        command("c3", "task.add_subtask", AT, TENANT, parent_id="goal", task_id="tag", title="Tag Alex",
                requirement="optional", depends_on=["research"]),
        command("c4", "task.complete", "2026-03-02T10:00:00Z", TENANT, task_id="research", summary="18 months, 3x/week"),
        command("c5", "task.cancel", "2026-03-02T11:00:00Z", TENANT, task_id="tag", reason="tags are off"),
    )

    with system.projections.engine.connect() as conn:
        steps = task_queries.subtasks(conn, TENANT, "goal")
        [memory] = task_memory.find(conn, "goal", TENANT)
        log = task_memory.read(conn, memory, "log.md")
    assert [(s["task_id"], s["requirement"], s["status"]) for s in steps] == [
        ("research", "required", "completed"), ("tag", "optional", "cancelled")]
    parent = task_row(system, "goal")
    assert (parent["status"], parent["subtasks_derived"]) == ("executing", "needs_evaluation")
    assert "every subtask has ended (1 of 2 completed)" in parent["status_reason"]
    assert task_row(system, "tag")["parent_id"] == "goal"
    summaries = [row["summary"] for row in trail(system, "goal")]
    assert "subtask tag added by the agent (optional, waiting)" in summaries
    assert "its subtasks make it needs_evaluation; task is executing" in summaries
    assert "its subtasks make it needs_evaluation; task is executing" in log
    tag = [row for row in trail(system, "tag") if row["event"] == "Task.WokenUp"]
    assert tag and tag[0]["reason"] == "subtask research finished"
