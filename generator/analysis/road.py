"""The campaign's stack and the road to its goal, computed once in the analysis stage.

The stack is the launch command in force: the campaign baseline with every adopted record's change
applied (`generator.model.launch`); a superseded record is not adopted, so it is not in it. The road
follows the primary metric from the baseline through each adopted step's measured change to the
current level and the distance to each goal on that metric.

The primary metric is the first goal's metric at its concurrency. Steps are composed as ratios:
each step multiplies the level before it by what its record measured (mean / baseline mean), so
a step measured 500 -> 600 on another day's baseline adds 20%, never +100 in the metric's unit.
A step's change as printed is its record's own estimate (the geometric means' or paired ratio,
in percent and applied to the level before); the level moves by the means' ratio, which the
page names beside it where the two differ as printed (issue 50).
The level carries an interval (issue #36). Its log is a sum of the log means of the sets of runs
it rests on, each with a coefficient: the baseline's runs +1, then each step's runs +1 and its
baseline's runs -1. A set that appears twice (a step's baseline is the runs of the step before
it, the usual chain) is one term, so shared runs cancel: when every step builds on the one
before, the level is the last step's own runs, the configuration in force measured directly.
Sets that differ are independent runs; the variance is the sum of coefficient^2 times each set's
variance of the log mean, with Welch-Satterthwaite degrees of freedom, at the campaign's alpha.
Adding each step's variance as if the steps were independent made the interval 2-3x too wide
in typical chains, and too narrow where two steps share a baseline. A paired step whose
baseline is not shared enters as one term with its paired standard error. A set without a spread
leaves the level without an interval (unless it cancels). A goal is `reached` only when that
interval clears it: a one-sided test at alpha / 2 that the level is past the goal.

A step is not chained (not composed into the level, and the page says why) when it was measured
under another load or workload than the level before it, on a scale that has no ratio (values at
or below 0), or on a baseline that differs from the level before it by more than their noise
(the t test of the two log levels at alpha; without any spread, by more than min_effect).
Retained variants' results are the record's (the record's headline results).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from generator.analysis.levels import Level, compose, level_of, log_mean, log_spread
from generator.analysis.records import RecordAnalysis, ResolvedResult
from generator.analysis.stats import Comparison
from generator.analysis.tdist import t_p_value, welch_df
from generator.checks.stack import adopted_steps
from generator.model.campaign import Goal
from generator.model.launch import Cycle, Stack, apply_steps
from generator.model.quantity import Stat, Value, fmt_number, stat, unreplicated_text
from generator.model.result import Range, Result, Workload
from generator.model.variants import effective_change
from generator.project.load import Project, RecordFile


@dataclass(frozen=True)
class StepChange:
    """One step's measured change on the primary metric."""

    result: Result  # what was measured: its label, load and workload
    before: Stat
    after: Stat
    delta: float  # what the step adds to the level before it, in the metric's unit (composed as a ratio)
    change_percent: float  # the record's change (its estimate: the geometric means' or paired ratio)
    # Of `change`, in the metric's unit (the ratio's interval applied to the level before); None for a single shot.
    interval: tuple[float, float] | None
    decision: str | None
    comparison: Comparison | None = None
    # The step's measured change is only a single shot or inconclusive: counted, and marked.
    weak: str | None = None
    # The record's change in the metric's unit, applied to the level before: the same estimate as
    # `change_percent` (issue 50: "-0.7709 tok/s (-2.1%)" put the means' difference beside the
    # geometric percent). 0 for a step not composed.
    change: float = 0.0
    # `delta` in percent of the level before: the ratio of the arithmetic means the level
    # composes, another estimate than `change_percent`, printed under its own name.
    means_percent: float | None = None


@dataclass(frozen=True)
class RoadStep:
    record: RecordFile
    change: StepChange | None  # None: not measured on the primary metric
    level_before: float | None
    level_after: float | None
    # Why this step is not composed into the level; None when it is.
    chain_break: str | None = None

    @property
    def label(self) -> str:
        return f"{self.record.number:02d}-{self.record.slug}"


