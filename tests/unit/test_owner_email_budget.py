"""The owner's email budget (seed 002 §35): a daily budget per category, quiet hours that hold and never drop, and
one digest, most urgent first, for what is over the budget; the outbox still gets every notice at once."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import pytest

from loopline.adapters.messages import InvalidMessage, parse_message
from loopline.domain.notice_budget import ALERT, APPROVAL, category_of, verdict
from loopline.domain.tenant import TenantSettings
from loopline.domain.timeutil import format_time, parse_time
from loopline.processors.followers.delivery import is_contact_email, is_owner_email
from loopline.processors.followers.owner_emails import OwnerEmails
from loopline.processors.ports import Attempt
from tests.conftest import command
from tests.unit.fakes import FakeLedger
from tests.unit.in_memory import InMemoryLoopline

GYM = "gym"
ZONE = "America/New_York"
T0 = parse_time("2026-03-02T15:00:00Z")  # 10:00 in New York


@pytest.fixture
def loopline() -> Iterator[InMemoryLoopline]:
    running = InMemoryLoopline()
    running.smtp._accepts = lambda message: is_contact_email(message) or is_owner_email(message)
    running.delivery.clock.moment = T0
    running.publish(command("cfg", "tenant.configure", format_time(T0), GYM, timezone=ZONE, owner_email="sam@gym.example",
                            owner_quiet_hours="21:00-07:00"))
    yield running
    running.close()


def review(loopline: InMemoryLoopline, ref: str, at: datetime) -> None:
    """A task created in review: the owner is told (`review`, an approval the budget allows 5 of a day)."""
    loopline.publish(command(
        f"c-{ref}", "task.create", format_time(at), GYM, task_id=ref, title=f"win back {ref}", task_type="churn_risk",
        contact=f"{ref}@example.com", to_name=ref, confidence=0.3, draft={"subject": "We miss you", "body": "Hi!"},
    ))


def owner_emails(loopline: InMemoryLoopline) -> list[dict]:
    return [message for _, message in loopline.smtp.sent if is_owner_email(message)]


def test_approvals_over_the_days_budget_go_in_one_digest_and_none_is_lost(loopline: InMemoryLoopline) -> None:
    for n in range(7):
        review(loopline, f"m{n}", T0)

    assert [m["kind"] for m in owner_emails(loopline)] == ["review"] * 5
    assert len([m for _, m in loopline.owner.sent if m["to"] == "user"]) == 7, "the outbox has every notice at once"

    loopline.delivery.clock.moment = parse_time("2026-03-02T17:00:00Z")  # 12:00, the next digest
    loopline.drain()

    digest = owner_emails(loopline)[5:]
    assert [m["kind"] for m in digest] == ["digest"]
    assert "win back m5" in digest[0]["text"] and "win back m6" in digest[0]["text"]


def test_a_notice_the_owner_answered_before_the_digest_is_withdrawn_not_digested(loopline: InMemoryLoopline) -> None:
    for n in range(7):
        review(loopline, f"m{n}", T0)
    loopline.publish(command("ok", "task.approve", format_time(T0 + timedelta(minutes=5)), GYM, task_id="m6"))

    loopline.delivery.clock.moment = parse_time("2026-03-02T17:00:00Z")
    loopline.drain()

    [digest] = owner_emails(loopline)[5:]
    assert "win back m5" in digest["text"] and "win back m6" not in digest["text"]


def test_quiet_hours_hold_the_owners_email_until_they_end(loopline: InMemoryLoopline) -> None:
    night = parse_time("2026-03-03T03:00:00Z")  # 22:00 in New York
    loopline.delivery.clock.moment = night
    review(loopline, "ann", night)
    assert owner_emails(loopline) == []

    loopline.delivery.clock.moment = parse_time("2026-03-03T12:01:00Z")  # 07:01
    loopline.drain()

    assert [m["title"] for m in owner_emails(loopline)] == ["win back ann"]


def test_each_kind_has_the_seeds_category_and_an_unknown_one_is_a_system_alert() -> None:
    assert category_of("review") == APPROVAL and category_of("tenant_paused") == ALERT


def test_a_system_alert_goes_through_quiet_hours_and_any_budget() -> None:
    at = datetime(2026, 3, 3, 3, tzinfo=timezone.utc)
    held = verdict("review", at=at, zone=ZONE, quiet_hours="21:00-07:00", emailed_today=0)
    alert = verdict("timer_refused", at=at, zone=ZONE, quiet_hours="21:00-07:00", emailed_today=100)

    assert held.until == datetime(2026, 3, 3, 12, tzinfo=timezone.utc) and not held.digest
    assert alert.until is None


def test_over_the_budget_waits_for_the_next_digest_after_quiet_hours() -> None:
    late = datetime(2026, 3, 3, 1, 30, tzinfo=timezone.utc)  # 20:30 in New York: the 00:00 digest is in quiet hours

    found = verdict("review", at=late, zone=ZONE, quiet_hours="21:00-07:00", emailed_today=5)

    assert found.digest and found.until == datetime(2026, 3, 3, 12, tzinfo=timezone.utc)


def test_when_quiet_hours_end_the_most_urgent_waiting_notices_go_first() -> None:
    def notice(key: str, kind: str) -> Attempt:
        return Attempt(key=key, channel="smtp", attempts=1,
                       message={"to": "user", "kind": kind, "tenant": GYM, "at": format_time(T0), "waited": True})

    due = [notice("a:1", "task_completed"), notice("b:1", "stalled"), notice("c:1", "escalation")]

    ordered = OwnerEmails(FakeLedger(), lambda tenant: TenantSettings()).fold(due, stands=lambda attempt: True)

    assert [attempt.key for attempt in ordered] == ["c:1", "b:1", "a:1"]


def test_quiet_hours_not_written_hh_mm_to_hh_mm_are_refused_naming_the_field() -> None:
    with pytest.raises(InvalidMessage, match="data.owner_quiet_hours: owner_quiet_hours '9-5' is not HH:MM-HH:MM"):
        parse_message(json.dumps(command("q", "tenant.configure", format_time(T0), GYM, owner_quiet_hours="9-5")))


def test_the_digest_carries_the_scorecard_of_its_day() -> None:
    def notice(key: str, hours: int) -> Attempt:
        return Attempt(key=key, channel="smtp", attempts=1, message={
            "to": "user", "kind": "task_completed", "tenant": GYM, "title": key, "text": "closed",
            "at": format_time(T0 + timedelta(hours=hours)), "for_digest": True})

    def scorecard_of(tenant: str, day: str) -> str:
        return f"Scorecard of {tenant} on {day}"

    settings = TenantSettings(timezone="Asia/Tokyo")  # 10 hours after T0 is the next day there
    [digest] = OwnerEmails(FakeLedger(), lambda tenant: settings, scorecard_of).fold(
        [notice("a:1", 1), notice("b:1", 10)], stands=lambda attempt: True)

    assert digest.message["text"].endswith(f"\n\nScorecard of {GYM} on 2026-03-03")
