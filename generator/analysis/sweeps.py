"""Load sweeps: a record's results at two or more loads on one workload, and their capacity under the SLO.

A result's load is its concurrency, or else its numeric request rate; results on the same
workload (dataset, input and output length; the prompt count is left out because sweeps scale
it with the load) and the same other load setting (the request rate of a concurrency sweep)
form one sweep when they cover at least two loads. The baseline's sweep is each result's
baseline numbers at the same load: its own `baseline:`, the campaign baseline result at the same
concurrency, or the matched baseline run, as the analysis resolved them.

For each sweep the analysis keeps the points, the capacity under the campaign's SLO for the
record and for the baseline (`generator.analysis.capacity`), the change between them, the statistical
comparison of the per-repetition capacities when both sides have them, and the
throughput-interactivity frontier. Nothing here reads files; `analyse` calls `sweeps`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from generator.analysis import capacity as cap
from generator.analysis import stats
from generator.model.quantity import Value, fmt_number, stat
from generator.model.result import Range, Result

THROUGHPUT = "output_throughput"
LoadKind = Literal["concurrency", "request rate"]
# (result, its metrics, its baseline), as resolved by the analysis.
Resolved = tuple[Result, Mapping[str, Value], Mapping[str, Value]]


@dataclass(frozen=True)
class Side:
    """One side of a sweep (the record's or its baseline's): points, capacity and frontier."""

    points: tuple[cap.Point, ...]
    # None when the campaign sets no SLO.
    capacity: cap.Capacity | None
    frontier: tuple[cap.FrontierPoint, ...]
    # The capacity on the frontier's axes (tokens/s per user, output throughput), and that
    # throughput per GPU when the campaign gives its GPU count; None where it sits on no point.
    capacity_at: tuple[float, float] | None = None
    capacity_per_gpu: float | None = None


@dataclass(frozen=True)
class Sweep:
    load_kind: LoadKind
    # The shared workload and other load setting, in words.
    workload: str
    loads: tuple[float, ...]
    labels: tuple[str, ...]  # the results' labels, in load order
    record: Side
    baseline: Side
    # Set when both sides have a capacity (the campaign sets an SLO).
    change: cap.CapacityChange | None
    # The capacities compared on the log scale (delta method), when both sides have repetitions.
    comparison: stats.Comparison | None
    # The two sides ran different numbers of repetitions (`_unequal`), in words, else None.
    unequal_repetitions: str | None = None
    # Each TPOT limit of the SLO (name, ms) with the interactivity it allows, 1000 / limit (tokens/s per user).
    slo_lines: tuple[tuple[str, float, float], ...] = ()

    def load_text(self, load: float) -> str:
        return f"c={fmt_number(load)}" if self.load_kind == "concurrency" else f"{fmt_number(load)} req/s"

    @property
    def change_percent(self) -> float | None:
        """The one capacity change every output prints.

        With repetitions on both sides it is the change of the compared per-repetition capacities,
        the point its interval and decision belong to; without, the change between the two sides'
        capacities. A page and the summary once printed one and the other (+15.4% and +12.4%).
        """
        if self.change is None:
            return None
        comp = self.comparison
        if self.change.bound is None and comp is not None and comp.change_percent is not None:
            return comp.change_percent
        return self.change.percent


@dataclass(frozen=True)
class Rule:
    """The campaign's decision rule, as capacity reads it."""

    alpha: float = 0.05
    min_effect: float = 1.0


def sweeps(
    results: Sequence[Resolved], slo: Mapping[str, float], gpus: int | None, rule: Rule | None = None
) -> tuple[Sweep, ...]:
    """The sweeps among a record's resolved results, in the order of their first result."""
    groups: dict[tuple[LoadKind, tuple[object, ...], object], list[tuple[float, Resolved]]] = {}
    for item in results:
        placed = _load(item[0])
        if placed is None:
            continue
        kind, load, other = placed
        groups.setdefault((kind, _workload_key(item[0]), other), []).append((load, item))
    out = []
    for (kind, _key, other), members in groups.items():
        if len({load for load, _ in members}) < 2:
            continue
        members.sort(key=lambda m: m[0])
        out.append(_sweep(kind, _workload_text(members[0][1][0], kind, other), members, slo, gpus, rule or Rule()))
    return tuple(out)


def _load(result: Result) -> tuple[LoadKind, float, object] | None:
    if result.concurrency is not None:
        return "concurrency", float(result.concurrency), result.request_rate
    rate = result.request_rate
    if isinstance(rate, int | float):
        return "request rate", float(rate), None
    return None


def _workload_key(result: Result) -> tuple[object, ...]:
    w = result.workload
    return (None, None, None) if w is None else (w.dataset, w.input_len, w.output_len)


def _workload_text(result: Result, kind: LoadKind, other: object) -> str:
    w = result.workload
    parts = []
    if w is None or (w.dataset, w.input_len, w.output_len) == (None, None, None):
        parts.append("workload not recorded")
    else:
        parts.append(w.dataset or "dataset not recorded")
        parts.append("input " + ("length not recorded" if w.input_len is None else f"{w.input_len} tokens"))
        parts.append("output " + ("length not recorded" if w.output_len is None else f"{w.output_len} tokens"))
    if kind == "concurrency" and other is not None:
        words = {"inf": "unlimited", "trace": "trace replay"}
        # The words first: "trace" is no number (a default argument would be computed anyway).
        rate = words[str(other)] if str(other) in words else f"{fmt_number(float(str(other)))} req/s"
        parts.append("request rate " + rate)
    return ", ".join(parts)