@dataclass(frozen=True)
class GoalDistance:
    goal: Goal
    direction: str  # "above" or "below"
    # Still to go in the goal's direction (negative once passed), from the level's interval:
    # `low` from its better end, `high` from its worse end; the point's distance when it has none.
    low: float
    high: float
    # The level has an interval, so `reached` can be said.
    interval: bool = True
    point: float = 0.0  # the point level's distance
    alpha: float = 0.05  # the level's interval is 1 - alpha

    @property
    def gap(self) -> float:
        """The target minus the current level, raw sign (what the road's chart says)."""
        return self.point if self.direction == "above" else -self.point

    @property
    def reached(self) -> bool:
        """The whole interval clears the goal; never without an interval."""
        return self.interval and self.high <= 0


@dataclass(frozen=True)
class Road:
    metric: str
    concurrency: int | None
    baseline: Stat
    baseline_source: str  # where the baseline level comes from, in words
    baseline_result: Result | None
    steps: tuple[RoadStep, ...]
    current: Stat
    # False when a measured step was not composed (`RoadStep.chain_break` says why).
    chained: bool
    goals: tuple[GoalDistance, ...]
    other_goals: tuple[Goal, ...]  # goals on another metric or concurrency: not on this road
    level: Level | None = None  # the current level with its interval
    direction: str = "above"  # the road's metric: "above" when higher is better


@dataclass(frozen=True)
class GoalStatus:
    """A goal as the home page's table shows it: one current level for it, computed here."""

    goal: Goal
    direction: str
    # The current level: the road's for a goal on the road, else the stated or the baseline's value.
    current: Stat | None
    current_from: str | None
    on_road: bool
    # On the road: reached by the level's interval; None when not known (not on the road, no interval).
    reached: bool | None
    # The current level is a range the source gives as approximate ("~8-11").
    about: bool = False


@dataclass(frozen=True)
class CampaignStack:
    # The launch command in force; None only while adopted records build on each other in a circle.
    stack: Stack | None
    records: tuple[RecordFile, ...]  # the adopted records, in the order applied
    # (record label, what its change holds that the command cannot say: patches, an unrecorded command)
    notes: tuple[tuple[str, str], ...]
    road: Road | None

    def has(self, slug: str) -> bool:
        return slug in self.slugs

    @functools.cached_property
    def slugs(self) -> frozenset[str]:
        """The adopted records' slugs: `has` is asked for every record by the summary, its CSV
        and the export, and scanning the stack each time was quadratic."""
        return frozenset(rec.slug for rec in self.records)


def step_change(ra: RecordAnalysis, metric: str, concurrency: int | None) -> tuple[ResolvedResult, Comparison] | None:
    """A step's measured comparison on `metric`: the headline result at the road's concurrency, else
    the record's primary one, else its first. The one place the road reads a comparison; a record
    with variants is measured by its retained variant's results, as its rank is."""
    measured = [(r, c) for r in ra.headline if (c := r.comparisons.get(metric)) is not None]
    if not measured:
        return None
    primary = ra.primary
    first = next(((r, c) for r, c in measured if primary is not None and r.result.label == primary.label), measured[0])
    r, c = next(((r, c) for r, c in measured if r.result.concurrency == concurrency), first)
    # The record's one answer on this comparison (a best of k corrected by Holm), never a second one.
    if (
        primary is not None
        and primary.kind == "metric"
        and primary.metric == metric
        and primary.label == r.result.label
    ):
        c = primary.comparison
    return r, c


