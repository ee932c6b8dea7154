"""The road's current bar carries its interval (issue 49), as the goal table prints it."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from generator import charts
from generator.charts.data import Step

SVG = "{http://www.w3.org/2000/svg}"


def _whiskers(svg: str) -> int:
    return sum(1 for p in ET.fromstring(svg).iter(f"{SVG}path") if "whisker" in (p.get("class") or ""))


def test_the_current_level_is_drawn_with_its_interval() -> None:
    steps = [Step("a", 10.0, 110.0, (5.0, 15.0))]
    bare = charts.waterfall("w", "t", 100.0, steps, axis_label="x")
    drawn = charts.waterfall("w", "t", 100.0, steps, axis_label="x", current_interval=(95.0, 125.0))
    # One more whisker: the current column's, reaching the interval's ends on the axis.
    assert _whiskers(drawn) == _whiskers(bare) + 1
    root = ET.fromstring(drawn)
    last = [p.get("d") or "" for p in root.iter(f"{SVG}path") if "whisker" in (p.get("class") or "")][-1]
    top = float(last.split("V")[0].split(" ")[1])  # "M{x} {top}V{bottom}...": y grows downwards
    (value,) = [t for t in root.iter(f"{SVG}text") if t.text == "110"][-1:]
    # The current level's value is written above its whisker, not across it.
    assert float(value.get("y") or 0) < top
