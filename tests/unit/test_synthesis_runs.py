"""Synthesis runs through the brain's model calls (issue 21 item 1) on the in-memory store: the model acts through
its tools turn by turn, the fourth action is refused with why, its next turn schedules the run; each request is
answered once; the offline policy's run is the deterministic morning brief. A pause in force holds the brain: no
discovery, and an answer that arrives once it is in force does nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from loopline.adapters.embedded_log import EmbeddedLog
from loopline.adapters.messages import parse_message
from loopline.domain import ids
from loopline.domain.model_ledger import TenantModelCalls
from loopline.domain.notification_hold import NotificationHold
from loopline.domain.proactive_run import ProactiveRun
from loopline.domain.proposal import Proposal
from loopline.domain.task import Task
from loopline.domain.timeutil import format_time
from loopline.domain.routine import InvalidRoutine
from loopline.processors.application import UnitOfWork
from loopline.processors.followers.brain import TOPICS
from loopline.processors.handlers.brain_calls import apply, refuse
from loopline.processors.handlers.pausing import pause_tenant_now
from loopline.processors.messages import BrainAnswered
from loopline.processors.ports import Conversation, Reply
from tests.conftest import command, signal
from tests.unit.in_memory import InMemoryLoopline

T = "acme"
DAY0 = datetime(2026, 5, 4, 9, 0, tzinfo=timezone.utc)
RUN_AT = DAY0 + timedelta(hours=1)


def use(name: str, **tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"call-{name}-{len(tool_input)}", "name": name, "input": tool_input}


FOUR_ACTIONS = [
    use("send_brief", text="Two things need you today."),
    use("create_task", task_id="prep-review", title="Prepare the quarterly review", priority="low"),
    use("notify", text="The supplier has not answered in a week."),
    use("notify", text="One more thing."),
]


@dataclass
class ScriptedBrain:
    """A model answering each synthesis turn with the next scripted content, remembering each request."""

    turns: list[list[dict[str, Any]]]
    name: str = "fake"
    model: str = "scripted-brain"
    asked: list[Conversation] = field(default_factory=list)
    while_thinking: Callable[[], None] = lambda: None

    def converse(self, request: Conversation) -> Reply:
        self.asked.append(request)
        self.while_thinking()
        return Reply(adapter=self.name, model=self.model, content=tuple(self.turns[len(self.asked) - 1]),
                     prompt_digest=request.prompt.digest, input_tokens=100, output_tokens=20)


def tenant_with_a_task(brain: Any = None) -> InMemoryLoopline:
    loopline = InMemoryLoopline(brain_model=brain)
    loopline.publish(command("c1", "task.create", format_time(DAY0), T, task_id="supplier",
                             title="Chase the supplier's quote"))
    return loopline


def run_events(loopline: InMemoryLoopline, kind: type) -> list[Any]:
    return [event for event in loopline.events() if isinstance(event, kind)]


def the_run(loopline: InMemoryLoopline) -> ProactiveRun:
    run = UnitOfWork(loopline.app).get(ids.run_id(T), ProactiveRun)
    assert run is not None
    return run


def test_four_actions_asked_three_done_the_fourth_told_why_and_the_next_turn_schedules():
    brain = ScriptedBrain([FOUR_ACTIONS, [use("schedule_next_run", in_hours=6, reason="after the supplier's day")]])
    loopline = tenant_with_a_task(brain)
    loopline.tick(RUN_AT)
    assert [request.request_ref for request in brain.asked] == ["synthesis-1/turn-1", "synthesis-1/turn-2"]
    assert "supplier" in brain.asked[0].prompt.messages[0]["content"]  # the snapshot, assembled by code
    results = brain.asked[1].prompt.messages[-1]["content"]
    assert [result["is_error"] for result in results] == [False, False, False, True]
    assert "action budget spent" in results[3]["content"] and "schedule_next_run" in results[3]["content"]
    assert [event.tool for event in run_events(loopline, ProactiveRun.ActionTaken)] == [
        "send_brief", "create_task", "notify"]
    [recorded] = run_events(loopline, ProactiveRun.RunRecorded)
    assert recorded.mode == "synthesis" and not recorded.fallback_used
    assert the_run(loopline).next_run_at == RUN_AT + timedelta(hours=6)
    created = loopline.task(T, "prep-review")
    assert (created.trigger_type, created.trigger_event_id, created.created_by) == ("synthesis", "synthesis-1", "loopline")
    answered = run_events(loopline, ProactiveRun.SynthesisAnswered)
    assert [(a.adapter, a.model, a.input_tokens) for a in answered] == [("fake", "scripted-brain", 100)] * 2


def test_an_answer_to_a_request_no_longer_pending_records_nothing():
    brain = ScriptedBrain([[use("schedule_next_run", in_hours=2, reason="soon")]])
    loopline = tenant_with_a_task(brain)
    loopline.tick(RUN_AT)
    again = BrainAnswered("synthesis", ids.run_id(T), "synthesis-1/turn-1", RUN_AT,
                          Reply("fake", "scripted-brain", tuple(FOUR_ACTIONS), "d", 1, 1))
    uow = UnitOfWork(loopline.app)
    assert apply(uow, again) is None
    assert not uow.get(ids.run_id(T), ProactiveRun).pending_events
    assert len(brain.asked) == 1


def test_a_model_that_fails_closes_the_run_with_the_24_hour_fallback():
    class Down:
        name, model = "fake", "down"

        def converse(self, request: Conversation) -> Reply:
            raise RuntimeError("boom")

    loopline = tenant_with_a_task(Down())
    loopline.tick(RUN_AT)
    [failed] = run_events(loopline, ProactiveRun.SynthesisFailed)
    assert "boom" in failed.error
    [recorded] = run_events(loopline, ProactiveRun.RunRecorded)
    assert recorded.fallback_used and recorded.next_run_at == RUN_AT + timedelta(hours=24)


def test_offline_policy_sends_the_deterministic_brief_and_schedules_the_next_run():
    loopline = tenant_with_a_task()
    loopline.publish(command("c2", "task.create", format_time(DAY0), T, task_id="renewal", title="Renew the lease",
                             expires_in_days=1))
    loopline.tick(RUN_AT)
    taken = run_events(loopline, ProactiveRun.ActionTaken)
    assert [event.tool for event in taken] == ["send_brief"]
    offered = [e for e in loopline.events() if isinstance(e, (NotificationHold.Sent, NotificationHold.Held))]
    assert offered and offered[-1].text.startswith("Morning brief. due soon (1): 'Renew the lease' due")
    [recorded] = run_events(loopline, ProactiveRun.RunRecorded)
    assert recorded.mode == "synthesis" and recorded.next_run_at == RUN_AT + timedelta(hours=24)
    assert not recorded.fallback_used


def queue_escalation(loopline: InMemoryLoopline, task_ref: str) -> None:
    uow = UnitOfWork(loopline.app)
    run = uow.get(ids.run_id(T), ProactiveRun)
    assert run is not None
    run.queue_escalation(task_ref=task_ref, loop_ref=None, reason="stalled: no activity for 5 days", now=DAY0)
    uow.end_step()
    uow.commit()


def test_the_run_decides_a_waiting_escalation_and_a_call_naming_no_task_spends_nothing():
    brain = ScriptedBrain([[use("escalate_task", task_ref="nope", reason="x"),
                            use("decide_escalation", task_ref="supplier", decision="cancel", note="no longer needed"),
                            use("schedule_next_run", in_hours=48, reason="in two days")]])
    loopline = tenant_with_a_task(brain)
    queue_escalation(loopline, "supplier")
    loopline.tick(RUN_AT)
    assert "supplier" in brain.asked[0].prompt.messages[0]["content"].split("escalations/")[1]
    assert loopline.task(T, "supplier").status.value == "cancelled"
    assert [event.tool for event in run_events(loopline, ProactiveRun.ActionTaken)] == ["decide_escalation"]
    [recorded] = run_events(loopline, ProactiveRun.RunRecorded)
    assert recorded.escalations_handled == 1 and the_run(loopline).pending_escalations == []
    assert the_run(loopline).next_run_at == RUN_AT + timedelta(hours=48)


def test_tool_calls_the_domain_refuses_are_told_why_spend_nothing_and_leave_the_turn_standing():
    brain = ScriptedBrain([[use("trigger_workflow", routine_id="ci-check", reason="check the build"),
                            use("escalate_task", task_ref="unsure", reason="the owner should look"),
                            use("notify", text="The supplier has not answered in a week.")],
                           [use("schedule_next_run", in_hours=6, reason="later")]])
    loopline = tenant_with_a_task(brain)
    loopline.publish(command("c2", "task.create", format_time(DAY0), T, task_id="unsure", title="Maybe renew",
                             confidence=0.1))
    loopline.publish(command("c3", "routine.create", format_time(DAY0), T, routine_id="ci-check",
                             action="call_webhook", params={"event": "ci.check"}, kind="scheduled", task_id="supplier",
                             interval_minutes=30))
    loopline.publish(command("c4", "routine.pause", format_time(DAY0), T, routine_id="ci-check", reason="CI is down"))
    assert loopline.task(T, "unsure").status.value == "pending_review"
    loopline.tick(RUN_AT)
    results = brain.asked[1].prompt.messages[-1]["content"]
    assert [result["is_error"] for result in results] == [True, True, False]
    assert "is paused" in results[0]["content"] and "pending_review" in results[1]["content"]
    assert [event.tool for event in run_events(loopline, ProactiveRun.ActionTaken)] == ["notify"]
    assert [event.tool for event in run_events(loopline, ProactiveRun.ActionRefused)] == [
        "trigger_workflow", "escalate_task"]
    assert len(run_events(loopline, ProactiveRun.SynthesisAnswered)) == 2
    assert not run_events(loopline, ProactiveRun.SynthesisFailed)
    assert loopline.task(T, "unsure").status.value == "pending_review"


def test_an_answer_whose_turn_is_refused_still_records_who_answered_and_what_it_cost():
    loopline = tenant_with_a_task()
    uow = UnitOfWork(loopline.app)
    request_ref = the_run_in(uow).request_synthesis(turn=1, context="supplier", tool_results=[], now=RUN_AT)
    uow.end_step()
    uow.commit()
    answered = BrainAnswered("synthesis", ids.run_id(T), request_ref, RUN_AT,
                             Reply("fake", "scripted-brain", tuple(FOUR_ACTIONS), "digest", 120, 30))
    uow = UnitOfWork(loopline.app)
    refuse(uow, answered, InvalidRoutine("routine 'ci-check' is paused"))
    uow.end_step()
    uow.commit()
    [recorded] = run_events(loopline, ProactiveRun.SynthesisAnswered)
    assert (recorded.adapter, recorded.model, recorded.input_tokens, recorded.output_tokens) == (
        "fake", "scripted-brain", 120, 30)
    [failed] = run_events(loopline, ProactiveRun.SynthesisFailed)
    assert "could not be recorded: InvalidRoutine: routine 'ci-check' is paused" in failed.error
    assert the_run(loopline).pending_request is None


def the_run_in(uow: UnitOfWork) -> ProactiveRun:
    run = uow.get(ids.run_id(T), ProactiveRun)
    assert run is not None
    return run


PAUSES = [("tenant.pause", {"reason": "owner on holiday", "by": "Mike"}),
          ("system.pause", {"reason": "a template went out wrong", "by": "on-call"})]


def stalled_with_the_owner_around(loopline: InMemoryLoopline) -> None:
    """The task is flagged stalled (a gap discovery proposes from) and the owner was just seen."""
    uow = UnitOfWork(loopline.app)
    task = uow.get(ids.task_id(T, "supplier"), Task)
    assert task is not None and task.check_stalled(after_days=0, now=DAY0 + timedelta(minutes=5))
    uow.end_step()
    uow.commit()
    loopline.publish(signal("s1", "user.seen", format_time(RUN_AT - timedelta(minutes=30)), T))


@pytest.mark.parametrize(("pause", "data"), PAUSES)
def test_a_paused_tenant_whose_owner_is_seen_proposes_nothing_and_asks_no_model(pause, data):
    loopline = tenant_with_a_task()
    stalled_with_the_owner_around(loopline)
    loopline.publish(command("p1", pause, format_time(RUN_AT - timedelta(minutes=10)), T, **data))
    loopline.tick(RUN_AT)
    assert run_events(loopline, Proposal.Proposed) == [] and run_events(loopline, TenantModelCalls.Called) == []
    [recorded] = run_events(loopline, ProactiveRun.RunRecorded)
    assert recorded.mode == "maintenance"


@pytest.mark.parametrize(("pause", "data"), PAUSES)
def test_an_answer_arriving_once_a_pause_is_in_force_is_recorded_but_carries_out_no_tool_call(pause, data):
    brain = ScriptedBrain([FOUR_ACTIONS])
    loopline = tenant_with_a_task(brain)

    def owner_pauses() -> None:
        message = command("p1", pause, format_time(RUN_AT), T, **data)
        EmbeddedLog(loopline.app).append([parse_message(json.dumps(message))], "test")
        loopline.router.run_once()

    brain.while_thinking = owner_pauses
    loopline.tick(RUN_AT)
    [answered] = run_events(loopline, ProactiveRun.SynthesisAnswered)
    assert (answered.adapter, answered.model, answered.input_tokens) == ("fake", "scripted-brain", 100)
    assert run_events(loopline, ProactiveRun.ActionTaken) == []
    assert run_events(loopline, NotificationHold.Sent) + run_events(loopline, NotificationHold.Held) == []
    refused = run_events(loopline, ProactiveRun.ActionRefused)
    assert [event.tool for event in refused] == ["send_brief", "create_task", "notify", "notify"]
    assert all("is paused" in event.reason for event in refused)
    assert UnitOfWork(loopline.app).get(ids.task_id(T, "prep-review"), Task) is None
    [recorded] = run_events(loopline, ProactiveRun.RunRecorded)
    assert "paused" in recorded.summary and len(brain.asked) == 1
def test_a_request_asked_before_a_pause_is_answered_only_after_the_resume_and_others_go_on_meanwhile():
    brain = ScriptedBrain([[use("schedule_next_run", in_hours=6, reason="later")]] * 2)
    loopline = tenant_with_a_task(brain)
    loopline.publish(command("o1", "task.create", format_time(DAY0), "other", task_id="rent", title="Pay the rent"))
    uow = UnitOfWork(loopline.app)
    for tenant in (T, "other"):
        run = uow.get(ids.run_id(tenant), ProactiveRun)
        assert run is not None
        run.request_synthesis(turn=1, context="asked before the pause", tool_results=[], now=RUN_AT)
    pause_tenant_now(uow, T, reason="on holiday", by="owner", now=RUN_AT)
    uow.end_step()
    uow.commit()
    loopline.drain()
    assert [request.tenant for request in brain.asked] == ["other"]
    assert the_run(loopline).pending_request == "synthesis-1/turn-1"
    loopline.publish(command("r1", "tenant.resume", format_time(RUN_AT + timedelta(hours=2)), T, reason="back"))
    assert [request.tenant for request in brain.asked] == ["other", T]
    assert the_run(loopline).pending_request is None and the_run(loopline).runs == 1
    assert loopline.app.position("brain") == max(n.id for n in loopline.app.process_recorder.select_notifications(
        start=1, limit=10**9, topics=TOPICS))


@dataclass
class FailsOnce:
    """A bus whose first commit of the brain's answers fails (a database blip), then works."""

    bus: Any
    failed: bool = False

    def process(self, source: Any) -> Any:
        if not self.failed:
            self.failed = True
            raise ConnectionError("the database went away")
        return self.bus.process(source)


