"""The server-drawn bar chart: well-formed XML, bars as tall as their values say, every text escaped, and a chart that
says so when there is nothing to draw."""

from __future__ import annotations

from xml.etree import ElementTree as ET

from loopline.web.svg import grouped_bars

NS = {"svg": "http://www.w3.org/2000/svg"}
LABEL = "Outcomes per type, this period against the last"


def parsed(markup: str) -> ET.Element:
    return ET.fromstring(markup)


def bars(chart: ET.Element) -> list[ET.Element]:
    return [rect for rect in chart.iterfind("svg:rect", NS) if "bar" in rect.get("class", "").split()]


def texts(chart: ET.Element) -> list[str]:
    return [text.text or "" for text in chart.iterfind("svg:text", NS)]


def test_bars_are_grouped_per_category_with_heights_proportional_to_their_values() -> None:
    chart = parsed(grouped_bars(["win_back", "churn_risk"], [("this week", [4, 1]), ("last week", [2, 0])],
                                label=LABEL))

    assert chart.get("role") == "img" and chart.get("aria-label") == LABEL
    heights = {(rect.get("class"), rect.get("data-value")): float(rect.get("height") or 0) for rect in bars(chart)}
    assert len(heights) == 4
    four, two, one = heights[("bar series-0", "4")], heights[("bar series-1", "2")], heights[("bar series-0", "1")]
    assert four == 2 * two == 4 * one > 0 and heights[("bar series-1", "0")] == 0
    assert {"this week", "last week", "win_back", "churn_risk", "4", "2", "1", "0"} <= set(texts(chart))


def test_category_and_series_names_are_escaped() -> None:
    markup = grouped_bars(['<script>alert("x")</script> & co'], [("this <b>", [3])], label='a "quoted" label')

    assert "<script>" not in markup and "<b>" not in markup
    chart = parsed(markup)
    assert '<script>alert("x")</script> & co' in texts(chart) and "this <b>" in texts(chart)
    assert chart.get("aria-label") == 'a "quoted" label'


def test_a_period_without_outcomes_draws_a_chart_saying_so() -> None:
    for categories, series in (([], [("this week", []), ("last week", [])]), (["win_back"], [("this week", [0])])):
        chart = parsed(grouped_bars(categories, series, label=LABEL))

        assert all(float(rect.get("height") or 0) == 0 for rect in bars(chart))
        assert "no outcomes yet" in texts(chart)


def test_the_chart_carries_no_inline_style() -> None:
    markup = grouped_bars(["win_back"], [("this week", [2]), ("last week", [5])], label=LABEL)

    assert "style=" not in markup and "<script" not in markup