def campaign_stack(
    project: Project,
    records: Sequence[RecordAnalysis],
    baseline: Sequence[ResolvedResult],
    alpha: float = 0.05,
    min_effect: float = 1.0,
) -> CampaignStack:
    base = project.campaign.baseline
    applied = apply_steps(base.command, dict(base.env), adopted_steps(project))
    found = None if isinstance(applied, Cycle) else applied
    by_label = {f"{a.file.number:02d}-{a.file.slug}": a for a in records}
    order = [by_label[label] for label in found.order] if found else []
    notes: list[tuple[str, str]] = []
    adopted = {a.file.slug for a in order}
    for a in order:
        change, label = effective_change(a.file.record), f"{a.file.number:02d}-{a.file.slug}"
        # Measured with a change the stack does not apply: the command differs from what was measured.
        notes += [
            (label, f"builds on `{d}`, which is not adopted") for d in a.file.record.builds_on if d not in adopted
        ]
        if change is None:
            notes.append((label, "no `change` recorded: nothing added to the command"))
            continue
        if change.command == "not-recorded":
            notes.append((label, f"its launch command was not recorded: {change.missing}"))
        notes += [(label, f"patch: {p.summary}") for p in change.patches]
    road = _road(project, order, baseline, alpha, min_effect)
    return CampaignStack(found, tuple(a.file for a in order), tuple(notes), road)


def _load(result: Result | None) -> tuple[int | None, object, Workload | None]:
    if result is None:
        return (None, None, None)
    return (result.concurrency, result.request_rate, result.workload)


def _difference(here: Result | None, before: Result | None, before_name: str) -> str | None:
    """What differs in load or workload between a step's measurement and the level before it.

    Concurrency defines the road, so one not recorded breaks the chain; a request rate or a
    workload recorded on one side only cannot be compared, and is not called a difference.
    """
    a, b = _load(here), _load(before)
    parts = []
    for k, word in enumerate(("concurrency", "request rate", "workload")):
        x, y = a[k], b[k]
        if x == y or (k > 0 and (x is None or y is None)):
            continue
        parts.append(f"{word} {_shown(x)} here, {_shown(y)} {before_name}")
    return "; ".join(parts) or None


def _shown(value: object) -> str:
    if value is None:
        return "not recorded"
    if isinstance(value, Workload):
        return _workload_text(value)
    return "unlimited" if value == "inf" else str(value)


def _workload_text(w: Workload) -> str:
    bits = [w.dataset, *(f"{k} {v}" for k, v in (("input", w.input_len), ("output", w.output_len)) if v is not None)]
    return " ".join(b for b in bits if b) or "unnamed"