def test_a_pass_whose_answers_could_not_be_stored_leaves_its_requests_to_the_next_pass():
    brain = ScriptedBrain([FOUR_ACTIONS, FOUR_ACTIONS, [use("schedule_next_run", in_hours=6, reason="later")]])
    loopline = tenant_with_a_task(brain)
    loopline.brain.bus = FailsOnce(loopline.brain.bus)
    with pytest.raises(ConnectionError):
        loopline.tick(RUN_AT)
    loopline.drain()  # the next pass reads the request again: asked again, answered once
    assert [request.request_ref for request in brain.asked] == [
        "synthesis-1/turn-1", "synthesis-1/turn-1", "synthesis-1/turn-2"]
    assert len(run_events(loopline, ProactiveRun.SynthesisAnswered)) == 2
    assert the_run(loopline).pending_request is None
    assert [event.tool for event in run_events(loopline, ProactiveRun.ActionTaken)] == [
        "send_brief", "create_task", "notify"]


def test_a_paused_tenants_run_does_not_even_read_the_log_for_its_context(monkeypatch: pytest.MonkeyPatch):
    loopline = tenant_with_a_task()
    loopline.publish(command("p1", "tenant.pause", format_time(RUN_AT - timedelta(minutes=10)), T,
                             reason="owner on holiday", by="Mike"))

    def no_scan(*args: Any) -> Any:
        raise AssertionError("a paused tenant's run read the log for signals")

    monkeypatch.setattr("loopline.processors.handlers.proactive.signals_seen", no_scan)
    loopline.tick(RUN_AT)
    [recorded] = run_events(loopline, ProactiveRun.RunRecorded)
    assert recorded.mode == "maintenance"


