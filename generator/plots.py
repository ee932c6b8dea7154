"""Static SVG charts of the results: per record against concurrency, and two summary charts.

Charts are drawn only where the data allows: a record needs results at two or more
concurrencies (or request rates) with a shared throughput metric; the summary needs at least
one measured gain, or two runs with both a throughput and a latency.

Output is deterministic: matplotlib's figure API without pyplot, a fixed SVG hash salt, no
date, text kept as text. The background is transparent and every colour is mid-contrast, so
the same file reads on the site's light and dark palettes. Each chart carries alt text that
states its numbers, also written into the SVG as its <title>.
"""

from __future__ import annotations

import contextlib
import html
import io
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from generator import metrics
from generator.analysis import Analysis, ResolvedResult
from generator.cache import BuildCache
from generator.memo import memo
from generator.numbers import fmt_number, fmt_percent, stat
from generator.paths import record_plot_path, summary_plot_paths
from generator.project import Project, RecordFile
from generator.summary import summary_rows

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

# Mid-contrast colours: readable on white and on the dark slate of mkdocs-material.
INK = "#808080"
RECORD = "#e8743b"
BASELINE = "#3d8bd9"
TIER_COLOURS = {1: "#3d8bd9", 2: "#e8743b", 3: "#a070d0"}

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


@dataclass(frozen=True)
class Plot:
    path: str  # posix, relative to the repository root
    alt: str
    svg: str


# --- data -----------------------------------------------------------------------------------------


# A resolved result with its x (concurrency or request rate) for a record's chart.
Row = tuple[ResolvedResult, dict[str, float], dict[str, Any]]


@dataclass(frozen=True)
class Point:
    x: float
    value: float
    baseline: float | None
    series: str


def _mean(value: Any) -> float:
    return stat(value).mean


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


def _points(rows: list[Row], name: str | None) -> list[Point]:
    if name is None:
        return []
    out = []
    for r, extra, _ in rows:
        if name not in r.metrics:
            continue
        base = r.baseline.get(name)
        out.append(
            Point(extra["x"], _mean(r.metrics[name]), _mean(base) if base is not None else None, _series_name(r.result))
        )
    return sorted(out, key=lambda p: (p.series, p.x))


# --- drawing --------------------------------------------------------------------------------------


def _style() -> dict[RcKeyType, Any]:
    return {
        "svg.hashsalt": "improvements",
        "svg.fonttype": "none",
        "font.family": "DejaVu Sans",
        "font.size": 10,
        "text.color": INK,
        "axes.labelcolor": INK,
        "axes.edgecolor": INK,
        "xtick.color": INK,
        "ytick.color": INK,
        "axes.facecolor": "none",
        "figure.facecolor": "none",
        "savefig.transparent": True,
        "legend.frameon": False,
        "path.simplify": False,
        # Titles and labels are the records' text: `$x^2$` is shown as written, not parsed as math
        # (an unbalanced `$` was a traceback at build).
        "text.parse_math": False,
    }


@contextlib.contextmanager
def _drawing() -> Iterator[None]:
    """The chart style, and quiet about glyphs DejaVu Sans lacks.

    Text stays text in the SVG (svg.fonttype none), so the browser draws a CJK title or a
    symbol with its own fonts; matplotlib's missing-glyph warning concerns only its own layout
    metrics and would be noise on every build, `-q` or not.
    """
    import matplotlib

    with matplotlib.rc_context(_style()), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"Glyph \d+ .* missing from font", category=UserWarning)
        yield


def _svg(fig: Any, alt: str) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches=None)
    text = buf.getvalue().decode("utf-8").replace("?>\n", "?>\n<!-- generated by improvements; do not edit -->\n", 1)
    # The alt text also travels inside the file, for viewers that open the SVG on its own.
    title = f"<title>{html.escape(alt, quote=False)}</title>"
    text = re.sub(
        r"(<svg\b[^>]*>)", lambda m: m.group(1).replace("<svg ", '<svg role="img" ', 1) + title, text, count=1
    )
    return text


def _figure(width: float, height: float) -> Any:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=100)


def _fmt(x: float) -> str:
    return fmt_number(x)


def _describe(points: list[Point], axis: str) -> str:
    mine = ", ".join(f"{_fmt(p.value)} at {_fmt(p.x)}" for p in points)
    base = [p for p in points if p.baseline is not None]
    text = f"this record {mine}"
    if base:
        text += "; baseline " + ", ".join(f"{_fmt(p.baseline)} at {_fmt(p.x)}" for p in base if p.baseline is not None)
    return text


