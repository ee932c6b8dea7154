"""Capacity under a latency SLO, and the throughput-interactivity frontier, from a load sweep.

Pure functions on plain frozen dataclasses; the analysis layer converts a record's results at
several loads into `Point`s. Hand-written because no library interpolates "the load where the
first of several latencies reaches its limit" with these refusals to extrapolate.

Rules (the format guide repeats them):

- A point meets the SLO when every limited metric is <= its limit (exactly at the limit meets).
- Points are taken in load order. The first load that breaks any limit ends the search, even if a
  higher load meets again (non-monotone data, usually noise): capacity is on the segment from the
  load before it, which meets, to it. Higher loads that meet again are listed in `meets_again`
  so a page can say the sweep is not monotone.
- On that segment each broken metric reaches its limit at fraction t = (limit - v0) / (v1 - v0)
  of the way; the smallest t wins (the first latency to reach its limit), and the load and
  throughput there are interpolated linearly. `throughput` is the highest throughput within the
  SLO: the interpolated one, or a measured load before the segment when throughput fell with load.
- Kinds: `interpolated`; `meets-all` (no number: the highest measured throughput is only a lower
  bound, in `lower_bound`); `breaks-all`; `breaks-lowest` (the lowest load breaks but a higher one
  meets: nothing below the lowest load was measured, so no number); `insufficient` (fewer than
  two loads, two points at one load, no SLO, or a limited metric missing at some load).
- Repetitions: a load's point holds the **mean** of its repetitions for the throughput and for
  each limited latency alike (the mean of the repetitions' p99s, say): the estimand is the
  capacity of the mean curve, which does not depend on how many repetitions were run. The
  worst repetition, used before issue #36, is the maximum of n: the more carefully a load was
  measured, the lower its capacity (-2.5% at n = 2 to -8.7% at n = 20), and a bootstrap of a
  maximum under-covers. The uncertainty (`log_capacity`) is the delta method on the log of the
  capacity: each load's means, with their covariance (throughput and latencies come from the
  same runs), through the capacity's numerical gradient, with Welch-Satterthwaite degrees of
  freedom over the loads; repetition i at one load is never tied to repetition i at another
  (they are different runs). Simulated coverage 0.93-0.97 from n = 3 (tests/test_whole_truth.py).
- Grid: linear interpolation on a coarse grid is biased (the latency curve bends); when the limit
  falls in a segment whose upper load is more than twice its lower one, `grid_warning` says so.
- Frontier: interactivity is 1000 / TPOT (tokens per second per user), from the TPOT statistic
  the SLO limits (so the SLO line and the points share one axis), else `tpot_median`, else
  `tpot_mean`. Not ITL: with speculative decoding a chunk carries several tokens and ITL measures
  the gap between chunks, so 1000 / ITL understates a user's token rate.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

Kind = Literal["interpolated", "meets-all", "breaks-all", "breaks-lowest", "insufficient"]
TPOT_STATS: tuple[str, ...] = ("tpot_median", "tpot_mean")


@dataclass(frozen=True)
class Repetition:
    throughput: float
    latencies: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Point:
    """One load of a sweep: the caller's summary values (say which: mean, median) and repetitions."""

    load: float  # concurrency or request rate
    throughput: float  # output tok/s
    latencies: Mapping[str, float] = field(default_factory=dict)  # metric -> ms
    repetitions: tuple[Repetition, ...] = ()


@dataclass(frozen=True)
class Capacity:
    kind: Kind
    reason: str  # in words, for pages and problems
    # interpolated: the highest throughput within the SLO, and its load.
    throughput: float | None = None
    load: float | None = None
    # interpolated: where the first latency reaches its limit.
    limit_throughput: float | None = None
    limit_load: float | None = None
    limiting: tuple[str, ...] = ()  # the metric(s) reaching their limit first
    segment: tuple[float, float] | None = None  # the last meeting load and the first breaking one
    lower_bound: float | None = None  # meets-all only: a lower bound, never a capacity
    missing: tuple[tuple[float, str], ...] = ()  # insufficient: (load, metric) without a value
    meets_again: tuple[float, ...] = ()  # loads after the first break that meet again
    repetitions_note: str | None = None  # why the capacity has no interval (fewer than 2 repetitions at a load)
    # The limit falls in a segment spanning more than GRID_RATIO in load: the interpolation's bias is unknown.
    grid_warning: str | None = None
    # The fewest repetitions at any load (0 without repetitions).
    repetitions: int = 0


