"""The charts of a build: per record against its load, and two summary charts, as SVG files.

Drawn by `generator.charts` (SVG written from Jinja templates, no plotting library): a record
chart costs about a millisecond, so a clean build of thousands of records stays in seconds,
and the same data gives the same bytes on every machine.

Charts are drawn only where the data allows: a record needs results at two or more
concurrencies (or request rates) with a shared throughput metric; the summary needs at least
one measured gain, or a result with a load and a throughput for the frontier.

What each shows:
- a record: its throughput against a latency, one point per load, the record against the
  baseline (the serving trade-off a change moves, with each point named by its load "c=8");
  without a latency, throughput against the load itself;
- the summary: each record's change as a bar, in the summary table's (ranked) order, the first
  and last drawn and the rest counted in one row ("... and 980 more"), since no reader takes in a thousand bars;
- every configuration (baseline, records, retained variants, the stack) on one frontier of
  throughput per GPU against tokens/s per user, one line per configuration and workload (a
  line never joins runs of two configurations, workloads or models).

Every chart carries a title and a description that states its numbers; the description is
also the page's alt text.
"""

from __future__ import annotations

import functools
from typing import Any

from generator import charts
from generator.analysis.campaign import Analysis, Primary, RecordAnalysis, ResolvedResult
from generator.base.incremental import BuildCache, memo
from generator.charts.svg import chart_width
from generator.model import metrics
from generator.model.quantity import fmt_number
from generator.project.load import Project, RecordFile
from generator.views.paths import ChartFile, chart_file, record_plot_path, summary_plot_paths

THROUGHPUTS = (
    "output_throughput",
    "decode_throughput",
    "overall_throughput",
    "total_throughput",
    "last_gen_throughput",
    "throughput",
    "request_throughput",
)
LATENCIES = (
    "tpot_median",
    "itl_median",
    "ttft_median",
    "e2e_latency_median",
    "tpot_mean",
    "itl_mean",
    "ttft_mean",
    "e2e_latency_mean",
    "decode_latency",
    "total_latency",
    "prefill_latency",
)
# The summary chart's bars beyond this many at each end are counted, not drawn.
KEEP = 10


# --- data -----------------------------------------------------------------------------------------


# A resolved result with its x (concurrency or request rate) for a record's chart.
Row = tuple[ResolvedResult, dict[str, float], dict[str, Any]]


def _series_name(result: Any) -> str:
    w = result.workload
    if w is None:
        return ""
    parts = [w.dataset or ""]
    if w.input_len is not None or w.output_len is not None:
        parts.append(
            f"{w.input_len if w.input_len is not None else '?'}/{w.output_len if w.output_len is not None else '?'}"
        )
    return " ".join(p for p in parts if p)


def record_points(analysis: Analysis, rec: RecordFile) -> tuple[str, list[Row]]:
    """("concurrency" or "request rate", resolved results with an x), for a record's chart."""
    resolved: list[ResolvedResult] = list(analysis.record(rec).results)
    by_conc = [(r, r.result.concurrency) for r in resolved if r.result.concurrency is not None]
    xs = {x for _r, x in by_conc}
    axis = "concurrency"
    chosen: list[tuple[ResolvedResult, float]] = [(r, float(x)) for r, x in by_conc]
    if len(xs) < 2:
        by_rate = [(r, r.result.request_rate) for r in resolved if isinstance(r.result.request_rate, int | float)]
        if len({x for _r, x in by_rate}) >= 2:
            axis, chosen = "request rate", [(r, float(x)) for r, x in by_rate]
    return axis, [(r, {"x": x}, {}) for r, x in chosen]


def _pick(metric_names: tuple[str, ...], rows: list[Row]) -> str | None:
    for name in metric_names:
        xs = {extra["x"] for r, extra, _ in rows if name in r.metrics}
        if len(xs) >= 2:
            return name
    return None


def _load(axis: str, x: float) -> str:
    return f"{'c' if axis == 'concurrency' else 'rate'}={fmt_number(x)}"


def _label(metric_name: str) -> str:
    metric = metrics.lookup(metric_name)
    assert metric is not None
    return f"{metric.label} ({metric.unit})"


def record_series(axis: str, rows: list[Row], throughput: str, latency: str | None) -> list[charts.Series]:
    """This record and the baseline, per workload: (latency, throughput) per load, or (load, throughput)."""
    names = sorted({_series_name(r.result) for r, _e, _ in rows})
    # A line per workload only where a workload was measured at two loads or more; otherwise
    # lines of one point each would draw nothing to follow, so the points share one line.
    split = any(len({e["x"] for r, e, _ in rows if _series_name(r.result) == n}) >= 2 for n in names)
    out: list[charts.Series] = []
    for name in names if split else [None]:
        suffix = f" ({name})" if name and len(names) > 1 else ""
        mine: list[tuple[float, charts.Point]] = []
        base: list[tuple[float, charts.Point]] = []
        for r, extra, _ in rows:
            if (name is not None and _series_name(r.result) != name) or throughput not in r.metrics:
                continue
            x, means, base_means = extra["x"], r.summaries, r.baseline_summaries
            if latency is None:
                mine.append((x, charts.Point(x, means[throughput].mean)))
                if throughput in base_means:
                    base.append((x, charts.Point(x, base_means[throughput].mean)))
                continue
            if latency in means:
                mine.append((x, charts.Point(means[latency].mean, means[throughput].mean, _load(axis, x))))
            if latency in base_means and throughput in base_means:
                point = charts.Point(base_means[latency].mean, base_means[throughput].mean, _load(axis, x))
                base.append((x, point))
        for who, points in (("this record", mine), ("baseline", base)):
            if points:
                out.append(charts.Series(who + suffix, tuple(p for _x, p in sorted(points, key=lambda t: t[0]))))
    return out


