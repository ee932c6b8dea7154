"""A decision as a terminal and a CI job read it: `compare`'s and `run`'s text and JSON.

The words are the record page's (`results.compared_row`, `design.design_lines`); the numbers are
the analysis' `Comparison`, copied as they are into the JSON (a machine reads the numbers, a
person the words), never computed here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from generator.analysis.comparison import Comparison, FailOn
from generator.analysis.files import Group
from generator.model import metrics
from generator.model.quantity import fmt_stat
from generator.views.design import design_lines
from generator.views.page_models import MetricRow
from generator.views.results import compared_row

# `compare`'s two sides, as its caveats name them.
NAMES = ("candidate", "baseline")


def comparison_json(c: Comparison | None, row: MetricRow | None, fail_on: FailOn | None) -> dict[str, Any]:
    """One comparison's numbers and its page words, for `--format json`."""
    if c is None or row is None:
        return {"decision": None}
    return {
        "decision": c.decision,
        "change_percent": c.change_percent,
        "interval_percent": [c.ci_low_percent, c.ci_high_percent] if c.ci_low_percent is not None else None,
        "difference": c.difference,
        "interval": [c.ci_low, c.ci_high] if c.ci_low is not None else None,
        "mean": c.mean,
        "baseline_mean": c.baseline_mean,
        "n": c.n,
        "baseline_n": c.baseline_n,
        "p_value": c.p_value,
        "test": c.test,
        "scale": c.scale,
        "alpha": c.alpha,
        "min_effect": c.min_effect,
        "within_min_effect": c.within_min_effect,
        "fails": c.fails(fail_on) if fail_on is not None else False,
        "words": {"change": row.change, "interval": row.interval, "decision": row.decision, "test": row.test},
    }


def row_line(label: str, metric: str, row: MetricRow) -> str:
    """A compared row on one line, as `run` prints each result it linked."""
    return f"{label}: {metric} {_change(row)}: {row.decision}"


def _change(row: MetricRow) -> str:
    """The change, its interval, n and the test, as `run` and `compare` print them."""
    shown = [row.change or "no change in percent"]
    if row.interval:
        shown.append(f"interval {row.interval}")
    shown += [f"n {row.n}", *([row.test] if row.test else [])]
    return ", ".join(shown)


def _where(group: Group) -> str:
    parts = [f"{k.replace('_', ' ')} {v}" for k, v in group.key]
    return ", ".join(parts) if parts else "no load or workload recorded"


def _row(group: Group, vocabulary: metrics.Vocabulary) -> MetricRow:
    base, own = group.summaries
    return compared_row(
        group.metric,
        group.comparison,
        vocabulary,
        value=fmt_stat(own) if own is not None else "none",
        baseline=fmt_stat(base) if base is not None else None,
    )


def compare_text(
    groups: Sequence[Group], files: tuple[Sequence[str], Sequence[str]], vocabulary: metrics.Vocabulary
) -> str:
    """`improvements compare`'s report: each load and workload, its decision and the caveats."""
    metric = groups[0].metric if groups else ""
    found = vocabulary.lookup(metric)
    unit = f", {found.unit}" if found is not None and found.unit else ""
    label = f"{metric} ({found.label}{unit})" if found is not None else metric
    lines = [
        f"baseline:  {', '.join(files[0])}",
        f"candidate: {', '.join(files[1])}",
        f"metric:    {label}",
    ]
    for group in groups:
        lines += ["", f"{_where(group)}:"]
        row = _row(group, vocabulary)
        if group.missing is not None:
            lines.append(f"  not compared: {group.missing}")
            continue
        lines.append(f"  baseline   {row.baseline}")
        lines.append(f"  candidate  {row.value}")
        lines.append(f"  change     {_change(row)}")
        lines.append(f"  decision   {row.decision}")
        if row.would_take:
            lines.append(f"  would take {row.would_take}")
        lines += [f"  - {text}" for text in design_lines(group.design, True, NAMES)]
    return "\n".join(lines) + "\n"


def compare_json(
    groups: Sequence[Group],
    files: tuple[Sequence[str], Sequence[str]],
    vocabulary: metrics.Vocabulary,
    fail_on: FailOn | None,
) -> dict[str, Any]:
    """`improvements compare --format json`: the numbers and the words of every comparison."""
    metric = groups[0].metric if groups else None
    found = vocabulary.lookup(metric) if metric is not None else None
    out: list[dict[str, Any]] = []
    for group in groups:
        row = _row(group, vocabulary)
        entry: dict[str, Any] = {
            "kind": group.kind,
            "where": dict(group.key),
            "values": {"baseline": list(group.values[0]), "candidate": list(group.values[1])},
            "missing": group.missing,
        }
        entry.update(comparison_json(group.comparison, row if group.comparison is not None else None, fail_on))
        entry["caveats"] = design_lines(group.design, True, NAMES) if group.comparison is not None else []
        out.append(entry)
    return {
        "metric": metric,
        "unit": found.unit if found is not None else None,
        "higher_is_better": found.higher_is_better if found is not None else None,
        "files": {"baseline": list(files[0]), "candidate": list(files[1])},
        "fail_on": fail_on,
        "failed": any(g.comparison is not None and fail_on is not None and g.comparison.fails(fail_on) for g in groups),
        "comparisons": out,
    }
