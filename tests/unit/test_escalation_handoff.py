"""The escalation handoff (issue 20, item 5; seed 002 §17) on the in-memory store: the context an escalation
carries, the pause it puts on the pipeline under it, and the timeouts that remind the owner and then cancel."""

from __future__ import annotations

from datetime import datetime, timezone
from uuid import uuid4

from loopline.domain.task import Task
from loopline.domain.task_escalation import pipeline_paused

DAY0 = datetime(2026, 5, 4, 9, 0, tzinfo=timezone.utc)


def a_task(ref: str, status: str = "executing") -> Task:
    return Task.create(id=uuid4(), now=DAY0, tenant="gym", ref=ref, title=ref, description="", task_type="churn_risk",
                       status=status, expires_at=None, priority=None, contact=None, confidence=None, context={},
                       reason="")


def test_an_escalated_parent_pauses_the_whole_pipeline_under_it() -> None:
    parent, child, grandchild = a_task("parent"), a_task("child"), a_task("grandchild", status="waiting")
    assert pipeline_paused(grandchild, child, parent) is None
    parent.escalate(reason="she asks about the discount", cause="model_escalated", now=DAY0)
    assert pipeline_paused(grandchild, child, parent) is parent
    assert pipeline_paused(child, parent) is parent
    assert pipeline_paused(parent) is parent


def test_a_subtask_of_a_parent_not_escalated_acts() -> None:
    parent, child = a_task("parent"), a_task("child")
    child.escalate(reason="needs the owner", cause="model_escalated", now=DAY0)
    assert pipeline_paused(parent) is None
    assert pipeline_paused(child, parent) is child