def _road(
    project: Project,
    order: Sequence[RecordAnalysis],
    baseline: Sequence[ResolvedResult],
    alpha: float,
    min_effect: float,
) -> Road | None:
    """From the baseline's level through each adopted record's step, to the first goal's metric.

    Over 60 lines: one walk along the stack, each step composed onto the level the one before
    left, or marked as the place the chain breaks; split up, that state would pass between them.
    """
    goals = project.campaign.goals
    if not goals:
        return None
    first = goals[0]
    metric, concurrency = first.metric, first.concurrency
    direction = goal_direction(project, first)
    start = next(
        (r for r in baseline if metric in r.metrics and (concurrency is None or r.result.concurrency == concurrency)),
        None,
    )
    if start is not None:
        value: Value = start.metrics[metric]
        base_result: Result | None = start.result
        source = f"baseline result `{start.result.label}`"
    elif first.current is not None:
        value, source, base_result = first.current, "the goal's stated current level", None
    else:
        return None
    level_stat = stat(value)
    level = level_of(value, alpha)
    steps: list[RoadStep] = []
    prev_result, prev_name, chained = base_result, "in the baseline", True
    for a in order:
        found = step_change(a, metric, concurrency)
        if found is None:
            steps.append(RoadStep(a.file, None, None, None))
            continue
        res, c = found
        before, after = stat(res.baseline[metric]), stat(res.metrics[metric])
        why = _difference(res.result, prev_result, prev_name)
        if why is None and (c.ratio is None or c.baseline_mean <= 0):
            why = "its values include 0 or less, so its change has no ratio to compose"
        if why is None:
            why = _baseline_differs(level, res.baseline[metric], alpha, min_effect)
        weak = None
        if c.decision == "unreplicated":
            weak = (
                unreplicated_text(c.n, c.baseline_n, c.spread_unknown).removeprefix("unreplicated (").removesuffix(")")
            )
        elif c.decision == "inconclusive":
            weak = "inconclusive"
        if why is not None:
            chained = False
            change = StepChange(res.result, before, after, 0.0, c.change_percent or 0.0, None, c.decision, c, weak)
            steps.append(RoadStep(a.file, change, level.value, level.value, why))
            continue
        composed = compose(level, res.metrics[metric], res.baseline[metric], c if res.result.paired else None)
        interval = None
        if c.ci_low_percent is not None and c.ci_high_percent is not None:
            interval = (level.value * c.ci_low_percent / 100, level.value * c.ci_high_percent / 100)
        delta = composed.value - level.value
        change = StepChange(
            res.result,
            before,
            after,
            delta,
            c.change_percent or 0.0,
            interval,
            c.decision,
            c,
            weak,
            change=level.value * (c.change_percent or 0.0) / 100,
            means_percent=100 * delta / level.value if level.value else None,
        )
        steps.append(RoadStep(a.file, change, level.value, composed.value, None))
        level = composed
        prev_result, prev_name = res.result, f"in {a.file.number:02d}-{a.file.slug}"
    measured = any(s.change is not None and s.chain_break is None for s in steps)
    current = _level_stat(level) if measured else level_stat
    same = [g for g in goals if g.metric == metric and g.concurrency == concurrency]
    return Road(
        metric=metric,
        concurrency=concurrency,
        baseline=level_stat,
        baseline_source=source,
        baseline_result=base_result,
        steps=tuple(steps),
        current=current,
        chained=chained,
        # Across a step that was not composed, the level is not what the stack measures, so no
        # distance to a goal is given from it (the page says which step and why).
        goals=tuple(_distance(project, g, level) for g in same) if chained else (),
        other_goals=tuple(g for g in goals if g not in same),
        level=level,
        direction=direction,
    )


def goal_direction(project: Project, goal: Goal) -> str:
    """The goal's direction as written, else from its metric's direction (the campaign's own metrics too)."""
    if goal.direction is not None:
        return goal.direction
    metric = project.campaign.vocabulary().lookup(goal.metric)
    return "above" if metric is None or metric.higher_is_better else "below"


def _baseline_differs(level: Level, measured: Value, alpha: float, min_effect: float) -> str | None:
    """Why a step's measured baseline is not the level before it, or None when it is within the noise."""
    b = stat(measured).mean
    if b <= 0 or level.value <= 0:
        return None if b == level.value else "its baseline is not the level before it"
    # On the log mean, the level's own centre: the same runs give no gap.
    gap = log_mean(measured) - math.log(level.value)
    if gap == 0:
        return None
    spread = log_spread(measured)
    parts = [p for p in (spread, (level.log_var, level.df) if level.log_var else None) if p is not None]
    var = sum(v for v, _ in parts)
    said = f"its baseline ({fmt_number(b)}) is not the level before it ({fmt_number(level.value)})"
    if var > 0:
        # The t test of `stats.compare`, on log(baseline / level) and its summed variances.
        if t_p_value(gap, math.sqrt(var), welch_df(parts)) < alpha:
            return f"{said}: they differ beyond their noise (t test at alpha {fmt_number(alpha)})"
        return None
    if abs(math.expm1(gap)) * 100 > min_effect:
        return f"{said}: they differ by more than min_effect ({fmt_number(min_effect)}%), and neither has a spread"
    return None


def _level_stat(level: Level) -> Stat:
    if level.low is None or level.high is None:
        return stat(level.value)
    return Stat(level.value, 0.0, 1, level.low, level.high, "single")


