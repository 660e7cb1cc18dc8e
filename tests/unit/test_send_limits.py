"""The send ledgers and the send checks: limits at their boundary, windows rolling over, tenant-local days."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from loopline.domain import ids
from loopline.domain.pause import Pause
from loopline.domain.send_checks import SEND_CHECKS, SendAttempt, first_deferral
from loopline.domain.send_ledger import KEEP_SENDS_FOR, WEEK, ContactSends, TenantSends, local_day, start_of_day
from loopline.domain.tenant import TenantSettings
from tests.conftest import ANY_HOUR

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
DAY = timedelta(days=1)
BOB = "bob@example.com"


def contact_ledger(*times: datetime) -> ContactSends:
    ledger = ContactSends.open(id=ids.contact_sends_id("gym", BOB), tenant="gym", contact=BOB, now=T0 - 30 * DAY)
    for moment in times:
        ledger.record(task_ref="t1", now=moment)
    return ledger


def tenant_ledger(*sends: tuple[datetime, str]) -> TenantSends:
    ledger = TenantSends.open(id=ids.tenant_sends_id("gym"), tenant="gym", now=T0 - 30 * DAY)
    for moment, zone in sends:
        ledger.record(task_ref="t1", day=local_day(moment, zone), now=moment)
    return ledger


def attempt(
    now: datetime, *, contact: ContactSends | None = None, tenant: TenantSends | None = None, weekly: int = 3,
    daily: int = 15, zone: str = "UTC", used: int = 0, budget: int | None = None,
) -> SendAttempt:
    return SendAttempt(
        contact=BOB, messages_used=used, messages_budget=budget, contact_sends=contact or contact_ledger(),
        tenant_sends=tenant or tenant_ledger(),
        limits=TenantSettings(member_weekly_limit=weekly, daily_send_limit=daily, timezone=zone, **ANY_HOUR), now=now,
    )


def test_checks_run_pause_then_suppression_then_budgets_then_member_week_then_tenant_day_then_warm_up_and_window() -> None:
    assert [check.__name__ for check in SEND_CHECKS] == [
        "paused", "suppressed", "task_message_budget", "parent_message_budget", "member_weekly_limit",
        "member_daily_limit", "tenant_daily_limit", "warm_up", "send_window"]


def test_a_pause_holds_every_send_until_it_is_lifted_whatever_the_limits_left() -> None:
    pause = Pause(scope="tenant gym", reason="owner on holiday", by="owner", since=T0.isoformat())
    deferral = first_deferral(replace(attempt(T0, weekly=100, daily=100), pause=pause))

    assert deferral is not None and (deferral.rule, deferral.until) == ("paused", None)
    assert deferral.reason == ("tenant gym is paused since 2 Mar 2026 09:00 UTC by owner (owner on holiday): "
                               "nothing is sent until it resumes")


def test_a_contact_emailed_today_gets_the_next_message_at_the_start_of_the_next_local_day() -> None:
    # 09:00 UTC is 18:00 in Tokyo: the next Tokyo day starts at 15:00 UTC.
    deferral = first_deferral(attempt(T0 + timedelta(hours=3), contact=contact_ledger(T0), zone="Asia/Tokyo"))

    assert deferral is not None and deferral.rule == "member_daily_limit"
    assert deferral.until == datetime(2026, 3, 2, 15, 0, tzinfo=UTC)
    assert "bob@example.com was already emailed on 2026-03-02 (Asia/Tokyo" in deferral.reason
    assert first_deferral(attempt(deferral.until, contact=contact_ledger(T0), zone="Asia/Tokyo")) is None


def test_one_message_a_day_counts_local_days_not_24_hours() -> None:
    late_evening = datetime(2026, 3, 2, 23, 30, tzinfo=UTC)
    assert first_deferral(attempt(late_evening + timedelta(hours=1), contact=contact_ledger(late_evening))) is None


def test_an_answer_to_the_contacts_own_message_is_not_held_to_the_next_day() -> None:
    answer = replace(attempt(T0 + timedelta(hours=1), contact=contact_ledger(T0)), answers_contact=True)
    assert first_deferral(answer) is None


def test_a_task_leaves_the_day_to_a_higher_priority_task_due_to_send() -> None:
    deferral = first_deferral(replace(attempt(T0), yields_to=("'Card declined' (critical)",)))

    assert deferral is not None and deferral.rule == "member_daily_limit"
    assert deferral.until == start_of_day(date(2026, 3, 3), "UTC")
    assert "left to the higher-priority 'Card declined' (critical)" in deferral.reason


def test_a_contact_under_the_weekly_limit_is_sent_to() -> None:
    assert first_deferral(attempt(T0 + 2 * DAY, contact=contact_ledger(T0, T0 + DAY))) is None


def test_the_send_over_the_weekly_limit_waits_until_the_oldest_send_leaves_the_week() -> None:
    ledger = contact_ledger(T0, T0 + DAY, T0 + 2 * DAY)
    just_before = T0 + WEEK - timedelta(microseconds=1)

    deferral = first_deferral(attempt(just_before, contact=ledger))

    assert deferral is not None
    assert (deferral.rule, deferral.until) == ("member_weekly_limit", T0 + WEEK)
    assert "bob@example.com received 3 email(s) from us in the last 7 days (limit 3 a week)" in deferral.reason
    assert first_deferral(attempt(T0 + WEEK, contact=ledger)) is None


def test_the_window_rolls_over_send_by_send() -> None:
    ledger = contact_ledger(T0, T0 + DAY, T0 + 2 * DAY, T0 + WEEK)

    deferral = first_deferral(attempt(T0 + WEEK + timedelta(hours=1), contact=ledger))

    assert deferral is not None and deferral.until == T0 + DAY + WEEK
    assert ledger.sent_within_week_of(T0 + WEEK) == 3


def test_a_send_earlier_than_sends_already_made_counts_against_the_week_after_it() -> None:
    """A send stamped with an earlier business time (a late step) must not overfill the week it opens."""
    ledger = contact_ledger(T0 + DAY, T0 + 2 * DAY, T0 + 3 * DAY)

    deferral = first_deferral(attempt(T0, contact=ledger))

    assert deferral is not None and deferral.rule == "member_weekly_limit"
    assert deferral.until == T0 + DAY + WEEK  # then the window [until - 7 days, until] holds 2 of them


def test_a_weekly_limit_of_zero_never_frees_up() -> None:
    deferral = first_deferral(attempt(T0, weekly=0))

    assert deferral is not None and deferral.until is None and deferral.rule == "member_weekly_limit"


def test_the_ledger_forgets_sends_two_weeks_before_the_latest() -> None:
    ledger = contact_ledger(*(T0 + n * DAY for n in range(60)))

    assert len(ledger.sent_at) == KEEP_SENDS_FOR.days
    assert ledger.sent_at[0] == T0 + (60 - KEEP_SENDS_FOR.days) * DAY


def test_a_send_older_than_the_ledger_remembers_waits_for_the_known_past() -> None:
    ledger = contact_ledger(*(T0 + n * DAY for n in range(30)))  # forgot the first 16 days

    deferral = first_deferral(attempt(T0 + DAY, contact=ledger, weekly=100))

    assert deferral is not None and deferral.until == T0 + 15 * DAY + WEEK  # a week after the last one forgotten
    assert ledger.forgotten_until == T0 + 15 * DAY


def overfills_a_week(sent: list[datetime], moment: datetime, limit: int) -> bool:
    """One more send at `moment` (a whole hour, like every send here) puts more than `limit` sends in
    some week [start, start + 7 days) holding it: every such start is a whole hour of the week before."""
    starts = (moment - timedelta(hours=k) for k in range(7 * 24))
    return any(sum(1 for y in sent if start <= y < start + WEEK) + 1 > limit for start in starts)


@settings(deadline=None)  # its brute-force oracle scans a week hour by hour: slow under a loaded suite, not wrong
@given(st.lists(st.integers(0, 13 * 24), max_size=10), st.integers(0, 13 * 24), st.integers(1, 4))
def test_a_send_is_deferred_to_the_first_hour_that_overfills_no_week(hours: list[int], at: int, limit: int) -> None:
    ledger = contact_ledger(*(T0 + timedelta(hours=h) for h in sorted(hours)))
    now = T0 + timedelta(hours=at)

    until = ledger.frees_at(limit, now)

    assert until is not None and until >= now
    assert not overfills_a_week(ledger.sent_at, until, limit)
    earliest_known = now if ledger.forgotten_until is None else max(now, ledger.forgotten_until + WEEK)
    hour = earliest_known + (until - earliest_known) % timedelta(hours=1)
    while hour < until:
        assert overfills_a_week(ledger.sent_at, hour, limit), f"{hour} was free before {until}"
        hour += timedelta(hours=1)


def test_the_daily_limit_defers_to_the_next_local_midnight() -> None:
    zone = "America/New_York"
    evening = datetime(2026, 3, 3, 23, 0, tzinfo=UTC)  # 18:00 in New York, 3 March
    ledger = tenant_ledger((evening, zone), (evening, zone))

    deferral = first_deferral(attempt(evening + timedelta(hours=1), tenant=ledger, daily=2, zone=zone))

    assert deferral is not None and deferral.rule == "tenant_daily_limit"
    assert deferral.until == datetime(2026, 3, 4, 5, 0, tzinfo=UTC)  # midnight EST
    assert "2 email(s) were sent on 2026-03-03 (America/New_York; limit 2 a day)" in deferral.reason
    assert first_deferral(attempt(deferral.until, tenant=ledger, daily=2, zone=zone)) is None


def test_a_tenant_day_across_the_spring_change_is_23_hours() -> None:
    zone = "America/New_York"
    morning = datetime(2026, 3, 8, 6, 0, tzinfo=UTC)  # 01:00 EST, the day clocks go forward
    ledger = tenant_ledger((morning, zone))

    deferral = first_deferral(attempt(morning, tenant=ledger, daily=1, zone=zone))

    assert deferral is not None and deferral.until == datetime(2026, 3, 9, 4, 0, tzinfo=UTC)  # midnight EDT
    assert deferral.until - start_of_day(date(2026, 3, 8), zone) == timedelta(hours=23)


def test_a_tenant_day_across_the_autumn_change_is_25_hours_and_late_evening_is_still_that_day() -> None:
    zone = "America/New_York"
    late = datetime(2026, 11, 1, 3, 30, tzinfo=UTC)  # 23:30 EDT on 31 October, already 1 November in UTC
    ledger = tenant_ledger((late, zone))

    deferral = first_deferral(attempt(late, tenant=ledger, daily=1, zone=zone))

    assert local_day(late, zone) == date(2026, 10, 31)
    assert deferral is not None and deferral.until == datetime(2026, 11, 1, 4, 0, tzinfo=UTC)
    assert start_of_day(date(2026, 11, 2), zone) - deferral.until == timedelta(hours=25)


def test_a_day_whose_midnight_is_skipped_starts_when_the_clocks_jump() -> None:
    zone = "Asia/Beirut"  # 29 March 2026: 00:00 becomes 01:00
    evening = datetime(2026, 3, 28, 20, 0, tzinfo=UTC)  # 22:00 on the 28th
    ledger = tenant_ledger((evening, zone))

    deferral = first_deferral(attempt(evening, tenant=ledger, daily=1, zone=zone))

    assert deferral is not None and deferral.until == datetime(2026, 3, 28, 22, 0, tzinfo=UTC)
    assert local_day(deferral.until, zone) == date(2026, 3, 29)


def test_a_daily_limit_of_zero_never_frees_up() -> None:
    deferral = first_deferral(attempt(T0, daily=0))

    assert deferral is not None and deferral.rule == "tenant_daily_limit" and deferral.until is None


def test_a_spent_message_budget_is_named_before_the_weekly_limit_and_never_frees_up() -> None:
    deferral = first_deferral(attempt(T0 + DAY, contact=contact_ledger(T0, T0, T0), used=3, budget=3))

    assert deferral is not None
    assert (deferral.rule, deferral.until) == ("task_message_budget", None)
    assert "3 of 3 sent" in deferral.reason


def test_a_task_without_a_message_budget_is_held_only_by_the_ledgers() -> None:
    assert first_deferral(attempt(T0, used=40, budget=None)) is None


def test_the_tenant_ledger_keeps_a_week_of_days() -> None:
    ledger = tenant_ledger(*((T0 + n * DAY, "UTC") for n in range(30)))

    assert len(ledger.per_day) == 8
    assert ledger.sent_on(local_day(T0, "UTC")) is None
    assert ledger.sent_on(local_day(T0 + 29 * DAY, "UTC")) == 1
