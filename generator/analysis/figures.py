"""Numbers that prose quotes, looked up in the analysis: `{{ record.result.metric.field }}`.

A verdict, caveat or note that says "SDPA more than doubles eager" would go stale the day the
data change; written as `{{ sdpa-attention.c256.output_throughput.ratio }}` it is the number the
analysis holds, wherever the text is shown. The syntax (docs/guide/format.md, "Numbers in
prose"): four parts joined by dots, spaces inside the braces allowed:

- the record, by slug or number (`sdpa-attention`, `01`), or `baseline` for the campaign
  baseline's results;
- the result, by load (`c256`: the one result at concurrency 256) or by its label in double
  quotes (`"c256 at 8k prompts"`); several runs of one comparison (`model.reruns`) are one
  result, the latest plan's, and a runner's result may be named by its label without the plan.
  Not by position: a result added before it would move the reference without a word;
- the metric, by its name (`output_throughput`, `ttft_median`, a campaign metric);
- the field (`FIELDS`).

This module finds the value; `views.prose` formats it. A reference that names nothing is an
error `check` reports at its place (`unknown-reference`), and the build refuses it.
"""

from __future__ import annotations

import difflib
import math
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

# REFERENCE is re-exported: `views.prose` fills the quotes it finds.
from generator.analysis.quoting import REFERENCE as REFERENCE
from generator.analysis.quoting import template_quotes
from generator.base.problems import Problem, rel
from generator.model import reruns

if TYPE_CHECKING:
    # Types only: `check` imports this module whether or not it analyses any record.
    from generator.analysis.records import Analysed, ResolvedResult

# percent: a signed change; share: an unsigned percent (a spread); the rest as named.
Kind = Literal["percent", "share", "interval", "number", "ratio", "count", "p", "word"]

# field -> (what it is, in words for the guide and the errors)
FIELDS: dict[str, str] = {
    "change": "the change in percent, signed (`+124.3%`): the geometric mean of the ratios (paired) or "
    "the ratio of the geometric means, minus 1, the estimate its interval is built on",
    "low": "the low end of the change's interval, in percent",
    "high": "the high end of the change's interval, in percent",
    "interval": "the change's interval (`+91.6% to +159.5%`)",
    "ratio": "the same estimate as `change`, as a factor (`2.24x`): 1 + change / 100",
    "means_change": "the ratio of the arithmetic means minus 1, in percent: another estimator than "
    "`change`, to be quoted under its own name (`the means differ by +9.1%`)",
    "means_ratio": "the record's arithmetic mean over the baseline's (`2.25x`), under its own name",
    "mean": "the record's mean",
    "baseline_mean": "the baseline's mean",
    "min": "the record's smallest repetition",
    "max": "the record's largest repetition",
    "baseline_min": "the baseline's smallest repetition",
    "baseline_max": "the baseline's largest repetition",
    "cv": "the record's coefficient of variation in percent (sample sd over mean)",
    "baseline_cv": "the baseline's coefficient of variation in percent",
    "n": "the record's repetitions (or launches, when runs share them)",
    "baseline_n": "the baseline's repetitions",
    "p": "the p-value of the comparison",
    "decision": "the decision (`better`, `worse`, `no-change`, `inconclusive`, `unreplicated`)",
}
_NEEDS_COMPARISON = {
    "change",
    "low",
    "high",
    "interval",
    "ratio",
    "means_change",
    "means_ratio",
    "baseline_mean",
    "n",
    "baseline_n",
    "p",
    "decision",
}
_NEEDS_BASELINE = {"baseline_min", "baseline_max", "baseline_cv"}


@dataclass(frozen=True)
class Figure:
    """One quoted number, as the analysis holds it; the views format it by its kind."""

    kind: Kind
    value: float | str | tuple[float, float]


# record . result (a load, or a label in double quotes, which may hold dots) . metric . field
_PARTS = re.compile(r'([^."\s]+)\s*\.\s*("[^"]+"|[^."\s]+)\s*\.\s*([^."\s]+)\s*\.\s*([^."\s]+)')


def _results(analysis: Analysed, where: str) -> tuple[list[ResolvedResult], str] | str:
    if where == "baseline":
        return list(analysis.baseline_results), "the campaign baseline"
    named = analysis.by_name.get(where)
    if named:
        entry = named[0]
        every = list(entry.results) + [r for rs in entry.variant_results for r in rs]
        return every, f"record `{entry.file.slug}`"
    return f"no record `{where}` (name a record by its slug or number, or `baseline`)"


def _pick(results: list[ResolvedResult], selector: str, whose: str) -> ResolvedResult | str:
    """The result a reference's second part names: by load (`c256`) or by label (`"..."`).

    Several runs of one comparison (`model.reruns`) count as one: a load or a label without its
    plan names the latest plan's, as the record's headline reads it. A position (`r2`) is not
    a name: a result added or removed would move it onto another result without a word.
    """
    gone = reruns.replaced([r.result for r in results])
    kept = [r for i, r in enumerate(results) if i not in gone]
    if selector.startswith('"'):
        label = selector.strip('"')
        at = [r for r in results if r.result.label == label] or [
            r for r in kept if (found := reruns.comparison_of(r.result)) is not None and found[0] == label
        ]
        if at:
            return at[0]
        near = difflib.get_close_matches(label, [r.result.label for r in results], n=1)
        return f"{whose} has no result labelled `{label}`" + (f" (did you mean `{near[0]}`?)" if near else "")
    m = re.fullmatch(r"c(\d+)", selector)
    if m is None:
        how = "a position is not a name" if re.fullmatch(r"r\d+", selector) else f"`{selector}` is not a result"
        return f"{how}: write `c` and its concurrency (`c256`) or the result's label in double quotes"
    number = int(m.group(1))
    at = [r for r in kept if r.result.concurrency == number]
    if len(at) == 1:
        return at[0]
    if not at:
        return f"{whose} has no result at concurrency {number}"
    labels = ", ".join(f"`{r.result.label}`" for r in at)
    return f"{whose} has {len(at)} results at concurrency {number} ({labels}): name one by its label in double quotes"