def record_plot(analysis: Analysis, rec: RecordFile, build_cache: BuildCache | None = None) -> ChartFile | None:
    """This record against the baseline at each load it was measured at."""
    project = analysis.project
    axis, rows = record_points(analysis, rec)
    throughput = _pick(THROUGHPUTS, rows)
    if throughput is None:
        return None
    latency = _pick(LATENCIES, rows)
    series = record_series(axis, rows, throughput, latency)
    if latency is not None and sum(len(s.points) for s in series) < 2:
        latency, series = None, record_series(axis, rows, throughput, None)
    # Everything the drawing reads, so a rebuild redraws only the charts whose numbers changed.
    # Its width too: a build draws it for a page's column and for a phone's (`output.render`).
    key = (chart_width(None), record_plot_path(project, rec), rec.slug, rec.record.title, axis, throughput, latency)
    draw = functools.partial(_draw_record, project, rec, axis, throughput, latency, series)
    return memo(build_cache, "chart", (*key, series), draw)


def _draw_record(
    project: Project, rec: RecordFile, axis: str, throughput: str, latency: str | None, series: list[charts.Series]
) -> ChartFile:
    x_label = _label(latency) if latency is not None else axis
    svg = charts.frontier(rec.slug, rec.record.title, series, x_label=x_label, y_label=_label(throughput))
    return chart_file(record_plot_path(project, rec), svg)


def summary_bars(analysis: Analysis) -> list[charts.Bar]:
    """The summary chart's bars: each record's primary-metric comparison from the analysis.

    The one place they are chosen. A bar is the change turned so that + is better (a latency
    that fell is a positive bar), with its interval and decision; records without a measured
    primary comparison (reported-only, not measured) have none.
    """
    bars = []
    for entry in analysis.ranked:
        p = entry.primary
        gain = p.comparison.gain_percent if p is not None else None
        if p is None or gain is None:
            continue
        c, rec = p.comparison, entry.file
        low, high = c.gain_low_percent, c.gain_high_percent
        interval = (low, high) if low is not None and high is not None else None
        label = f"{rec.number:02d} {rec.record.title} ({p.metric}, {_where(entry, p)}, tier {rec.record.tier})"
        # A regression elsewhere, or a broken guardrail, is named beside the bar, not only on the page.
        flag = "guardrail broken" if p.guardrail_broken else "worse elsewhere" if entry.regressions else None
        bars.append(charts.Bar(label, gain, interval, decision=c.decision, flag=flag))
    return bars


def _where(entry: RecordAnalysis, p: Primary) -> str:
    """The load and workload a bar was measured at, so bars at unlike rows say so."""
    if p.kind == "capacity":
        return p.label
    load = f"concurrency {p.concurrency}" if p.concurrency is not None else "concurrency not recorded"
    result = entry.headline[p.index].result if 0 <= p.index < len(entry.headline) else None
    w = result.workload if result is not None else None
    if w is None:
        return f"{load}, workload not recorded"
    bits = [w.dataset, *(f"{k} {v}" for k, v in (("input", w.input_len), ("output", w.output_len)) if v is not None)]
    return f"{load}, " + (" ".join(b for b in bits if b) or "workload unnamed")


def gains_plot(analysis: Analysis, build_cache: BuildCache | None = None) -> ChartFile | None:
    """Each record's change on its primary metric, the highest and lowest drawn and the rest counted."""
    project = analysis.project
    bars = summary_bars(analysis)
    if not bars:
        return None
    path = summary_plot_paths(project)[0]

    def draw() -> ChartFile:
        title = "Change on the primary metric per record"
        svg = charts.bar_chart(
            "summary-gains", title, bars, axis_label="change, + is better (%)", keep=KEEP, given_order=True
        )
        return chart_file(path, svg)

    return memo(build_cache, "chart", (chart_width(None), path, bars), draw)


def frontier_plot(analysis: Analysis, build_cache: BuildCache | None = None) -> ChartFile | None:
    """Every configuration's throughput per GPU against tokens/s per user (`views.frontier`)."""
    from generator.views.frontier import frontier_svg

    path = summary_plot_paths(analysis.project)[1]

    def draw() -> ChartFile | None:
        svg = frontier_svg(analysis)
        return None if svg is None else chart_file(path, svg)

    return memo(build_cache, "chart", (chart_width(None), path, analysis.frontier), draw)


def plots(analysis: Analysis, build_cache: BuildCache | None = None) -> list[ChartFile]:
    """Every chart the data allows, in a stable order."""
    out: list[ChartFile] = []
    for rec in analysis.project.records:
        p = record_plot(analysis, rec, build_cache)
        if p is not None:
            out.append(p)
    for make in (gains_plot, frontier_plot):
        p = make(analysis, build_cache)
        if p is not None:
            out.append(p)
    return out


def plot_files(analysis: Analysis, build_cache: BuildCache | None = None) -> dict[str, str]:
    """Chart files for the build, keyed by posix path relative to the repository root."""
    return {p.path: p.svg for p in plots(analysis, build_cache)}
