"""The analysis: everything computed from a valid project, built once per run and only read after.

`analyse(project)` resolves every result's numbers (typed, or from imported runs) with its
baseline, compares each metric (`compare`, the one place a "better by x%" is decided),
finds each record's best gain and open blockers, indexes the shared blockers, and ranks the
records. Pages, charts, the summary and the export read this object; none of them resolves
or compares numbers again, so they agree on every sign.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from generator import metrics, variants
from generator.model import Blocker, Result
from generator.numbers import Stat, Value, stat
from generator.project import Project, RecordFile
from generator.results.matching import numbers
from generator.road import CampaignStack, campaign_stack
from generator.sweeps import Sweep, sweeps

# --- the comparison -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Delta:
    metric: str
    value: Stat
    baseline: Stat
    difference: float
    # Relative change of the raw numbers: negative when a latency went down.
    change_percent: float
    # Signed so that positive is better in the metric's own direction.
    gain_percent: float
    # The difference is smaller than the two spreads combined, so it may be noise.
    within_noise: bool


def compare(
    metric_name: str, value: Value, baseline_value: Value, vocabulary: metrics.Vocabulary = metrics.BUILTIN
) -> Delta | None:
    """The change from `baseline_value` to `value`, or None when no percentage exists.

    There is none for an unknown metric or a baseline of zero. Every delta the outputs show
    is made here, once per metric of each result. `vocabulary` adds the campaign's own metrics.
    """
    metric = vocabulary.lookup(metric_name)
    if metric is None:
        return None
    v, b = stat(value), stat(baseline_value)
    if b.mean == 0:
        return None
    difference = v.mean - b.mean
    change = difference / abs(b.mean) * 100
    gain = change if metric.higher_is_better else -change
    # Independent spreads add in quadrature: the spread of a difference of two estimates.
    combined = math.hypot(v.spread, b.spread)
    return Delta(metric_name, v, b, difference, change, gain, abs(difference) < combined)


def gain_rank(percent: float, within_noise: bool) -> tuple[float, float]:
    """How gains compare: what was measured first, a within-noise change as none, its size only to break ties."""
    return (0.0 if within_noise else percent, percent)


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
    # Per metric, in the order of `metrics`; None where no percentage exists.
    deltas: Mapping[str, Delta | None]


@dataclass(frozen=True)
class Gain:
    """A record's best measured gain."""

    percent: float
    metric: str
    concurrency: int | None
    within_noise: bool


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
    best_gain: Gain | None
    # Its load sweeps, with capacity under the campaign's SLO and the frontier (generator.sweeps).
    sweeps: tuple[Sweep, ...] = ()
    # Each variant's results, in the order of the record's `variants`.
    variant_results: tuple[tuple[ResolvedResult, ...], ...] = ()


@dataclass(frozen=True)
class Analysis:
    project: Project
    # The campaign baseline's own results.
    baseline_results: tuple[ResolvedResult, ...]
    # In series order (number, then slug), like `project.records`.
    records: tuple[RecordAnalysis, ...]
    # By tier, then best gain (a gain within noise as none; no gain last), then number.
    ranked: tuple[RecordAnalysis, ...]
    blockers: BlockerIndex
    # The records by slug.
    by_slug: Mapping[str, RecordFile]
    # The launch command in force (baseline + adopted changes) and the road to the goal.
    stack: CampaignStack
    _by_path: Mapping[Path, RecordAnalysis] = field(repr=False, compare=False)

    def record(self, rec: RecordFile) -> RecordAnalysis:
        return self._by_path[rec.path]


# --- building it ----------------------------------------------------------------------------------


def analyse(project: Project) -> Analysis:
    """The analysis of a project that `validate` accepted (errors may stop a build, warnings do not)."""
    index = _blocker_index(project)
    records = tuple(_record_analysis(project, rec, index.shared) for rec in project.records)
    ranked = tuple(sorted(records, key=_rank_key))
    baseline_results = tuple(resolve(project, r, None) for r in project.campaign.baseline.results)
    return Analysis(
        project=project,
        baseline_results=baseline_results,
        records=records,
        ranked=ranked,
        blockers=index,
        by_slug=project.by_slug(),
        stack=campaign_stack(project, records, baseline_results),
        _by_path={a.file.path: a for a in records},
    )


def resolve(project: Project, result: Result, record: RecordFile | None) -> ResolvedResult:
    """One result's numbers and their comparison with its baseline."""
    found = numbers(project, result, record)
    vocabulary = project.campaign.vocabulary()
    deltas: dict[str, Delta | None] = {}
    for name, value in found.metrics.items():
        base = found.baseline.get(name)
        deltas[name] = None if base is None else compare(name, value, base, vocabulary)
    return ResolvedResult(found.result, found.metrics, found.baseline, found.notes, found.no_baseline, deltas)


def _record_analysis(project: Project, rec: RecordFile, shared: Mapping[str, SharedBlocker]) -> RecordAnalysis:
    results = tuple(resolve(project, r, rec) for r in rec.record.results)
    found = sweeps(
        [(r.result, r.metrics, r.baseline) for r in results], project.campaign.slo, project.campaign.hardware.count
    )
    by_variant = tuple(tuple(resolve(project, r, rec) for r in v.results) for v in rec.record.variants)
    # With variants, the headline is the retained variant's alone (see `variants.headline`).
    headline = tuple(variants.headline(rec.record, results, by_variant))
    return RecordAnalysis(
        rec, results, _open_blockers(rec, shared), _best_gain(headline), sweeps=found, variant_results=by_variant
    )


def _best_gain(results: tuple[ResolvedResult, ...]) -> Gain | None:
    """The best measured gain, or None without one.

    A change within noise is not a measured gain: it counts as no change (0%) when gains are
    compared, so any real improvement comes before it, and it carries its flag wherever it is shown.
    """
    best: Gain | None = None
    for resolved in results:
        for name, d in resolved.deltas.items():
            if d is None:
                continue
            # Ties keep the first result and metric in record order, so the choice is stable.
            if best is None or gain_rank(d.gain_percent, d.within_noise) > gain_rank(best.percent, best.within_noise):
                best = Gain(d.gain_percent, name, resolved.result.concurrency, d.within_noise)
    return best


def _rank_key(a: RecordAnalysis) -> tuple[int, bool, tuple[float, ...], int]:
    # Ranked on the gain as shown (one decimal), so two records that read the same tie on number.
    best = a.best_gain
    percent = round(best.percent, 1) if best else None
    within = bool(best.within_noise) if best else False
    return (
        a.file.record.tier,
        percent is None,
        tuple(-x for x in gain_rank(percent or 0.0, within)),
        a.file.number,
    )


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
