"""The analysis: everything computed from a valid project, built once per run and only read after.

`analyse(project)` resolves every result's numbers (typed, or from imported runs) with its
baseline, compares each metric (`compare`, the one place a decision is made, through
`stats.compare`), finds each record's primary-metric evidence and open blockers, indexes the
shared blockers, and ranks the records by tier, then that evidence's decision. Pages,
charts, the summary and the export read this object; none of them resolves or compares
numbers again, so they agree on every sign.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from generator.analysis import stats
from generator.analysis.road import CampaignStack, campaign_stack
from generator.analysis.stats import Comparison
from generator.analysis.sweeps import Sweep, sweeps
from generator.model import metrics, variants
from generator.model.quantity import Value, stat
from generator.model.record import Blocker
from generator.model.result import Result
from generator.project.load import Project, RecordFile
from generator.project.matching import numbers

# --- the comparison -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    """The campaign's `decision:` block, with its defaults when there is none."""

    primary_metric: str | None
    alpha: float
    min_effect: float


def rule(project: Project) -> Rule:
    d = project.campaign.decision
    if d is None:
        return Rule(None, 0.05, 1.0)
    return Rule(d.primary_metric, d.alpha, d.min_effect)


def samples(value: Value) -> list[float]:
    """A value's repetitions: a list as given, a number as one sample, a range as its midpoint (one sample)."""
    if isinstance(value, list):
        return [float(v) for v in value]
    return [stat(value).mean]


def compare(
    metric_name: str,
    value: Value,
    baseline_value: Value,
    *,
    paired: bool = False,
    alpha: float = 0.05,
    min_effect: float = 1.0,
    vocabulary: metrics.Vocabulary = metrics.BUILTIN,
) -> Comparison | None:
    """The comparison of `value` with `baseline_value`, or None when the two cannot be compared.

    None for a metric outside the vocabulary (no direction) and for a paired result whose two
    sides differ in n (`check` reports it as an error). Every comparison the outputs show is
    made here, once per metric of each result, by `stats.compare`. `vocabulary` adds the
    campaign's own metrics.
    """
    metric = vocabulary.lookup(metric_name)
    if metric is None:
        return None
    x, b = samples(value), samples(baseline_value)
    if paired and len(x) != len(b):
        return None
    return stats.compare(
        x, b, higher_is_better=metric.higher_is_better, paired=paired, alpha=alpha, min_effect=min_effect
    )


# --- what the analysis holds ----------------------------------------------------------------------


@dataclass(frozen=True)
class ResolvedResult:
    """A result's numbers as shown: its metrics, their baseline, each metric's delta, and notes."""

    # The result, with the load and workload its imported run recorded.
    result: Result
    metrics: Mapping[str, Value]
    baseline: Mapping[str, Value]
    # Said next to the delta: where the baseline came from, what limits the comparison.
    notes: tuple[str, ...]
    no_baseline: bool
    # Per metric, in the order of `metrics`; None where the metric cannot be compared.
    comparisons: Mapping[str, Comparison | None]


@dataclass(frozen=True)
class Primary:
    """A record's evidence on its primary metric: the one comparison that ranks it."""

    metric: str
    # The result it comes from: its index in the record's results, its label and load.
    index: int
    label: str
    concurrency: int | None
    comparison: Comparison


@dataclass(frozen=True)
class SharedBlocker:
    """A blocker with an `id`, where it is defined: the record and its index there."""

    record: RecordFile
    index: int
    blocker: Blocker


@dataclass(frozen=True)
class BlockerIndex:
    """Lookups across records, so pages render in linear time."""

    # Blocker id -> its definition (the first, when `check` found a duplicate).
    shared: Mapping[str, SharedBlocker]
    # Blocker id -> every (record, entry) whose blocker points at it with `ref`, in series order.
    refs: Mapping[str, tuple[tuple[RecordFile, Blocker], ...]]
    # Slug -> the records whose `superseded_by` names it.
    superseding: Mapping[str, tuple[RecordFile, ...]]


@dataclass(frozen=True)
class RecordAnalysis:
    file: RecordFile
    results: tuple[ResolvedResult, ...]
    # Shared ones resolved to their definitions, each once.
    open_blockers: tuple[Blocker, ...]
    # The record's own `expected.metric`, else the campaign's `decision.primary_metric`.
    primary_metric: str | None
    primary: Primary | None
    # No measured primary evidence, but evidence as the source reported it (never compared).
    reported: bool
    # Its load sweeps, with capacity under the campaign's SLO and the frontier (generator.analysis.sweeps).
    sweeps: tuple[Sweep, ...] = ()
    # Each variant's results, in the order of the record's `variants`.
    variant_results: tuple[tuple[ResolvedResult, ...], ...] = ()

    @property
    def headline(self) -> tuple[ResolvedResult, ...]:
        """The results the record's change is measured by: its own, or its retained variant's
        (`variants.headline`); `primary.index` is a position among them."""
        return tuple(variants.headline(self.file.record, self.results, self.variant_results))


@dataclass(frozen=True)
class Analysis:
    project: Project
    # The campaign baseline's own results.
    baseline_results: tuple[ResolvedResult, ...]
    # In series order (number, then slug), like `project.records`.
    records: tuple[RecordAnalysis, ...]
    # By tier, then the primary metric's decision (`rank_key`), then number.
    ranked: tuple[RecordAnalysis, ...]
    blockers: BlockerIndex
    # The records by slug.
    by_slug: Mapping[str, RecordFile]
    rule: Rule
    # The launch command in force (baseline + adopted changes) and the road to the goal.
    stack: CampaignStack
    _by_path: Mapping[Path, RecordAnalysis] = field(repr=False, compare=False)

    def record(self, rec: RecordFile) -> RecordAnalysis:
        return self._by_path[rec.path]


