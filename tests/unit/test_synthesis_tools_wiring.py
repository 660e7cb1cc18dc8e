"""The synthesis run's tools wired to the rest of Loopline (issue 21 items 1, 3, 4) on the in-memory store with a
scripted brain: trigger_workflow makes a routine due, decide_escalation extends or notifies, the autonomy tiers
turn a create_task into a proposal or a task, a routine whose action needs approval waits for the owner, and the
context the model reads holds what seed 000's "Context Snapshot" shows (without the signal and calendar sections)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from loopline.domain import ids
from loopline.domain.action_log import ActionLog
from loopline.domain.notification_hold import NotificationHold
from loopline.domain.proactive_run import ProactiveRun
from loopline.domain.proposal import Proposal
from loopline.domain.routine import Routine
from loopline.domain.status import TaskStatus
from loopline.domain.synthesis_context import context_delta
from loopline.domain.task import Task
from loopline.domain.timeutil import format_time
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.synthesis_snapshot import context_snapshot, context_words, signals_seen
from tests.conftest import command, signal
from tests.unit.in_memory import InMemoryLoopline
from tests.unit.test_synthesis_runs import DAY0, RUN_AT, T, ScriptedBrain, run_events, the_run, use

LATER = [use("schedule_next_run", in_hours=24, reason="tomorrow")]


def send(loopline: InMemoryLoopline, ref: str, type_: str, **data: Any) -> None:
    [outcome] = loopline.publish(command(ref, type_, format_time(DAY0), T, **data))
    assert outcome.accepted, outcome.detail


def tool_results(brain: ScriptedBrain, turn: int) -> list[dict[str, Any]]:
    """The tool_results the model was sent with the given turn (the first turn gets none)."""
    return brain.asked[turn - 1].prompt.messages[-1]["content"]


def test_trigger_workflow_makes_the_routine_due_now_and_an_unknown_routine_spends_no_action():
    brain = ScriptedBrain([[use("trigger_workflow", routine_id="nope", reason="x"),
                            use("trigger_workflow", routine_id="ci-check", reason="the supplier wrote")], LATER])
    loopline = InMemoryLoopline(brain_model=brain)
    send(loopline, "c1", "task.create", task_id="ci", title="Keep CI green")
    send(loopline, "c2", "routine.create", routine_id="ci-check", action="call_webhook", params={"event": "ci.check"},
         kind="scheduled", task_id="ci", interval_minutes=24 * 60)
    actions = loopline.tick(RUN_AT)
    [unknown, known] = tool_results(brain, 2)
    assert unknown["is_error"] and "no routine of acme" in unknown["content"]
    assert not known["is_error"] and known["content"] == "routine ci-check is due now"
    assert [event.tool for event in run_events(loopline, ProactiveRun.ActionTaken)] == ["trigger_workflow"]
    actions += loopline.tick(RUN_AT + timedelta(minutes=1))
    assert any("routine ci-check: run 1 success" in action for action in actions)
    [ran] = run_events(loopline, Routine.RunRecorded)
    assert ran.timestamp < DAY0 + timedelta(days=1)  # not its scheduled run a day after its creation


def escalate_to_loop(brain: ScriptedBrain, quiet_hours: str = "22:00-07:00") -> InMemoryLoopline:
    """A seen owner's task `nda` whose loop expires at 09:20 set to escalate_to_loop: the 10:00 run decides it."""
    loopline = InMemoryLoopline(brain_model=brain)
    loopline.publish(signal("seen", "user.seen", format_time(DAY0), T))
    send(loopline, "c0", "tenant.configure", owner_quiet_hours=quiet_hours)
    send(loopline, "c1", "task.create", task_id="nda", title="Get the NDA signed")
    send(loopline, "c2", "loop.register", loop_id="nda/signature", task_id="nda", channel="webhook",
         watch={"source": "docusign", "trigger_name": "document_signed"},
         deadline=format_time(DAY0 + timedelta(minutes=20)), if_unresolved="escalate_to_loop", description="Signed NDA")
    loopline.tick(DAY0 + timedelta(minutes=20))
    assert [item["loop_ref"] for item in the_run(loopline).pending_escalations] == ["nda/signature"]
    loopline.tick(RUN_AT)
    return loopline


