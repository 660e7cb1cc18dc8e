"""Send windows (seed 002 §29): a send due outside the tenant's local hours waits for the next opening, a few
minutes after it by the task's own jitter; the window is set with `tenant.configure`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from loopline.domain import ids
from loopline.domain.safety_limits import LIMITS, tenant_value
from loopline.domain.send_checks import SendAttempt, first_deferral
from loopline.domain.send_ledger import ContactSends, TenantSends
from loopline.domain.send_window import JITTER_FROM, JITTER_SPAN
from loopline.domain.task import Task
from loopline.domain.tenant import InvalidSettings, Tenant, TenantSettings
from loopline.domain.timeutil import format_time, parse_time
from loopline.projections.tenants import defaults
from tests.conftest import command
from tests.unit.in_memory import InMemoryLoopline

BOB = "bob@example.com"
MONDAY = datetime(2026, 3, 2, tzinfo=UTC)
BERLIN = "Europe/Berlin"  # UTC+1 in March


def attempt(now: datetime, task: str = "gym/t1", **settings: object) -> SendAttempt:
    return SendAttempt(
        contact=BOB, messages_used=0, messages_budget=None,
        contact_sends=ContactSends.open(id=ids.contact_sends_id("gym", BOB), tenant="gym", contact=BOB, now=now),
        tenant_sends=TenantSends.open(id=ids.tenant_sends_id("gym"), tenant="gym", now=now),
        limits=TenantSettings(timezone=BERLIN, **settings), now=now, task=task,
    )


def test_a_send_inside_the_window_goes() -> None:
    assert first_deferral(attempt(MONDAY + timedelta(hours=7))) is None  # 08:00 in Berlin
    assert first_deferral(attempt(MONDAY + timedelta(hours=18, minutes=59))) is None  # 19:59


def test_a_send_due_in_the_evening_waits_for_the_next_morning_plus_its_jitter() -> None:
    deferral = first_deferral(attempt(MONDAY + timedelta(hours=19)))  # 20:00 in Berlin: the window has closed

    opening = MONDAY + timedelta(days=1, hours=7)
    assert deferral is not None and deferral.rule == "send_window"
    assert deferral.until is not None and opening + JITTER_FROM <= deferral.until < opening + JITTER_FROM + JITTER_SPAN
    assert f"outside the send window 08:00-20:00 {BERLIN}; it may go at {format_time(deferral.until)}" == deferral.reason
    assert first_deferral(attempt(deferral.until)) is None


def test_a_send_before_the_window_opens_waits_for_the_same_mornings_opening() -> None:
    deferral = first_deferral(attempt(MONDAY + timedelta(hours=3)))

    assert deferral is not None and deferral.until is not None
    assert deferral.until - (MONDAY + timedelta(hours=7)) < JITTER_FROM + JITTER_SPAN


def test_the_window_opens_at_local_time_across_a_clock_change() -> None:
    saturday_evening = datetime(2026, 3, 28, 19, 30, tzinfo=UTC)  # 20:30 in Berlin; the clocks go forward that night

    deferral = first_deferral(attempt(saturday_evening))

    opening = datetime(2026, 3, 29, 6, 0, tzinfo=UTC)  # 08:00 summer time
    assert deferral is not None and deferral.until is not None
    assert opening + JITTER_FROM <= deferral.until < opening + JITTER_FROM + JITTER_SPAN


def test_the_jitter_is_the_tasks_own_and_spreads_a_hundred_tasks() -> None:
    night = MONDAY + timedelta(hours=22)
    untils = [first_deferral(attempt(night, task=f"gym/task-{n}")).until for n in range(100)]  # type: ignore[union-attr]

    assert untils == [first_deferral(attempt(night, task=f"gym/task-{n}")).until for n in range(100)]  # type: ignore[union-attr]
    minutes = {until.replace(second=0) for until in untils}
    assert len(minutes) == JITTER_SPAN // timedelta(minutes=1)  # every minute of the span is used, none by all


def test_without_weekends_a_friday_evening_send_waits_for_monday() -> None:
    friday_evening = MONDAY + timedelta(days=4, hours=20)

    deferral = first_deferral(attempt(friday_evening, send_on_weekends=False))
    saturday_noon = first_deferral(attempt(MONDAY + timedelta(days=5, hours=11), send_on_weekends=False))

    monday_opening = MONDAY + timedelta(days=7, hours=7)
    for held in (deferral, saturday_noon):
        assert held is not None and held.until is not None
        assert monday_opening < held.until < monday_opening + JITTER_FROM + JITTER_SPAN
    assert deferral is not None and deferral.reason.startswith(f"outside the send window 08:00-20:00 {BERLIN}, weekdays")


def test_a_configured_window_is_the_one_checked() -> None:
    assert first_deferral(attempt(MONDAY + timedelta(hours=20), send_window_start=6, send_window_end=22)) is None
    assert first_deferral(attempt(MONDAY + timedelta(hours=21), send_window_start=6, send_window_end=22)) is not None
    assert first_deferral(attempt(MONDAY + timedelta(hours=2), send_window_start=0, send_window_end=24)) is None


@pytest.mark.parametrize("window", [{"send_window_start": 20, "send_window_end": 8}, {"send_window_start": 21},
                                    {"send_window_end": 8}])
def test_a_window_that_holds_no_hour_is_refused_naming_both_fields(window: dict[str, int]) -> None:
    tenant = Tenant.create(id=ids.tenant_id("gym"), tenant="gym", now=MONDAY)

    with pytest.raises(InvalidSettings, match="send_window_start .* must be before send_window_end"):
        tenant.configure(window, now=MONDAY)


def test_a_touch_due_at_night_is_deferred_to_the_morning_and_sent_then() -> None:
    loopline = InMemoryLoopline()
    loopline.publish(command("cfg", "tenant.configure", "2026-03-02T00:00:00Z", "gym", execution_mode="limited_auto",
                             timezone=BERLIN))
    loopline.publish(command("c1", "task.create", "2026-03-02T21:30:00Z", "gym", task_id="t1", title="Win Bob back",
                             task_type="win_back", contact=BOB, to_name="Bob", confidence=0.95,
                             draft={"subject": "We miss you", "body": "Hi Bob, come back soon."}))

    loopline.tick(parse_time("2026-03-02T22:00:00Z"))
    task = loopline.task("gym", "t1")
    assert loopline.emails() == [] and task.deferred is not None and task.deferred["rule"] == "send_window"

    until = parse_time(task.deferred["until"])
    assert until.isoformat().startswith("2026-03-03T07:")  # 08:05 to 08:20 in Berlin
    loopline.tick(until - timedelta(seconds=1))
    assert loopline.emails() == []
    loopline.tick(until)
    [(_, email)] = loopline.emails()
    assert parse_time(email["at"]) == until
    loopline.close()


def test_a_touch_that_would_fall_due_on_a_weekend_is_scheduled_for_monday_and_drafted_then() -> None:
    loopline = InMemoryLoopline()
    thursday = "2026-03-05T09:00:00Z"  # 10:00 in Berlin; the standard cadence's touch 2 is 3 days on, a Sunday
    loopline.publish(command("cfg", "tenant.configure", thursday, "gym", execution_mode="limited_auto", timezone=BERLIN,
                             send_on_weekends=False))
    loopline.publish(command("c1", "task.create", thursday, "gym", task_id="t1", title="Win Bob back",
                             task_type="churn_risk", contact=BOB, to_name="Bob", confidence=0.95,
                             draft={"subject": "We miss you", "body": "Hi Bob, come back soon."}))
    loopline.tick(parse_time(thursday))

    next_touch_at = loopline.task("gym", "t1").next_touch_at
    assert next_touch_at is not None and next_touch_at.isoformat().startswith("2026-03-09T07:")  # Monday 08:xx
    loopline.tick(parse_time("2026-03-08T12:00:00Z"))
    assert not [event for event in loopline.events() if isinstance(event, Task.DecisionRequested)]

    loopline.tick(next_touch_at)
    assert [parse_time(email["at"]) for _, email in loopline.emails()] == [parse_time(thursday), next_touch_at]
    loopline.close()


def test_loopline_limits_shows_the_tenants_own_window_and_onboarding() -> None:
    settings = {**defaults(), "send_window_start": 9, "send_window_end": 17, "send_on_weekends": False,
                "ramp_phase": "guided", "warm_up": True}

    assert tenant_value(LIMITS["send_window"], defaults()) == "08:00-20:00, every day"
    assert tenant_value(LIMITS["send_window"], settings) == "09:00-17:00, weekdays"
    assert tenant_value(LIMITS["warm_up"], settings) == "`guided`, warm-up"
