"""The campaign's stack and the road to its goal, computed once in the analysis stage.

The stack is the launch command in force: the campaign baseline with every adopted record's change
applied (`generator.model.launch`); a superseded record is not adopted, so it is not in it. The road
follows the primary metric from the baseline through each adopted step's measured change to the
current level and the distance to each goal on that metric.

The primary metric is the first goal's metric at its concurrency. Steps are composed as ratios:
each step multiplies the level before it by what its record measured (mean / baseline mean), so
a step measured 500 -> 600 on another day's baseline adds 20%, never +100 in the metric's unit.
The level carries an interval: its log has the variance of the baseline's log mean plus each
step's log ratio (`stats.Comparison.log_se`), with Welch-Satterthwaite degrees of freedom, at the
campaign's alpha; a single-shot step (no spread) leaves the level without one. A goal is
`reached` only when that interval clears it.

A step is not chained (not composed into the level, and the page says why) when it was measured
under another load or workload than the level before it, on a scale that has no ratio (values at
or below 0), or on a baseline that differs from the level before it by more than their noise
(the t test of the two log levels at alpha; without any spread, by more than min_effect).
Retained variants' results are the record's (the record's headline results).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from generator.analysis.records import RecordAnalysis, ResolvedResult
from generator.analysis.stats import Comparison
from generator.analysis.tdist import t_interval, t_p_value, welch_df
from generator.checks.stack import adopted_steps
from generator.model.launch import Cycle, Stack, apply_steps
from generator.model.quantity import Stat, Value, fmt_number, stat, unreplicated_text
from generator.model.record import Goal
from generator.model.result import Range, Result, Statistics, Workload
from generator.model.variants import effective_change
from generator.project.load import Project, RecordFile


@dataclass(frozen=True)
class Level:
    """A level of the road's metric: its value and, when every part has a spread, its interval."""

    value: float
    low: float | None
    high: float | None
    # The log level's variance and its degrees of freedom; None without a spread.
    log_var: float | None
    df: float | None
    alpha: float = 0.05

    @property
    def has_interval(self) -> bool:
        return self.low is not None and self.high is not None


@dataclass(frozen=True)
class StepChange:
    """One step's measured change on the primary metric."""

    result: Result  # what was measured: its label, load and workload
    before: Stat
    after: Stat
    delta: float  # what the step adds to the level before it, in the metric's unit (composed as a ratio)
    change_percent: float
    # Of `delta`, in the metric's unit (the ratio's interval applied to the level before); None for a single shot.
    interval: tuple[float, float] | None
    decision: str | None
    comparison: Comparison | None = None
    # The step's measured change is only a single shot or inconclusive: counted, and marked.
    weak: str | None = None


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
        return any(rec.slug == slug for rec in self.records)


def step_change(ra: RecordAnalysis, metric: str, concurrency: int | None) -> tuple[ResolvedResult, Comparison] | None:
    """A step's measured comparison on `metric`: the headline result at the road's concurrency, else
    the record's primary one, else its first. The one place the road reads a comparison; a record
    with variants is measured by its retained variant's results, as its rank is."""
    measured = [(r, c) for r in ra.headline if (c := r.comparisons.get(metric)) is not None]
    if not measured:
        return None
    primary = ra.primary
    first = next(((r, c) for r, c in measured if primary is not None and r.result.label == primary.label), measured[0])
    return next(((r, c) for r, c in measured if r.result.concurrency == concurrency), first)


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
    level = _level_of(value, alpha)
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
        ratio = c.ratio or 1.0
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
        composed = _compose(level, ratio, c, alpha)
        interval = None
        if c.ci_low_percent is not None and c.ci_high_percent is not None:
            interval = (level.value * c.ci_low_percent / 100, level.value * c.ci_high_percent / 100)
        delta = composed.value - level.value
        change = StepChange(res.result, before, after, delta, c.change_percent or 0.0, interval, c.decision, c, weak)
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


def _log_spread(value: Value) -> tuple[float, float] | None:
    """(variance of the log mean, its degrees of freedom) of a value with repetitions, else None."""
    if isinstance(value, list) and len(value) >= 2 and all(v > 0 for v in value):
        logs = [math.log(v) for v in value]
        m = sum(logs) / len(logs)
        var = sum((x - m) ** 2 for x in logs) / (len(logs) - 1)
        return var / len(logs), len(logs) - 1.0
    if isinstance(value, Statistics) and value.sd is not None and value.n >= 2 and value.mean > 0:
        return math.log1p((value.sd / value.mean) ** 2) / value.n, value.n - 1.0
    return None


def _level_of(value: Value, alpha: float) -> Level:
    s = stat(value)
    if s.kind == "range":
        # A range is its own interval, with no distribution to compose further steps with.
        return Level(s.mean, s.low, s.high, None, None, alpha)
    spread = _log_spread(value)
    if spread is None:
        # One number: no spread, so no interval (the level's noise is not known).
        return Level(s.mean, None, None, None, None, alpha)
    var, df = spread
    return _with_interval(Level(s.mean, None, None, var, df, alpha))


def _with_interval(level: Level) -> Level:
    if level.log_var is None:
        return level
    if level.log_var == 0 or level.df is None:
        return Level(level.value, level.value, level.value, level.log_var, level.df, level.alpha)
    low, high = t_interval(0.0, math.sqrt(level.log_var), level.df, level.alpha)
    return Level(
        level.value, level.value * math.exp(low), level.value * math.exp(high), level.log_var, level.df, level.alpha
    )


def _compose(level: Level, ratio: float, c: Comparison, alpha: float) -> Level:
    """The level times the step's ratio; the log variances add, their df by Welch-Satterthwaite."""
    value = level.value * ratio
    if level.log_var is None or c.log_se is None or c.df is None:
        return Level(value, None, None, None, None, alpha)
    step_var = c.log_se**2
    var = level.log_var + step_var
    df = welch_df([(step_var, c.df), (level.log_var, level.df)])
    return _with_interval(Level(value, None, None, var, df, alpha))


def _baseline_differs(level: Level, measured: Value, alpha: float, min_effect: float) -> str | None:
    """Why a step's measured baseline is not the level before it, or None when it is within the noise."""
    b = stat(measured).mean
    if b <= 0 or level.value <= 0:
        return None if b == level.value else "its baseline is not the level before it"
    gap = math.log(b / level.value)
    if gap == 0:
        return None
    spread = _log_spread(measured)
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
    point = goal.target - level.value if direction == "above" else level.value - goal.target
    if level.low is None or level.high is None:
        return GoalDistance(goal, direction, point, point, interval=False, point=point)
    if direction == "above":
        return GoalDistance(goal, direction, goal.target - level.high, goal.target - level.low, point=point)
    return GoalDistance(goal, direction, level.low - goal.target, level.high - goal.target, point=point)


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
        return f"reached (by at least {fmt_number(-d.high)} {unit})"
    if not d.interval:
        if d.point <= 0:
            return (
                f"passed at the point estimate (by {fmt_number(-d.point)} {unit}), not shown: the level has "
                "no interval (a single measurement without a spread on the way)"
            )
        return f"{fmt_number(d.point)} {unit} to go (no interval: a single measurement without a spread on the way)"
    if d.low <= 0:
        worse = fmt_number(max(d.high, 0))
        return f"not shown: the level's interval straddles the goal ({worse} {unit} to go at its worse end)"
    return f"{fmt_number(d.low)} to {fmt_number(d.high)} {unit} to go"
