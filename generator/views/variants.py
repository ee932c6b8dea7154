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
from generator.model import variants
from generator.model.launch import assignment, container_lines, words
from generator.model.metrics import Vocabulary
from generator.model.quantity import Stat, fmt_number, fmt_percent, fmt_summarised, fmt_value, fmt_whole
from generator.model.record import Change, Record, Variant
from generator.model.result import Range, Ratio, stated_percent
from generator.project.load import Project, RecordFile
from generator.views.notes import variant_reasons
from generator.views.paths import ChartFile, chart_file

# A change this many times over (or under) its baseline also reads as a ratio: "106x lower".
RATIO_FROM = 10.0


def ratio_text(c: Comparison) -> str | None:
    """A very large change as a ratio ("106x lower"), which a percentage near -100% hides."""
    fold = c.fold
    if fold is None or fold.times < RATIO_FROM:
        return None
    text = f"{fmt_whole(fold.times)}x {fold.word}"
    if fold.interval is not None:
        # The interval of the ratio itself, read in the words' direction: "106x lower (133x to 84x)".
        low, high = fold.interval
        first, second = (high, low) if fold.word == "lower" else (low, high)
        text += f" ({fmt_whole(first)}x to {fmt_whole(second)}x)"
    return text


@dataclass(frozen=True)
class VariantRow:
    label: str
    value: str | None
    outcome: str
    change: str
    # One cell per metric of the table, in its order; "" where the variant has no figure.
    cells: list[str]
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class VariantTable:
    parameter: str | None
    # (metric name, column heading)
    columns: list[tuple[str, str]]
    rows: list[VariantRow]
    summary: str


def variant_change_text(variant: Variant, record: Record) -> str:
    """A variant's change in a few words: its flags and environment, or what stands in for them."""
    change: Change | None = variant.change
    setup = variant.setup
    if change is None and setup is not None and setup.command == "not-recorded":
        return "command not recorded"
    if change is None and setup is not None:
        # Run on a setup of its own (a 2-GPU isolation run): whether the record's change was
        # applied there is not recorded, so it is not said.
        return "not recorded (its own setup)"
    if change is None:
        return "the record's change" if record.change is not None else "no change recorded"
    parts = [words(f.tokens()) for f in change.flags]
    parts += [f"no {f}" for f in change.remove_flags]
    parts += [assignment(k, v) for k, v in change.env.items()]
    parts += [p.summary for p in change.patches]
    if change.command == "not-recorded":
        parts.append("command not recorded")
    if change.image:
        parts.append(f"image {change.image}")
    if change.inside:
        parts.append(f"in the container: {'; '.join(change.inside)}")
    if change.container:
        parts.append(f"container start: {'; '.join(container_lines(change.container))}")
    if change.before:
        # Host steps are a change too: a variant made only of them still changed something.
        steps = "; ".join(change.before)
        parts.append(f"host steps before the launch{'' if parts else ' only'}: {steps}")
    return "; ".join(parts) or (change.note or "no change recorded")


def setup_text(variant: Variant) -> str | None:
    """A variant's own setup in a few words: "2x RTX PRO 6000; vLLM 0.11; command not recorded"."""
    setup = variant.setup
    if setup is None:
        return None
    parts: list[str] = []
    if setup.hardware is not None:
        hw = setup.hardware
        count = f"{hw.count}x " if hw.count is not None else ""
        parts.append(f"{count}{hw.gpu}" + ("" if hw.count is not None else " (GPU count not recorded)"))
    if setup.engine is not None:
        parts.append(" ".join(p for p in (setup.engine.name, setup.engine.version) if p))
    if setup.benchmark:
        parts.append(setup.benchmark)
    if setup.base_command:
        parts.append(f"base command `{setup.base_command}`")
    if setup.command == "not-recorded":
        parts.append("command not recorded")
    if setup.note:
        parts.append(setup.note)
    return "; ".join(parts) or None


def _cell(resolved: ResolvedResult, name: str) -> str | None:
    value = resolved.metrics.get(name)
    if value is not None:
        shown = fmt_summarised(value, resolved.summaries[name])
        c = resolved.comparisons.get(name)
        if c is None or c.change_percent is None:
            return shown
        ratio = ratio_text(c)
        interval = (
            f", {fmt_percent(c.ci_low_percent)} to {fmt_percent(c.ci_high_percent)}"
            if c.ci_low_percent is not None and c.ci_high_percent is not None
            else ""
        )
        # The raw change, its interval and its decision word, as the record's result tables show them.
        return f"{shown} ({fmt_percent(c.change_percent)}{interval}, {c.decision}{f', {ratio}' if ratio else ''})"
    reported = resolved.result.reported_change.get(name)
    if reported is not None:
        if isinstance(reported, Ratio):
            return f"{reported.text} ({fmt_percent(reported.percent)}) as reported"
        shown = fmt_percent(reported) if isinstance(reported, float) else f"{fmt_value(reported)}%"
        return f"{shown} as reported"
    return None


