"""The synthesis context's delta against the last stored snapshot (seed 000 Part 3): new, changed and gone items."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from loopline.domain import ids
from loopline.domain.proactive_run import ProactiveRun
from loopline.domain.synthesis_context import context_delta, morning_brief
from loopline.processors.application import Loopline
from loopline.projections.timeline import DESCRIPTIONS

NOW = datetime(2026, 3, 14, 8, 0, tzinfo=timezone.utc)
LAST = {"tasks": {"t1": "waiting on Ann, loop expires tomorrow", "t2": "stalled 5 days"},
        "signals": {"s1": "email from Ben"}}


def test_first_run_sees_everything_as_new():
    delta = context_delta(None, LAST)
    assert delta.changed == LAST and delta.gone == {}


def test_delta_names_new_and_changed_items_and_the_keys_gone():
    current = {"tasks": {"t1": "loop expired: Ann never answered", "t2": "stalled 5 days"},
               "signals": {"s1": "email from Ben", "s2": "calendar: board meeting Tuesday"}}
    delta = context_delta(LAST, {**current, "goals": {}})
    assert delta.changed == {"tasks": {"t1": "loop expired: Ann never answered"},
                             "signals": {"s2": "calendar: board meeting Tuesday"}}
    assert delta.gone == {}
    # the signals a run listed are those since the run before: their leaving is no news
    assert context_delta(LAST, {"tasks": {"t2": "stalled 5 days"}}).gone == {"tasks": ["t1"]}


def test_an_unchanged_context_has_an_empty_delta():
    assert context_delta(LAST, LAST).is_empty


def test_the_run_stores_its_last_context_and_answers_the_delta_against_the_one_before():
    app = Loopline(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    run = ProactiveRun.start(id=ids.run_id("u"), tenant="u", now=NOW)
    assert run.snapshot_context(snapshot=LAST, now=NOW).changed == LAST
    app.save(run)
    stored = app.repository.get(run.id)
    assert stored.last_context_snapshot == LAST
    later = {"tasks": {"t2": "stalled 6 days"}, "signals": LAST["signals"]}
    delta = stored.snapshot_context(snapshot=later, now=NOW + timedelta(days=1))
    assert delta.changed == {"tasks": {"t2": "stalled 6 days"}} and delta.gone == {"tasks": ["t1"]}


def test_offline_brief_reports_expired_loops_due_soon_and_stalled_in_a_fixed_order():
    snapshot = {"stalled": {"t9": "'Ship v2' idle 5 days"},
                "due_soon": {"t4": "'Q1 report' due in 2 days", "t3": "'Review PR' due tomorrow"},
                "expired_loops": {"t1": "Rahul never answered 'Schedule meeting'"},
                "signals": {"s1": "email from Ben"}}
    assert morning_brief(snapshot) == (
        "Morning brief. expired loops (1): Rahul never answered 'Schedule meeting'. "
        "due soon (2): 'Review PR' due tomorrow; 'Q1 report' due in 2 days. stalled tasks (1): 'Ship v2' idle 5 days."
    )
    assert morning_brief(dict(reversed(list(snapshot.items())))) == morning_brief(snapshot)


def test_offline_brief_has_nothing_to_say_about_a_quiet_context():
    assert morning_brief({"signals": {"s1": "email from Ben"}, "stalled": {}}) is None


def test_what_the_brain_was_told_saw_and_did_is_in_the_audit_trail():
    run = ProactiveRun.start(id=ids.run_id("u"), tenant="u", now=NOW)
    run.set_goal(key="retention", goal="Keep churn under 3%", active=True, now=NOW)
    run.note_memory(key="busy", note="Saturdays are busy", now=NOW)
    run.snapshot_context(snapshot=LAST, now=NOW)
    for tool in ("notify", "send_brief", "create_task", "escalate_task"):
        run.take_action(tool=tool, detail=f"{tool} for t1", now=NOW)
    described = [DESCRIPTIONS[type(event)](event) for event in run.pending_events[1:]]
    assert described[:5] == [
        ("goal retention set", "Keep churn under 3%"), ("memory busy noted", "Saturdays are busy"),
        ("synthesis context taken: 2 tasks, 1 signals", None), ("synthesis action notify", "notify for t1"),
        ("synthesis action send_brief", "send_brief for t1"),
    ]
    assert described[-1][0] == "synthesis action escalate_task refused" and "schedule_next_run" in described[-1][1]


def test_signals_listed_by_the_last_run_leaving_the_next_snapshot_is_no_news():
    last = {"signals": {"s1": "email.received from maya"}, "active_tasks": {"t1": "'Chase Maya' (waiting)"}}
    assert context_delta(last, {"active_tasks": {"t1": "'Chase Maya' (waiting)"}}).is_empty
    assert context_delta(last, {"active_tasks": {}}).gone == {"active_tasks": ["t1"]}
