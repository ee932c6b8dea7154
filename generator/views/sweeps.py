"""The throughput-interactivity frontier of each load sweep, as an SVG chart, and its page view.

Per sweep of a record: output throughput per GPU against tokens/s per user (1000 / TPOT) for
the record and its baseline, each point labelled by its load, each TPOT limit of the SLO drawn
as the interactivity it allows (1000 / limit), and the capacity under the SLO as a ringed point,
all on the TPOT statistic the SLO limits (`capacity.frontier`). A chart is drawn when the record has at
least two loads with both numbers; without the campaign's GPU count the y axis is the whole
server's throughput, and says so. Drawn with `generator.charts` (deterministic SVG text).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from posixpath import join as pjoin
from typing import Any

from generator import charts
from generator.analysis import capacity as cap
from generator.analysis.campaign import Analysis
from generator.analysis.capacity import FrontierPoint
from generator.analysis.sweeps import Side, Sweep
from generator.base.generated import svg_header
from generator.base.incremental import BuildCache, memo
from generator.charts.svg import chart_width
from generator.model.quantity import fmt_number, fmt_percent
from generator.project.load import Project, RecordFile
from generator.views.paths import ChartFile, ChartLink, relative, series_dir

XML = '<?xml version="1.0" encoding="utf-8" standalone="no"?>'


def frontier_path(project: Project, rec: RecordFile, index: int, count: int) -> str:
    name = f"{rec.slug}-frontier.svg" if count == 1 else f"{rec.slug}-frontier-{index + 1}.svg"
    return pjoin(project.campaign.docs_dir, "plots", name)


def latency_path(project: Project, rec: RecordFile, index: int, count: int, metric: str) -> str:
    name = f"{rec.slug}-latency-{metric}" + ("" if count == 1 else f"-{index + 1}")
    return pjoin(project.campaign.docs_dir, "plots", name.replace("_", "-").replace(".", "-") + ".svg")


def frontier_charts(analysis: Analysis, build_cache: BuildCache | None = None) -> list[ChartFile]:
    """Every frontier the data allows, and each SLO latency against the load, in series order.

    Each is drawn again only when what it draws changed (`_drawn`), as a record's chart is.
    """
    project = analysis.project
    out = []
    for entry in analysis.records:
        for i, sweep in enumerate(entry.sweeps):
            path = frontier_path(project, entry.file, i, len(entry.sweeps))
            chart = _chart(project, entry.file, sweep, path, build_cache)
            if chart is not None:
                out.append(chart)
            for metric in sorted(project.campaign.slo):
                path = latency_path(project, entry.file, i, len(entry.sweeps), metric)
                chart = _latency_chart(project, entry.file, sweep, metric, path, build_cache)
                if chart is not None:
                    out.append(chart)
    return out


def _drawn(build_cache: BuildCache | None, path: str, draw: Callable[..., str], *args: Any, **kwargs: Any) -> ChartFile:
    """`draw(*args, **kwargs)` as the chart at `path`, from the build cache while the arguments,
    everything the drawing reads, are the same (their repr: plain frozen values)."""

    def make() -> ChartFile:
        svg = draw(*args, **kwargs)
        return ChartFile(path, charts.description(svg), f"{XML}\n{svg_header()}\n{svg.rstrip()}\n")

    return memo(build_cache, "chart", (chart_width(None), path, draw.__name__, args, sorted(kwargs.items())), make)


def _latency_series(label: str, side: Side, metric: str) -> charts.Series:
    return charts.Series(
        label, tuple(charts.Point(p.load, p.latencies[metric]) for p in side.points if metric in p.latencies)
    )


def _latency_chart(
    project: Project, rec: RecordFile, sweep: Sweep, metric: str, path: str, build_cache: BuildCache | None = None
) -> ChartFile | None:
    """One SLO latency against the load, both sides, the limit drawn and capacity marked where it is."""
    series = [_latency_series("this record", sweep.record, metric)]
    if len(series[0].points) < 2:
        return None
    baseline = _latency_series("baseline", sweep.baseline, metric)
    if baseline.points:
        series.append(baseline)
    limit = project.campaign.slo[metric]
    limits = [charts.Limit(f"SLO {metric} <= {fmt_number(limit)} ms", limit, "y")]
    for who, side in (("this record", sweep.record), ("baseline", sweep.baseline)):
        c = side.capacity
        if c is not None and c.kind == "interpolated" and c.limit_load is not None and metric in c.limiting:
            limits.append(charts.Limit(f"{who} reaches it at {sweep.load_text(c.limit_load)}", c.limit_load, "x"))
    vocabulary = project.campaign.vocabulary()
    found = vocabulary.lookup(metric)
    label = f"{found.label} ({found.unit})" if found else metric
    # With repetitions a load's latency is the mean of its repetitions' values (the estimand).
    repeated = any(p.repetitions for side in (sweep.record, sweep.baseline) for p in side.points)
    y_label = f"{label}, mean of the repetitions" if repeated else label
    return _drawn(
        build_cache,
        path,
        charts.latency_chart,
        PurePosixPath(path).stem,
        f"{label} against {sweep.load_kind}, {rec.slug}",
        series,
        limits=limits,
        x_label=sweep.load_kind if sweep.load_kind == "concurrency" else "request rate (req/s)",
        y_label=y_label,
    )


def _series(label: str, points: Sequence[FrontierPoint], sweep: Sweep, per_gpu: bool) -> charts.Series:
    drawn = []
    for p in points:
        y = p.throughput_per_gpu if per_gpu else p.throughput
        if p.interactivity is not None and y is not None:
            drawn.append(charts.Point(p.interactivity, y, sweep.load_text(p.load)))
    return charts.Series(label, tuple(drawn))


def _chart(
    project: Project, rec: RecordFile, sweep: Sweep, path: str, build_cache: BuildCache | None = None
) -> ChartFile | None:
    per_gpu = project.campaign.hardware.count is not None
    series = [_series("this record", sweep.record.frontier, sweep, per_gpu)]
    if len(series[0].points) < 2:
        return None
    baseline = _series("baseline", sweep.baseline.frontier, sweep, per_gpu)
    if baseline.points:
        series.append(baseline)
    limits = tuple(charts.Limit(f"SLO {name} {fmt_number(ms)} ms", x, "x") for name, ms, x in sweep.slo_lines)
    gpus = project.campaign.hardware.count
    marks: list[charts.Mark] = []
    c, at, at_per_gpu = sweep.record.capacity, sweep.record.capacity_at, sweep.record.capacity_per_gpu
    if c is not None and at is not None and c.throughput is not None and c.load is not None:
        # The capacity on the chart's own axes (the points' statistic), per GPU when the axis is.
        where = sweep.load_text(c.load)
        if per_gpu and gpus is not None and gpus > 1 and at_per_gpu is not None:
            value = at_per_gpu
            total = fmt_number(c.throughput)
            text = f"capacity under the SLO: {fmt_number(value)} tok/s per GPU ({total} in all, {where})"
        else:
            value, text = at[1], f"capacity under the SLO: {fmt_number(c.throughput)} tok/s ({where})"
        marks.append(charts.Mark(at[0], value, text))
    y_label = (
        "output throughput per GPU (tokens/s)" if per_gpu else "output throughput (tokens/s; GPU count not recorded)"
    )
    return _drawn(
        build_cache,
        path,
        charts.frontier,
        PurePosixPath(path).stem,
        # Short enough for the chart's width; the page's heading names the workload.
        f"Frontier of {rec.slug}, {sweep.load_kind} sweep",
        series,
        limits=limits,
        marks=marks,
        x_label=_x_label(sweep),
        y_label=y_label,
    )


def _x_label(sweep: Sweep) -> str:
    stats = {p.tpot_metric for p in sweep.record.frontier if p.tpot_metric}
    if len(stats) != 1:
        return "interactivity (tokens/s per user)"
    mean = ", mean of the repetitions" if any(p.repetitions for p in sweep.record.points) else ""
    return f"tokens/s per user (1000 / {stats.pop()}{mean})"


@dataclass(frozen=True)
class SweepView:
    """A load sweep on its record's page: its loads, capacity under the SLO in words, and its charts."""

    title: str
    loads: str
    capacity: str | None
    baseline_capacity: str | None
    change: str | None
    chart: ChartLink | None
    latency: list[ChartLink]


