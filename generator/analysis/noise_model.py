"""One result's noise model (issue 47): where the spread of its launches comes from, and what its
design could detect. Computed once, in `campaign.resolve`; the record page and `export` read it.

It is made for a result whose runs name their launches (`improvements run` records each run's
launch; an imported or typed result may name them with `launch:`), per metric and per side ("this
record" and "baseline", the two arms of the comparison), on the log scale:

- **the spread between launches**: the standard deviation of the launch means (each launch's mean
  of log values, as the runner's looks take it), about the launches' coefficient of variation;
- **variance components** (`noise.components`): launch-to-launch and within-launch, with their
  intervals and the ICC, when some launch has two runs or more;
- **drift**: the least-squares slope of the launch means against launch order (by start time when
  every run has one), with its t interval and p, flagged at the campaign's alpha;
- **launch states** (`launch_states`): per side, and for both sides pooled, with the share of
  each arm's launches in the slow state and Fisher's exact test of whether the arms differ (when
  an arm has launches in both states: two states that split exactly by arm are the arms'
  difference, which the comparison reads);
- **pairing**: for a paired result, the correlation of the arms' launch means across blocks (what
  pairing by block removes) and the standard deviation of the blocks' log differences;
- **what would settle it**: for an inconclusive paired result, the change the design detects at
  80% power at that block spread (`noise.detectable_change`, sequential when the result was
  looked at after every block) and the blocks a fixed and a sequential design would need for the
  campaign's min_effect, with the time a block took (from the runs' start times).
"""

from __future__ import annotations

import datetime as dt
import itertools
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from generator.analysis import launch_states
from generator.analysis.comparison import Comparison
from generator.analysis.launch_states import ArmShares, States
from generator.analysis.noise import Components, blocks_needed, components, detectable_change
from generator.analysis.tdist import t_interval, t_p_value
from generator.project.matching import Origin

POWER = 0.8
# Drift is read from this many launches on (Kendall's trend in `design` needs as many).
DRIFT_MIN = 5
SIDES = ("this record", "baseline")


@dataclass(frozen=True)
class Drift:
    """The launch means' trend against launch order, on the log scale, as percent changes."""

    per_launch_percent: float
    ci_low_percent: float  # the 1 - alpha interval of the per-launch change
    ci_high_percent: float
    over_run_percent: float  # the slope across the whole run: first launch to last
    p_value: float
    clear: bool  # p_value < alpha


@dataclass(frozen=True)
class ArmNoise:
    """One side's launches of one metric."""

    side: str  # "this record" or "baseline"
    launches: int
    runs: int
    spread: float  # the standard deviation of the launch means (log): about their CV
    components: Components | None
    drift: Drift | None
    states: States | None
    # As the page prints them: the spread, and each component's standard deviation, in percent
    # (100 x the log-scale sd: a relative spread).
    spread_percent: float = 0.0
    launch_sd_percent: float | None = None
    within_sd_percent: float | None = None


@dataclass(frozen=True)
class Pairing:
    """How the two arms' launches move together across blocks."""

    blocks: int
    block_sd: float  # of the blocks' log differences (arm over comparator)
    correlation: float | None  # of the arms' launch means across blocks (3 blocks or more)
    block_sd_percent: float = 0.0


@dataclass(frozen=True)
class Settle:
    """For an inconclusive paired result: what its design could see, and what would settle it."""

    blocks: int
    sequential: bool
    # The change this design calls at POWER, in the metric's better direction (+ for a metric where
    # higher is better, - otherwise); None when it can detect nothing.
    detectable_percent: float | None
    min_effect: float
    blocks_fixed: int | None  # for min_effect at POWER at this block spread; None beyond the cap
    blocks_sequential: int | None
    seconds_per_block: float | None  # the median time between the starts of consecutive blocks
    # The time those blocks take at that pace, in hours (None where either is unknown).
    hours_fixed: float | None = None
    hours_sequential: float | None = None


@dataclass(frozen=True)
class MetricNoise:
    metric: str
    arms: tuple[ArmNoise, ...]  # this record's, then the baseline's, each when its launches are known
    pairing: Pairing | None = None
    pooled_states: States | None = None  # both arms' launches in one fit
    shares: ArmShares | None = None  # when the pooled states are flagged
    settle: Settle | None = None


@dataclass(frozen=True)
class Noise:
    metrics: tuple[MetricNoise, ...]


@dataclass(frozen=True)
class _Launch:
    logs: tuple[float, ...]
    values: tuple[float, ...]
    started: dt.datetime | None

    @property
    def mean(self) -> float:
        return sum(self.logs) / len(self.logs)


def _launches(values: Sequence[float], origins: Sequence[Origin]) -> list[_Launch] | None:
    """A side's runs grouped by launch, in launch order; None unless every run names its launch,
    every value is positive, and there are two launches or more."""
    if len(values) < 2 or len(origins) < len(values) or not all(v > 0 and math.isfinite(v) for v in values):
        return None
    groups: dict[str, list[int]] = {}
    for i in range(len(values)):
        launch = origins[i].launch
        if launch is None:
            return None
        groups.setdefault(launch, []).append(i)
    if len(groups) < 2:
        return None
    out: list[_Launch] = []
    for members in groups.values():
        starts = [origins[i].started for i in members]
        started = min(dt.datetime.fromisoformat(s) for s in starts if s) if all(starts) else None
        vals = tuple(values[i] for i in members)
        out.append(_Launch(tuple(math.log(v) for v in vals), vals, started))
    if all(x.started is not None for x in out):
        # Stable: launches that started together keep the order they were listed in.
        out.sort(key=lambda x: x.started or dt.datetime.min)
    return out


