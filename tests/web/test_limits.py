"""The token buckets behind every 429: a bucket refills with time, a wait is at least a second, and buckets that
have refilled are dropped so names seen once (a client's address, a tenant) do not pile up."""

from __future__ import annotations

import pytest
from fastapi import HTTPException

from loopline.web.limits import PRUNE_EVERY, RateLimiter, too_many


def test_a_bucket_allows_its_rate_then_waits_until_it_refills() -> None:
    limiter = RateLimiter(per_minute=2)
    assert [limiter.take("key:a", now=0.0) for _ in range(2)] == [None, None]
    assert limiter.take("key:a", now=0.0) == pytest.approx(30.0)
    assert limiter.take("key:b", now=0.0) is None  # each name has its own bucket
    assert limiter.wait("key:a", now=15.0) == pytest.approx(15.0)
    assert limiter.take("key:a", now=30.0) is None and limiter.take("key:a", now=30.0) is not None


def test_wait_counts_nothing() -> None:
    limiter = RateLimiter(per_minute=1)
    assert [limiter.wait("ip", now=0.0) for _ in range(3)] == [None, None, None]
    assert limiter.take("ip", now=0.0) is None and limiter.wait("ip", now=0.0) is not None


def test_retry_after_is_whole_seconds_and_never_below_one() -> None:
    with pytest.raises(HTTPException) as raised:
        too_many(0.01, 6000)
    assert raised.value.status_code == 429 and raised.value.headers == {"Retry-After": "1"}
    with pytest.raises(HTTPException) as raised:
        too_many(29.2, 2)
    assert raised.value.headers == {"Retry-After": "30"}
    too_many(None, 2)


def test_buckets_that_have_refilled_are_dropped_and_busy_ones_kept() -> None:
    limiter = RateLimiter(per_minute=60)
    for number in range(PRUNE_EVERY - 2):
        limiter.take(f"login:10.0.0.{number}", now=0.0)
    limiter.take("key:busy", now=59.5)
    assert len(limiter.buckets) == PRUNE_EVERY - 1
    limiter.take("key:busy", now=60.0)  # the PRUNE_EVERY-th take sweeps: the others refilled a second ago
    assert set(limiter.buckets) == {"key:busy"}
