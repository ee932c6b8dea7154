"""Deterministic SVG charts written from Jinja templates: data in, SVG text out.

No plotting library: each chart is a template under templates/charts/ filled with positions
computed here, so the same data gives the same bytes, a chart renders in well under a
millisecond, and every label is escaped text that a reader can select, search and print.
"""

from generator.charts.bars import bar_chart, strip_chart
from generator.charts.data import DECISIONS, Bar, Decision, Goal, Interval, Limit, Point, Series, Step, SweepPoint
from generator.charts.waterfall import waterfall
from generator.charts.xy import frontier, sweep_chart

__all__ = [
    "DECISIONS",
    "Bar",
    "Decision",
    "Goal",
    "Interval",
    "Limit",
    "Point",
    "Series",
    "Step",
    "SweepPoint",
    "bar_chart",
    "frontier",
    "strip_chart",
    "sweep_chart",
    "waterfall",
]