def _spread(values: Sequence[float]) -> float | None:
    if len(values) < 2:
        return None
    mean = statistics.fmean(values)
    return statistics.stdev(values) / mean * 100 if mean else None


def lookup(analysis: Analysed, reference: str) -> Figure | str:
    """The figure `reference` names (the text inside the braces), or why it names nothing."""
    m = _PARTS.fullmatch(reference.strip())
    if m is None:
        return f"`{reference}` is not `record.result.metric.field` (four parts joined by dots)"
    where, selector, metric, field = m.groups()
    found = _results(analysis, where)
    if isinstance(found, str):
        return found
    results, whose = found
    picked = _pick(results, selector, whose)
    if isinstance(picked, str):
        return picked
    if field not in FIELDS:
        return f"no field `{field}`; the fields are {', '.join(f'`{f}`' for f in FIELDS)}"
    if metric not in picked.samples:
        return f"result `{picked.result.label}` of {whose} has no metric `{metric}`"
    own, base = picked.samples[metric]
    if field in _NEEDS_BASELINE and not base:
        return f"`{metric}` in result `{picked.result.label}` has no baseline"
    c = picked.comparisons.get(metric)
    if field in _NEEDS_COMPARISON and c is None:
        return f"`{metric}` in result `{picked.result.label}` of {whose} is not compared, so it has no `{field}`"
    return (
        _figure(field, own, base, c) or f"`{metric}` in result `{picked.result.label}` has no `{field}` (not computed)"
    )


def _figure(field: str, own: Sequence[float], base: Sequence[float], c: Any) -> Figure | None:
    percent = {"change": "change_percent", "low": "ci_low_percent", "high": "ci_high_percent"}
    if field in percent:
        value = getattr(c, percent[field])
        return Figure("percent", value) if value is not None else None
    if field == "interval":
        if c.ci_low_percent is None or c.ci_high_percent is None:
            return None
        return Figure("interval", (c.ci_low_percent, c.ci_high_percent))
    if field == "ratio":
        # The headline's own estimate (issue 50): "1.63x eager's (+61.5%)" put the arithmetic
        # means' 1.625 beside the geometric +61.5%.
        return Figure("ratio", c.ratio) if c.ratio is not None else None
    if field == "means_ratio":
        return Figure("ratio", c.mean / c.baseline_mean) if c.baseline_mean else None
    if field == "means_change":
        value = c.arith_change_percent
        return Figure("percent", value) if value is not None else None
    if field in ("n", "baseline_n"):
        return Figure("count", float(c.n if field == "n" else c.baseline_n))
    if field == "p":
        return Figure("p", c.p_value) if c.p_value is not None else None
    if field == "decision":
        return Figure("word", c.decision)
    if field == "baseline_mean":
        return Figure("number", c.baseline_mean)
    side = base if field.startswith("baseline_") else own
    name = field.removeprefix("baseline_")
    if name == "mean":
        return Figure("number", c.mean if c is not None else statistics.fmean(own))
    if name in ("min", "max"):
        return Figure("number", min(side) if name == "min" else max(side)) if side else None
    spread = _spread(side)
    return Figure("share", spread) if spread is not None and math.isfinite(spread) else None


# --- where prose quotes them -------------------------------------------------------------------


def _place(text_lines: list[str], start: tuple[int, int], reference: str) -> tuple[int, int]:
    """The reference's own line and column, searched from its field's start; else the field's."""
    line, col = start
    for i in range(line - 1, len(text_lines)):
        at = text_lines[i].find(reference, col - 1 if i == line - 1 else 0)
        if at >= 0:
            return i + 1, at + 1
    return start


def reference_problems(analysis: Analysed) -> list[Problem]:
    """An `unknown-reference` error for each `{{ ... }}` in a prose field of a record or campaign.yaml
    that names nothing."""
    project = analysis.project
    out: list[Problem] = []
    for loaded in [project.campaign_file, *project.records]:
        lines: list[str] | None = None
        for path, written, inside in analysis.quotes_of(loaded):
            why = lookup(analysis, inside)
            if not isinstance(why, str):
                continue
            if lines is None:
                lines = loaded.path.read_text(encoding="utf-8").splitlines()
            line, col = _place(lines, loaded.positions.of(path), written)
            out.append(
                Problem(
                    rel(loaded.path, project.root),
                    line,
                    col,
                    "unknown-reference",
                    f"`{written}` names nothing: {why}",
                    "write `{{ record.result.metric.field }}`, as in `{{ 01.c256.output_throughput.change }}`; "
                    "docs/guide/format.md, Numbers in prose, lists the parts",
                )
            )
    # An override template's own text quotes figures too (a string it hands `inline`).
    for quote in template_quotes(project.root):
        why = lookup(analysis, quote.inside)
        if isinstance(why, str):
            out.append(
                Problem(
                    quote.shown,
                    quote.line,
                    quote.col,
                    "unknown-reference",
                    f"`{quote.written}` names nothing: {why}",
                    "a template's own text quotes figures as records do: `{{ record.result.metric.field }}`; "
                    "docs/guide/format.md, Numbers in prose, lists the parts",
                )
            )
    return out