def _distance(project: Project, goal: Goal, level: Level) -> GoalDistance:
    direction = goal_direction(project, goal)

    def gap(a: float, b: float) -> float:
        return _residue_free(a - b, max(abs(a), abs(b)))

    point = gap(goal.target, level.value) if direction == "above" else gap(level.value, goal.target)
    if level.low is None or level.high is None:
        return GoalDistance(goal, direction, point, point, interval=False, point=point, alpha=level.alpha)
    if direction == "above":
        low, high = gap(goal.target, level.high), gap(goal.target, level.low)
    else:
        low, high = gap(level.low, goal.target), gap(level.high, goal.target)
    return GoalDistance(goal, direction, low, high, point=point, alpha=level.alpha)


def _residue_free(difference: float, scale: float) -> float:
    """A difference of two levels, 0 where it is only the rounding of their ratio arithmetic
    (a level composed to exactly the goal once read "passed by 0.00000000000001421 tok/s")."""
    return 0.0 if abs(difference) <= 1e-9 * scale else difference


def goal_statuses(project: Project, road: Road | None, baseline: Sequence[ResolvedResult]) -> tuple[GoalStatus, ...]:
    """Every goal with its one current level: the road's for goals on it, else stated or the baseline's."""
    out = []
    for g in project.campaign.goals:
        direction = goal_direction(project, g)
        on_road = road is not None and g.metric == road.metric and g.concurrency == road.concurrency
        if on_road and road is not None:
            distance = next((d for d in road.goals if d.goal is g), None)
            moved = any(s.change is not None and s.chain_break is None for s in road.steps)
            # The goal's own stated level needs no source beside it.
            said = "the road below" if moved else (road.baseline_source if road.baseline_result is not None else None)
            reached = distance.reached if distance is not None and distance.interval else None
            start = road.baseline_result.metrics.get(road.metric) if road.baseline_result is not None else g.current
            about = not moved and isinstance(start, Range) and start.about
            out.append(GoalStatus(g, direction, road.current, said, True, reached, about))
            continue
        current: Stat | None = None
        source: str | None = None
        value: Value | None = g.current
        if value is None and g.concurrency is not None:
            for r in baseline:
                if r.result.concurrency == g.concurrency and g.metric in r.metrics:
                    value, source = r.metrics[g.metric], f"baseline result `{r.result.label}`"
                    break
        if value is not None:
            current = stat(value)
        # An approximate number prints its own "~" (quantity.fmt_stat); a range is marked here.
        about = isinstance(value, Range) and value.about
        out.append(GoalStatus(g, direction, current, source, False, None, about))
    return tuple(out)


def distance_text(d: GoalDistance, unit: str) -> str:
    """ "89 to 92 tok/s to go", "reached (by 3 tok/s)", or a point passed without an interval."""
    if d.reached:
        # At exactly the goal it is reached (`above` and `below` include the target) but not
        # passed: "by at least 0" read as a margin there was not (issue 51).
        by = "at the goal" if d.high == 0 else f"by at least {fmt_number(-d.high)} {unit}"
        return (
            f"reached ({by}: the level's {fmt_number(100 - 100 * d.alpha)}% "
            f"interval clears the goal, a one-sided test at alpha / 2 = {fmt_number(d.alpha / 2)})"
        )
    if not d.interval:
        if d.point == 0:
            return (
                "reached at the point estimate, at the goal, not past it; not shown: the level has no "
                "interval (a single measurement without a spread on the way)"
            )
        if d.point < 0:
            return (
                f"passed at the point estimate (by {fmt_number(-d.point)} {unit}), not shown: the level has "
                "no interval (a single measurement without a spread on the way)"
            )
        return f"{fmt_number(d.point)} {unit} to go (no interval: a single measurement without a spread on the way)"
    if d.low <= 0:
        worse = fmt_number(max(d.high, 0))
        return f"not shown: the level's interval straddles the goal ({worse} {unit} to go at its worse end)"
    return f"{fmt_number(d.low)} to {fmt_number(d.high)} {unit} to go"
