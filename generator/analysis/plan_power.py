"""What a planned run can detect, before it runs: the noise so far, the costs, runs per launch.

`improvements run` prints this at the start of a run and under `--dry-run` (issue 47). Three
inputs, each said with where it came from:

- **the noise** (`Noise`), on the log scale, from the runs of these arms measured so far: the
  record's own linked runs, else the campaign baseline's runs, else a stated assumption. The
  runs of one launch are a group; the between-launch and within-launch variance components are
  `noise.components`' (one-way random effects). The arms are pooled after each is divided by its
  own geometric mean, so their difference is not read as launch-to-launch spread. With one run
  per launch the two parts cannot be told apart: then only the spread of a launch's value at
  that many runs is known.
- **the costs** (`Costs`): a launch's fixed cost (start, imports, load, warm-ups) and one
  measured run's, fitted by least squares to the journals' launches (seconds from start to end
  against the runs each made). Only launches with at least two different run counts tell the
  two apart (a pilot alternates them); with one count, a block's cost at that count alone.
- **the design**: runs per launch m, blocks, fixed or sequential.

A block's paired log difference is taken as two independent launch means: its variance is
2 (s2_launch + s2_within / m). Pairing by block is assumed to remove nothing, as measured on one
H200 (the two launches of a block were uncorrelated); where it does remove some, the plan is
cautious. The detectable change is `noise.detectable_change` at that spread.

Runs per launch that cost least for a given precision: minimising (c_launch + m c_run) x
(s2_launch + s2_within / m) over m gives m* = sqrt(c_launch / c_run x s2_within / s2_launch),
rounded to the better of its two neighbours and held to 1..`RUNS_CAP`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from generator.analysis import noise

if TYPE_CHECKING:
    from generator.project.load import Project, RecordFile

POWER = 0.8
# The most runs per launch `--runs auto` picks: past a dozen a launch's own noise is gone and a
# longer launch only risks a drift inside it.
RUNS_CAP = 12
# With no runs of these arms measured yet: a stated assumption, printed as one.
ASSUMED_LAUNCH_SD = 0.10
ASSUMED_WITHIN_SD = 0.10


@dataclass(frozen=True)
class Noise:
    """The spread of these arms' runs on the log scale, and where it was read."""

    source: str  # in words: "this record's linked runs (12 launches)", "assumed: ..."
    assumed: bool
    launches: int
    # The variance components (log scale), when launches with two runs or more measured them.
    launch_var: float | None
    within_var: float | None
    # Without components: the variance of one launch's value at `runs_measured` runs a launch.
    total_var: float | None
    runs_measured: int

    @property
    def icc(self) -> float | None:
        if self.launch_var is None or self.within_var is None or self.launch_var + self.within_var == 0:
            return None
        return self.launch_var / (self.launch_var + self.within_var)

    def launch_mean_var(self, runs: int) -> float | None:
        """The variance of one launch's mean of `runs` runs (log scale); None when unknown at that m."""
        if self.launch_var is not None and self.within_var is not None:
            return self.launch_var + self.within_var / runs
        if self.total_var is not None and runs == self.runs_measured:
            return self.total_var
        return None

    def block_sd(self, runs: int) -> float | None:
        """The standard deviation of a block's log difference (arm over comparator) at m runs a launch."""
        v = self.launch_mean_var(runs)
        return math.sqrt(2 * v) if v is not None else None


@dataclass(frozen=True)
class Costs:
    """Seconds of GPU time: a launch's fixed part and each measured run's, from the journals."""

    launches: int
    launch_s: float | None  # None when the runs per launch never varied: not separable
    run_s: float | None
    # With one run count only: the mean launch's seconds at that count.
    at_runs: int | None = None
    mean_s: float | None = None

    def launch_seconds(self, runs: int) -> float | None:
        if self.launch_s is not None and self.run_s is not None:
            return self.launch_s + runs * self.run_s
        if self.mean_s is not None and runs == self.at_runs:
            return self.mean_s
        return None