def _draw_series(ax: Any, points: list[Point]) -> None:
    series = sorted({p.series for p in points})
    markers = ["o", "s", "^", "D", "v"]
    for i, name in enumerate(series):
        pts = [p for p in points if p.series == name]
        suffix = f" ({name})" if name and len(series) > 1 else ""
        marker = markers[i % len(markers)]
        ax.plot([p.x for p in pts], [p.value for p in pts], color=RECORD, marker=marker, label=f"this record{suffix}")
        base = [p for p in pts if p.baseline is not None]
        if base:
            ax.plot(
                [p.x for p in base],
                [p.baseline for p in base],
                color=BASELINE,
                marker=marker,
                linestyle="--",
                label=f"baseline{suffix}",
            )


def record_plot(analysis: Analysis, rec: RecordFile, build_cache: BuildCache | None = None) -> Plot | None:
    """Throughput (and latency, when measured) against concurrency, this record against the baseline."""
    project = analysis.project
    axis, rows = record_points(analysis, rec)
    throughput = _pick(THROUGHPUTS, rows)
    if throughput is None:
        return None
    latency = _pick(LATENCIES, rows)
    # Everything the drawing reads, so a rebuild redraws only the charts whose numbers changed.
    key = (
        record_plot_path(project, rec),
        rec.record.title,
        axis,
        [(n, _points(rows, n)) for n in (throughput, latency)],
    )
    return memo(build_cache, "plot", key, lambda: _draw_record_plot(project, rec, axis, rows, throughput, latency))


def _draw_record_plot(
    project: Project,
    rec: RecordFile,
    axis: str,
    rows: list[Row],
    throughput: str,
    latency: str | None,
) -> Plot:
    with _drawing():
        fig = _figure(9.0 if latency else 5.5, 3.6)
        panels = [throughput] + ([latency] if latency else [])
        alt_parts = []
        for i, name in enumerate(panels):
            metric = metrics.lookup(name)
            assert metric is not None
            ax = fig.add_subplot(1, len(panels), i + 1)
            points = _points(rows, name)
            _draw_series(ax, points)
            xs = sorted({p.x for p in points})
            if axis == "concurrency" and xs[-1] / max(xs[0], 1e-9) >= 16:
                ax.set_xscale("log", base=2)
            ax.set_xticks(xs, [_fmt(x) for x in xs])
            ax.minorticks_off()
            ax.set_xlabel(axis)
            ax.set_ylabel(f"{metric.label} ({metric.unit})")
            ax.set_ylim(bottom=0)
            ax.grid(True, color=INK, alpha=0.25, linewidth=0.6)
            for side in ("top", "right"):
                ax.spines[side].set_visible(False)
            alt_parts.append(f"{metric.label} ({metric.unit}) against {axis}: {_describe(points, axis)}")
        # One legend above the panels, so it never hides a line.
        handles, labels = fig.axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="upper center", ncol=min(len(labels), 4), fontsize=8, labelcolor=INK)
        fig.tight_layout(rect=(0, 0, 1, 0.9))
        alt = f"{rec.record.title}. " + ". ".join(alt_parts) + "."
        return Plot(record_plot_path(project, rec), alt, _svg(fig, alt))


def gains_plot(analysis: Analysis, build_cache: BuildCache | None = None) -> Plot | None:
    """Each record's best measured gain, grouped by tier."""
    project = analysis.project
    rows = [r for r in summary_rows(analysis) if r["best_gain_percent"] is not None]
    if not rows:
        return None
    key = (summary_plot_paths(project)[0], rows)
    return memo(build_cache, "plot", key, lambda: _draw_gains_plot(project, rows))


def _draw_gains_plot(project: Project, rows: list[dict[str, Any]]) -> Plot:
    with _drawing():
        fig = _figure(7.5, 0.9 + 0.42 * len(rows))
        ax = fig.add_subplot(1, 1, 1)
        labels = [f"{r['number']:02d} {r['title']}"[:48] for r in rows]
        values = [r["best_gain_percent"] for r in rows]
        ys = list(range(len(rows)))[::-1]
        ax.barh(ys, values, color=[TIER_COLOURS[r["tier"]] for r in rows], height=0.6)
        ax.set_yticks(ys, labels)
        ax.axvline(0, color=INK, linewidth=0.8)
        ax.set_xlabel("best measured gain (%; positive is better)")
        noise = [bool(r["best_gain_within_noise"]) for r in rows]
        for y, v, within in zip(ys, values, noise, strict=True):
            ax.annotate(
                fmt_percent(v) + (" (within noise)" if within else ""),
                (v, y),
                xytext=(4 if v >= 0 else -4, 0),
                textcoords="offset points",
                ha="left" if v >= 0 else "right",
                va="center",
                fontsize=8,
                color=INK,
            )
        lo, hi = min(0.0, *values), max(0.0, *values)
        # Room for the value beside each bar, longer when it says "within noise".
        pad = (hi - lo) * (0.45 if any(noise) else 0.25) or 5.0
        ax.set_xlim(lo - pad, hi + pad)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
        from matplotlib.patches import Patch

        tiers = sorted({r["tier"] for r in rows})
        ax.legend(
            handles=[Patch(color=TIER_COLOURS[t], label=f"tier {t}") for t in tiers],
            fontsize=8,
            labelcolor=INK,
            loc="lower right",
        )
        fig.tight_layout()
        alt = "Best measured gain per record, grouped by tier: " + "; ".join(
            f"tier {r['tier']}, {r['number']:02d} {r['title']}: {fmt_percent(r['best_gain_percent'])} "
            f"{r['best_gain_metric']}{', within noise' if r['best_gain_within_noise'] else ''}"
            for r in rows
        )
        return Plot(summary_plot_paths(project)[0], alt, _svg(fig, alt))


