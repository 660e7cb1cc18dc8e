"""Activity tiers, return detection, no-op backoff and the supervisor's staleness (seed 000 Part 3)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from loopline.domain.activity_tier import Tier, is_return, is_stale, synthesis_interval, tier_of

NOW = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize(("away", "tier"), [
    (timedelta(hours=23), Tier.ACTIVE),
    (timedelta(days=1), Tier.DORMANT),
    (timedelta(days=7), Tier.DORMANT),
    (timedelta(days=8), Tier.INACTIVE),
    (timedelta(days=30), Tier.INACTIVE),
    (timedelta(days=31), Tier.CHURNED),
])
def test_tier_follows_the_time_since_the_owner_was_seen(away, tier):
    assert tier_of(NOW - away, NOW) is tier


def test_churned_owner_gets_no_synthesis_run():
    assert synthesis_interval(Tier.CHURNED, 0) is None


def test_five_empty_runs_double_the_interval_and_ten_double_it_again():
    assert synthesis_interval(Tier.DORMANT, 4) == timedelta(days=1)
    assert synthesis_interval(Tier.DORMANT, 5) == timedelta(days=2)
    assert synthesis_interval(Tier.DORMANT, 10) == timedelta(days=4)


def test_owner_seen_after_four_days_away_has_returned():
    assert is_return(NOW - timedelta(days=4), NOW)
    assert not is_return(NOW - timedelta(hours=3), NOW)
    assert not is_return(None, NOW)


def test_run_48_hours_late_is_not_yet_stale_but_one_minute_more_is():
    assert not is_stale(NOW - timedelta(hours=48), NOW)
    assert is_stale(NOW - timedelta(hours=48, minutes=1), NOW)
