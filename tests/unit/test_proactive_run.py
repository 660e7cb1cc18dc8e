"""The per-tenant proactive run: its clamped schedule and its 24 h fallback."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loopline.domain import ids
from loopline.domain.proactive_run import ProactiveRun, clamp_next_run

NOW = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)


def test_requested_run_sooner_than_30_minutes_is_pushed_to_30_minutes():
    assert clamp_next_run(NOW + timedelta(minutes=5), NOW) == NOW + timedelta(minutes=30)
    assert clamp_next_run(NOW - timedelta(days=1), NOW) == NOW + timedelta(minutes=30)


def test_requested_run_later_than_7_days_is_pulled_to_7_days():
    assert clamp_next_run(NOW + timedelta(days=30), NOW) == NOW + timedelta(days=7)


def test_requested_run_inside_the_bounds_is_kept():
    assert clamp_next_run(NOW + timedelta(hours=5), NOW) == NOW + timedelta(hours=5)


@given(offset=st.timedeltas(min_value=timedelta(days=-400), max_value=timedelta(days=400)))
def test_next_run_is_always_between_30_minutes_and_7_days(offset):
    result = clamp_next_run(NOW + offset, NOW)
    assert NOW + timedelta(minutes=30) <= result <= NOW + timedelta(days=7)
    if timedelta(minutes=30) <= offset <= timedelta(days=7):
        assert result == NOW + offset


def start() -> ProactiveRun:
    return ProactiveRun.start(id=ids.run_id("u"), tenant="u", now=NOW)


def recorded(run: ProactiveRun) -> ProactiveRun.RunRecorded:
    return [e for e in run.pending_events if isinstance(e, ProactiveRun.RunRecorded)][-1]


def test_first_run_is_30_minutes_after_the_tenant_is_seen():
    run = start()
    assert run.next_run_at == NOW + timedelta(minutes=30)
    assert not run.is_due(NOW + timedelta(minutes=29))
    assert run.is_due(NOW + timedelta(minutes=30))


def test_run_that_asks_for_no_next_run_falls_back_to_24_hours():
    run = start()
    at = NOW + timedelta(minutes=30)
    run.record_run(mode="maintenance", summary="nothing", escalations_handled=0, now=at)
    assert run.next_run_at == at + timedelta(hours=24)
    assert recorded(run).fallback_used is True


def test_run_that_scheduled_its_next_wake_up_keeps_it():
    run = start()
    at = NOW + timedelta(minutes=30)
    run.schedule_next(requested_at=at + timedelta(hours=3), reason="check on Bob", now=at)
    run.record_run(mode="agent", summary="emailed Bob", escalations_handled=0, now=at)
    assert run.next_run_at == at + timedelta(hours=3)
    assert run.next_run_reason == "check on Bob"
    assert recorded(run).fallback_used is False


def test_handled_escalations_leave_the_queue():
    run = start()
    run.queue_escalation(task_ref="t1", loop_ref="loop-1", reason="no reply", now=NOW)
    assert [e["task_ref"] for e in run.pending_escalations] == ["t1"]
    run.record_run(mode="maintenance", summary="surfaced 1", escalations_handled=1, now=NOW + timedelta(minutes=30))
    assert run.pending_escalations == []
    assert run.runs == 1


def test_escalation_queued_during_a_run_waits_for_the_next_one():
    run = start()
    run.queue_escalation(task_ref="t1", loop_ref=None, reason="a", now=NOW)
    run.queue_escalation(task_ref="t2", loop_ref=None, reason="b", now=NOW)
    run.record_run(mode="maintenance", summary="surfaced 1", escalations_handled=1, now=NOW + timedelta(minutes=30))
    assert [e["task_ref"] for e in run.pending_escalations] == ["t2"]


def test_synthesis_run_takes_three_actions_and_refuses_the_fourth_naming_schedule_next_run():
    run = start()
    answers = [run.take_action(tool=tool, detail="d", now=NOW)
               for tool in ("create_task", "notify", "send_brief", "escalate_task")]
    assert answers[:3] == [None, None, None]
    assert answers[3] is not None and "schedule_next_run" in answers[3]
    refused = [e for e in run.pending_events if isinstance(e, ProactiveRun.ActionRefused)]
    assert [(e.tool, e.reason) for e in refused] == [("escalate_task", answers[3])]
    assert run.actions_this_run == 3


def test_action_budget_is_fresh_for_each_run():
    run = start()
    for _ in range(3):
        run.take_action(tool="notify", detail="d", now=NOW)
    run.record_run(mode="synthesis", summary="three actions", escalations_handled=0, now=NOW + timedelta(hours=1))
    assert run.take_action(tool="notify", detail="d", now=NOW + timedelta(hours=2)) is None


def test_unknown_action_tool_is_refused_naming_the_field():
    run = start()
    with pytest.raises(ValueError, match="^tool:"):
        run.take_action(tool="delete_everything", detail="d", now=NOW)


def _run_idle(run: ProactiveRun, at: datetime, *, seen: datetime, actions: int = 0) -> datetime:
    """Lets the run's wake-up pass and records it, as the timer does; returns when the next one is."""
    run.record_run(mode="maintenance", summary="nothing", escalations_handled=0, now=at, actions_taken=actions,
                   owner_last_seen=seen)
    return run.next_run_at


def test_an_active_owners_run_follows_the_tier_cadence_and_five_empty_runs_double_it():
    run, at = start(), NOW + timedelta(minutes=30)
    gaps = []
    for _ in range(6):
        following = _run_idle(run, at, seen=at - timedelta(hours=1))
        gaps.append(following - at)
        at = following
    assert gaps == [timedelta(hours=8)] * 4 + [timedelta(hours=16)] * 2
    assert run.empty_runs_in_a_row == 6 and not recorded(run).fallback_used
    _run_idle(run, at, seen=at - timedelta(hours=1), actions=2)
    assert (run.empty_runs_in_a_row, run.next_run_at - at) == (0, timedelta(hours=8))


def test_a_churned_owners_runs_are_paused_until_the_return_and_a_dormant_ones_run_daily():
    run, at = start(), NOW + timedelta(minutes=30)
    _run_idle(run, at, seen=at - timedelta(days=40))
    assert run.paused and run.next_run_at == at + timedelta(days=7)
    assert recorded(run).next_run_reason.startswith("paused: the owner is churned")
    at = run.next_run_at
    _run_idle(run, at, seen=at - timedelta(days=2))
    assert not run.paused and run.next_run_at == at + timedelta(days=1)


def test_a_run_that_asked_for_its_next_wake_up_keeps_it_and_one_never_seen_falls_back_to_24_hours():
    run, at = start(), NOW + timedelta(minutes=30)
    run.schedule_next(requested_at=at + timedelta(hours=3), reason="the gym opens", now=at)
    _run_idle(run, at, seen=at)
    assert (run.next_run_at, run.next_run_reason) == (at + timedelta(hours=3), "the gym opens")
    at = run.next_run_at
    run.record_run(mode="maintenance", summary="nothing", escalations_handled=0, now=at, actions_taken=1)
    assert run.next_run_at == at + timedelta(hours=24) and recorded(run).fallback_used
