"""Pure time helpers: parsing and flooring. Never reads the clock."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from functools import lru_cache


def parse_time(value: str | datetime) -> datetime:
    """An RFC 3339 string (or datetime) as an aware UTC datetime; naive input is taken as UTC."""
    moment = value if isinstance(value, datetime) else datetime.fromisoformat(value.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)


@lru_cache(maxsize=8192)  # events of a batch share few distinct times; projections format each many times
def format_time(moment: datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def floor_hour(moment: datetime) -> datetime:
    return moment.replace(minute=0, second=0, microsecond=0)


HOUR = timedelta(hours=1)
