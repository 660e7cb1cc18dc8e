"""Activity tiers (seed 000 Part 3): how recently the owner was seen sets how often the proactive run thinks."""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import Enum

from loopline.domain.safety_limits import NO_OP_RUNS_BEFORE_BACKOFF, STALE_AFTER

PAUSED_LOOK = timedelta(days=7)
"""A churned owner's paused run still looks once a week (the heartbeat never dies), doing nothing new."""


class Tier(str, Enum):
    ACTIVE = "active"
    DORMANT = "dormant"
    INACTIVE = "inactive"
    CHURNED = "churned"


# The seed's "2-3x/day" for an active owner is taken as every 8 hours; None: paused. The seed's maintenance cadences
# (every 30 min / 2 h / 1 day) are not kept: its maintenance scans for expired loops, stalled tasks and due follow-ups,
# and here each loop deadline, task step, stall check and question rung is a timer of its own that fires at its
# moment, finer than any cadence and costing nothing when nothing is due. What is left for the run (the escalations
# it hands back, the held notices, discovery) it does at every wake-up, so each run also does maintenance.
SYNTHESIS_CADENCES: dict[Tier, timedelta | None] = {
    Tier.ACTIVE: timedelta(hours=8),
    Tier.DORMANT: timedelta(days=1),
    Tier.INACTIVE: timedelta(days=7),
    Tier.CHURNED: None,
}


def tier_of(last_seen_at: datetime, now: datetime) -> Tier:
    """Active under 24 h, dormant up to 7 days, inactive up to 30 days, churned beyond."""
    away = now - last_seen_at
    if away < timedelta(days=1):
        return Tier.ACTIVE
    if away <= timedelta(days=7):
        return Tier.DORMANT
    if away <= timedelta(days=30):
        return Tier.INACTIVE
    return Tier.CHURNED


def is_return(previous_seen_at: datetime | None, seen_at: datetime) -> bool:
    """A sighting after being dormant or inactive is a return; coming back from churned is one too."""
    return previous_seen_at is not None and tier_of(previous_seen_at, seen_at) is not Tier.ACTIVE


def synthesis_interval(tier: Tier, empty_runs_in_a_row: int) -> timedelta | None:
    """The tier's synthesis cadence, doubled for every 5 runs in a row that did nothing (any action resets the count)."""
    base = SYNTHESIS_CADENCES[tier]
    if base is None:
        return None
    return base * 2 ** (empty_runs_in_a_row // NO_OP_RUNS_BEFORE_BACKOFF)


def paced_interval(tier: Tier, empty_runs_in_a_row: int) -> tuple[timedelta, str]:
    """The wait before the next run and why: the tier's synthesis cadence with the no-op backoff, or for a churned
    owner (paused) a week, the longest a run may wait."""
    interval = synthesis_interval(tier, empty_runs_in_a_row)
    if interval is None:
        return PAUSED_LOOK, f"paused: the owner is {tier.value} (not seen for over 30 days); their return runs it at once"
    doubled = empty_runs_in_a_row // NO_OP_RUNS_BEFORE_BACKOFF
    backoff = f", doubled {doubled}x after {empty_runs_in_a_row} runs in a row with no action" if doubled else ""
    return interval, f"{tier.value} owner: every {_hours(interval)}{backoff}"


def _hours(interval: timedelta) -> str:
    hours = interval / timedelta(hours=1)
    return f"{hours:g} h" if hours < 48 else f"{hours / 24:g} days"


def is_stale(next_run_at: datetime, now: datetime) -> bool:
    """A run whose wake-up is more than 48 h past is one the supervisor rescues."""
    return now - next_run_at > STALE_AFTER
