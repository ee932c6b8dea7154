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
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from generator.analysis import answers, design, expect, guards, noise_model, ranking, stats
from generator.analysis.answers import value_side
from generator.analysis.launches import launch_steps, record_launch
from generator.analysis.primary import Rule, primary_of, rule
from generator.analysis.quoting import Quote, file_quotes
from generator.analysis.ranking import standing_rank
from generator.analysis.records import (
    BlockerIndex,
    Guardrail,
    Launch,
    Primary,
    RecordAnalysis,
    Regression,
    ResolvedResult,
    SharedBlocker,
    VariantDecision,
    blocker_index,
    index_by_name,
    open_blockers,
)
from generator.analysis.road import CampaignStack, GoalStatus, campaign_stack, goal_statuses
from generator.analysis.sequential import as_sequential
from generator.analysis.stats import Comparison
from generator.analysis.sweeps import Rule as SweepRule
from generator.analysis.sweeps import sweeps
from generator.base.incremental import BuildCache
from generator.model import metrics, quantity, variants
from generator.model.launch import Step
from generator.model.quantity import Value
from generator.model.result import Result
from generator.project.load import Loaded, Project, RecordFile
from generator.project.matching import Numbers, result_numbers

if TYPE_CHECKING:
    # Imported where used: `check` makes neither a frontier nor a cached analysis.
    from generator.analysis.frontier import CampaignFrontier

# --- the comparison -------------------------------------------------------------------------------


def samples(value: Value) -> list[float]:
    """A value's repetitions: a list as given, a number as one sample, a range as its midpoint (one sample)."""
    return quantity.samples(value)


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
    x, b = value_side(value), value_side(baseline_value)
    if paired and (not isinstance(x, list) or not isinstance(b, list) or len(x) != len(b)):
        return None
    return stats.compare(
        x, b, higher_is_better=metric.higher_is_better, paired=paired, alpha=alpha, min_effect=min_effect
    )


# --- what the analysis holds ----------------------------------------------------------------------
# The per-record types live in `analysis.records` (so `analysis.road` needs nothing from here);
# they are re-exported for the views.

__all__ = [
    "Analysis",
    "BlockerIndex",
    "Guardrail",
    "Launch",
    "Primary",
    "RecordAnalysis",
    "Regression",
    "ResolvedResult",
    "Rule",
    "SharedBlocker",
    "VariantDecision",
    "analyse",
    "compare",
    "record_analysis",
    "resolve",
    "rule",
    "samples",
]


@dataclass(frozen=True)
class Analysis:
    project: Project
    # The campaign baseline's own results.
    baseline_results: tuple[ResolvedResult, ...]
    # In series order (number, then slug), like `project.records`.
    records: tuple[RecordAnalysis, ...]
    # By tier, open and adopted before rejected and superseded, then the ranking group and its number, then number.
    ranked: tuple[RecordAnalysis, ...]
    blockers: BlockerIndex
    # The records by slug.
    by_slug: Mapping[str, RecordFile]
    rule: Rule
    # The launch command in force (baseline + adopted changes) and the road to the goal.
    stack: CampaignStack
    # Every goal with its direction, its one current level and whether it is reached.
    goals: tuple[GoalStatus, ...] = ()
    # The distinct primary metrics the ranked records are decided on, in ranking order.
    ranked_metrics: tuple[str, ...] = ()
    # Every configuration's throughput per GPU against tokens/s per user, on one statistic.
    frontier: CampaignFrontier | None = None
    # The distinct loads the ranked records' metric comparisons are read at ("output_throughput at
    # concurrency 1"), in ranking order: more than one means the ranks compare unlike rows.
    ranked_loads: tuple[str, ...] = ()
    _by_path: Mapping[Path, RecordAnalysis] = field(default_factory=dict, repr=False, compare=False)

    def record(self, rec: RecordFile) -> RecordAnalysis:
        return self._by_path[rec.path]

    def by_path(self, path: Path) -> RecordAnalysis | None:
        return self._by_path.get(path)

    def quotes_of(self, loaded: Loaded) -> tuple[Quote, ...]:
        """A file's quotes: a record's as its analysis noted them, another file's read from its data."""
        entry = self._by_path.get(loaded.path)
        return entry.quotes if entry is not None and entry.file is loaded else file_quotes(loaded)

    @cached_property
    def by_name(self) -> Mapping[str, tuple[RecordAnalysis, ...]]:
        """The records each name quoted prose may give one by (slug, `07` or `7`), in series order.

        Indexed once: looking every quote up by scanning every record made a campaign's pages quadratic.
        """
        return index_by_name(self.records)


# --- building it ----------------------------------------------------------------------------------