# --- building it ----------------------------------------------------------------------------------


def analyse(project: Project) -> Analysis:
    """The analysis of a project that `validate` accepted (errors may stop a build, warnings do not)."""
    index = _blocker_index(project)
    decision = rule(project)
    records = tuple(_record_analysis(project, rec, index.shared, decision) for rec in project.records)
    ranked = tuple(sorted(records, key=rank_key))
    baseline_results = tuple(resolve(project, r, None, decision) for r in project.campaign.baseline.results)
    return Analysis(
        project=project,
        baseline_results=baseline_results,
        records=records,
        ranked=ranked,
        blockers=index,
        by_slug=project.by_slug(),
        rule=decision,
        stack=campaign_stack(project, records, baseline_results),
        _by_path={a.file.path: a for a in records},
    )


def resolve(
    project: Project, result: Result, record: RecordFile | None, decision: Rule | None = None
) -> ResolvedResult:
    """One result's numbers and their comparison with its baseline."""
    d = decision or rule(project)
    found = numbers(project, result, record)
    vocabulary = project.campaign.vocabulary()
    out: dict[str, Comparison | None] = {}
    for name, value in found.metrics.items():
        base = found.baseline.get(name)
        out[name] = (
            None
            if base is None
            else compare(
                name, value, base, paired=result.paired, alpha=d.alpha, min_effect=d.min_effect, vocabulary=vocabulary
            )
        )
    return ResolvedResult(found.result, found.metrics, found.baseline, found.notes, found.no_baseline, out)


def _record_analysis(
    project: Project, rec: RecordFile, shared: Mapping[str, SharedBlocker], decision: Rule
) -> RecordAnalysis:
    results = tuple(resolve(project, r, rec, decision) for r in rec.record.results)
    by_variant = tuple(tuple(resolve(project, r, rec, decision) for r in v.results) for v in rec.record.variants)
    # With variants, the headline is the retained variant's alone (see `variants.headline`):
    # diagnostic and rejected variants never rank.
    headline = tuple(variants.headline(rec.record, results, by_variant))
    expected = rec.record.expected
    metric = expected.metric if expected is not None else decision.primary_metric
    primary = _primary(rec, headline, metric)
    every = [*rec.record.results, *(r for v in rec.record.variants for r in v.results)]
    reported = primary is None and any(r.has_reported for r in every)
    # The retained variant's results are the record's measurements too: its load sweep counts.
    kept = variants.retained(rec.record)
    measured = results + (by_variant[rec.record.variants.index(kept)] if kept is not None else ())
    found = sweeps(
        [(r.result, r.metrics, r.baseline) for r in measured], project.campaign.slo, project.campaign.hardware.count
    )
    return RecordAnalysis(
        rec, results, _open_blockers(rec, shared), metric, primary, reported, sweeps=found, variant_results=by_variant
    )


def _primary(rec: RecordFile, results: tuple[ResolvedResult, ...], metric: str | None) -> Primary | None:
    """The comparison that ranks the record: of its primary metric, at the expected concurrency if given.

    `results` are the record's headline results (its retained variant's, when it has variants);
    `Primary.index` is the position among them.

    Several results may measure the primary metric (one per load): the one at
    `expected.concurrency` when the record names a load, else the first in the record's order.
    The choice never looks at the numbers: picking whichever load ranks best would be a
    best-of-k pick, the same luck repetitions are pooled to avoid.
    """
    if metric is None:
        return None
    found = [(i, r, c) for i, r in enumerate(results) if (c := r.comparisons.get(metric)) is not None]
    expected = rec.record.expected
    if expected is not None and expected.concurrency is not None:
        at = [f for f in found if f[1].result.concurrency == expected.concurrency]
        found = at or found
    if not found:
        return None
    i, res, c = found[0]
    return Primary(metric, i, res.result.label, res.result.concurrency, c)


def rank_key(a: RecordAnalysis) -> tuple[int, int, float, int]:
    """Tier, then the primary metric's decision (`stats.rank_key`; reported evidence, then none, last), then number.

    The number a group is ordered by is rounded to one decimal, as shown, so two records that
    read the same tie on number.
    """
    if a.primary is not None:
        group, value = stats.rank_key(a.primary.comparison)
        value = round(value, 1) if math.isfinite(value) else value
    else:
        group, value = (4 if a.reported else 5), 0.0
    return (a.file.record.tier, group, value, a.file.number)


def _open_blockers(rec: RecordFile, shared: Mapping[str, SharedBlocker]) -> tuple[Blocker, ...]:
    out: list[Blocker] = []
    seen: set[int] = set()
    for b in rec.record.blockers:
        definition = shared[b.ref].blocker if b.ref and b.ref in shared else b
        if definition.status == "open" and id(definition) not in seen:
            seen.add(id(definition))
            out.append(definition)
    return tuple(out)


def _blocker_index(project: Project) -> BlockerIndex:
    shared: dict[str, SharedBlocker] = {}
    refs: dict[str, list[tuple[RecordFile, Blocker]]] = {}
    superseding: dict[str, list[RecordFile]] = {}
    for rec in project.records:
        for j, b in enumerate(rec.record.blockers):
            if b.id and b.id not in shared:
                shared[b.id] = SharedBlocker(rec, j, b)
            if b.ref:
                refs.setdefault(b.ref, []).append((rec, b))
        if rec.record.superseded_by:
            superseding.setdefault(rec.record.superseded_by, []).append(rec)
    return BlockerIndex(
        shared,
        {k: tuple(v) for k, v in refs.items()},
        {k: tuple(v) for k, v in superseding.items()},
    )
