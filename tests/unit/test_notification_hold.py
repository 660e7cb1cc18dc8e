"""The owner's notification hold: quiet hours and absence hold, the hold keeps 50, the same notice waits 24 h,
and a return gets one digest of at most 5 (seed 000 Part 3)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from loopline.domain import ids
from loopline.domain.notification_hold import NotificationHold

NOON = datetime(2025, 3, 3, 12, 0, tzinfo=timezone.utc)


def hold_seen_at(at: datetime) -> NotificationHold:
    hold = NotificationHold.open(id=ids.notification_hold_id("u"), tenant="u", now=at)
    hold.seen(at)
    return hold


def offer(hold: NotificationHold, text: str, at: datetime, quiet_hours: str | None = None) -> str:
    return hold.offer(text, now=at, zone="UTC", quiet_hours=quiet_hours)


def events(hold: NotificationHold, kind: type) -> list:
    return [e for e in hold.pending_events if isinstance(e, kind)]


def test_active_owner_outside_quiet_hours_is_told_now():
    hold = hold_seen_at(NOON)
    assert offer(hold, "Invoice 12 is overdue", NOON) == "sent"


def test_default_quiet_hours_hold_a_notice_and_release_it_when_they_end():
    hold = hold_seen_at(NOON)
    night = NOON.replace(hour=23)
    assert offer(hold, "Invoice 12 is overdue", night) == "held"
    assert "quiet hours (22:00-07:00, UTC)" in events(hold, NotificationHold.Held)[0].reason
    assert hold.release(now=night + timedelta(hours=1), zone="UTC", quiet_hours=None) == []
    morning = (NOON + timedelta(days=1)).replace(hour=7, minute=30)
    hold.seen(morning)
    assert hold.release(now=morning, zone="UTC", quiet_hours=None) == ["Invoice 12 is overdue"]


def test_owner_quiet_hours_replace_the_default():
    hold = hold_seen_at(NOON)
    assert offer(hold, "Invoice 12 is overdue", NOON.replace(hour=23), quiet_hours="01:00-05:00") == "sent"


def test_same_notice_is_not_sent_twice_within_24_hours():
    hold = hold_seen_at(NOON)
    assert offer(hold, "Invoice 12 is overdue", NOON) == "sent"
    assert offer(hold, "invoice 12  is OVERDUE", NOON + timedelta(hours=3)) == "skipped"
    hold.seen(NOON + timedelta(hours=20))
    assert offer(hold, "Invoice 12 is overdue", NOON + timedelta(hours=24)) == "sent"


def test_hold_keeps_fifty_and_records_each_oldest_it_drops():
    away = NOON - timedelta(days=2)
    hold = hold_seen_at(away)
    for n in range(52):
        assert offer(hold, f"notice {n}", NOON + timedelta(minutes=n)) == "held"
    assert len(hold.queue) == 50
    assert [e.text for e in events(hold, NotificationHold.Dropped)] == ["notice 0", "notice 1"]


def test_owner_back_after_four_days_gets_one_digest_of_five_from_twenty_held():
    hold = hold_seen_at(NOON - timedelta(days=4))
    for n in range(20):
        assert offer(hold, f"notice {n}", NOON - timedelta(days=3) + timedelta(hours=n)) == "held"
    assert hold.seen(NOON) is True
    digest = hold.release(now=NOON, zone="UTC", quiet_hours=None)
    assert digest == [f"notice {n}" for n in (19, 18, 17, 16, 15)]
    assert events(hold, NotificationHold.DigestSent)[0].discarded == 15
    assert hold.queue == []
    assert offer(hold, "notice 19", NOON + timedelta(hours=1)) == "skipped"


def test_eight_notices_held_overnight_for_an_active_owner_all_go_in_the_morning():
    hold = hold_seen_at(NOON.replace(hour=20))
    for n in range(8):
        assert offer(hold, f"notice {n}", NOON.replace(hour=23) + timedelta(minutes=30 * n)) == "held"
    morning = (NOON + timedelta(days=1)).replace(hour=7, minute=30)
    assert hold.seen(morning) is False
    digest = hold.release(now=morning, zone="UTC", quiet_hours=None)
    assert digest == [f"notice {n}" for n in range(7, -1, -1)]
    assert events(hold, NotificationHold.DigestSent)[0].discarded == 0


def test_a_return_digest_caps_what_was_held_while_away_not_what_quiet_hours_held_after_the_return():
    hold = hold_seen_at(NOON - timedelta(days=4))
    for n in range(8):
        assert offer(hold, f"away {n}", NOON - timedelta(days=3) + timedelta(hours=n)) == "held"
    back = NOON.replace(hour=23)
    assert hold.seen(back) is True
    for n in range(3):
        assert offer(hold, f"night {n}", back + timedelta(minutes=10 * (n + 1))) == "held"
    morning = (NOON + timedelta(days=1)).replace(hour=7)
    digest = hold.release(now=morning, zone="UTC", quiet_hours=None)
    assert digest == ["night 2", "night 1", "night 0"] + [f"away {n}" for n in (7, 6, 5, 4, 3)]
    assert events(hold, NotificationHold.DigestSent)[0].discarded == 3
