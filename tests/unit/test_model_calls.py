"""The model-call rails (seed 002 §7.12): every decision a task asks for passes `MODEL_CALL_CHECKS` in the step's
unit of work; a tenant's daily limit holds calls to the next local day (held, not dropped; the owner told at
80 %), a task's own limit hands it to the owner."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from loopline.domain import ids
from loopline.domain.model_checks import MODEL_CALL_CHECKS, ModelCallAttempt, first_model_deferral, reaches_warning
from loopline.domain.model_ledger import TenantModelCalls
from loopline.domain.send_ledger import local_day
from loopline.domain.task import Task
from loopline.domain.tenant import TenantSettings
from loopline.domain.timeutil import format_time, parse_time
from loopline.processors.ports import Decision, DecisionRequest
from tests.conftest import ANY_HOUR, command, signal
from tests.unit.fakes import ScriptedModel
from tests.unit.in_memory import InMemoryLoopline

GYM = "gym"
T0 = parse_time("2026-03-02T09:00:00Z")
ZONE = "Asia/Tokyo"


def calls_ledger(calls: int, at: datetime = T0) -> TenantModelCalls:
    ledger = TenantModelCalls.open(id=ids.tenant_model_calls_id(GYM), tenant=GYM, now=at - timedelta(days=30))
    for _ in range(calls):
        ledger.record(task_ref="t1", day=local_day(at, ZONE), now=at)
    return ledger


def attempt(*, tenant_calls: int = 0, task_calls: int = 0, daily: int = 200, per_task: int = 20) -> ModelCallAttempt:
    return ModelCallAttempt(
        task_ref="t1", task_calls=task_calls, tenant_calls=calls_ledger(tenant_calls),
        limits=TenantSettings(daily_model_call_limit=daily, task_model_call_limit=per_task, timezone=ZONE), now=T0,
    )


def test_checks_run_the_tasks_budget_then_the_tenants_day() -> None:
    assert [check.__name__ for check in MODEL_CALL_CHECKS] == ["task_model_call_limit", "daily_model_call_limit"]


def test_the_tenants_last_call_of_the_day_goes_and_the_next_waits_for_the_next_local_day() -> None:
    assert first_model_deferral(attempt(tenant_calls=199)) is None

    deferral = first_model_deferral(attempt(tenant_calls=200))

    # 09:00 UTC is 18:00 in Tokyo: the next Tokyo day starts at 15:00 UTC.
    assert deferral is not None and deferral.rule == "daily_model_call_limit"
    assert deferral.until == datetime(2026, 3, 2, 15, 0, tzinfo=UTC)
    assert "200 model call(s) were asked for on 2026-03-02 (Asia/Tokyo; limit 200 a day)" in deferral.reason


def test_a_task_that_used_its_calls_never_frees_up_and_is_named_before_the_day() -> None:
    deferral = first_model_deferral(attempt(tenant_calls=200, task_calls=20))

    assert deferral is not None and deferral.rule == "task_model_call_limit" and deferral.until is None


def test_the_owner_is_told_once_at_80_percent() -> None:
    assert [calls for calls in range(1, 201) if reaches_warning(calls, 200)] == [160]
    assert [calls for calls in range(1, 3) if reaches_warning(calls, 1)] == [1]
    assert not any(reaches_warning(calls, 0) for calls in range(3))


@pytest.fixture
def model() -> ScriptedModel:
    return ScriptedModel()


@pytest.fixture
def loopline(model: ScriptedModel) -> Iterator[InMemoryLoopline]:
    running = InMemoryLoopline(model)
    yield running
    running.close()


def configure(loopline: InMemoryLoopline, **limits: int) -> None:
    loopline.publish(command("cfg", "tenant.configure", format_time(T0), GYM, execution_mode="limited_auto",
                             timezone=ZONE, **ANY_HOUR, **limits))


def create(loopline: InMemoryLoopline, ref: str, contact: str) -> None:
    """An acting task with no creation draft: its first touch asks the model for one."""
    loopline.publish(command(f"c-{ref}", "task.create", format_time(T0), GYM, task_id=ref, title=f"Win back {ref}",
                             task_type="win_back", contact=contact, confidence=0.95))


def touched_then_replies(loopline: InMemoryLoopline, words: str) -> None:
    """Ann's task sends its first touch (a model call), and she answers it an hour later."""
    create(loopline, "ann", "ann@example.com")
    loopline.tick(T0 + timedelta(minutes=5))
    loopline.publish(signal("r1", "email.received", format_time(T0 + timedelta(hours=1)), GYM,
                            sender="ann@example.com", subject="Re: Touch 1", body=words))


def held(loopline: InMemoryLoopline) -> list[Task.DecisionHeld]:
    return [event for event in loopline.events() if isinstance(event, Task.DecisionHeld)]


def test_a_tenant_at_its_daily_limit_holds_the_draft_to_the_next_day_and_then_sends_it(
        loopline: InMemoryLoopline, model: ScriptedModel) -> None:
    configure(loopline, daily_model_call_limit=1)
    create(loopline, "ann", "ann@example.com")
    create(loopline, "ben", "ben@example.com")

    loopline.tick(T0 + timedelta(minutes=5))

    assert [email["to"] for _, email in loopline.emails()] == ["ann@example.com"]
    assert len(model.requests) == 1
    [hold] = held(loopline)
    assert hold.rule == "daily_model_call_limit" and hold.until == datetime(2026, 3, 2, 15, 0, tzinfo=UTC)
    assert loopline.task(GYM, "ben").pending_decisions  # held, not dropped: the cadence waits for it

    loopline.tick(hold.until)

    assert [email["to"] for _, email in loopline.emails()] == ["ann@example.com", "ben@example.com"]
    assert len(model.requests) == 2


