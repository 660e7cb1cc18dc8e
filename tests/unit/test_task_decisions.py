"""The Task's side of model decisions and outreach: a request is decided at most once, a reply counts one turn
and stops the cadence, a failed request is asked again only as a newer attempt."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from loopline.domain import ids
from loopline.domain.task import Task
from loopline.domain.task_decisions import AlreadyDecided

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)


def acting_task() -> Task:
    task = Task.create(
        id=ids.task_id("gym", "t1"), now=NOW, tenant="gym", ref="t1", title="Keep Sam training", description="",
        task_type="churn_risk", status="ready", expires_at=NOW + timedelta(days=14), priority="high",
        contact="sam@example.com", confidence=0.8, context={}, reason="r",
    )
    task.plan_outreach(budget_messages=3, budget_turns=6, ends_at=NOW + timedelta(days=14), cadence="standard",
                       intervals=[3, 5, 7], tones=["a", "b", "c"], on_exhaustion="cancel", dormant_check_days=None,
                       dormant_max_days=None, draft=None, contact_name="Sam", now=NOW)
    return task


def decide(task: Task, ref: str, attempt: int = 1) -> None:
    task.record_decision(request_ref=ref, attempt=attempt, point="draft_message", adapter="offline", model="m",
                         decision="draft", confidence=0.8, reasoning="r", prompt_digest="d", input_tokens=0,
                         output_tokens=0, output={"subject": "s", "body": "b"}, now=NOW)


def replay(task: Task) -> Task:
    rebuilt = None
    for event in task.collect_events():
        rebuilt = event.mutate(rebuilt)
    assert rebuilt is not None
    return rebuilt


def test_a_request_is_decided_once_and_a_repeat_is_refused():
    task = acting_task()
    task.request_decision(request_ref="t1/touch/1", point="draft_message", purpose="touch", touch=1, tone="a",
                          reason="due", now=NOW)
    task.request_decision(request_ref="t1/touch/1", point="draft_message", purpose="touch", touch=1, tone="a",
                          reason="due again", now=NOW)  # asked twice: one request
    decide(task, "t1/touch/1")
    with pytest.raises(AlreadyDecided):
        decide(task, "t1/touch/1")
    events = [type(e).__name__ for e in task.pending_events]
    assert events.count("DecisionRequested") == 1 and events.count("DecisionRecorded") == 1
    assert replay(task).pending_decisions == {}


def test_a_failed_request_takes_a_decision_only_for_its_newer_attempt():
    task = acting_task()
    task.request_decision(request_ref="r", point="draft_message", purpose="touch", touch=1, tone="a", reason="due",
                          now=NOW)
    task.fail_decision(request_ref="r", attempt=1, error="down", retry_at=NOW + timedelta(minutes=5), now=NOW)
    with pytest.raises(AlreadyDecided):
        decide(task, "r", attempt=1)  # the first attempt's late answer
    task.request_decision(request_ref="r", point="draft_message", purpose="touch", touch=1, tone="a", reason="retry",
                          now=NOW, attempt=2)
    decide(task, "r", attempt=2)
    assert task.pending_decisions == {}


def test_a_reply_counts_one_turn_however_often_its_evaluation_is_retried_and_stops_the_cadence():
    task = acting_task()
    task.touch_sent(touch=1, next_touch_at=NOW + timedelta(days=3), now=NOW)
    task.request_decision(request_ref="sig-1", point="evaluate_reply", purpose="reply", touch=1, tone=None,
                          reason="replied", now=NOW)
    task.fail_decision(request_ref="sig-1", attempt=1, error="down", retry_at=NOW, now=NOW)
    task.request_decision(request_ref="sig-1", point="evaluate_reply", purpose="reply", touch=1, tone=None,
                          reason="retry", now=NOW, attempt=2)
    rebuilt = replay(task)
    assert (rebuilt.turns_used, rebuilt.next_touch_at, rebuilt.messages_used) == (1, None, 1)


def test_a_task_waiting_on_the_model_is_neither_stalled_nor_done_waiting():
    task = acting_task()
    task.request_decision(request_ref="r", point="draft_message", purpose="touch", touch=1, tone="a", reason="due",
                          now=NOW)
    assert not task.check_stalled(after_days=3, now=NOW + timedelta(days=10))


def test_an_old_snapshot_gets_the_outreach_state_defaults():
    state = {"status": "executing"}
    Task.upcast_v1_v2(state)
    assert (state["pending_decisions"], state["next_touch_at"], state["deferred"], state["outcome"]) == (
        {}, None, None, None)
