"""A record's primary comparison: the one that ranks it, chosen by a rule that never reads the numbers.

docs/guide/decisions.md, "The primary comparison": the author's named headline, the campaign
goal's load, the record's own expected load, the capacity under an SLO, or the first result,
in that order. `Rule` is the campaign's decision rule the choice and the comparisons read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from generator.analysis import guards, stats
from generator.analysis.records import Primary, ResolvedResult
from generator.analysis.sweeps import Sweep
from generator.model import reruns
from generator.project.load import Project, RecordFile


@dataclass(frozen=True)
class Rule:
    """The campaign's `decision:` block, with its defaults when there is none."""

    primary_metric: str | None
    alpha: float
    min_effect: float
    # Metric -> margin in percent (non-inferiority at alpha); a record's `expected.guardrails` replaces them.
    guardrails: Mapping[str, float] = field(default_factory=dict)


def rule(project: Project) -> Rule:
    d = project.campaign.decision
    if d is None:
        return Rule(None, 0.05, 1.0)
    return Rule(d.primary_metric, d.alpha, d.min_effect, dict(d.guardrails))


def primary_of(
    project: Project,
    rec: RecordFile,
    results: tuple[ResolvedResult, ...],
    found_sweeps: tuple[Sweep, ...],
    metric: str | None,
    decision: Rule,
) -> Primary | None:
    """The comparison that ranks the record (docs/guide/decisions.md, "The primary comparison").

    `results` are the record's headline results (its retained variant's, when it has variants);
    `Primary.index` is the position among them. In order: the result the record names as its
    `headline` (the author's, chosen in the write-up, not here from the numbers); the result at the load of the
    campaign's goal on this metric, so records that share it are ranked at one load; the result
    at the record's own `expected.concurrency` (shown beside the goal's load when both exist,
    never silently put in its place); when the campaign sets an SLO and the record has a load
    sweep, the capacity under the SLO; else the first result. The choice never looks at the
    numbers: picking whichever load ranks best would be a best-of-k pick, the same luck
    repetitions are pooled to avoid. Longer than most: the documented order, one step after another.
    """
    if metric is None:
        return None
    # A comparison run again reads its latest plan (`model.reruns`): the earlier runs never rank.
    gone = reruns.replaced([r.result for r in results])
    found = [(i, r, c) for i, r in enumerate(results) if i not in gone and (c := r.comparisons.get(metric)) is not None]
    expected = rec.record.expected
    picked, why = None, "the first result"
    named = rec.record.headline
    if named is not None:
        # The author's own headline ("124K C=2, -38.2%"), named before any number was read.
        at = [f for f in found if f[1].result.label == named.result]
        if at:
            picked, why = at[0], f"the record's headline result, {named.result}"
    goal = next((g for g in project.campaign.goals if g.metric == metric and g.concurrency is not None), None)
    if goal is not None and picked is None:
        at = [f for f in found if f[1].result.concurrency == goal.concurrency]
        if at:
            picked, why = at[0], f"at the goal's load, concurrency {goal.concurrency}"
    own = None
    if expected is not None and expected.concurrency is not None:
        at = [f for f in found if f[1].result.concurrency == expected.concurrency]
        if at and picked is None:
            picked, why = at[0], f"at the record's expected concurrency, {expected.concurrency}"
        elif at and at[0] is not picked:
            own = (at[0][1].result.label, expected.concurrency, at[0][2])
    if picked is None and project.campaign.slo:
        capacity = capacity_primary(found_sweeps, decision)
        if capacity is not None:
            return capacity
    if picked is None and found:
        picked = found[0]
    if picked is None:
        return None
    i, res, c = picked
    if i in gone.values():
        why += ", the latest of its runs"
    margins = guards.margins(rec.record, decision.guardrails)
    read = guards.guardrails_across(results, i, metric, margins, project.campaign.vocabulary())
    return Primary(
        metric, i, res.result.label, res.result.concurrency, c, chosen=why, guardrails=read, expected_load=own
    )


CAPACITY = "capacity under the SLO"


def capacity_primary(found: tuple[Sweep, ...], decision: Rule) -> Primary | None:
    """The first sweep's capacity change as the record's primary comparison, when it is a number."""
    for s in found:
        change, mine, theirs = s.change, s.record.capacity, s.baseline.capacity
        if change is None or change.bound is not None or mine is None or theirs is None:
            continue
        if mine.throughput is None or theirs.throughput is None:
            continue
        c = s.comparison
        if c is None:
            # No repetitions behind the capacities: one number against one, a single shot.
            c = stats.compare(
                [mine.throughput],
                [theirs.throughput],
                higher_is_better=True,
                alpha=decision.alpha,
                min_effect=decision.min_effect,
            )
        label = f"{CAPACITY} ({s.workload})"
        return Primary(CAPACITY, -1, label, None, c, kind="capacity", chosen="the load sweep's capacity under the SLO")
    return None
