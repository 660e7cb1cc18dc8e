"""The scorecard's periods: a local day, an ISO week or a month of the tenant's time zone, and their labels."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Literal
from zoneinfo import ZoneInfo

from loopline.domain.errors import DomainError
from loopline.domain.send_ledger import local_day

PeriodKind = Literal["day", "week", "month"]

_FORMS: tuple[tuple[PeriodKind, re.Pattern[str]], ...] = (
    ("day", re.compile(r"\d{4}-\d{2}-\d{2}")),
    ("week", re.compile(r"\d{4}-W\d{2}")),
    ("month", re.compile(r"\d{4}-\d{2}")),
)


class InvalidPeriod(DomainError):
    """A period that is not a day, an ISO week or a month."""


@dataclass(frozen=True)
class Period:
    kind: PeriodKind
    label: str


def labels(day: date) -> dict[PeriodKind, str]:
    """The day, ISO week and month a local day belongs to (`2026-03-05`, `2026-W10`, `2026-03`)."""
    year, week, _ = day.isocalendar()
    return {"day": day.isoformat(), "week": f"{year}-W{week:02d}", "month": day.isoformat()[:7]}


def labels_at(at: datetime, timezone: str) -> dict[PeriodKind, str]:
    """The periods the moment `at` falls in, in the IANA `timezone`."""
    return labels(local_day(at, timezone))


def parse_period(text: str) -> Period:
    """`2026-03` (a month), `2026-W10` (an ISO week) or `2026-03-05` (a day); anything else is refused."""
    for kind, form in _FORMS:
        if form.fullmatch(text):
            try:
                _check(kind, text)
            except ValueError:
                break
            return Period(kind, text)
    raise InvalidPeriod(f"period {text[:40]!r} is not a month (2026-03), an ISO week (2026-W10) or a day (2026-03-05)")


def _check(kind: PeriodKind, text: str) -> None:
    if kind == "day":
        date.fromisoformat(text)
    elif kind == "week":
        date.fromisocalendar(int(text[:4]), int(text[6:]), 1)
    else:
        date(int(text[:4]), int(text[5:]), 1)


def next_local_hour(after: datetime, timezone: str, hour: int) -> datetime:
    """The first moment after `after` that is `hour`:00 on the clock of the IANA `timezone` (a day whose clock skips
    that hour, for daylight saving, has its next existing instant), in UTC as timers are filed."""
    local = after.astimezone(ZoneInfo(timezone))
    day = local.date()
    while True:
        wall = datetime(day.year, day.month, day.day, hour, tzinfo=ZoneInfo(timezone))
        moment = datetime.fromtimestamp(wall.timestamp(), ZoneInfo(timezone))  # a skipped hour moves past the gap
        if moment > local:
            return moment.astimezone(UTC)
        day += timedelta(days=1)


def previous(period: Period) -> Period:
    """The period of the same kind just before (`2026-W10` → `2026-W09`, `2026-01` → `2025-12`)."""
    if period.kind == "day":
        return Period("day", (date.fromisoformat(period.label) - timedelta(days=1)).isoformat())
    if period.kind == "week":
        monday = date.fromisocalendar(int(period.label[:4]), int(period.label[6:]), 1)
        return Period("week", labels(monday - timedelta(days=7))["week"])
    year, month = int(period.label[:4]), int(period.label[5:])
    return Period("month", f"{year - 1}-12" if month == 1 else f"{year}-{month - 1:02d}")
