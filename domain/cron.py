"""Five-field cron expressions (minute hour day-of-month month day-of-week) and the next time one fires, in a
time zone: when a recurring template creates its next instance (seed 002 §31.6)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone
from zoneinfo import ZoneInfo

from loopline.domain.errors import DomainError

_FIELDS = (("minute", 0, 59), ("hour", 0, 23), ("day-of-month", 1, 31), ("month", 1, 12), ("day-of-week", 0, 7))
SEARCH_DAYS = 366 * 5
"""How far ahead the next firing is looked for: every valid expression fires within five years (29 February)."""


class InvalidCron(DomainError):
    """A cron expression that is not five fields of numbers, `*`, lists, ranges and steps in their bounds."""


@dataclass(frozen=True)
class Cron:
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]
    """0 and 7 are Sunday, as in cron."""
    any_day: bool
    any_weekday: bool

    def fires_on(self, day: date) -> bool:
        """Cron's rule: with both day fields restricted, either one matching is enough."""
        if day.month not in self.months:
            return False
        in_month, in_week = day.day in self.days, day.isoweekday() % 7 in self.weekdays
        if self.any_day or self.any_weekday:
            return in_month and in_week
        return in_month or in_week


def parse_cron(expression: str) -> Cron:
    parts = expression.split()
    if len(parts) != len(_FIELDS):
        raise InvalidCron(f"{expression!r:.80} has {len(parts)} fields; a cron expression has 5: minute hour "
                          "day-of-month month day-of-week, e.g. '0 8 * * 1' (Mondays at 08:00)")
    values = [_field(part, name, low, high) for part, (name, low, high) in zip(parts, _FIELDS, strict=True)]
    weekdays = frozenset(day % 7 for day in values[4])
    return Cron(values[0], values[1], values[2], values[3], weekdays, any_day=parts[2] == "*",
                any_weekday=parts[4] == "*")


def _field(text: str, name: str, low: int, high: int) -> frozenset[int]:
    found: set[int] = set()
    for item in text.split(","):
        span, _, step_text = item.partition("/")
        step = _number(step_text, name) if step_text else 1
        if span == "*":
            first, last = low, high
        elif "-" in span:
            first_text, _, last_text = span.partition("-")
            first, last = _number(first_text, name), _number(last_text, name)
        else:
            first = _number(span, name)
            last = high if step_text else first
        if not low <= first <= last <= high or step < 1:
            raise InvalidCron(f"{name} {item!r:.40} is outside {low}-{high} (or its range or step is empty)")
        found.update(range(first, last + 1, step))
    return frozenset(found)


def _number(text: str, name: str) -> int:
    if not text.isdigit():
        raise InvalidCron(f"{name} {text!r:.40} is not a number, `*`, a list, a range or a step")
    return int(text)


def next_firing(cron: Cron, after: datetime, zone: str) -> datetime:
    """The first time after `after` the expression fires, read in the time zone `zone`, as UTC. A local time a clock
    change skips fires at its UTC reading; one it repeats fires once."""
    tz = ZoneInfo(zone)
    start = after.astimezone(tz)
    for offset in range(SEARCH_DAYS):
        day = start.date() + timedelta(days=offset)
        if not cron.fires_on(day):
            continue
        for hour in sorted(cron.hours):
            for minute in sorted(cron.minutes):
                moment = datetime.combine(day, time(hour, minute), tz).astimezone(timezone.utc)
                if moment > after:
                    return moment
    raise InvalidCron(f"the expression never fires within {SEARCH_DAYS // 366} years (a day that does not exist?)")