# A segment wider than this (upper load / lower load) makes the interpolated capacity a guess.
GRID_RATIO = 2.0


def capacity(points: Sequence[Point], slo: Mapping[str, float]) -> Capacity:
    """The highest throughput at which every SLO limit holds (each load's point as given)."""
    main = _capacity(points, slo)
    counts = [len(p.repetitions) for p in points]
    fewest = min(counts) if counts else 0
    if main.kind == "interpolated" and main.segment is not None:
        a, b = main.segment
        if a > 0 and b / a > GRID_RATIO:
            main = replace(
                main,
                grid_warning=(
                    f"the limit falls between loads {a:g} and {b:g}, more than {GRID_RATIO:g}x apart: linear "
                    "interpolation there can be off by much more than the interval; measure a load in between"
                ),
            )
    if fewest < 2 and any(counts):
        main = replace(main, repetitions_note="fewer than 2 repetitions at some load: no interval")
    return replace(main, repetitions=fewest)


def aggregate(load: float, repetitions: Sequence[Repetition], tpot: Mapping[str, float] | None = None) -> Point:
    """A load's point from its repetitions: the mean throughput and the mean of each limited latency."""
    names = set(repetitions[0].latencies) if repetitions else set()
    for r in repetitions:
        names &= set(r.latencies)
    latencies = {m: sum(r.latencies[m] for r in repetitions) / len(repetitions) for m in sorted(names)}
    latencies.update(tpot or {})
    throughput = sum(r.throughput for r in repetitions) / len(repetitions)
    return Point(load, throughput, latencies, tuple(repetitions))


@dataclass(frozen=True)
class LogCapacity:
    """The log of a capacity, the variance of that log (delta method), and its degrees of freedom."""

    log: float
    var: float
    df: float | None
    # (variance contributed, degrees of freedom) of each load, for combining two sides.
    parts: tuple[tuple[float, float], ...] = ()


def log_capacity(points: Sequence[Point], slo: Mapping[str, float]) -> LogCapacity | None:
    """The capacity's log with its delta-method variance, or None without a number or 2 repetitions a load.

    Each load's means (throughput and every limited latency) move the capacity through
    `_capacity`; the gradient of its log is taken by central differences (the rule is piecewise
    linear in the means, so the step only has to stay on one piece), and the variance is
    g' S g per load, S the covariance of that load's means (sample covariance / n).
    """
    import numpy as np

    if not points or any(len(p.repetitions) < 2 for p in points):
        return None
    base = _log_throughput(points, slo)
    if base is None:
        return None
    total, parts = 0.0, []
    for i, p in enumerate(points):
        names = sorted(m for m in slo if m in p.latencies and all(m in r.latencies for r in p.repetitions))
        rows = [[r.throughput, *(r.latencies[m] for m in names)] for r in p.repetitions]
        cov = np.atleast_2d(np.cov(np.asarray(rows, dtype=float), rowvar=False, ddof=1)) / len(rows)
        grad = []
        for j in range(len(names) + 1):
            step = 1e-6 * max(abs(p.throughput if j == 0 else p.latencies[names[j - 1]]), 1e-12)
            ends = [_log_throughput(_nudged(points, i, names, j, s), slo) for s in (step, -step)]
            if ends[0] is None or ends[1] is None:
                return None
            grad.append((ends[0] - ends[1]) / (2 * step))
        g = np.asarray(grad)
        v = float(g @ cov @ g)
        total += v
        if v > 0:
            parts.append((v, len(rows) - 1.0))
    denominator = sum(v * v / d for v, d in parts)
    return LogCapacity(base, total, total * total / denominator if denominator > 0 else None, tuple(parts))


