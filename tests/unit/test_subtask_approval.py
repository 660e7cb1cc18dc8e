"""A subtask the owner reviews (seed 002 §14, §17.1): approving it does not start it past what holds it, so one Loopline
starts by itself (here an automation's webhook) runs only once its blockers finished, its start came and its parent is
back from the owner."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from loopline.domain.timeutil import format_time
from tests.unit.in_memory import InMemoryLoopline
from tests.unit.test_subtasks import LATER, T0, USER, S, add, plan, send, webhooks_of


@pytest.fixture
def loopline() -> Iterator[InMemoryLoopline]:
    running = InMemoryLoopline()
    assert send(running, "auto", "tenant.configure", at=T0, execution_mode="limited_auto").accepted
    plan(running)
    add(running, "research")
    yield running
    running.close()


def add_reviewed_automation(loopline: InMemoryLoopline, **fields: Any) -> None:
    """A webhook subtask `tag` added with too little confidence to start: it waits for the owner's review."""
    added = add(loopline, "tag", task_type="system_automation", confidence=0.1,
                context={"action": "call_webhook", "params": {"event": "tag_at_risk"}}, **fields)
    assert added.accepted, added.detail
    assert loopline.task(USER, "tag").status is S.PENDING_REVIEW


def approve(loopline: InMemoryLoopline, at: Any = LATER) -> str:
    approved = send(loopline, "approve-tag", "task.approve", at=at, task_id="tag")
    assert approved.accepted, approved.detail
    return approved.detail


def test_an_approved_automation_subtask_waits_for_its_open_blocker_and_runs_once_it_finishes(
    loopline: InMemoryLoopline,
) -> None:
    add_reviewed_automation(loopline, depends_on=["research"])

    said = approve(loopline)

    assert said == "approved tag; 'step tag': waits for subtask research to finish"
    assert (loopline.task(USER, "tag").status, webhooks_of(loopline, "tag")) == (S.READY, [])
    assert send(loopline, "done", "task.complete", task_id="research", summary="history pulled").accepted
    tag = loopline.task(USER, "tag")
    assert (tag.status, tag.outcome, len(webhooks_of(loopline, "tag"))) == (S.COMPLETED, "executed", 1)
    assert loopline.task(USER, "goal").subtasks["tag"]["status"] == S.COMPLETED


def test_an_approved_automation_subtask_with_a_future_start_waits_until_then(loopline: InMemoryLoopline) -> None:
    starts = T0 + timedelta(days=3)
    add_reviewed_automation(loopline, starts_at=format_time(starts))

    approve(loopline)
    loopline.tick(starts - timedelta(hours=2))
    assert (loopline.task(USER, "tag").status, webhooks_of(loopline, "tag")) == (S.READY, [])

    loopline.tick(starts + timedelta(minutes=1))
    tag = loopline.task(USER, "tag")
    assert (tag.status, tag.outcome, len(webhooks_of(loopline, "tag"))) == (S.COMPLETED, "executed", 1)


def test_an_automation_subtask_approved_after_its_start_and_its_blocker_runs_at_once(
    loopline: InMemoryLoopline,
) -> None:
    starts = T0 + timedelta(days=3)
    add_reviewed_automation(loopline, depends_on=["research"], starts_at=format_time(starts))
    send(loopline, "done", "task.complete", task_id="research", at=starts - timedelta(days=1), summary="pulled")
    loopline.tick(starts + timedelta(minutes=1))
    assert webhooks_of(loopline, "tag") == []

    assert approve(loopline, at=starts + timedelta(hours=1)) == "approved tag"

    tag = loopline.task(USER, "tag")
    assert (tag.status, tag.outcome, len(webhooks_of(loopline, "tag"))) == (S.COMPLETED, "executed", 1)


def test_an_automation_subtask_approved_while_its_parent_is_with_the_owner_runs_at_the_guidance(
    loopline: InMemoryLoopline,
) -> None:
    add_reviewed_automation(loopline)
    send(loopline, "stuck", "task.update", task_id="goal", status="escalated", notes="which offer may we make?")

    assert approve(loopline) == "approved tag; 'step tag': held while its parent goal is with the owner"
    assert webhooks_of(loopline, "tag") == []

    assert send(loopline, "answer", "task.guidance", task_id="goal", text="offer a free month").accepted
    tag = loopline.task(USER, "tag")
    assert (tag.status, tag.outcome, len(webhooks_of(loopline, "tag"))) == (S.COMPLETED, "executed", 1)
