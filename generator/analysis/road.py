"""The campaign's stack and the road to its goal, computed once in the analysis stage.

The stack is the launch command in force: the campaign baseline with every adopted record's change
applied (`generator.model.launch`); a superseded record is not adopted, so it is not in it. The road
follows the primary metric from the baseline through each adopted step's measured change to the
current level and the distance to each goal on that metric.

The primary metric is, for now, the first goal's metric at its concurrency. Each step's measured
change is read through `step_change` alone, so the day the comparison carries an interval and a
decision, one function changes.

Chaining: a step's change is added to the level before it. Steps measured under another load or
workload than the level before them are not chained silently: the step carries `chain_break`,
saying what differs, and the road is marked as not a measurement (`chained`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from generator.checks.stack import adopted_steps
from generator.model import metrics
from generator.model.launch import Cycle, Stack, apply_steps
from generator.model.quantity import Stat, fmt_number, stat
from generator.model.record import Goal
from generator.model.result import Result, Workload
from generator.model.variants import effective_change
from generator.project.load import Project, RecordFile

if TYPE_CHECKING:
    from generator.analysis.campaign import RecordAnalysis, ResolvedResult


@dataclass(frozen=True)
class StepChange:
    """One step's measured change on the primary metric."""

    result: Result  # what was measured: its label, load and workload
    before: Stat
    after: Stat
    delta: float  # after - before, in the metric's unit
    change_percent: float
    # Of `delta`, in the metric's unit; and how the change was decided. None until the comparison gives them.
    interval: tuple[float, float] | None
    decision: str | None


@dataclass(frozen=True)
class RoadStep:
    record: RecordFile
    change: StepChange | None  # None: not measured on the primary metric
    level_before: float | None
    level_after: float | None
    chain_break: str | None = None

    @property
    def label(self) -> str:
        return f"{self.record.number:02d}-{self.record.slug}"


@dataclass(frozen=True)
class GoalDistance:
    goal: Goal
    direction: str  # "above" or "below"
    # Still to go in the goal's direction (negative once passed); a range when the level is one.
    low: float
    high: float

    @property
    def reached(self) -> bool:
        return self.high <= 0


@dataclass(frozen=True)
class Road:
    metric: str
    concurrency: int | None
    baseline: Stat
    baseline_source: str  # where the baseline level comes from, in words
    baseline_result: Result | None
    steps: tuple[RoadStep, ...]
    current: Stat
    # False when a step was measured under another load or workload than the level before it.
    chained: bool
    goals: tuple[GoalDistance, ...]
    other_goals: tuple[Goal, ...]  # goals on another metric or concurrency: not on this road


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


def step_change(ra: RecordAnalysis, metric: str, concurrency: int | None) -> StepChange | None:
    """A step's measured change on `metric`: the result at the road's concurrency, else the record's primary one.

    The one place the road reads a comparison: the analysis' (change, interval, decision),
    never one of its own.
    """
    # A record with variants is measured by its retained variant's results, as its rank is.
    found = [(r, r.comparisons.get(metric)) for r in ra.headline]
    measured = [(r, c) for r, c in found if c is not None]
    if not measured:
        return None
    primary = ra.primary
    first = next(((r, c) for r, c in measured if primary is not None and r.result.label == primary.label), measured[0])
    res, c = next(((r, c) for r, c in measured if r.result.concurrency == concurrency), first)
    interval = None if c.ci_low is None or c.ci_high is None else (c.ci_low, c.ci_high)
    before, after = stat(res.baseline[metric]), stat(res.metrics[metric])
    return StepChange(
        res.result,
        before,
        after,
        c.difference,
        c.change_percent or 0.0,
        interval,
        c.decision,
    )


def campaign_stack(
    project: Project, records: Sequence[RecordAnalysis], baseline: Sequence[ResolvedResult]
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
    road = _road(project, order, baseline)
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


def _road(project: Project, order: Sequence[RecordAnalysis], baseline: Sequence[ResolvedResult]) -> Road | None:
    goals = project.campaign.goals
    if not goals:
        return None
    first = goals[0]
    metric, concurrency = first.metric, first.concurrency
    start = next(
        (r for r in baseline if metric in r.metrics and (concurrency is None or r.result.concurrency == concurrency)),
        None,
    )
    if start is not None:
        level, base_result = stat(start.metrics[metric]), start.result
        source = f"baseline result `{start.result.label}`"
    elif first.current is not None:
        level, source, base_result = stat(first.current), "the goal's stated current level", None
    else:
        return None
    steps: list[RoadStep] = []
    at, prev_result, prev_name, chained = level.mean, base_result, "in the baseline", True
    for a in order:
        change = step_change(a, metric, concurrency)
        if change is None:
            steps.append(RoadStep(a.file, None, None, None))
            continue
        why = _difference(change.result, prev_result, prev_name)
        chained = chained and why is None
        steps.append(RoadStep(a.file, change, at, at + change.delta, why))
        at += change.delta
        prev_result, prev_name = change.result, f"in {a.file.number:02d}-{a.file.slug}"
    measured = any(s.change for s in steps)
    current = stat(at) if measured else level
    same = [g for g in goals if g.metric == metric and g.concurrency == concurrency]
    return Road(
        metric=metric,
        concurrency=concurrency,
        baseline=level,
        baseline_source=source,
        baseline_result=base_result,
        steps=tuple(steps),
        current=current,
        chained=chained,
        # Across a broken chain the sum of the steps is not a level anything measured, so no
        # distance to a goal is given from it (the page says where the chain breaks).
        goals=tuple(_distance(g, current) for g in same) if chained else (),
        other_goals=tuple(g for g in goals if g not in same),
    )


def _distance(goal: Goal, current: Stat) -> GoalDistance:
    metric = metrics.lookup(goal.metric)
    direction = goal.direction or ("above" if metric is None or metric.higher_is_better else "below")
    if direction == "above":
        return GoalDistance(goal, direction, goal.target - current.high, goal.target - current.low)
    return GoalDistance(goal, direction, current.low - goal.target, current.high - goal.target)


def distance_text(d: GoalDistance, unit: str) -> str:
    """ "89 to 92 tok/s to go", "reached (by 3 tok/s)"."""
    if d.reached:
        return f"reached (by {fmt_number(-d.high)} {unit})"
    span = fmt_number(d.high) if d.low == d.high else f"{fmt_number(max(d.low, 0))} to {fmt_number(d.high)}"
    return f"{span} {unit} to go"