def sweep_views(analysis: Analysis, rec: RecordFile, drawn: Mapping[str, str]) -> list[SweepView]:
    """The record page's view of its sweeps: capacity in words and the frontier, where there is something to show."""
    project = analysis.project
    found = analysis.record(rec).sweeps
    here = series_dir(project)
    views = []
    for i, sweep in enumerate(found):
        path = frontier_path(project, rec, i, len(found))
        chart = ChartLink(src=relative(PurePosixPath(path), here), alt=drawn[path]) if path in drawn else None
        latency = [
            ChartLink(src=relative(PurePosixPath(p), here), alt=drawn[p])
            for p in (latency_path(project, rec, i, len(found), m) for m in sorted(project.campaign.slo))
            if p in drawn
        ]
        if chart is None and not latency and not project.campaign.slo:
            continue
        record, baseline = sweep.record.capacity, sweep.baseline.capacity
        views.append(
            SweepView(
                title=f"{sweep.load_kind.capitalize()} sweep: {sweep.workload}",
                loads=", ".join(
                    f"{sweep.load_text(load)} ({label})" for load, label in zip(sweep.loads, sweep.labels, strict=True)
                ),
                capacity=None if record is None else capacity_text(record, sweep),
                baseline_capacity=None if baseline is None else capacity_text(baseline, sweep),
                change=capacity_change_text(sweep),
                chart=chart,
                latency=latency,
            )
        )
    return views