def test_a_reply_held_by_the_daily_limit_stops_the_cadence_and_is_evaluated_the_next_day(
        loopline: InMemoryLoopline, model: ScriptedModel) -> None:
    configure(loopline, daily_model_call_limit=1)
    touched_then_replies(loopline, "Sounds good, see you Monday")

    ann = loopline.task(GYM, "ann")
    assert [hold.point for hold in held(loopline)] == ["evaluate_reply"]
    assert (ann.turns_used, ann.next_touch_at, len(model.requests)) == (1, None, 1)

    loopline.tick(T0 + timedelta(days=1))

    assert [request.point for request in model.requests] == ["draft_message", "evaluate_reply"]
    assert loopline.task(GYM, "ann").turns_used == 1
    assert [email["details"]["subject"] for _, email in loopline.emails()] == ["Touch 1", "Re: Touch 1"]


def test_a_task_that_used_its_model_calls_goes_to_the_owner_without_asking_the_model(
        loopline: InMemoryLoopline, model: ScriptedModel) -> None:
    configure(loopline, task_model_call_limit=1)
    touched_then_replies(loopline, "Sounds good")

    ann = loopline.task(GYM, "ann")
    assert len(model.requests) == 1
    assert ann.status.value == "escalated" and ann.escalation_cause == "task_model_call_limit"
    assert "task ann used its 1 model call(s)" in str(ann.escalation_reason)

    [guided] = loopline.publish(command("g1", "task.guidance", format_time(T0 + timedelta(hours=2)), GYM,
                                        task_id="ann", text="Tell her Monday is fine"))
    assert not guided.accepted and "answer ann@example.com yourself with task.reply" in str(guided.detail)
    assert len(model.requests) == 1


def test_the_owner_is_told_when_the_days_calls_reach_80_percent_of_the_limit(loopline: InMemoryLoopline) -> None:
    configure(loopline, daily_model_call_limit=5)
    for n in range(5):
        create(loopline, f"t{n}", f"member{n}@example.com")

    loopline.tick(T0 + timedelta(minutes=5))

    warnings = [event for event in loopline.events()
                if isinstance(event, Task.UserNotified) and event.kind == "model_calls_warning"]
    assert len(warnings) == 1
    assert "asked the model 4 times today for gym, of a daily limit of 5" in warnings[0].message


def test_no_draft_is_asked_for_a_touch_a_send_limit_holds_and_it_is_drafted_once_the_limit_frees_up(
        loopline: InMemoryLoopline, model: ScriptedModel) -> None:
    configure(loopline, daily_send_limit=0)
    create(loopline, "ann", "ann@example.com")

    loopline.tick(T0 + timedelta(minutes=5))

    [deferred] = [event for event in loopline.events() if isinstance(event, Task.SendDeferred)]
    assert (deferred.rule, deferred.draft, model.requests) == ("tenant_daily_limit", {"touch": 1}, [])

    loopline.publish(command("cfg2", "tenant.configure", format_time(T0 + timedelta(hours=1)), GYM, daily_send_limit=15))
    loopline.tick(deferred.until)

    assert [request.point for request in model.requests] == ["draft_message"]
    assert [email["details"]["subject"] for _, email in loopline.emails()] == ["Touch 1"]


def test_a_decision_records_the_tokens_it_read_from_the_prompt_cache_on_the_tenants_local_day() -> None:
    cached = CachingModel()
    running = InMemoryLoopline(cached)
    try:
        configure(running)
        create(running, "ann", "ann@example.com")
        running.tick(T0 + timedelta(minutes=5))
    finally:
        running.close()

    [recorded] = [event for event in running.events() if isinstance(event, Task.DecisionRecorded)]
    [requested] = [event for event in running.events() if isinstance(event, Task.DecisionRequested)]
    assert (recorded.input_tokens, recorded.cache_read_tokens, recorded.cache_write_tokens) == (10, 900, 0)
    assert recorded.day == requested.day == "2026-03-02"  # 18:05 in Tokyo


class CachingModel(ScriptedModel):
    """A model whose stable prompt layers came from the prompt cache."""

    def decide(self, request: DecisionRequest) -> Decision:
        return replace(super().decide(request), cache_read_tokens=900)


def test_no_follow_up_is_drafted_while_a_send_limit_would_hold_it_and_it_is_drafted_and_sent_once_it_frees_up(
        loopline: InMemoryLoopline, model: ScriptedModel) -> None:
    configure(loopline, daily_send_limit=0)
    loopline.publish(
        command("c1", "task.create", format_time(T0), GYM, task_id="t1", title="Meet Rahul"),
        command("c2", "action.record", format_time(T0), GYM, task_id="t1", action="send_email",
                to="rahul@company.com", subject="Meeting?"),
    )

    loopline.tick(T0 + timedelta(days=3, hours=2))  # the email's loop is overdue: its follow-up is due

    [deferred] = [event for event in loopline.events() if isinstance(event, Task.SendDeferred)]
    assert (deferred.rule, set(deferred.draft), model.requests) == ("tenant_daily_limit", {"follow_up_of"}, [])

    loopline.publish(command("cfg2", "tenant.configure", format_time(T0 + timedelta(days=3, hours=3)), GYM,
                             daily_send_limit=15))
    loopline.tick(deferred.until)

    assert [(request.point, request.purpose) for request in model.requests] == [("draft_message", "followup")]
    assert [email["to"] for _, email in loopline.emails()] == ["rahul@company.com"]
