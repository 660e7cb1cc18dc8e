"""Dates as people write them in English, German, French, Spanish and Dutch ("June 10th", "10. Juni",
"1er juin", "10 de junio de 2026", "10 juni", "2026-06-10", "10/06/2026", "until September", "the 20th"),
found in free text.

Numbers are read day first (10/06 is the 10th of June), as in all five languages outside the US; a first
number above 12 cannot be a month, so 06/30/2026 still reads as the 30th of June. A date without a year is
its next occurrence on or after the day it was written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

MONTHS: dict[str, int] = {
    name: number
    for number, names in enumerate((
        "january jan januar jänner janvier janv enero ene januari",
        "february feb februar février fevrier févr fevr febrero februari",
        "march mar märz maerz mär mars marzo maart mrt",
        "april apr avril avr abril",
        "may mai mayo mei",
        "june jun juni juin junio",
        "july jul juli juillet juil julio",
        "august aug août aout agosto augustus",
        "september sep sept septembre septiembre setiembre",
        "october oct oktober okt octobre octubre",
        "november nov novembre noviembre",
        "december dec dezember dez décembre decembre déc diciembre dic",
    ), start=1)
    for name in names.split()
}
_MONTH = "|".join(sorted(map(re.escape, MONTHS), key=len, reverse=True))
_WHOLE_MONTH = "|".join(sorted((re.escape(name) for name in MONTHS if len(name) > 3 or name in ("mai", "mei")),
                               key=len, reverse=True))
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th|er|e|º|°|\.)?"
_YEAR = r"(?:,?\s*(?:de\s+)?(?P<year>(?:19|20)\d\d)\b)?"
_SHAPES = (
    re.compile(r"(?<!\d)(?P<year>(?:19|20)\d\d)-(?P<month>[01]?\d)-(?P<day>[0-3]?\d)(?!\d)"),
    re.compile(rf"(?<![\w.]){_DAY}\s*(?:of\s+|de\s+)?(?P<month_name>{_MONTH})\.?(?!\w){_YEAR}", re.IGNORECASE),
    re.compile(rf"(?<!\w)(?P<month_name>{_MONTH})\.?\s+{_DAY}(?!\d){_YEAR}", re.IGNORECASE),
    re.compile(r"(?<![\d./-])(?P<day>\d{1,2})(?P<sep>[/.-])(?P<month>\d{1,2})(?P=sep)(?P<year>\d{4}|\d{2})(?![\d/-])"),
    re.compile(r"(?<![\d./-])(?P<day>\d{1,2})(?P<sep>/)(?P<month>\d{1,2})(?![\d/])"),
    # Dotted without a year only with its last dot ("bis 10.06."): "10.30" is a time.
    re.compile(r"(?<![\d./-])(?P<day>\d{1,2})(?P<sep>\.)(?P<month>\d{1,2})\.(?!\d)"),
    # A month alone ("until September", "bis Ende Mai", "jusqu'en septembre") is its first day, or the next month's
    # for its end; spelt out only, and never "may", which English writes for other things.
    re.compile(rf"(?<!\w)(?:(?P<end>end of|ende|fin|fin de|finales de|eind)\s+)?(?P<month_name>{_WHOLE_MONTH})\b"
               r"(?![.\s]*\d)", re.IGNORECASE),
    # "the 20th" alone: this month's, or the next month's once past.
    re.compile(r"(?<!\w)the (?P<day>[0-3]?\d)(?:st|nd|rd|th)\b(?!\s*of\b)", re.IGNORECASE),
)


@dataclass(frozen=True)
class StatedDate:
    """A date found in a text, where it was (`start`, `end`: its span)."""

    day: date
    start: int
    end: int


def dates_in(text: str, *, written: date) -> list[StatedDate]:
    """Every date the text states, in order, each resolved against the day the text was written."""
    found: list[StatedDate] = []
    taken: list[range] = []
    for shape in _SHAPES:
        for match in shape.finditer(text):
            if any(match.start() in span or match.end() - 1 in span for span in taken):
                continue
            day = _resolve(match, written)
            if day is not None:
                found.append(StatedDate(day, match.start(), match.end()))
                taken.append(range(match.start(), match.end()))
    return sorted(found, key=lambda stated: stated.start)


def _resolve(match: re.Match[str], written: date) -> date | None:
    parts = match.groupdict()
    if parts.get("day") is None:
        return _month_alone(MONTHS[parts["month_name"].lower()], bool(parts.get("end")), written)
    day = int(parts["day"])
    if parts.get("month_name"):
        month = MONTHS[parts["month_name"].lower()]
    elif "month" not in parts:
        return _date(written.year, written.month, day) if day >= written.day else _next_month(written, day)
    else:
        month = int(parts["month"])
        if month > 12 and day <= 12 and parts.get("sep") == "/":
            day, month = month, day  # 06/30/2026: a first number that can be no month is the month
    year_text = parts.get("year")
    if year_text:
        year = int(year_text) + (2000 if len(year_text) == 2 else 0)
        return _date(year, month, day)
    for year in (written.year, written.year + 1, written.year + 4):  # the next occurrence (29 February: next leap year)
        candidate = _date(year, month, day)
        if candidate is not None and candidate >= written:
            return candidate
    return None


def _month_alone(month: int, end: bool, written: date) -> date | None:
    year = written.year if month >= written.month else written.year + 1
    first = date(year, month, 1)
    return _next_month(first, 1) if end else first


def _next_month(day_in_month: date, day: int) -> date | None:
    year, month = divmod(day_in_month.year * 12 + day_in_month.month, 12)
    return _date(year, month + 1, day)


def _date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None