def slo_text(project: Project) -> str:
    return ", ".join(f"{name} <= {fmt_number(limit)} ms" for name, limit in sorted(project.campaign.slo.items()))


# --- words ------------------------------------------------------------------------------------------


def capacity_text(c: cap.Capacity, sweep: Sweep) -> str:
    """A capacity in words; a number only where one was measured or interpolated between measured loads."""
    if c.kind == "interpolated":
        assert c.throughput is not None and c.load is not None and c.segment is not None
        a, b = (sweep.load_text(x) for x in c.segment)
        reach = " and ".join(c.limiting)
        text = f"{fmt_number(c.throughput)} tok/s output throughput"
        if c.throughput == c.limit_throughput:
            text += f" at {sweep.load_text(c.load)}, interpolated where {reach} reaches its limit between {a} and {b}"
        else:
            text += f", measured at {sweep.load_text(c.load)}; {reach} reaches its limit between {a} and {b}"
        if c.meets_again:
            text += f" (meets the SLO again at {', '.join(sweep.load_text(x) for x in c.meets_again)}: not monotone)"
        if c.grid_warning:
            text += f". Warning: {c.grid_warning}"
        return text
    if c.kind == "meets-all":
        assert c.lower_bound is not None
        return (
            f"meets the SLO at every measured load, up to {sweep.load_text(sweep.loads[-1])}: "
            f"at least {fmt_number(c.lower_bound)} tok/s, not measured beyond"
        )
    if c.kind == "breaks-all":
        return "breaks the SLO at every measured load"
    if c.kind == "breaks-lowest":
        again = ", ".join(sweep.load_text(x) for x in c.meets_again)
        return f"breaks the SLO at the lowest measured load but meets it at {again}: not monotone, no capacity"
    return f"not known: {c.reason}"


