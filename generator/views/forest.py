"""A record's forest chart: every metric of its primary result with its interval on one axis.

As GrowthBook and Eppo show an experiment: each metric a row, its change oriented so that + is
better (a latency that fell is a positive bar) with its interval around zero, the primary
metric first, then the guardrails (a broken one flagged in words, "guardrail broken", beside
its colour), then the other metrics. Only what the analysis compared is drawn; every number is
a `Comparison`'s own (`gain_percent` and its bounds), so nothing is computed here.
"""

from __future__ import annotations

import functools
from pathlib import PurePosixPath

from generator import charts
from generator.analysis.campaign import Analysis, RecordAnalysis
from generator.base.incremental import BuildCache, memo
from generator.charts.svg import chart_width
from generator.model.quantity import fmt_number
from generator.project.load import Project, RecordFile
from generator.views.paths import ChartFile, chart_file


def forest_path(project: Project, rec: RecordFile) -> str:
    return str(PurePosixPath(project.campaign.docs_dir) / "plots" / f"{rec.slug}-forest.svg")


def _bars(analysis: Analysis, ra: RecordAnalysis) -> list[charts.Bar]:
    p = ra.primary
    if p is None or p.kind != "metric" or not 0 <= p.index < len(ra.headline):
        return []
    resolved = ra.headline[p.index]
    vocabulary = analysis.project.campaign.vocabulary()
    # A guardrail is read on each result; this chart's row is the one read on the primary's result.
    guards = {g.metric: g for g in p.guardrails if g.result == resolved.result.label}
    names = [p.metric] * (p.metric in resolved.comparisons)
    names += [n for n in resolved.comparisons if n in guards and n != p.metric]
    names += [n for n in resolved.comparisons if n not in guards and n != p.metric]
    bars: list[charts.Bar] = []
    for name in names:
        c = resolved.comparisons[name]
        if c is None or c.gain_percent is None:
            continue
        metric = vocabulary.lookup(name)
        label = metric.label if metric else name
        g = guards.get(name)
        if name == p.metric:
            role = "primary"
        elif g is not None:
            role = f"guardrail, {fmt_number(g.margin)}% margin"
        else:
            role = "secondary"
        low, high = c.gain_low_percent, c.gain_high_percent
        interval = (low, high) if low is not None and high is not None else None
        flag = "guardrail broken" if g is not None and g.held is False else None
        bars.append(charts.Bar(f"{label} ({role})", c.gain_percent, interval, decision=c.decision, flag=flag))
    return bars


def forest_charts(analysis: Analysis, build_cache: BuildCache | None = None) -> list[ChartFile]:
    """The forest chart of every record whose primary result compares two metrics or more, each
    from the build cache while what it draws is the same."""
    out = []
    for ra in analysis.records:
        bars = _bars(analysis, ra)
        if len(bars) < 2 or ra.primary is None:
            continue
        title = f"{ra.file.record.title}: every metric, {ra.primary.label}"
        parts = (forest_path(analysis.project, ra.file), ra.file.slug, title, tuple(bars))
        out.append(memo(build_cache, "chart", (chart_width(None), *parts), functools.partial(_draw, *parts)))
    return out


def _draw(path: str, slug: str, title: str, bars: tuple[charts.Bar, ...]) -> ChartFile:
    svg = charts.bar_chart(
        f"forest-{slug}",
        title,
        list(bars),
        axis_label="change, + is better (%)",
        keep=len(bars),
        given_order=True,
        # The metric's name and its role (primary, guardrail and margin) are the row: kept whole.
        label_share=0.45,
    )
    return chart_file(path, svg)