def _log_throughput(points: Sequence[Point], slo: Mapping[str, float]) -> float | None:
    c = _capacity(points, slo)
    return math.log(c.throughput) if c.throughput is not None and c.throughput > 0 else None


def _nudged(points: Sequence[Point], i: int, names: Sequence[str], j: int, step: float) -> list[Point]:
    """`points` with load i's throughput (j = 0) or its j-th limited latency moved by `step`."""
    p = points[i]
    if j == 0:
        moved = replace(p, throughput=p.throughput + step)
    else:
        name = names[j - 1]
        moved = replace(p, latencies={**p.latencies, name: p.latencies[name] + step})
    return [moved if k == i else q for k, q in enumerate(points)]


def _capacity(points: Sequence[Point], slo: Mapping[str, float]) -> Capacity:
    ordered = sorted(points, key=lambda p: p.load)
    problem = _insufficient(ordered, slo)
    if problem is not None:
        return problem
    meets = [all(p.latencies[m] <= limit for m, limit in slo.items()) for p in ordered]
    if all(meets):
        best = max(ordered, key=lambda p: p.throughput)
        return Capacity(
            "meets-all",
            f"meets the SLO at every measured load, up to {ordered[-1].load:g}; "
            f"capacity is at least {best.throughput:g} (not measured beyond)",
            lower_bound=best.throughput,
        )
    first = meets.index(False)
    again = tuple(p.load for p, ok in zip(ordered[first:], meets[first:], strict=True) if ok)
    if first == 0:
        if not again:
            return Capacity("breaks-all", "breaks the SLO at every measured load")
        return Capacity(
            "breaks-lowest",
            f"breaks the SLO at the lowest measured load ({ordered[0].load:g}) "
            f"but meets it at {', '.join(f'{x:g}' for x in again)}",
            meets_again=again,
        )
    return _interpolate(ordered[: first + 1], slo, again)


def _insufficient(ordered: Sequence[Point], slo: Mapping[str, float]) -> Capacity | None:
    if not slo:
        return Capacity("insufficient", "the campaign sets no SLO")
    if len(ordered) < 2:
        return Capacity("insufficient", f"{len(ordered)} measured load(s); a sweep needs at least 2")
    loads = [p.load for p in ordered]
    dupes = sorted({x for x in loads if loads.count(x) > 1})
    if dupes:
        return Capacity("insufficient", "more than one point at load " + ", ".join(f"{x:g}" for x in dupes))
    missing = tuple((p.load, m) for p in ordered for m in sorted(slo) if m not in p.latencies)
    if missing:
        said = "; ".join(f"{m} at {load:g}" for load, m in missing)
        return Capacity("insufficient", f"no value for {said}", missing=missing)
    return None


def _interpolate(ordered: Sequence[Point], slo: Mapping[str, float], again: tuple[float, ...]) -> Capacity:
    """Capacity on the last segment of `ordered`, whose last point is the first to break."""
    a, b = ordered[-2], ordered[-1]
    reach: dict[str, float] = {}
    for m, limit in slo.items():
        v0, v1 = a.latencies[m], b.latencies[m]
        if v1 > limit:
            # v0 <= limit < v1, so the denominator is positive and 0 <= t < 1.
            reach[m] = (limit - v0) / (v1 - v0)
    t = min(reach.values())
    limiting = tuple(sorted(m for m, x in reach.items() if x == t))
    at_limit = a.throughput + t * (b.throughput - a.throughput)
    load = a.load + t * (b.load - a.load)
    best = max(ordered[:-1], key=lambda p: p.throughput)
    throughput, best_load = (at_limit, load) if at_limit >= best.throughput else (best.throughput, best.load)
    reason = (
        f"{throughput:g} at load {best_load:g}; {' and '.join(limiting)} reaches its limit "
        f"between loads {a.load:g} and {b.load:g}"
    )
    return Capacity(
        "interpolated",
        reason,
        throughput=throughput,
        load=best_load,
        limit_throughput=at_limit,
        limit_load=load,
        limiting=limiting,
        segment=(a.load, b.load),
        meets_again=again,
    )


