"""A new tenant's sends are capped (seed 002 §26, §33.2): the onboarding phase the owner sets, and the warm-up's
3 / 5 / 10 a day in the first three weeks from its first email; shadow and guided send every task to review."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from loopline.domain import ids
from loopline.domain.safety_limits import LIMITS, tenant_value
from loopline.domain.send_checks import SendAttempt, first_deferral
from loopline.domain.send_ledger import ContactSends, TenantSends, local_day, start_of_day
from loopline.domain.task import Task
from loopline.domain.task_ledger import TenantTasks
from loopline.domain.tenant import InvalidSettings, Tenant, TenantSettings
from loopline.domain.timeutil import format_time
from loopline.projections.tenants import defaults
from tests.conftest import ANY_HOUR, command
from tests.unit.in_memory import InMemoryLoopline

BOB = "bob@example.com"
FIRST_SEND = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
DAY = timedelta(days=1)


def ledger_sending(times: int, on: datetime) -> TenantSends:
    """A tenant whose first email went at FIRST_SEND and that sent `times` more on the day of `on`."""
    ledger = TenantSends.open(id=ids.tenant_sends_id("gym"), tenant="gym", now=FIRST_SEND)
    ledger.record(task_ref="t0", day=local_day(FIRST_SEND, "UTC"), now=FIRST_SEND)
    for _ in range(times):
        ledger.record(task_ref="t1", day=local_day(on, "UTC"), now=on)
    return ledger


def attempt(now: datetime, tenant: TenantSends, **settings: object) -> SendAttempt:
    return SendAttempt(
        contact=BOB, messages_used=0, messages_budget=None,
        contact_sends=ContactSends.open(id=ids.contact_sends_id("gym", BOB), tenant="gym", contact=BOB, now=now),
        tenant_sends=tenant, limits=TenantSettings(**settings), now=now,
    )


@pytest.mark.parametrize(("week", "allowed"), [(1, 3), (2, 5), (3, 10)])
def test_the_warm_up_allows_3_then_5_then_10_a_day_by_week_from_the_first_email(week: int, allowed: int) -> None:
    day = FIRST_SEND + (week - 1) * 7 * DAY + DAY
    assert first_deferral(attempt(day, ledger_sending(allowed - 1, day), warm_up=True)) is None

    deferral = first_deferral(attempt(day, ledger_sending(allowed, day), warm_up=True))

    assert deferral is not None and deferral.rule == "warm_up"
    assert deferral.until == start_of_day(local_day(day, "UTC") + DAY, "UTC")
    assert f"the warm-up allows {allowed} a day in week {week} from the first email on 2026-03-02" in deferral.reason


def test_from_week_four_the_daily_limit_alone_holds_a_warming_tenant() -> None:
    day = FIRST_SEND + 21 * DAY

    assert first_deferral(attempt(day, ledger_sending(14, day), warm_up=True)) is None
    assert first_deferral(attempt(day, ledger_sending(15, day), warm_up=True)).rule == "tenant_daily_limit"  # type: ignore[union-attr]


def test_a_tenant_without_warm_up_or_ramp_sends_up_to_its_daily_limit_from_day_one() -> None:
    assert first_deferral(attempt(FIRST_SEND + DAY, ledger_sending(14, FIRST_SEND + DAY))) is None


@pytest.mark.parametrize(("phase", "allowed"), [("guided", 3), ("limited", 10)])
def test_an_onboarding_phase_caps_the_days_sends(phase: str, allowed: int) -> None:
    day = FIRST_SEND + 30 * DAY

    deferral = first_deferral(attempt(day, ledger_sending(allowed, day), ramp_phase=phase))

    assert deferral is not None and deferral.rule == "warm_up"
    assert f"the onboarding phase {phase} allows {allowed} a day" in deferral.reason


def test_the_tighter_of_the_phase_and_the_warm_up_holds() -> None:
    day = FIRST_SEND + 8 * DAY  # week 2 of the warm-up: 5 a day; guided: 3

    deferral = first_deferral(attempt(day, ledger_sending(3, day), ramp_phase="guided", warm_up=True))

    assert deferral is not None and "the onboarding phase guided allows 3 a day" in deferral.reason


def test_the_shadow_phase_sends_nothing_until_the_owner_moves_it_on() -> None:
    deferral = first_deferral(attempt(FIRST_SEND + DAY, ledger_sending(0, FIRST_SEND), ramp_phase="shadow"))

    assert deferral is not None and deferral.rule == "warm_up" and deferral.until is None
    assert "nothing is sent until the owner moves ramp_phase on" in deferral.reason


def test_an_unknown_phase_is_refused_naming_the_phases() -> None:
    tenant = Tenant.create(id=ids.tenant_id("gym"), tenant="gym", now=FIRST_SEND)

    with pytest.raises(InvalidSettings, match="ramp_phase 'trial' is not one of shadow, guided, limited, full"):
        tenant.configure({"ramp_phase": "trial"}, now=FIRST_SEND)


@pytest.mark.parametrize(("phase", "status"), [("shadow", "pending_review"), ("guided", "pending_review"),
                                               ("limited", "ready"), ("full", "ready")])
def test_shadow_and_guided_send_every_task_to_review_even_in_limited_auto(phase: str, status: str) -> None:
    loopline = InMemoryLoopline()
    at = format_time(FIRST_SEND)
    loopline.publish(command("cfg", "tenant.configure", at, "gym", execution_mode="limited_auto", ramp_phase=phase,
                             **ANY_HOUR))
    loopline.publish(command("c1", "task.create", at, "gym", task_id="t1", title="Win Bob back", task_type="win_back",
                             contact=BOB, to_name="Bob", confidence=0.95,
                             draft={"subject": "We miss you", "body": "Hi Bob, come back soon."}))

    [created] = [event for event in loopline.events() if isinstance(event, Task.Created)]
    assert loopline.task("gym", "t1").status.value == status
    if status == "pending_review":
        assert created.reason == f"onboarding phase {phase}: every task the agent would send for waits for owner review"
    loopline.close()


def test_a_tenant_moved_back_to_guided_hands_touch_2_to_the_owner_saying_why() -> None:
    loopline = InMemoryLoopline()
    loopline.publish(command("cfg", "tenant.configure", format_time(FIRST_SEND), "gym", execution_mode="limited_auto",
                             **ANY_HOUR))
    loopline.publish(command("c1", "task.create", format_time(FIRST_SEND), "gym", task_id="t1", title="Win Bob back",
                             task_type="churn_risk", contact=BOB, to_name="Bob", confidence=0.95,
                             draft={"subject": "We miss you", "body": "Hi Bob, come back soon."}))
    loopline.tick(FIRST_SEND)
    loopline.publish(command("cfg2", "tenant.configure", format_time(FIRST_SEND + DAY), "gym", ramp_phase="guided"))

    loopline.tick(FIRST_SEND + 3 * DAY + timedelta(minutes=10))

    task = loopline.task("gym", "t1")
    assert len(loopline.emails()) == 1 and task.status.value == "escalated"
    assert "touch 2 is due, and the onboarding phase is guided: nothing goes out unasked" in str(task.escalation_reason)
    loopline.close()


def test_an_onboarding_phase_caps_the_tasks_created_a_day() -> None:
    loopline = InMemoryLoopline()
    at = format_time(FIRST_SEND)
    loopline.publish(command("cfg", "tenant.configure", at, "gym", ramp_phase="shadow"))
    outcomes = [loopline.publish(command(f"c{n}", "task.create", at, "gym", task_id=f"t{n}", title=f"churn {n}",
                                         task_type="churn_risk", contact=f"member{n}@example.com", confidence=0.95))[0]
                for n in range(11)]

    assert [outcome.warning for outcome in outcomes[:10]] == [None] * 10
    assert "10 task(s) were created on 2026-03-02 and the onboarding phase shadow allows 10 a day" in outcomes[10].warning
    assert [event.rule for event in loopline.events() if isinstance(event, TenantTasks.CreationHeld)] == [
        "onboarding_task_limit"]
    assert tenant_value(LIMITS["onboarding_task_limit"], {**defaults(), "ramp_phase": "limited"}) == "`limited`: 25"
    loopline.close()
