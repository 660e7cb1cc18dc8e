"""Charts drawn on the server as SVG markup: no script and no inline style (the CSP forbids both), colours as
presentation attributes and classes, every text escaped by ElementTree."""

from __future__ import annotations

from collections.abc import Sequence
from xml.etree import ElementTree as ET

WIDTH, HEIGHT = 640, 300
TOP, BOTTOM, LEFT, RIGHT = 44, 56, 16, 16
"""Room above the bars for the legend, below them for the category labels."""
CHAR_WIDTH = 7.5
"""About how wide a character of the 13px legend is, to set the next legend entry after the text."""
FILLS = ("#1f6feb", "#9aa4ae", "#1a7f37", "#9a6700")
"""One colour per series, in order (this period first, the one before second)."""


def _number(value: float) -> str:
    return f"{value:g}" if value != int(value) else str(int(value))


def _text(parent: ET.Element, x: float, y: float, text: str, css: str, anchor: str = "middle") -> None:
    ET.SubElement(parent, "text", {"x": f"{x:.1f}", "y": f"{y:.1f}", "text-anchor": anchor, "class": css}).text = text


def grouped_bars(categories: Sequence[str], series: Sequence[tuple[str, Sequence[float]]], *, label: str,
                 empty: str = "no outcomes yet") -> str:
    """Bars grouped per category, one bar per series with its value above it and a legend naming the series; with
    nothing above zero, the frame and the `empty` sentence. `label` is what a screen reader says of the chart."""
    svg = ET.Element("svg", {"class": "chart", "role": "img", "aria-label": label, "viewBox": f"0 0 {WIDTH} {HEIGHT}",
                             "xmlns": "http://www.w3.org/2000/svg"})
    x = LEFT
    for index, (name, _) in enumerate(series):
        ET.SubElement(svg, "rect", {"x": str(x), "y": "10", "width": "14", "height": "14", "class": f"series-{index}",
                                    "fill": FILLS[index % len(FILLS)]})
        _text(svg, x + 20, 22, name, "legend", anchor="start")
        x += 20 + len(name) * CHAR_WIDTH + 24
    base = HEIGHT - BOTTOM
    ET.SubElement(svg, "line", {"x1": str(LEFT), "y1": str(base), "x2": str(WIDTH - RIGHT), "y2": str(base),
                                "stroke": "#5b6570", "class": "axis"})
    top = max((value for _, values in series for value in values), default=0)
    if not categories or top <= 0:
        _text(svg, WIDTH / 2, (TOP + base) / 2, empty, "empty")
        return ET.tostring(svg, encoding="unicode")
    group_width = (WIDTH - LEFT - RIGHT) / len(categories)
    bar_width = min(48.0, group_width * 0.8 / len(series))
    for position, category in enumerate(categories):
        start = LEFT + position * group_width + (group_width - bar_width * len(series)) / 2
        for index, (_, values) in enumerate(series):
            value = values[position]
            height = (base - TOP - 16) * value / top
            x = start + index * bar_width
            ET.SubElement(svg, "rect", {"x": f"{x:.1f}", "y": f"{base - height:.1f}", "width": f"{bar_width - 4:.1f}",
                                        "height": f"{height:.1f}", "class": f"bar series-{index}",
                                        "fill": FILLS[index % len(FILLS)], "data-value": _number(value)})
            _text(svg, x + (bar_width - 4) / 2, base - height - 4, _number(value), "value")
        _text(svg, LEFT + (position + 0.5) * group_width, base + 20, category, "category")
    return ET.tostring(svg, encoding="unicode")
