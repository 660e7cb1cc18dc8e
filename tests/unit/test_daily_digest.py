"""The owner's daily digest (seed 002 §10): asked for with `daily_digest_hour`, recorded once a local day at that hour
for the day before, and emailed by delivery; a new hour ends the old timer's chain."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from loopline.domain.tenant import Tenant
from loopline.domain.timeutil import format_time, parse_time
from tests.conftest import command
from tests.unit.in_memory import InMemoryLoopline

GYM = "gym"
T0 = parse_time("2026-03-02T15:00:00Z")  # 10:00 in New York


@pytest.fixture
def loopline() -> Iterator[InMemoryLoopline]:
    running = InMemoryLoopline()
    running.publish(command("cfg", "tenant.configure", format_time(T0), GYM, timezone="America/New_York",
                            owner_email="sam@gym.example", daily_digest_hour=8))
    yield running
    running.close()


def digests(loopline: InMemoryLoopline) -> list[tuple[str, str]]:
    return [(e.day, format_time(e.timestamp)) for e in loopline.events() if isinstance(e, Tenant.DigestRecorded)]


def test_the_digest_is_recorded_once_a_day_at_the_owners_hour_for_the_day_before(loopline: InMemoryLoopline) -> None:
    for hours in (12, 23, 36, 47, 60, 71):  # each day at 09:00 in New York, and before the 08:00 digest
        loopline.tick(T0 + timedelta(hours=hours))

    assert digests(loopline) == [("2026-03-02", "2026-03-03T14:00:00Z"), ("2026-03-03", "2026-03-04T14:00:00Z"),
                                 ("2026-03-04", "2026-03-05T14:00:00Z")]
    emailed = [message for _, message in loopline.owner.sent if message["kind"] == "daily_digest"]
    assert [(m["title"], m["owner_email"], m["task_id"]) for m in emailed] == [
        (f"daily digest of 2026-03-0{n}", "sam@gym.example", None) for n in (2, 3, 4)]


def test_a_new_hour_ends_the_old_timers_chain_and_no_day_is_told_twice(loopline: InMemoryLoopline) -> None:
    loopline.tick(T0 + timedelta(hours=23))  # 2026-03-03 09:00 in New York: the 08:00 digest went
    loopline.publish(command("cfg2", "tenant.configure", format_time(T0 + timedelta(hours=23)), GYM,
                             daily_digest_hour=20))
    for hours in (35, 47, 59, 71, 83):  # after 20:00 and 08:00 in New York, and so on
        loopline.tick(T0 + timedelta(hours=hours, minutes=30))

    assert digests(loopline) == [("2026-03-02", "2026-03-03T14:00:00Z"), ("2026-03-03", "2026-03-05T02:30:00Z"),
                                 ("2026-03-04", "2026-03-06T02:30:00Z")]
