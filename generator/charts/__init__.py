"""Deterministic SVG charts written from Jinja templates: data in, SVG text out.

No plotting library: each chart is a template under templates/charts/ filled with positions
computed here, so the same data gives the same bytes, a record chart renders in about half a
millisecond, and every label is escaped text that a reader can select, search and print.

Colours: two palettes in each SVG's style (templates/charts/_style.css.j2), every colour at
least 4.5:1 on its background: light by default, dark when the system prefers it (a chart
opened on its own) or when mkdocs-material's toggle says slate (the site inlines each chart in
its page, so the toggle reaches it). The background is transparent; fills also differ by
hatching and dashes, and decisions are written beside their values, so print and greyscale
keep every distinction.
"""

import xml.etree.ElementTree as ET

from generator.charts.bars import bar_chart, strip_chart
from generator.charts.data import DECISIONS, Bar, Decision, Goal, Interval, Limit, Mark, Point, Series, Step, SweepPoint
from generator.charts.svg import NARROW, drawn_at
from generator.charts.waterfall import waterfall
from generator.charts.xy import frontier, latency_chart, sweep_chart


def description(svg: str) -> str:
    """A chart's <desc>: the text that states its data, for the page's alt text."""
    desc = ET.fromstring(svg).find("{http://www.w3.org/2000/svg}desc")
    return (desc.text or "") if desc is not None else ""


__all__ = [
    "DECISIONS",
    "NARROW",
    "Bar",
    "Decision",
    "Goal",
    "Interval",
    "Limit",
    "Mark",
    "Point",
    "Series",
    "Step",
    "SweepPoint",
    "bar_chart",
    "description",
    "drawn_at",
    "frontier",
    "latency_chart",
    "strip_chart",
    "sweep_chart",
    "waterfall",
]
