"""Send windows (seed 002 §29): the local hours, and days, in which a tenant's emails to contacts may go.

A send due outside the window moves to the next opening plus a jitter taken from the task's id, so the
tasks held overnight do not all fire in the window's first minute (§29.3: "avoid exact hour marks"), and
the same task always lands on the same minute, however often its step is replayed.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from loopline.domain.tenant import TenantSettings

JITTER_FROM = timedelta(minutes=5)
JITTER_SPAN = timedelta(minutes=15)
"""A held send goes 5 to 20 minutes after the window opens (§29.3), at a second fixed by its task."""
SATURDAY = 5
DAYS_TO_LOOK = 8
"""A window open at least on weekdays opens again within a week."""


def first_send_time(at: datetime, settings: TenantSettings, task: str) -> datetime:
    """`at` when it falls in the tenant's window, else the next opening plus the task's jitter."""
    if in_window(at, settings):
        return at
    return next_opening(at, settings) + jitter(task)


def in_window(at: datetime, settings: TenantSettings) -> bool:
    """Whether `at` falls in [start:00, end:00) local time, on a day the tenant sends."""
    local = at.astimezone(ZoneInfo(settings.timezone))
    return (settings.send_window_start <= local.hour < settings.send_window_end
            and (settings.send_on_weekends or local.weekday() < SATURDAY))


def next_opening(at: datetime, settings: TenantSettings) -> datetime:
    """The first window opening (local start:00 of a sending day) after `at`, in UTC."""
    zone = ZoneInfo(settings.timezone)
    day = at.astimezone(zone).date()
    for offset in range(DAYS_TO_LOOK):
        candidate = day + timedelta(days=offset)
        opening = _local(candidate, settings.send_window_start, zone)
        if opening > at and (settings.send_on_weekends or candidate.weekday() < SATURDAY):
            return opening
    raise AssertionError(f"no send window opens within {DAYS_TO_LOOK} days of {at}")


def jitter(task: str) -> timedelta:
    """The task's fixed delay after an opening: a hash of its id, never the clock or a random draw."""
    digest = int.from_bytes(hashlib.sha256(task.encode()).digest()[:8], "big")
    return JITTER_FROM + timedelta(seconds=digest % int(JITTER_SPAN.total_seconds()))


def _local(day: date, hour: int, zone: ZoneInfo) -> datetime:
    """Local `hour`:00 of `day` in UTC; an hour a DST gap skips reads as the instant the gap ends."""
    return datetime.combine(day, time(hour), tzinfo=zone).astimezone(UTC)
