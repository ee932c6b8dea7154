"""The campaign's frontier: every configuration on one chart, and its table for those who cannot see it.

Read from `analysis.frontier` (`generator.analysis.frontier`): the chart draws each
configuration's points in load order, the SLO's limit on the same statistic as a line, and each
capacity under the SLO as a ringed point; every point's <title> names the configuration, the
load, n and the decision. The table holds the same numbers, row for row.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

from generator import charts
from generator.analysis.campaign import Analysis
from generator.analysis.frontier import CampaignFrontier, Configuration, FrontierPoint
from generator.model.quantity import fmt_number
from generator.views.notes import regressions_text
from generator.views.paths import ChartLink, relative, summary_plot_paths

TITLE = "Every configuration: throughput against tokens/s per user"


def frontier_path(analysis: Analysis) -> str:
    return summary_plot_paths(analysis.project)[1]


def _y_label(f: CampaignFrontier) -> str:
    if f.per_gpu:
        return "output throughput per GPU (tokens/s)"
    return "output throughput (tokens/s; GPU count not recorded)"


def _name(c: Configuration, f: CampaignFrontier) -> str:
    workloads = {x.workload for x in f.configurations}
    name = c.label if len(workloads) == 1 else f"{c.label}, {c.workload}"
    # Measured at one load where others were measured at other loads: a point, not a curve.
    return f"{name} ({c.points[0].load_text} only)" if f.mixed_loads and len(c.points) == 1 else name


def _decision(c: Configuration, p: FrontierPoint) -> str:
    if p.measured_by is not None:
        role = "the baseline" if c.kind == "baseline" else "the configuration"
        return f"{role}, measured in {p.measured_by}'s blocks as its baseline"
    if c.kind == "baseline":
        return "the baseline"
    return p.decision or "not compared at this load"


def _n_text(p: FrontierPoint) -> str:
    return f"n={p.n}" if p.n is not None else "n not stated by the source"


Worse = dict[tuple[str, float], str]


def _worse(analysis: Analysis) -> Worse:
    """(slug, load) -> "worse elsewhere: ..." for each load where a record's other metrics got
    worse (`RecordAnalysis.regressions`), so its point on the frontier says so beside its word."""
    vocabulary = analysis.project.campaign.vocabulary()
    out: Worse = {}
    for ra in analysis.records:
        for load in dict.fromkeys(r.concurrency for r in ra.regressions if r.concurrency is not None):
            found = tuple(r for r in ra.regressions if r.concurrency == load)
            text = regressions_text(found, vocabulary)
            if text is not None:
                out[(ra.file.slug, float(load))] = text
    return out


def _point_decision(c: Configuration, p: FrontierPoint, worse: Worse) -> str:
    text = _decision(c, p)
    found = worse.get((c.slug, p.load)) if c.slug is not None and p.measured_by is None else None
    return f"{text}; {found}" if found else text


def _legend_name(c: Configuration, f: CampaignFrontier, worse: Worse) -> str:
    """The name in the legend, with "worse elsewhere" when any of its points got worse on another
    metric: a word beside the colour, as the home page says it."""
    flagged = c.kind != "baseline" and any((c.slug, p.load) in worse for p in c.points if p.measured_by is None)
    return f"{_name(c, f)}, worse elsewhere" if flagged else _name(c, f)


def _note(c: Configuration, p: FrontierPoint, f: CampaignFrontier, worse: Worse) -> str:
    unit = "tok/s per GPU" if f.per_gpu else "tok/s"
    return (
        f"{_name(c, f)}, {p.load_text}: {fmt_number(p.throughput)} {unit} at "
        f"{fmt_number(p.interactivity)} tok/s per user, {_n_text(p)}, decision against its baseline: "
        f"{_point_decision(c, p, worse)}"
    )


def frontier_svg(analysis: Analysis) -> str | None:
    """The chart, or None when the analysis has no frontier."""
    f = analysis.frontier
    if f is None:
        return None
    worse = _worse(analysis)
    series = [
        charts.Series(
            _legend_name(c, f, worse),
            tuple(charts.Point(p.interactivity, p.throughput, p.load_text, _note(c, p, f, worse)) for p in c.points),
        )
        for c in f.configurations
    ]
    limits = []
    if f.slo is not None:
        metric, limit, x = f.slo
        limits.append(charts.Limit(f"SLO {metric} <= {fmt_number(limit)} ms", x, "x"))
    unit = "tok/s per GPU" if f.per_gpu else "tok/s"
    marks = [
        charts.Mark(
            c.capacity[0], c.capacity[1], f"{_name(c, f)}: capacity under the SLO {fmt_number(c.capacity[1])} {unit}"
        )
        for c in f.configurations
        if c.capacity is not None
    ]
    return charts.frontier(
        "campaign-frontier", TITLE, series, limits=limits, marks=marks, x_label=f.axis, y_label=_y_label(f)
    )


@dataclass(frozen=True)
class FrontierRow:
    """A point of the frontier in its table: the configuration, the load and what was read there."""

    configuration: str
    load: str
    throughput: str
    interactivity: str
    n: str
    decision: str


@dataclass(frozen=True)
class FrontierView:
    """The campaign frontier as the home page and the summary show it (`frontier_view`)."""

    chart: ChartLink | None
    axis: str
    unit: str
    gpus: int | None
    slo: str | None
    rows: list[FrontierRow]
    capacities: list[str]
    left_out: int
    # No result records a per-token latency: each user's rate is throughput / concurrency.
    per_user: bool
    # The stack's label, when the stack is one of the configurations.
    stack: str | None
    # The loads differ between configurations: which loads, and the ones nothing compares with.
    loads: list[str]
    alone: list[str]


def frontier_view(analysis: Analysis, charts_drawn: dict[str, str], page_dir: PurePosixPath) -> FrontierView | None:
    """What the home page and the summary show: the chart, what it is read from, and its table."""
    f = analysis.frontier
    if f is None:
        return None
    path = frontier_path(analysis)
    chart = (
        ChartLink(src=relative(PurePosixPath(path), page_dir), alt=charts_drawn[path]) if path in charts_drawn else None
    )
    unit = "tok/s per GPU" if f.per_gpu else "tok/s"
    worse = _worse(analysis)
    rows = [
        FrontierRow(
            configuration=_name(c, f),
            load=p.load_text,
            throughput=fmt_number(p.throughput),
            interactivity=fmt_number(p.interactivity),
            n=str(p.n) if p.n is not None else "not stated",
            decision=_point_decision(c, p, worse),
        )
        for c in f.configurations
        for p in c.points
    ]
    capacities = [
        f"{_name(c, f)}: {fmt_number(c.capacity[1])} {unit} at {fmt_number(c.capacity[0])} tok/s per user"
        for c in f.configurations
        if c.capacity is not None
    ]
    slo = None
    if f.slo is not None:
        metric, limit, x = f.slo
        slo = f"{metric} <= {fmt_number(limit)} ms, {fmt_number(x)} tokens/s per user"
    return FrontierView(
        chart=chart,
        axis=f.axis,
        unit=unit,
        gpus=f.gpus,
        slo=slo,
        rows=rows,
        capacities=capacities,
        left_out=f.left_out,
        per_user=f.statistic == "throughput / concurrency",
        stack=next((c.label.removesuffix(" (the stack)") for c in f.configurations if c.kind == "stack"), None),
        loads=list(dict.fromkeys(p.load_text for c in f.configurations for p in c.points)) if f.mixed_loads else [],
        alone=[_name(c, f) for c in f.configurations if c.label in f.alone],
    )
