"""An owner back after days away gets a proactive run at once, not at its scheduled time (seed 000 return detection)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from loopline.domain import ids
from loopline.domain.notification_hold import NotificationHold
from loopline.domain.proactive_run import RETURN_REASON, ProactiveRun
from loopline.domain.timeutil import format_time
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.owner_notices import notify_owner
from tests.conftest import signal
from tests.unit.in_memory import InMemoryLoopline

DAY0 = datetime(2026, 5, 4, 9, 0, tzinfo=timezone.utc)


def seen(loopline: InMemoryLoopline, ref: str, at: datetime) -> None:
    loopline.publish(signal(ref, "user.seen", format_time(at), tenant="gym"))


def test_owner_back_after_four_days_gets_a_run_at_once_and_one_seen_hourly_does_not():
    loopline = InMemoryLoopline()
    seen(loopline, "s1", DAY0)
    seen(loopline, "s2", DAY0 + timedelta(hours=1))
    run = UnitOfWork(loopline.app).get(ids.run_id("gym"), ProactiveRun)
    assert run is not None and run.next_run_at == DAY0 + timedelta(minutes=30)
    loopline.tick(DAY0 + timedelta(minutes=30))
    back = DAY0 + timedelta(days=4)
    seen(loopline, "s3", back)
    run = UnitOfWork(loopline.app).get(ids.run_id("gym"), ProactiveRun)
    assert run is not None
    assert (run.next_run_at, run.next_run_reason) == (back, RETURN_REASON)
    loopline.tick(back + timedelta(minutes=1))
    run = UnitOfWork(loopline.app).get(ids.run_id("gym"), ProactiveRun)
    hold = UnitOfWork(loopline.app).get(ids.notification_hold_id("gym"), NotificationHold)
    assert run is not None and run.last_run_at == back + timedelta(minutes=1)
    assert hold is not None and hold.last_seen_at == back


def test_the_return_sends_what_was_held_as_one_digest_but_never_in_quiet_hours():
    loopline = InMemoryLoopline()
    seen(loopline, "s1", DAY0)
    uow = UnitOfWork(loopline.app)
    for day in (1, 2):
        notify_owner(uow, "gym", f"CI report of day {day}", now=DAY0 + timedelta(days=day))
    uow.commit()
    seen(loopline, "s2", DAY0 + timedelta(days=3, hours=14))  # 23:00: quiet hours, the digest waits
    assert not [e for e in loopline.events() if isinstance(e, NotificationHold.DigestSent)]
    seen(loopline, "s3", DAY0 + timedelta(days=5))  # back again after a day away, in the morning
    [digest] = [e for e in loopline.events() if isinstance(e, NotificationHold.DigestSent)]
    assert digest.items == ["CI report of day 2", "CI report of day 1"]


def test_eight_notices_held_overnight_for_an_owner_seen_that_evening_all_go_at_the_first_run_after_seven():
    loopline = InMemoryLoopline()
    evening = DAY0.replace(hour=20)
    seen(loopline, "s1", evening)
    uow = UnitOfWork(loopline.app)
    for n in range(8):
        assert notify_owner(uow, "gym", f"CI report {n}", now=evening + timedelta(hours=3, minutes=10 * n)) == "held"
    uow.commit()
    loopline.tick(DAY0 + timedelta(days=1, hours=-1))  # 08:00: the run's first wake-up after quiet hours
    [digest] = [e for e in loopline.events() if isinstance(e, NotificationHold.DigestSent)]
    assert digest.items == [f"CI report {n}" for n in range(7, -1, -1)] and digest.discarded == 0