def analyse(project: Project, build_cache: BuildCache | None = None, *, launches: bool = True) -> Analysis:
    """The analysis of a project that `validate` accepted (errors may stop a build, warnings do not).

    With `build_cache` (a build), a record whose analysis read nothing that changed since the
    last build is not analysed again (`analysis.reuse`). Without `launches` (`check`, whose rules
    read a launch only for a record that removes flags), no record's launch command is made
    (`RecordAnalysis.launch` is None) nor the frontier, which reads them.
    """
    index = blocker_index(project)
    decision = rule(project)
    steps = launch_steps(project) if launches else None

    def one(
        project: Project, rec: RecordFile, shared: Mapping[str, SharedBlocker], steps: Mapping[str, Step]
    ) -> RecordAnalysis:
        return record_analysis(project, rec, shared, decision, steps)

    if build_cache is None:
        records = tuple(record_analysis(project, rec, index.shared, decision, steps) for rec in project.records)
    else:
        from generator.analysis.reuse import Reuse

        # A cached analysis is whole: one made without launches would be reused by a build.
        reuse = Reuse(project, build_cache, index.shared, steps or launch_steps(project), decision)
        records = tuple(reuse.analysis(rec, one) for rec in project.records)
    ranked = tuple(sorted(records, key=rank_key))
    baseline_results = tuple(resolve(project, r, None, decision) for r in project.campaign.baseline.results)
    stack = campaign_stack(project, records, baseline_results, decision.alpha, decision.min_effect)
    frontier: CampaignFrontier | None = None
    if launches:
        from generator.analysis.frontier import campaign_frontier

        frontier = campaign_frontier(
            records,
            baseline_results,
            project.campaign.slo,
            project.campaign.hardware.count,
            [r.slug for r in stack.records],
        )
    return Analysis(
        project=project,
        baseline_results=baseline_results,
        records=records,
        ranked=ranked,
        blockers=index,
        by_slug=project.by_slug(),
        rule=decision,
        stack=stack,
        goals=goal_statuses(project, stack.road, baseline_results),
        ranked_metrics=tuple(dict.fromkeys(a.primary.metric for a in ranked if a.primary is not None)),
        frontier=frontier,
        ranked_loads=_ranked_loads(ranked),
        _by_path={a.file.path: a for a in records},
    )


def _ranked_loads(ranked: tuple[RecordAnalysis, ...]) -> tuple[str, ...]:
    seen: list[str] = []
    for a in ranked:
        p = a.primary
        if p is None or p.kind != "metric":
            continue
        where = f"{p.metric} at concurrency {p.concurrency}" if p.concurrency is not None else f"{p.metric} ({p.label})"
        if where not in seen:
            seen.append(where)
    return tuple(seen)


def resolve(
    project: Project, result: Result, record: RecordFile | None, decision: Rule | None = None
) -> ResolvedResult:
    """One result's numbers and their comparison with its baseline."""
    d = decision or rule(project)
    found = result_numbers(project, result, record)
    vocabulary = project.campaign.vocabulary()
    not_compared = _not_comparable(found.result, found.notes)
    out: dict[str, Comparison | None] = {}
    shown: dict[str, tuple[tuple[float, ...], tuple[float, ...]]] = {}
    for name, value in found.metrics.items():
        base = found.baseline.get(name)
        shown[name] = (tuple(samples(value)), tuple(samples(base)) if base is not None else ())
    expected = record.record.expected if record is not None else None
    made = design.of_result(found, shown, expected.metric if expected is not None else d.primary_metric, d.alpha)
    for name, value in found.metrics.items():
        base = found.baseline.get(name)
        if base is None or not_compared is not None:
            out[name] = None
            continue
        out[name] = compare_counted(name, value, base, found, made, d.alpha, d.min_effect, vocabulary)
    notes = found.notes if not_compared is None else (*found.notes, f"Not compared: {not_compared}.")
    noise = noise_model.of_result(
        shown,
        (found.origins, found.baseline_origins),
        out,
        {name: m.higher_is_better for name in shown if (m := vocabulary.lookup(name)) is not None},
        paired=result.paired,
        sequential=result.sequential is not None,
        alpha=d.alpha,
    )
    return ResolvedResult(
        found.result, found.metrics, found.baseline, notes, found.no_baseline, out, shown, not_compared, made, noise
    )


def compare_counted(
    name: str,
    value: Value,
    base: Value,
    found: Numbers,
    made: design.Design,
    alpha: float,
    min_effect: float,
    vocabulary: metrics.Vocabulary = metrics.BUILTIN,
) -> Comparison | None:
    """One metric of a result compared as its design says: launch means when runs share launches
    (block-paired when the launches pair), and a sequential result's confidence sequence."""
    result = found.result
    # Runs that share a launch are one observation (analysis.design): compared as launch means.
    value, base, paired = design.counted(value, base, found, made, paired=result.paired)
    made_here = compare(name, value, base, paired=paired, alpha=alpha, min_effect=min_effect, vocabulary=vocabulary)
    if made_here is not None and result.sequential is not None and paired:
        # Looked at after every block: the interval valid at every look, not the fixed-n t; the
        # blocks' differences made as the runner's looks made them (analysis.sequential).
        return as_sequential(made_here, samples(value), samples(base))
    return made_here