def _columns(per_variant: tuple[tuple[ResolvedResult, ...], ...], vocabulary: Vocabulary) -> list[tuple[str, str]]:
    # Each metric once, in the order the variants' results first name it.
    names = dict.fromkeys(
        name for results in per_variant for res in results for name in (*res.metrics, *res.result.reported_change)
    )
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

    A variant with several results shows each figure under its result's label, separated by
    "; ", in the order of its results (a 59K and a 124K workload are never one unlabelled
    figure); after each, its change, interval and decision. Each result's note is listed.
    """
    record = rec.record
    if not record.variants:
        return None
    ra = analysis.record(rec)
    per_variant = ra.variant_results
    vocabulary = analysis.project.campaign.vocabulary()
    columns = _columns(per_variant, vocabulary)
    reasons = dict(variant_reasons(ra, vocabulary))
    rows = []
    for variant, results in zip(record.variants, per_variant, strict=True):
        cells = []
        labelled = len(results) > 1
        for name, _heading in columns:
            figures = [
                f"{res.result.label}: {c}" if labelled else c for res in results if (c := _cell(res, name)) is not None
            ]
            cells.append("; ".join(figures))
        notes = [f"why {variant.outcome}: {reasons[variant.label]}"] if variant.label in reasons else []
        notes += [
            f"finding as reported ({res.result.label}): {res.result.finding}" for res in results if res.result.finding
        ]
        notes += [f"{res.result.label}: {res.result.note}" for res in results if res.result.note]
        notes += [f"setup: {text}"] if (text := setup_text(variant)) else []
        notes += [variant.note] if variant.note else []
        notes += _holm_note(analysis, rec) if variant.outcome == "retained" else []
        rows.append(
            VariantRow(
                label=variant.label,
                value=variants.value_text(variant) if variant.value is not None else None,
                outcome=variant.outcome,
                change=variant_change_text(variant, record),
                cells=cells,
                notes=notes,
            )
        )
    parameter = record.sweep.parameter if record.sweep else None
    return VariantTable(parameter, columns, rows, variants.variants_cell(record) or "")


def _holm_note(analysis: Analysis, rec: RecordFile) -> list[str]:
    """The record's one answer beside the retained row's unadjusted figures (best of k, Holm)."""
    p = analysis.record(rec).primary
    if p is None or p.best_of is None or p.holm_p is None:
        return []
    return [
        f"the record's decision, corrected for picking one of {p.best_of} variants (Holm): "
        f"{p.comparison.decision}, adjusted p = {p.holm_p:.2g}; the figures in this row are each "
        "variant's own, unadjusted"
    ]


# --- the sweep's chart --------------------------------------------------------------------------


def sweep_path(project: Project, rec: RecordFile) -> str:
    # A folder of their own: a record's own chart is plots/<slug>.svg, and slugs may end in "-sweep".
    return str(PurePosixPath(project.campaign.docs_dir) / "plots" / "sweeps" / f"{rec.slug}.svg")


def _sweep_metric(record: Record, per_variant: tuple[tuple[ResolvedResult, ...], ...]) -> tuple[str, str] | None:
    """The metric the chart plots and the result label it compares across variants.

    One label, so that every point measured the same workload: the sweep's `result` when
    given, else the first label (the retained variant's first) that measures the metric.
    """
    kept = variants.retained(record)
    order = sorted(zip(record.variants, per_variant, strict=True), key=lambda pair: pair[0] is not kept)
    wanted = record.sweep.metric if record.sweep is not None else None
    label = record.sweep.result if record.sweep is not None else None
    for _variant, results in order:
        for res in results:
            if label is not None and res.result.label != label:
                continue
            name = wanted if wanted is not None else next(iter(res.metrics), None)
            if name is not None and name in res.metrics:
                return name, res.result.label
    return None


def sweep_chart(analysis: Analysis, rec: RecordFile) -> ChartFile | None:
    """The sweep's primary metric against the swept value, the retained value marked; None without data.

    Each point is the variant's result with the chart's one label (`_sweep_metric`); a variant
    without a result of that label is not drawn. Its interval is the range of the figures
    given (repeated measurements or a range), when there is one.
    """
    record = rec.record
    if record.sweep is None:
        return None
    per_variant = analysis.record(rec).variant_results
    chosen = _sweep_metric(record, per_variant)
    if chosen is None:
        return _stated_sweep_chart(analysis, rec)
    name, label = chosen
    points: list[charts.SweepPoint] = []
    retained_x: str | float | None = None
    # A run beside the values (a diagnostic or its own setup) at a value a candidate has is not its point.
    candidates = {v.value for v in record.variants if not variants.beside(v)}
    for variant, results in zip(record.variants, per_variant, strict=True):
        s = next((res.summaries[name] for res in results if res.result.label == label and name in res.metrics), None)
        if variant.value is None or s is None or (variants.beside(variant) and variant.value in candidates):
            continue
        # Only figures that span something draw an interval: repetitions or a range. A mean
        # given with n (with or without its sd) has no range of figures behind it to draw.
        interval = (s.low, s.high) if s.kind in ("repeated", "range") or s.low != s.high else None
        points.append(charts.SweepPoint(variant.value, s.mean, interval, _point_note(s)))
        if variant.outcome == "retained":
            retained_x = variant.value
    if not points:
        return None
    metric = analysis.project.campaign.vocabulary().lookup(name)
    axis = f"{metric.label} ({metric.unit})" if metric else name
    labels = {res.result.label for results in per_variant for res in results}
    # Said in the title when the variants measured more than one workload: the one drawn.
    workload = f" ({label})" if len(labels) > 1 else ""
    title = (
        f"{rec.number:02d}. {record.title}: {metric.label if metric else name}{workload} by {record.sweep.parameter}"
    )
    svg = charts.sweep_chart(
        f"sweep-{rec.slug}", title, points, parameter=record.sweep.parameter, axis_label=axis, retained=retained_x
    )
    return chart_file(sweep_path(analysis.project, rec), svg)


def _stated_sweep_chart(analysis: Analysis, rec: RecordFile) -> ChartFile | None:
    """A sweep whose points are only changes as the source stated them ("-38.2%" at each value):
    the stated percent against the swept value, each point one stated number (a range drawn as
    its interval), the axis and every point saying so; never drawn as a measurement."""
    record = rec.record
    assert record.sweep is not None
    wanted, label = record.sweep.metric, record.sweep.result
    found = [
        (v, res, name, given)
        for v in record.variants
        for res in v.results
        for name, given in res.reported_change.items()
        if v.value is not None and not variants.beside(v) and not res.metrics
        if (wanted is None or name == wanted) and (label is None or res.label == label)
    ]
    if not found:
        return None
    name, label = found[0][2], found[0][1].label
    points: list[charts.SweepPoint] = []
    retained_x: str | float | None = None
    for v, res, n, given in found:
        if n != name or res.label != label or any(p.x == v.value for p in points) or v.value is None:
            continue
        value = stated_percent(given)
        interval = (value.min, value.max) if isinstance(value, Range) else None
        point = value.middle if isinstance(value, Range) else value
        what = given.text if isinstance(given, Ratio) else None
        points.append(
            charts.SweepPoint(v.value, point, interval, f"stated{f' as {what}' if what else ''}, not measured")
        )
        retained_x = v.value if v.outcome == "retained" else retained_x
    metric = analysis.project.campaign.vocabulary().lookup(name)
    shown = metric.label if metric else name
    axis = f"{shown}, change as stated (%)"
    title = f"{rec.number:02d}. {record.title}: {shown} ({label}) by {record.sweep.parameter}, as stated"
    svg = charts.sweep_chart(
        f"sweep-{rec.slug}", title, points, parameter=record.sweep.parameter, axis_label=axis, retained=retained_x
    )
    return chart_file(sweep_path(analysis.project, rec), svg)


def _point_note(s: Stat) -> str | None:
    if s.kind != "statistics" or s.low != s.high:
        return None
    if not s.spread_known:
        return f"mean of {s.n} runs, no spread published"
    return f"mean of {s.n} runs, sd {fmt_number(s.spread)}"


def sweep_charts(analysis: Analysis) -> list[ChartFile]:
    """Every sweep's chart, in series order."""
    return [c for rec in analysis.project.records if (c := sweep_chart(analysis, rec)) is not None]