def held_or_sent(loopline: InMemoryLoopline) -> list[str]:
    return [e.text for e in loopline.events() if isinstance(e, (NotificationHold.Sent, NotificationHold.Held))]


def woken(loopline: InMemoryLoopline) -> list[tuple[str, str]]:
    return [(e.cause, e.reason) for e in loopline.events() if isinstance(e, Task.WokenUp)]


def test_extend_gives_the_expired_loops_task_another_turn_without_telling_the_owner():
    loopline = escalate_to_loop(ScriptedBrain([[
        use("decide_escalation", task_ref="nda", decision="extend", note="legal is on holiday"), *LATER]]))
    assert [event.tool for event in run_events(loopline, ProactiveRun.ActionTaken)] == ["decide_escalation"]
    assert woken(loopline) == [("escalation", "no sign of Signed NDA by 4 May 2026 09:20 UTC")]
    assert loopline.task(T, "nda").status is TaskStatus.EXECUTING
    assert held_or_sent(loopline) == []
    assert the_run(loopline).pending_escalations == []


def test_notify_tells_the_owner_through_the_hold_and_the_task_stays_open():
    loopline = escalate_to_loop(ScriptedBrain([[
        use("decide_escalation", task_ref="nda", decision="notify", note="ask legal for a date"), *LATER]]))
    assert [e.text for e in run_events(loopline, NotificationHold.Sent)] == ["Get the NDA signed: ask legal for a date"]
    assert not loopline.task(T, "nda").is_closed
    assert [event.tool for event in run_events(loopline, ProactiveRun.ActionTaken)] == ["decide_escalation"]
    assert the_run(loopline).pending_escalations == []


def test_notify_in_the_owners_quiet_hours_is_held_not_sent():
    loopline = escalate_to_loop(ScriptedBrain([[
        use("decide_escalation", task_ref="nda", decision="notify", note="ask legal for a date"), *LATER]]),
        quiet_hours="09:30-11:00")
    assert [e.text for e in run_events(loopline, NotificationHold.Held)] == ["Get the NDA signed: ask legal for a date"]
    assert run_events(loopline, NotificationHold.Sent) == []


def test_extend_on_a_task_the_run_escalated_leaves_it_with_the_owner_and_wakes_it_with_its_escalation():
    brain = ScriptedBrain([
        [use("escalate_task", task_ref="nda", reason="legal has not looked at it"),
         use("schedule_next_run", in_hours=1, reason="decide it next hour")],
        [use("decide_escalation", task_ref="nda", decision="extend", note="wait a day"), *LATER]])
    loopline = InMemoryLoopline(brain_model=brain)
    send(loopline, "c1", "task.create", task_id="nda", title="Get the NDA signed")
    loopline.tick(RUN_AT)
    assert loopline.task(T, "nda").status is TaskStatus.ESCALATED and woken(loopline) == []
    loopline.tick(RUN_AT + timedelta(hours=1))
    context = brain.asked[1].prompt.messages[0]["content"]
    assert "escalations/nda: the proactive run: legal has not looked at it" in context
    assert woken(loopline) == [("escalation", "the proactive run: legal has not looked at it")]
    assert loopline.task(T, "nda").status is TaskStatus.ESCALATED
    assert the_run(loopline).pending_escalations == []


def test_a_task_above_low_priority_becomes_a_proposal_and_a_low_one_a_task_from_synthesis():
    brain = ScriptedBrain([[
        use("create_task", task_id="audit", title="Audit the supplier contracts", priority="high"),
        use("create_task", task_id="tidy", title="Tidy the shared drive", priority="low"), *LATER]])
    loopline = InMemoryLoopline(brain_model=brain)
    send(loopline, "c1", "task.create", task_id="supplier", title="Chase the supplier's quote")
    loopline.tick(RUN_AT)
    [proposed] = run_events(loopline, Proposal.Proposed)
    assert (proposed.proposal_ref, proposed.title, proposed.impact, proposed.source) == (
        "synthesis-1-audit", "Audit the supplier contracts", "high", "synthesis")
    assert UnitOfWork(loopline.app).get(ids.task_id(T, "audit"), Task) is None
    tidy = loopline.task(T, "tidy")
    assert (tidy.trigger_type, tidy.trigger_event_id, tidy.created_by) == ("synthesis", "synthesis-1", "loopline")


