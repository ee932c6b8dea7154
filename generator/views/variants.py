"""What a page shows of a record's variants: one table of variants by metrics, and a sweep's chart.

Every number comes from the analysis (`RecordAnalysis.variant_results`); nothing here
compares values again. Figures a source only reported (`reported_change`, `finding`) are
shown as reported, beside the measured ones, never turned into a measured change.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath

from generator import charts
from generator.analysis.campaign import Analysis, ResolvedResult
from generator.analysis.stats import Comparison
from generator.base.generated import svg_header
from generator.model import variants
from generator.model.launch import assignment, words
from generator.model.metrics import Vocabulary
from generator.model.quantity import fmt_percent, fmt_value, fmt_whole, stat
from generator.model.record import Change, Record, Variant
from generator.project.load import Project, RecordFile

# A change this many times over (or under) its baseline also reads as a ratio: "106x lower".
RATIO_FROM = 10.0


def ratio_text(c: Comparison) -> str | None:
    """A very large change as a ratio ("106x lower"), which a percentage near -100% hides."""
    v, b = c.mean, c.baseline_mean
    if v <= 0 or b <= 0:
        return None
    ratio = max(v, b) / min(v, b)
    if ratio < RATIO_FROM:
        return None
    return f"{fmt_whole(ratio)}x {'higher' if v > b else 'lower'}"


@dataclass
class VariantRow:
    label: str
    value: str | None
    outcome: str
    change: str
    # One cell per metric of the table, in its order; "" where the variant has no figure.
    cells: list[str]
    notes: list[str] = field(default_factory=list)


@dataclass
class VariantTable:
    parameter: str | None
    # (metric name, column heading)
    columns: list[tuple[str, str]]
    rows: list[VariantRow]
    summary: str


def change_text(variant: Variant, record: Record) -> str:
    """A variant's change in a few words: its flags and environment, or what stands in for them."""
    change: Change | None = variant.change
    if change is None:
        return "the record's change" if record.change is not None else "no change recorded"
    parts = [words(f.tokens()) for f in change.flags]
    parts += [f"no {f}" for f in change.remove_flags]
    parts += [assignment(k, v) for k, v in change.env.items()]
    parts += [p.summary for p in change.patches]
    if change.command == "not-recorded":
        parts.append("command not recorded")
    return "; ".join(parts) or (change.note or "no change recorded")


def _cell(resolved: ResolvedResult, name: str) -> str | None:
    value = resolved.metrics.get(name)
    if value is not None:
        c = resolved.comparisons.get(name)
        if c is None or c.change_percent is None:
            return fmt_value(value)
        ratio = ratio_text(c)
        # The raw change with its decision word, as the record's result tables show it.
        return f"{fmt_value(value)} ({fmt_percent(c.change_percent)}, {c.decision}{f', {ratio}' if ratio else ''})"
    reported = resolved.result.reported_change.get(name)
    if reported is not None:
        shown = fmt_percent(reported) if isinstance(reported, float) else f"{fmt_value(reported)}%"
        return f"{shown} as reported"
    return None


def _columns(per_variant: tuple[tuple[ResolvedResult, ...], ...], vocabulary: Vocabulary) -> list[tuple[str, str]]:
    names: list[str] = []
    for results in per_variant:
        for res in results:
            for name in [*res.metrics, *res.result.reported_change]:
                if name not in names:
                    names.append(name)
    out = []
    for name in names:
        metric = vocabulary.lookup(name)
        if metric is None:
            out.append((name, name))
        else:
            better = "higher" if metric.higher_is_better else "lower"
            out.append((name, f"{metric.label} ({metric.unit}, {better} is better)"))
    return out


def variant_table(analysis: Analysis, rec: RecordFile) -> VariantTable | None:
    """The record's variants by metrics, or None when it has none.

    A variant with results at several loads shows each figure, separated by "; ", in the
    order of its results; the change after each is its gain in the metric's own direction.
    """
    record = rec.record
    if not record.variants:
        return None
    per_variant = analysis.record(rec).variant_results
    columns = _columns(per_variant, analysis.project.campaign.vocabulary())
    rows = []
    for variant, results in zip(record.variants, per_variant, strict=True):
        cells = []
        for name, _heading in columns:
            figures = [c for c in (_cell(res, name) for res in results) if c is not None]
            cells.append("; ".join(figures))
        notes = [
            f"finding as reported ({res.result.label}): {res.result.finding}" for res in results if res.result.finding
        ]
        notes += [variant.note] if variant.note else []
        rows.append(
            VariantRow(
                label=variant.label,
                value=variants.value_text(variant) if variant.value is not None else None,
                outcome=variant.outcome,
                change=change_text(variant, record),
                cells=cells,
                notes=notes,
            )
        )
    parameter = record.sweep.parameter if record.sweep else None
    return VariantTable(parameter, columns, rows, variants.summary_text(record) or "")


# --- the sweep's chart --------------------------------------------------------------------------


@dataclass(frozen=True)
class SweepChart:
    path: str  # posix, relative to the repository root
    alt: str
    svg: str


def sweep_path(project: Project, rec: RecordFile) -> str:
    # A folder of their own: a record's own chart is plots/<slug>.svg, and slugs may end in "-sweep".
    return str(PurePosixPath(project.campaign.docs_dir) / "plots" / "sweeps" / f"{rec.slug}.svg")


def _sweep_metric(record: Record, per_variant: tuple[tuple[ResolvedResult, ...], ...]) -> str | None:
    if record.sweep is not None and record.sweep.metric is not None:
        return record.sweep.metric
    kept = variants.retained(record)
    order = sorted(zip(record.variants, per_variant, strict=True), key=lambda pair: pair[0] is not kept)
    for _variant, results in order:
        for res in results:
            if res.metrics:
                return next(iter(res.metrics))
    return None


def sweep_chart(analysis: Analysis, rec: RecordFile) -> SweepChart | None:
    """The sweep's primary metric against the swept value, the retained value marked; None without data.

    Each point is the variant's first result measuring the metric; its interval is the range
    of the figures given (repeated measurements or a range), when there is one.
    """
    record = rec.record
    if record.sweep is None:
        return None
    per_variant = analysis.record(rec).variant_results
    name = _sweep_metric(record, per_variant)
    if name is None:
        return None
    points: list[charts.SweepPoint] = []
    retained_x: str | float | None = None
    for variant, results in zip(record.variants, per_variant, strict=True):
        value = next((res.metrics[name] for res in results if name in res.metrics), None)
        if variant.value is None or value is None:
            continue
        s = stat(value)
        interval = (s.low, s.high) if s.kind != "single" else None
        points.append(charts.SweepPoint(variant.value, s.mean, interval))
        if variant.outcome == "retained":
            retained_x = variant.value
    if not points:
        return None
    metric = analysis.project.campaign.vocabulary().lookup(name)
    axis = f"{metric.label} ({metric.unit})" if metric else name
    title = f"{rec.number:02d}. {record.title}: {metric.label if metric else name} by {record.sweep.parameter}"
    svg = charts.sweep_chart(
        f"sweep-{rec.slug}", title, points, parameter=record.sweep.parameter, axis_label=axis, retained=retained_x
    )
    text = '<?xml version="1.0" encoding="utf-8"?>\n' + svg_header() + "\n" + svg
    return SweepChart(sweep_path(analysis.project, rec), charts.description(svg), text)


def sweep_charts(analysis: Analysis) -> list[SweepChart]:
    """Every sweep's chart, in series order."""
    return [c for rec in analysis.project.records if (c := sweep_chart(analysis, rec)) is not None]