def test_a_run_whose_model_keeps_acting_is_closed_after_its_third_turn():
    brain = ScriptedBrain([[use("notify", text=f"Thing {turn}.")] for turn in range(1, 5)])
    loopline = tenant_with_a_task(brain)
    loopline.tick(RUN_AT)
    assert [request.request_ref for request in brain.asked] == [
        "synthesis-1/turn-1", "synthesis-1/turn-2", "synthesis-1/turn-3"]
    [recorded] = run_events(loopline, ProactiveRun.RunRecorded)
    assert recorded.mode == "synthesis" and the_run(loopline).pending_request is None


def test_a_run_never_takes_the_days_last_model_call_it_does_maintenance_instead():
    brain = ScriptedBrain([FOUR_ACTIONS])
    loopline = InMemoryLoopline(brain_model=brain)
    loopline.publish(command("c0", "tenant.configure", format_time(DAY0), T, daily_model_call_limit=1))
    loopline.publish(command("c1", "task.create", format_time(DAY0), T, task_id="supplier",
                             title="Chase the supplier's quote"))
    loopline.tick(RUN_AT)
    assert brain.asked == [] and run_events(loopline, TenantModelCalls.Called) == []
    [recorded] = run_events(loopline, ProactiveRun.RunRecorded)
    assert recorded.mode == "maintenance"