def pooled_noise(groups_by_arm: Mapping[str, Sequence[Sequence[float]]], source: str) -> Noise | None:
    """The noise of launches grouped by arm (each launch's raw positive values); None with too few.

    Each arm is divided by its own geometric mean first, so the arms pool into one estimate of
    the launch-to-launch and within-launch spread, not of the difference between them.
    """
    centred: list[list[float]] = []
    for launches in groups_by_arm.values():
        kept = [[v for v in g] for g in launches if g]
        values = [v for g in kept for v in g]
        if not values or min(values) <= 0 or not all(math.isfinite(v) for v in values):
            continue
        centre = sum(math.log(v) for v in values) / len(values)
        centred += [[math.exp(math.log(v) - centre) for v in g] for g in kept]
    if len(centred) < 2:
        return None
    sizes = {len(g) for g in centred}
    comp = noise.components(centred)
    if comp is not None and max(sizes) > 1:
        return Noise(
            source=source,
            assumed=False,
            launches=len(centred),
            launch_var=comp.launch_var,
            within_var=comp.within_var,
            total_var=None,
            runs_measured=round(comp.runs_per_launch),
        )
    # One run a launch (or unequal counts without within-launch spread): the launch means' spread.
    if len(sizes) != 1:
        return None
    arms = sum(1 for launches in groups_by_arm.values() if any(launches))
    means = [sum(math.log(v) for v in g) / len(g) for g in centred]
    df = len(means) - max(arms, 1)
    if df < 1:
        return None
    return Noise(
        source=source,
        assumed=False,
        launches=len(centred),
        launch_var=None,
        within_var=None,
        total_var=sum(m * m for m in means) / df,
        runs_measured=sizes.pop(),
    )


def assumed_noise() -> Noise:
    return Noise(
        source="no runs of these arms yet",
        assumed=True,
        launches=0,
        launch_var=ASSUMED_LAUNCH_SD**2,
        within_var=ASSUMED_WITHIN_SD**2,
        total_var=None,
        runs_measured=1,
    )


def fit_costs(launches: Sequence[tuple[int, float]]) -> Costs | None:
    """(runs the launch made, its seconds from start to end) of each launch: the fitted costs.

    Least squares of seconds on runs when the run counts differ; a run's cost is held above zero
    (a launch's noise can make the fitted slope negative on few launches) at a hundredth of the
    launch's. With one run count, only the mean at that count.
    """
    pairs = [(m, s) for m, s in launches if m >= 1 and s > 0 and math.isfinite(s)]
    if not pairs:
        return None
    counts = {m for m, _ in pairs}
    if len(counts) == 1:
        return Costs(len(pairs), None, None, at_runs=pairs[0][0], mean_s=sum(s for _, s in pairs) / len(pairs))
    n = len(pairs)
    mx = sum(m for m, _ in pairs) / n
    my = sum(s for _, s in pairs) / n
    sxx = sum((m - mx) ** 2 for m, _ in pairs)
    slope = sum((m - mx) * (s - my) for m, s in pairs) / sxx
    launch = my - slope * mx
    launch = max(launch, 0.0)
    run = max(slope, 0.01 * max(launch, my))
    return Costs(n, launch, run)


def best_runs(noise_: Noise, costs: Costs, cap: int = RUNS_CAP) -> int | None:
    """m* = sqrt(c_launch / c_run x s2_within / s2_launch), the better integer near it, in 1..cap.

    None when the components or the two costs are not known (a pilot measures them).
    """
    if noise_.launch_var is None or noise_.within_var is None or costs.launch_s is None or costs.run_s is None:
        return None
    if noise_.within_var == 0:
        return 1
    if noise_.launch_var == 0 or costs.run_s == 0:
        return cap
    star = math.sqrt(costs.launch_s / costs.run_s * noise_.within_var / noise_.launch_var)
    low = min(max(1, math.floor(star)), cap)
    high = min(max(1, math.ceil(star)), cap)

    def cost(m: int) -> float:
        return (costs.launch_s + m * costs.run_s) * (noise_.launch_var + noise_.within_var / m)  # type: ignore[operator]

    return low if cost(low) <= cost(high) else high


@dataclass(frozen=True)
class Need:
    """What a design needs for one effect: blocks and GPU seconds, fixed and sequential (None: past the cap)."""

    effect: float  # percent
    why: str  # "the campaign's min_effect", "the record's expected gain"
    fixed_blocks: int | None
    sequential_blocks: int | None
    fixed_s: float | None
    sequential_s: float | None