def _sweep(
    kind: LoadKind,
    workload: str,
    members: list[tuple[float, Resolved]],
    slo: Mapping[str, float],
    gpus: int | None,
    rule: Rule,
) -> Sweep:
    loads = tuple(load for load, _ in members)
    record = _side([(load, item[1]) for load, item in members], slo, gpus, "")
    baseline = _side([(load, item[2]) for load, item in members], slo, gpus, "baseline ")
    change = comparison = None
    if record.capacity is not None and baseline.capacity is not None:
        change = cap.capacity_change(record.capacity, baseline.capacity)
        comparison = _compare(record, baseline, slo, rule)
    labels = tuple(item[0].label for _, item in members)
    lines = tuple((name, limit, 1000 / limit) for name, limit in sorted(slo.items()) if name.startswith("tpot_"))
    return Sweep(
        kind, workload, loads, labels, record, baseline, change, comparison, _unequal(record, baseline), slo_lines=lines
    )


def _compare(record: Side, baseline: Side, slo: Mapping[str, float], rule: Rule) -> stats.Comparison | None:
    """The capacity change decided by the campaign's rule, on the log scale by the delta method.

    Each side's log capacity and its variance (`capacity.log_capacity`: the capacity of the mean
    curve, each load's means through the capacity's gradient); the sides are independent runs,
    so the log ratio's variance is their sum, with Welch-Satterthwaite degrees of freedom over
    every load of both. None when a side has fewer than 2 repetitions at some load or no number.
    """
    mine, theirs = record.capacity, baseline.capacity
    if mine is None or theirs is None or mine.throughput is None or theirs.throughput is None:
        return None
    x, b = cap.log_capacity(record.points, slo), cap.log_capacity(baseline.points, slo)
    if x is None or b is None:
        return None
    var = x.var + b.var
    parts = (*x.parts, *b.parts)
    denominator = sum(v * v / d for v, d in parts if d > 0)
    df = var * var / denominator if denominator > 0 else float(mine.repetitions + theirs.repetitions - 2)
    return stats.from_log_estimate(
        mine.throughput,
        theirs.throughput,
        x.log - b.log,
        var**0.5,
        df,
        n=mine.repetitions,
        baseline_n=theirs.repetitions,
        higher_is_better=True,
        alpha=rule.alpha,
        min_effect=rule.min_effect,
    )


def _unequal(record: Side, baseline: Side) -> str | None:
    """A warning when the two sides ran different numbers of repetitions at their loads."""
    mine = sorted({len(p.repetitions) for p in record.points})
    theirs = sorted({len(p.repetitions) for p in baseline.points})
    if not mine or not theirs or mine == theirs or (mine == [0] and theirs == [0]):
        return None
    return (
        f"the record ran {'/'.join(map(str, mine))} repetitions a load and the baseline "
        f"{'/'.join(map(str, theirs))}: the capacity is the mean curve's on both sides, so the counts do not "
        "move it, but the sides are not measured alike; run both the same number of times"
    )


def _side(
    values: list[tuple[float, Mapping[str, Value]]], slo: Mapping[str, float], gpus: int | None, whose: str
) -> Side:
    points: list[cap.Point] = []
    unusable: list[str] = []
    for load, found in values:
        point = _point(load, found, slo)
        if point is None:
            unusable.append(fmt_number(load))
        else:
            points.append(point)
    capacity: cap.Capacity | None = None
    if slo:
        if unusable:
            capacity = cap.Capacity(
                "insufficient", f"no {whose}{THROUGHPUT} measured as a number at load {', '.join(unusable)}"
            )
        else:
            capacity = cap.capacity(points, slo)
    frontier = cap.frontier(points, gpus, slo)
    at = None if capacity is None else cap.capacity_point(capacity, frontier, slo)
    per_gpu = None if at is None or gpus is None else at[1] / gpus
    return Side(tuple(points), capacity, frontier, at, per_gpu)


def _point(load: float, found: Mapping[str, Value], slo: Mapping[str, float]) -> cap.Point | None:
    """A load's point, or None without a throughput measured as a number (a range is not one).

    With repetitions (lists of one length n >= 2 for the throughput and every limited latency,
    the i-th values from the i-th run at this load), the point is `capacity.aggregate` of them:
    the mean throughput and each limit's mean. Otherwise each value's mean.
    """
    throughput = found.get(THROUGHPUT)
    if throughput is None or isinstance(throughput, Range):
        return None
    wanted = [m for m in (*slo, *cap.TPOT_STATS) if found.get(m) is not None and not isinstance(found.get(m), Range)]
    tpot = {m: _mean(found[m]) for m in cap.TPOT_STATS if m in wanted}
    reps = _repetitions(throughput, {m: found[m] for m in slo if m in wanted})
    if reps:
        return cap.aggregate(load, reps, tpot)
    latencies = {m: _mean(found[m]) for m in wanted}
    return cap.Point(load, _mean(throughput), latencies)


def _mean(value: Value) -> float:
    assert not isinstance(value, Range)
    if isinstance(value, list):
        return sum(float(v) for v in value) / len(value)
    return stat(value).mean


def _repetitions(throughput: Value, latencies: Mapping[str, Value]) -> tuple[cap.Repetition, ...]:
    """This load's runs: the i-th value of every list, when every value is a list of one length n >= 2."""
    values = [throughput, *latencies.values()]
    if not all(isinstance(v, list) for v in values):
        return ()
    lengths = {len(v) for v in values if isinstance(v, list)}
    if len(lengths) != 1 or (n := lengths.pop()) < 2:
        return ()
    assert isinstance(throughput, list)
    return tuple(
        cap.Repetition(float(throughput[i]), {m: float(v[i]) for m, v in latencies.items() if isinstance(v, list)})
        for i in range(n)
    )


# --- export -------------------------------------------------------------------------------------------