def _all_runs(project: Project) -> Iterator[tuple[str, Any]]:
    """(who, run) for every imported run a record or the baseline names."""
    runs = project.runs
    for result in project.campaign.baseline.results:
        yield from (("baseline", runs[rid]) for rid in result.run_ids if rid in runs)
    for rec in project.records:
        for result in rec.record.results:
            who = f"{rec.number:02d} {rec.record.title}"
            yield from ((who, runs[rid]) for rid in result.run_ids if rid in runs)


def throughput_latency_plot(analysis: Analysis, build_cache: BuildCache | None = None) -> Plot | None:
    """Every imported run as one point: output throughput against a latency measured by all."""
    project = analysis.project
    pairs = list(_all_runs(project))
    throughput = next((t for t in THROUGHPUTS if sum(t in r.metrics for _w, r in pairs) >= 2), None)
    if throughput is None:
        return None
    with_t = [(w, r) for w, r in pairs if throughput in r.metrics]
    latency = max(
        LATENCIES, key=lambda name: (sum(name in r.metrics for _w, r in with_t), -LATENCIES.index(name)), default=None
    )
    points = [(w, r) for w, r in with_t if latency in r.metrics]
    if latency is None or len(points) < 2:
        return None
    key = (
        summary_plot_paths(project)[1],
        throughput,
        latency,
        [(w, r.metrics[throughput], r.metrics[latency]) for w, r in points],
    )
    return memo(build_cache, "plot", key, lambda: _draw_throughput_latency_plot(project, throughput, latency, points))


def _draw_throughput_latency_plot(
    project: Project, throughput: str, latency: str, points: list[tuple[str, Any]]
) -> Plot:
    t_metric, l_metric = metrics.lookup(throughput), metrics.lookup(latency)
    assert t_metric is not None and l_metric is not None
    who = sorted({w for w, _r in points}, key=lambda w: (w != "baseline", w))
    palette = [BASELINE, RECORD, "#a070d0", "#4caf50", "#d4a017", "#d45087", "#2ab7a9"]
    markers = ["o", "s", "^", "D", "v", "P", "X"]
    with _drawing():
        fig = _figure(7.0, 4.2)
        ax = fig.add_subplot(1, 1, 1)
        for i, name in enumerate(who):
            pts = sorted(((r.metrics[latency], r.metrics[throughput]) for w, r in points if w == name))
            ax.scatter(
                [p[0] for p in pts],
                [p[1] for p in pts],
                color=palette[i % len(palette)],
                marker=markers[i % len(markers)],
                label=name[:40],
                s=28,
            )
        ax.set_xlabel(f"{l_metric.label} ({l_metric.unit})")
        ax.set_ylabel(f"{t_metric.label} ({t_metric.unit})")
        ax.grid(True, color=INK, alpha=0.25, linewidth=0.6)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
        ax.legend(fontsize=8, labelcolor=INK)
        fig.tight_layout()
        alt = (
            f"{t_metric.label} ({t_metric.unit}) against {l_metric.label} ({l_metric.unit}) for every imported run: "
            + "; ".join(
                f"{name}: "
                + ", ".join(
                    f"{_fmt(r.metrics[throughput])} at {_fmt(r.metrics[latency])}"
                    for w, r in sorted(points, key=lambda p: p[1].metrics[latency])
                    if w == name
                )
                for name in who
            )
        )
        return Plot(summary_plot_paths(project)[1], alt, _svg(fig, alt))


def plots(analysis: Analysis, build_cache: BuildCache | None = None) -> list[Plot]:
    """Every chart the data allows, in a stable order."""
    out: list[Plot] = []
    for rec in analysis.project.records:
        p = record_plot(analysis, rec, build_cache)
        if p is not None:
            out.append(p)
    for make in (gains_plot, throughput_latency_plot):
        p = make(analysis, build_cache)
        if p is not None:
            out.append(p)
    return out


def plot_files(analysis: Analysis, build_cache: BuildCache | None = None) -> dict[str, str]:
    """Chart files for the build, keyed by posix path relative to the repository root."""
    return {p.path: p.svg for p in plots(analysis, build_cache)}