@dataclass(frozen=True)
class PowerPlan:
    """The plan's numbers as `improvements run` prints them."""

    noise: Noise
    costs: Costs | None
    runs_per_launch: int
    runs_chosen: str  # how m was chosen, in words
    blocks: int  # planned, or the most with a sequential rule
    sequential: bool
    launches_per_block: int  # arms x loads
    sd_block: float | None
    detectable: float | None  # percent, at `blocks` (sequential: looking after every block)
    detectable_other: float | None  # the other design's, at the same blocks
    block_s: float | None
    costs_source: str  # where the costs were read: "this record's journals", ...
    needs: tuple[Need, ...]
    alpha: float
    power: float = POWER

    @property
    def short_of(self) -> tuple[Need, ...]:
        """The effects the planned blocks cannot reach at `power`."""
        out = []
        for need in self.needs:
            blocks = need.sequential_blocks if self.sequential else need.fixed_blocks
            if blocks is None or blocks > self.blocks:
                out.append(need)
        return tuple(out)


def plan(
    noise_: Noise,
    costs: Costs | None,
    *,
    runs_per_launch: int,
    runs_chosen: str,
    blocks: int,
    sequential: bool,
    launches_per_block: int,
    alpha: float,
    effects: Sequence[tuple[float, str]],
    costs_source: str = "",
    power: float = POWER,
) -> PowerPlan:
    """The detectable change of this design and the blocks each effect needs."""
    sd = noise_.block_sd(runs_per_launch)
    launch_s = costs.launch_seconds(runs_per_launch) if costs is not None else None
    block_s = launch_s * launches_per_block if launch_s is not None else None
    detectable = other = None
    needs: list[Need] = []
    if sd is not None:
        detectable = noise.detectable_change(sd, blocks, alpha, power, sequential)
        other = noise.detectable_change(sd, blocks, alpha, power, not sequential)
        for effect, why in effects:
            if effect <= 0:
                continue
            f = noise.blocks_needed(effect, sd, alpha, power, sequential=False)
            s = noise.blocks_needed(effect, sd, alpha, power, sequential=True)
            needs.append(
                Need(
                    effect,
                    why,
                    f,
                    s,
                    f * block_s if f is not None and block_s is not None else None,
                    s * block_s if s is not None and block_s is not None else None,
                )
            )
    return PowerPlan(
        noise=noise_,
        costs=costs,
        runs_per_launch=runs_per_launch,
        runs_chosen=runs_chosen,
        blocks=blocks,
        sequential=sequential,
        launches_per_block=launches_per_block,
        sd_block=sd,
        detectable=detectable,
        detectable_other=other,
        block_s=block_s,
        costs_source=costs_source,
        needs=tuple(needs),
        alpha=alpha,
        power=power,
    )


def _ids(value: str | Sequence[str] | None) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def measured_noise(project: Project, rec: RecordFile, metric: str, load: int | None) -> Noise:
    """The noise of this record's arms so far: its own linked runs, else the campaign baseline's, else assumed.

    Only runs at the planned load count when the plan has one load (a launch's spread depends on
    the load); a run whose launch is not recorded is a launch of its own.
    """
    record = rec.record
    results = list(record.results) + [r for v in record.variants for r in v.results]
    arms: dict[str, list[str]] = {}
    for i, result in enumerate(results):
        arms.setdefault(f"this record {i}", []).extend(_ids(result.run))
        arms.setdefault(f"comparator {i}", []).extend(_ids(result.baseline_run))
    found = _noise_of(project, arms, metric, load, "this record's linked runs")
    if found is not None:
        return found
    base = {f"baseline {i}": _ids(r.run) for i, r in enumerate(project.campaign.baseline.results)}
    found = _noise_of(project, base, metric, load, "the campaign baseline's runs")
    return found if found is not None else assumed_noise()


def _noise_of(
    project: Project, arms: Mapping[str, Sequence[str]], metric: str, load: int | None, where: str
) -> Noise | None:
    groups: dict[str, list[list[float]]] = {}
    runs = 0
    for arm, ids in arms.items():
        by_launch: dict[object, list[float]] = {}
        for i, rid in enumerate(dict.fromkeys(ids)):
            run = project.runs.get(rid)
            if run is None or metric not in run.metrics:
                continue
            if load is not None and run.concurrency is not None and run.concurrency != load:
                continue
            key: object = run.launch if run.launch is not None else ("own", i)
            by_launch.setdefault(key, []).append(float(run.metrics[metric]))
            runs += 1
        if by_launch:
            groups[arm] = list(by_launch.values())
    launches = sum(len(g) for g in groups.values())
    at = f" at load {load}" if load is not None else ""
    return pooled_noise(groups, f"{where}{at} ({launches} launches, {runs} runs)")