def _not_comparable(result: Result, notes: tuple[str, ...]) -> str | None:
    """Why an imported run cannot be compared with its baseline run (another model, backend or workload)."""
    # The matching stage names what differs beyond the record's declared change (project.matching).
    prefix = "Not comparable with its baseline beyond the declared change: "
    for note in notes:
        if note.startswith(prefix):
            return "the run differs from its baseline run in " + note.removeprefix(prefix).rstrip(".")
    return None


def record_analysis(
    project: Project,
    rec: RecordFile,
    shared: Mapping[str, SharedBlocker],
    decision: Rule,
    steps: Mapping[str, Step] | None,
) -> RecordAnalysis:
    """One record's analysis: its results resolved and compared, its primary comparison and what is read beside it."""
    # Longer than most: one record's whole analysis in the order each part reads the one before
    # (results, variants, primary, guardrails, evidence, regressions), built in one place.
    vocabulary = project.campaign.vocabulary()
    results = answers.rerun_notes(tuple(resolve(project, r, rec, decision) for r in rec.record.results), decision.alpha)
    by_variant = tuple(
        answers.rerun_notes(tuple(resolve(project, r, rec, decision) for r in v.results), decision.alpha)
        for v in rec.record.variants
    )
    # With variants, the headline is the retained variant's alone (see `variants.headline`):
    # diagnostic and rejected variants never rank.
    headline = tuple(variants.headline(rec.record, results, by_variant))
    expected = rec.record.expected
    metric = expected.metric if expected is not None else decision.primary_metric
    sweep_rule = SweepRule(decision.alpha, decision.min_effect)
    # The retained variant's results are the record's measurements too: its load sweep counts.
    kept = variants.retained(rec.record)
    measured = results + (by_variant[rec.record.variants.index(kept)] if kept is not None else ())
    found = sweeps(
        [(r.result, r.metrics, r.baseline) for r in measured],
        project.campaign.slo,
        project.campaign.hardware.count,
        sweep_rule,
    )
    primary = primary_of(project, rec, headline, found, metric, decision)
    if primary is not None:
        primary = answers.best_of(rec, by_variant, primary, decision.alpha)
    every = [*rec.record.results, *(r for v in rec.record.variants for r in v.results)]
    compared = _variant_decisions(rec, by_variant, metric) if primary is None else ()
    # Measured variants are never "as reported", even when one of them also quotes its source.
    reported = primary is None and not compared and any(r.has_reported for r in every)
    if primary is not None:
        group = stats.rank_group(primary.comparison, guardrail_broken=primary.guardrail_broken)
    else:
        group = "reported" if reported else "not measured"
    return RecordAnalysis(
        rec,
        results,
        open_blockers(rec, shared),
        metric,
        primary,
        reported,
        sweeps=found,
        variant_results=by_variant,
        headline=headline,
        launch=record_launch(project, rec, steps) if steps is not None else None,
        group=group,
        variant_decisions=compared,
        deciders=guards.deciders(rec.record, results, by_variant),
        variant_guardrails=guards.variant_guardrails(
            by_variant, metric, guards.margins(rec.record, decision.guardrails), vocabulary
        ),
        expectations=expect.expectation_checks(expected, primary, headline, decision.alpha),
        regressions=answers.regressions(headline, primary, decision.min_effect),
        unranked_why=answers.unranked_why(headline, metric) if primary is None else None,
        measured_instead=answers.measured_instead(headline) if primary is None else None,
        quotes=file_quotes(rec),
        multiplicity=ranking.multiplicity(
            (r.comparisons.values() for r in (*results, *(r for rs in by_variant for r in rs))), decision.alpha
        ),
    )


def _variant_decisions(
    rec: RecordFile, by_variant: tuple[tuple[ResolvedResult, ...], ...], metric: str | None
) -> tuple[VariantDecision, ...]:
    """A record that retained no variant: each candidate's first comparison on the primary metric.

    None of them ranks the record (nothing was kept), but they were measured and decided, and
    the page says so rather than nothing.
    """
    if metric is None:
        return ()
    out = []
    for v, rs in zip(rec.record.variants, by_variant, strict=True):
        if v.outcome == "diagnostic":
            continue
        found = next(((r, c) for r in rs if (c := r.comparisons.get(metric)) is not None), None)
        if found is not None:
            out.append(VariantDecision(v.label, found[0].result.label, found[1]))
    return tuple(out)


def rank_key(a: RecordAnalysis) -> tuple[int, int, int, int, float, float, int]:
    """Tier; open and adopted before rejected and superseded; the author's standing
    (`ranking.standing_rank`: recommended first, historical last); the ranking group and its
    number; then number.

    The number a group is ordered by is rounded to one decimal, as shown, so two records that
    read the same tie on number.
    """
    r = a.file.record
    closed = 1 if r.status in ("rejected", "superseded") else 0
    if a.primary is not None:
        group, part, value = stats.rank_key(a.primary.comparison, guardrail_broken=a.primary.guardrail_broken)
        value = round(value, 1) if math.isfinite(value) else value
    else:
        group, part, value = stats.GROUPS.index(a.group), 0, 0.0
    return (r.tier, closed, standing_rank(r.standing), group, part, value, a.file.number)