def test_a_routine_whose_action_needs_approval_waits_for_the_owner_instead_of_sending():
    loopline = InMemoryLoopline()
    send(loopline, "c0", "tenant.configure", execution_mode="limited_auto")
    send(loopline, "c1", "task.create", task_id="ann", title="Bring Ann back", contact="ann@example.com")
    send(loopline, "c2", "routine.create", routine_id="nudge", action="send_email",
         params={"subject": "We miss you", "body": "Come back for a free class"}, kind="scheduled", task_id="ann",
         interval_minutes=24 * 60)
    loopline.tick(DAY0 + timedelta(days=1))
    log = UnitOfWork(loopline.app).get(ids.action_log_id(T, "ann"), ActionLog)
    assert log is not None
    assert [(entry["action"], entry["state"]) for entry in log.actions.values()] == [("send_email", "held")]
    assert loopline.task(T, "ann").status is TaskStatus.ESCALATED
    [asked] = [e for e in loopline.events() if isinstance(e, Task.UserNotified) and e.kind == "action_review"]
    assert "We miss you waits for your approval (action key routine:nudge:1)" in asked.message
    assert loopline.emails() == []


def test_the_context_shows_loops_expired_and_expiring_due_items_goals_memory_the_tier_and_quiet_hours():
    loopline = InMemoryLoopline()
    loopline.publish(signal("seen", "user.seen", format_time(DAY0), T))
    send(loopline, "c0", "tenant.configure", timezone="Europe/Berlin", owner_quiet_hours="21:00-06:00")
    send(loopline, "c1", "task.create", task_id="rahul", title="Schedule meeting with Rahul")
    send(loopline, "c2", "task.create", task_id="a16z", title="Follow up with a16z")
    send(loopline, "c3", "task.create", task_id="report", title="Q1 report", expires_in_days=2)
    for ref, task, hours in (("c4", "rahul", 0.5), ("c5", "a16z", 24)):
        send(loopline, ref, "loop.register", loop_id=f"{task}/reply", task_id=task, channel="webhook",
             watch={"source": "docusign", "trigger_name": f"{task}_replied"},
             deadline=format_time(DAY0 + timedelta(hours=hours)), if_unresolved="notify_user", description="a reply")
    send(loopline, "c6", "tenant.goal", key="v2", goal="Ship v2.0 by March")
    send(loopline, "c7", "tenant.memory", key="focus", note="Prefers morning focus time")
    uow = UnitOfWork(loopline.app)
    run = uow.get(ids.run_id(T), ProactiveRun)
    assert run is not None
    snapshot = context_snapshot(uow, run, RUN_AT, signals_seen(uow, run, RUN_AT))  # the 09:30 deadline passed; its timer has not fired yet
    assert snapshot == {
        "active_tasks": {"rahul": "'Schedule meeting with Rahul' (waiting)", "a16z": "'Follow up with a16z' (waiting)",
                         "report": "'Q1 report' (executing)"},
        "expired_loops": {"rahul/reply": "'Schedule meeting with Rahul': a reply (deadline 4 May 2026 09:30 UTC)"},
        "expiring_loops": {"a16z/reply": "'Follow up with a16z': a reply (deadline 5 May 2026 09:00 UTC)"},
        "due_soon": {"report": "'Q1 report' due 6 May 2026 09:00 UTC"},
        "goals": {"v2": "Ship v2.0 by March"},
        "memory": {"focus": "Prefers morning focus time"},
    }
    run.snapshot_context(snapshot=snapshot, now=RUN_AT)
    words = context_words(uow, run, context_delta(None, snapshot), RUN_AT)
    assert words.splitlines()[:2] == [
        "Now: 2026-05-04T10:00:00+00:00 (tenant acme, time zone Europe/Berlin).",
        "Owner activity tier: active; quiet hours: 21:00-06:00."]
    changed, known = words.split("Everything you know now:")
    for text in (changed, known):
        assert "- expired_loops/rahul/reply: 'Schedule meeting with Rahul': a reply" in text
        assert "- goals/v2: Ship v2.0 by March" in text and "- memory/focus: Prefers morning focus time" in text