def capacity_change_text(sweep: Sweep) -> str | None:
    """The capacity change in words, with the interval where repetitions give one."""
    change, comp, point = sweep.change, sweep.comparison, sweep.change_percent
    if change is None:
        return None
    if point is None:
        return "no change can be given (the record or the baseline has no capacity as a number)"
    text = f"{fmt_percent(point)} capacity under the SLO"
    if change.bound == "at least":
        text = f"at least {text} (the record meets the SLO at every measured load)"
    elif change.bound == "at most":
        text = f"at most {text} (the baseline meets the SLO at every measured load)"
    if comp is not None and comp.ci_low_percent is not None and comp.ci_high_percent is not None:
        level = round((1 - comp.alpha) * 100)
        text += (
            f"; {comp.decision}, {level}% interval {fmt_percent(comp.ci_low_percent)} to "
            f"{fmt_percent(comp.ci_high_percent)} (n={comp.n} vs {comp.baseline_n}; the capacity of the "
            "mean curve, each load's mean throughput and mean latencies, by the delta method)"
        )
    if sweep.unequal_repetitions:
        text += f". Warning: {sweep.unequal_repetitions}"
    return text


def capacity_cell(found: Sequence[Sweep]) -> str:
    """A record's capacity under the SLO in one cell: each sweep's capacity and change."""
    if not found:
        return "no load sweep"
    parts = []
    for s in found:
        c = s.record.capacity
        if c is None:
            continue
        if c.kind == "interpolated" and c.throughput is not None:
            text = f"{fmt_number(c.throughput)} tok/s"
        elif c.kind == "meets-all" and c.lower_bound is not None:
            text = f"at least {fmt_number(c.lower_bound)} tok/s, meets at every load"
        elif c.kind == "breaks-all":
            text = "breaks at every load"
        else:
            text = "not known"
        if s.change is not None and s.change_percent is not None:
            bound = f"{s.change.bound} " if s.change.bound else ""
            decided = f", {s.comparison.decision}" if s.comparison is not None else ""
            text += f" ({bound}{fmt_percent(s.change_percent)} vs baseline{decided})"
        if s.unequal_repetitions:
            text += " (repetition counts differ between the sides)"
        parts.append(f"{s.workload}: {text}" if len(found) > 1 else text)
    return "; ".join(parts)


# --- the export's view of a sweep ----------------------------------------------------------------


def _capacity_data(c: cap.Capacity | None) -> dict[str, Any] | None:
    if c is None:
        return None
    return {
        "kind": c.kind,
        "reason": c.reason,
        "throughput": c.throughput,
        "load": c.load,
        "limit_throughput": c.limit_throughput,
        "limit_load": c.limit_load,
        "limiting": list(c.limiting),
        "segment": None if c.segment is None else list(c.segment),
        "lower_bound": c.lower_bound,
        "meets_again": list(c.meets_again),
        "repetitions": c.repetitions,
        "repetitions_note": c.repetitions_note,
        "grid_warning": c.grid_warning,
    }


def _frontier_data(points: Sequence[cap.FrontierPoint]) -> list[dict[str, Any]]:
    return [dataclasses.asdict(p) for p in points]


def export_data(s: Sweep) -> dict[str, Any]:
    """One sweep for `export`: every number the pages show, and how each was decided."""
    comp = None if s.comparison is None else dataclasses.asdict(s.comparison)
    change = None
    if s.change is not None:
        change = {
            "percent": s.change_percent,
            "bound": s.change.bound,
            "words": capacity_change_text(s),
            "comparison": comp,
        }
    return {
        "load_kind": s.load_kind,
        "workload": s.workload,
        "loads": list(s.loads),
        "labels": list(s.labels),
        "capacity": _capacity_data(s.record.capacity),
        "baseline_capacity": _capacity_data(s.baseline.capacity),
        "change": change,
        "frontier": _frontier_data(s.record.frontier),
        "baseline_frontier": _frontier_data(s.baseline.frontier),
    }
