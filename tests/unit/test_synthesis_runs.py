"""Synthesis runs through the brain's model calls (issue 21 item 1) on the in-memory store: the model acts through
its tools turn by turn, the fourth action is refused with why, its next turn schedules the run; each request is
answered once; the offline policy's run is the deterministic morning brief."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from loopline.domain import ids
from loopline.domain.notification_hold import NotificationHold
from loopline.domain.proactive_run import ProactiveRun
from loopline.domain.timeutil import format_time
from loopline.processors.application import UnitOfWork
from loopline.processors.followers.brain import TOPICS
from loopline.processors.handlers.brain_calls import apply
from loopline.processors.handlers.pausing import pause_tenant_now
from loopline.processors.messages import BrainAnswered
from loopline.processors.ports import Conversation, Reply
from tests.conftest import command
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

    def converse(self, request: Conversation) -> Reply:
        self.asked.append(request)
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