def drift(means: Sequence[float], alpha: float) -> Drift | None:
    """The least-squares slope of `means` (logs, in launch order) against 0, 1, 2, ..."""
    k = len(means)
    if k < DRIFT_MIN:
        return None
    xbar, ybar = (k - 1) / 2, sum(means) / k
    sxx = sum((i - xbar) ** 2 for i in range(k))
    slope = sum((i - xbar) * (y - ybar) for i, y in enumerate(means)) / sxx
    residual = sum((y - ybar - slope * (i - xbar)) ** 2 for i, y in enumerate(means))
    se = math.sqrt(residual / (k - 2) / sxx)
    if se == 0:
        return None
    low, high = t_interval(slope, se, k - 2, alpha)
    p = t_p_value(slope, se, k - 2)
    pct = [100 * math.expm1(x) for x in (slope, low, high, slope * (k - 1))]
    return Drift(pct[0], pct[1], pct[2], pct[3], p, p < alpha)


def _arm(side: str, launches: list[_Launch], alpha: float, higher_is_better: bool) -> ArmNoise:
    means = [x.mean for x in launches]
    parts = components([x.values for x in launches])
    spread = statistics.stdev(means)
    return ArmNoise(
        side=side,
        launches=len(launches),
        runs=sum(len(x.logs) for x in launches),
        spread=spread,
        components=parts,
        drift=drift(means, alpha),
        states=launch_states.states([math.exp(m) for m in means], higher_is_better=higher_is_better),
        spread_percent=100 * spread,
        launch_sd_percent=100 * math.sqrt(parts.launch_var) if parts is not None else None,
        within_sd_percent=100 * math.sqrt(parts.within_var) if parts is not None else None,
    )


def _block_seconds(launches: list[_Launch]) -> float | None:
    starts = [x.started for x in launches]
    if len(starts) < 2 or any(s is None for s in starts):
        return None
    known = [s for s in starts if s is not None]
    return statistics.median((b - a).total_seconds() for a, b in itertools.pairwise(known))


def _settle(
    diffs: list[float], c: Comparison | None, sequential: bool, own: list[_Launch], higher_is_better: bool
) -> Settle | None:
    if c is None or c.decision != "inconclusive" or len(diffs) < 2:
        return None
    sd = statistics.stdev(diffs)
    change = detectable_change(sd, len(diffs), c.alpha, POWER, sequential)
    detectable: float | None = None
    if math.isfinite(change):
        # The same log distance in the direction that is better for the metric.
        detectable = change if higher_is_better else 100 * (1 / (1 + change / 100) - 1)
    fixed = blocks_needed(c.min_effect, sd, c.alpha, POWER, False)
    looked = blocks_needed(c.min_effect, sd, c.alpha, POWER, True)
    pace = _block_seconds(own)

    def hours(blocks: int | None) -> float | None:
        return blocks * pace / 3600 if blocks is not None and pace is not None else None

    return Settle(
        blocks=len(diffs),
        sequential=sequential,
        detectable_percent=detectable,
        min_effect=c.min_effect,
        blocks_fixed=fixed,
        blocks_sequential=looked,
        seconds_per_block=pace,
        hours_fixed=hours(fixed),
        hours_sequential=hours(looked),
    )


def of_result(
    shown: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    origins: tuple[Sequence[Origin], Sequence[Origin]],
    comparisons: Mapping[str, Comparison | None],
    higher_is_better: Mapping[str, bool],
    *,
    paired: bool,
    sequential: bool,
    alpha: float,
) -> Noise | None:
    """The noise model of one result: `shown` is metric -> (own samples, baseline samples), the
    origins by position on each side. None when no side's runs name two launches or more."""
    out: list[MetricNoise] = []
    for name, sides in shown.items():
        better = higher_is_better.get(name, True)
        found = [_launches(sides[i], origins[i]) for i in (0, 1)]
        arms = tuple(_arm(SIDES[i], f, alpha, better) for i, f in enumerate(found) if f is not None)
        if not arms:
            continue
        own, base = found
        pairing = pooled = shares = settle = None
        if own is not None and base is not None:
            pooled = launch_states.states([math.exp(x.mean) for x in own + base], higher_is_better=better)
            # Two states that are just the two arms (every launch of one slow, of the other fast)
            # are the arms' difference, which the comparison already reads: states need an arm
            # with launches in both.
            if pooled is not None and pooled.flagged and _spans(pooled.slow, len(own)):
                shares = launch_states.arm_shares(pooled, len(own), alpha)
            if paired and len(own) == len(base):
                diffs = [a.mean - b.mean for a, b in zip(own, base, strict=True)]
                r = _correlation([a.mean for a in own], [b.mean for b in base])
                block_sd = statistics.stdev(diffs)
                pairing = Pairing(len(diffs), block_sd, r, 100 * block_sd)
                settle = _settle(diffs, comparisons.get(name), sequential, own, better)
        out.append(MetricNoise(name, arms, pairing, pooled, shares, settle))
    return Noise(tuple(out)) if out else None


def _spans(slow: Sequence[bool], own: int) -> bool:
    """Whether either arm (the first `own` launches, or the rest) has launches in both states."""
    return any(len(set(part)) == 2 for part in (slow[:own], slow[own:]))


def _correlation(a: Sequence[float], b: Sequence[float]) -> float | None:
    if len(a) < 3 or len(set(a)) < 2 or len(set(b)) < 2:
        return None
    return statistics.correlation(a, b)
