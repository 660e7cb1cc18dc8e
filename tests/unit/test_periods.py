"""The scorecard's periods: a local day belongs to one day, ISO week and month; a period is one of the three forms."""

from __future__ import annotations

from datetime import date

import pytest

from loopline.domain.periods import InvalidPeriod, Period, labels, labels_at, parse_period, previous
from loopline.domain.timeutil import parse_time


def test_a_day_at_the_turn_of_the_year_belongs_to_the_iso_week_of_its_thursday() -> None:
    assert labels(date(2027, 1, 1)) == {"day": "2027-01-01", "week": "2026-W53", "month": "2027-01"}


def test_a_moment_falls_on_the_local_day_of_the_tenants_time_zone() -> None:
    assert labels_at(parse_time("2026-04-01T03:30:00Z"), "America/New_York")["month"] == "2026-03"


@pytest.mark.parametrize("text", ["2026-13", "2026-W54", "2026-02-30", "March", "2026-3"])
def test_anything_but_a_month_an_iso_week_or_a_day_is_refused(text: str) -> None:
    with pytest.raises(InvalidPeriod, match="is not a month"):
        parse_period(text)


def test_the_three_forms_are_read_as_their_kind() -> None:
    assert [parse_period(text) for text in ("2026-03", "2026-W10", "2026-03-05")] == [
        Period("month", "2026-03"), Period("week", "2026-W10"), Period("day", "2026-03-05")]


def test_the_period_before_crosses_month_week_and_year_boundaries() -> None:
    assert previous(Period("day", "2026-03-01")) == Period("day", "2026-02-28")
    assert previous(Period("week", "2026-W01")) == Period("week", "2025-W52")
    assert previous(Period("week", "2026-W10")) == Period("week", "2026-W09")
    assert previous(Period("month", "2026-01")) == Period("month", "2025-12")
    assert previous(Period("month", "2026-10")) == Period("month", "2026-09")