@dataclass(frozen=True)
class CapacityChange:
    percent: float | None  # (record - baseline) / baseline * 100, when both are numbers or bounds
    bound: Literal["at least", "at most"] | None  # set when one side is a meets-all lower bound
    words: str


def capacity_change(record: Capacity, baseline: Capacity) -> CapacityChange:
    """The record's capacity against its baseline's: a percent where numbers allow, else words."""
    r, b = record, baseline
    pct = _pct(r.throughput, b.throughput)
    if pct is not None:
        return CapacityChange(pct, None, f"{pct:+.1f}% capacity under the SLO")
    # A lower bound on one side bounds the change, in one direction only.
    pct = _pct(r.lower_bound, b.throughput)
    if pct is not None:
        return CapacityChange(pct, "at least", f"at least {pct:+.1f}% (the record meets the SLO at every load)")
    pct = _pct(r.throughput, b.lower_bound)
    if pct is not None:
        return CapacityChange(pct, "at most", f"at most {pct:+.1f}% (the baseline meets the SLO at every load)")
    return CapacityChange(None, None, f"record: {r.reason}; baseline: {b.reason}")


def _pct(new: float | None, old: float | None) -> float | None:
    # `throughput` is set only for interpolated capacities and `lower_bound` only for meets-all.
    if new is None or old is None or old <= 0:
        return None
    return (new - old) / old * 100


@dataclass(frozen=True)
class FrontierPoint:
    load: float
    throughput: float
    interactivity: float | None  # tokens/s per user; None without a usable TPOT
    tpot_metric: str | None  # which statistic it came from
    throughput_per_gpu: float | None  # None when the GPU count is not known


def frontier(
    points: Sequence[Point], gpus: int | None, slo: Mapping[str, float] | None = None
) -> tuple[FrontierPoint, ...]:
    """Throughput per GPU against tokens/s per user, one point per load, in load order.

    Interactivity is read from the TPOT statistic the SLO limits when it limits one (the mean of
    a load's repetitions, as capacity reads it), so the SLO's line and the points share one axis;
    else from the median TPOT, else the mean.
    """
    order = (*sorted(m for m in slo or {} if m.startswith("tpot_")), *TPOT_STATS)
    out = []
    for p in sorted(points, key=lambda p: p.load):
        stat = next((s for s in order if p.latencies.get(s, 0) > 0), None)
        out.append(
            FrontierPoint(
                load=p.load,
                throughput=p.throughput,
                interactivity=None if stat is None else 1000 / p.latencies[stat],
                tpot_metric=stat,
                throughput_per_gpu=None if not gpus else p.throughput / gpus,
            )
        )
    return tuple(out)


def capacity_point(
    c: Capacity, points: Sequence[FrontierPoint], slo: Mapping[str, float]
) -> tuple[float, float] | None:
    """An interpolated capacity on the frontier's axes: (tokens/s per user, output throughput).

    On the statistic the frontier's points are read from, so the point sits where they do: on
    the SLO's line when that statistic is the one reaching its limit, at the measured load when
    the capacity is a load before the limit, else that statistic interpolated as capacity is.
    None without a number, or when a load of the segment has no interactivity.
    """
    if c.kind != "interpolated" or c.throughput is None or c.load is None or c.segment is None:
        return None
    at = {p.load: p for p in points}
    if c.throughput != c.limit_throughput:
        found = at.get(c.load)
        return (found.interactivity, c.throughput) if found and found.interactivity else None
    a, b = at.get(c.segment[0]), at.get(c.segment[1])
    if a is None or b is None or not a.interactivity or not b.interactivity:
        return None
    stat = a.tpot_metric
    if stat is not None and stat in c.limiting and stat in slo:
        return 1000 / slo[stat], c.throughput
    t = (c.load - a.load) / (b.load - a.load)
    tpot = 1000 / a.interactivity + t * (1000 / b.interactivity - 1000 / a.interactivity)
    return 1000 / tpot, c.throughput
