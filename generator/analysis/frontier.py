"""The campaign's one frontier: every configuration's throughput per GPU against tokens/s per user.

A configuration is the baseline, each record (its own results), each record's retained variant,
and the stack (the adopted record whose builds_on chain holds every adopted record, when one was
measured). Each becomes one series per workload, one point per load in load order, so no line
ever joins runs of two configurations, two workloads or two request rates.

A record that measured its baseline in its own blocks (`baseline_run`, or inline `baseline`
values) measured a configuration too: the campaign baseline when it builds on nothing, else the
record it builds on last. Such a point joins that configuration's series at its load, unless
the configuration has its own point there, so that every record is drawn beside what it was
compared with at the load it was compared at (a campaign whose baseline has no results of its
own still has a baseline on its frontier). Configurations measured at loads no other one was
measured at are named (`alone`): the chart cannot compare them with anything.

Interactivity is read from one statistic for the whole chart, so the SLO line and every point
and capacity agree: the SLO's own TPOT limit when it sets one (the mean of a load's repetitions,
as capacity reads it), else the median TPOT, else the mean, else output throughput divided by the
concurrency (each user's share of the tokens, lower than 1000 / TPOT by the time to the first
token). The first of these that any result measures is the chart's; points without it are
counted, never drawn on another statistic.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from generator.analysis import capacity as cap
from generator.analysis.records import RecordAnalysis, ResolvedResult
from generator.analysis.sweeps import THROUGHPUT, _load, _mean, _point, _workload_key, _workload_text
from generator.model import variants
from generator.model.quantity import Value, fmt_number
from generator.model.quantity import stat as value_stat
from generator.model.result import Range, Statistics

PER_USER = "throughput / concurrency"


def _count(r: ResolvedResult, metrics: Mapping[str, Value]) -> int | None:
    """The repetitions behind a throughput (`metrics`: the result's own, or its baseline's), when
    known: listed or stated values, or runs."""
    value = metrics[THROUGHPUT]
    if isinstance(value, list | Statistics) or r.result.run_ids:
        return value_stat(value).n
    return None


@dataclass(frozen=True)
class FrontierPoint:
    load: float
    load_text: str  # "c=64" or "2 req/s"
    throughput: float  # output tok/s, per GPU when the GPU count is known
    interactivity: float  # tokens/s per user, on the chart's statistic
    # Repetitions behind the throughput; None for a number the source typed without saying how
    # many runs it rests on (issue 50: GLM-5's baseline read "n 1", which its seeds never say).
    n: int | None
    decision: str | None  # the primary comparison's decision at this load, if any
    # The record whose blocks measured this point as its baseline ("01"), when it is not the
    # configuration's own result.
    measured_by: str | None = None


@dataclass(frozen=True)
class Configuration:
    label: str
    kind: str  # "baseline", "record", "variant" or "stack"
    slug: str | None
    workload: str
    decision: str | None  # the record's primary decision, the configuration's as a whole
    points: tuple[FrontierPoint, ...]
    # Capacity under the SLO on the chart's axes (interactivity, throughput), when interpolated.
    capacity: tuple[float, float] | None = None


@dataclass(frozen=True)
class CampaignFrontier:
    statistic: str  # the metric interactivity is read from, or PER_USER
    repeated: bool  # the statistic is the mean of a load's repetitions (the SLO's own, with repetitions)
    per_gpu: bool
    gpus: int | None
    configurations: tuple[Configuration, ...]
    # (metric, limit in ms, the interactivity it allows) for the SLO's limit on the chart's statistic.
    slo: tuple[str, float, float] | None
    left_out: int  # points measured without the chart's statistic
    # The configurations (labels) measured at no load and workload another configuration was measured at.
    alone: tuple[str, ...] = ()
    # Not every configuration was measured at the same loads: a point compares only at its own load.
    mixed_loads: bool = False

    @property
    def axis(self) -> str:
        if self.statistic == PER_USER:
            return "tokens/s per user (output throughput / concurrency)"
        mean = ", mean of the repetitions" if self.repeated else ""
        return f"tokens/s per user (1000 / {self.statistic}{mean})"


Candidate = tuple[str, str, str | None, str | None, Sequence[ResolvedResult], str | None]


@dataclass(frozen=True)
class _Measured:
    """One result's numbers as a configuration's point: its own, or a record's measured baseline."""

    result: ResolvedResult
    metrics: Mapping[str, Value]
    measured_by: str | None


def _borrowed(records: Sequence[RecordAnalysis]) -> dict[str | None, list[_Measured]]:
    """Each record's own measurements of its baseline, by the slug of the configuration they
    measured (None: the campaign baseline), in series order. A baseline is a configuration of
    its own only when the record builds on nothing or on one record whose chain is the rest of
    its own; otherwise (a chain that skips a step) it is left out rather than drawn as another's."""
    chains = {ra.file.slug: tuple(r.slug for r in (ra.launch.chain if ra.launch else ())) for ra in records}
    out: dict[str | None, list[_Measured]] = {}
    for ra in records:
        chain = chains[ra.file.slug]
        if chain and chains.get(chain[-1]) != chain[:-1]:
            continue
        owner = chain[-1] if chain else None
        for r in ra.results:
            own = r.result.baseline_run is not None or bool(r.result.baseline)
            if own and not r.no_baseline and r.not_compared is None and r.baseline:
                out.setdefault(owner, []).append(_Measured(r, r.baseline, f"{ra.file.number:02d}"))
    return out


def _candidates(
    records: Sequence[RecordAnalysis], baseline: Sequence[ResolvedResult], stack_slugs: Sequence[str]
) -> list[Candidate]:
    """(label, kind, slug, decision, results, primary metric) for every configuration, series order."""
    out: list[Candidate] = [("baseline", "baseline", None, None, baseline, None)]
    whole = set(stack_slugs)
    for ra in records:
        rec = ra.file
        decision = ra.primary.comparison.decision if ra.primary is not None else None
        in_force = bool(whole) and {r.slug for r in (ra.launch.chain if ra.launch else ())} | {rec.slug} == whole
        kind = "stack" if in_force and rec.record.status == "adopted" else "record"
        name = f"{rec.number:02d} {rec.slug}" + (" (the stack)" if kind == "stack" else "")
        out.append((name, kind, rec.slug, decision, ra.results, ra.primary_metric))
        kept = variants.retained(rec.record)
        if kept is not None:
            results = ra.variant_results[rec.record.variants.index(kept)]
            out.append(
                (
                    f"{rec.number:02d} {rec.slug}, {kept.label}",
                    "variant",
                    rec.slug,
                    decision,
                    results,
                    ra.primary_metric,
                )
            )
    return out


def _statistic(slo: Mapping[str, float], found: Sequence[Mapping[str, Value]]) -> str:
    limited = sorted(m for m in slo if m.startswith("tpot_"))
    order = [*limited, *(s for s in cap.TPOT_STATS if s not in limited), PER_USER]

    def usable(values: Mapping[str, Value], stat: str) -> bool:
        v = values.get(stat)
        return v is not None and not isinstance(v, Range)

    return next((s for s in order[:-1] if any(usable(f, s) for f in found)), PER_USER)


def campaign_frontier(
    records: Sequence[RecordAnalysis],
    baseline: Sequence[ResolvedResult],
    slo: Mapping[str, float],
    gpus: int | None,
    stack_slugs: Sequence[str],
) -> CampaignFrontier | None:
    """The frontier of every configuration, or None when no result has a load and a throughput.

    Over 60 lines: one pass over the candidates that groups their results by workload, places
    each point and counts the ones it cannot place; the count must see every point.
    """
    candidates = _candidates(records, baseline, stack_slugs)
    borrowed = _borrowed(records)
    measured = [
        (
            c,
            [_Measured(r, r.metrics, None) for r in c[4]]
            + (borrowed.get(c[2], []) if c[1] in ("baseline", "record", "stack") else []),
        )
        for c in candidates
    ]
    usable = [
        m for _, ms in measured for m in ms if _load(m.result.result) is not None and _throughput(m.metrics) is not None
    ]
    if not usable:
        return None
    stat = _statistic(slo, [m.metrics for m in usable])
    limit = slo.get(stat)
    left_out = 0
    configurations = []
    for (label, kind, slug, decision, _results, metric), found in measured:
        groups: dict[tuple[object, ...], dict[float, _Measured]] = {}
        texts: dict[tuple[object, ...], str] = {}
        for m in found:
            placed = _load(m.result.result)
            if placed is None or _throughput(m.metrics) is None:
                continue
            load_kind, load, other = placed
            key: tuple[object, ...] = (load_kind, _workload_key(m.result.result), other)
            # Its own result first, then the first record that measured it as a baseline.
            groups.setdefault(key, {}).setdefault(load, m)
            texts[key] = _workload_text(m.result.result, load_kind, other)
        for key, members in groups.items():
            drawn, raw = [], []
            for load, m in sorted(members.items()):
                point = _point(load, m.metrics, slo)
                x = _interactivity(point, stat, m.result.result.concurrency) if point is not None else None
                if point is None or x is None:
                    left_out += 1
                    continue
                raw.append(point)
                comparison = m.result.comparisons.get(metric) if metric and m.measured_by is None else None
                drawn.append(
                    FrontierPoint(
                        load=load,
                        load_text=f"c={fmt_number(load)}" if key[0] == "concurrency" else f"{fmt_number(load)} req/s",
                        throughput=point.throughput / gpus if gpus else point.throughput,
                        interactivity=x,
                        n=_count(m.result, m.metrics),
                        decision=comparison.decision if comparison is not None else None,
                        measured_by=m.measured_by,
                    )
                )
            if drawn:
                configurations.append(
                    Configuration(
                        label,
                        kind,
                        slug,
                        texts[key],
                        decision,
                        tuple(drawn),
                        _capacity(raw, slo, gpus) if stat != PER_USER else None,
                    )
                )
    if not configurations:
        return None
    return CampaignFrontier(
        statistic=stat,
        repeated=stat in slo and any((p.n or 1) > 1 for c in configurations for p in c.points),
        per_gpu=bool(gpus),
        gpus=gpus,
        configurations=tuple(configurations),
        slo=(stat, limit, 1000 / limit) if limit else None,
        left_out=left_out,
        alone=unshared(configurations),
        mixed_loads=len({frozenset((c.workload, p.load_text) for p in c.points) for c in configurations}) > 1,
    )


def unshared(configurations: Sequence[Configuration]) -> tuple[str, ...]:
    """The configurations that share no (workload, load) with any other: nothing to compare them with."""
    seen = Counter((c.workload, p.load_text) for c in configurations for p in c.points)
    return tuple(c.label for c in configurations if all(seen[(c.workload, p.load_text)] == 1 for p in c.points))


def _throughput(found: Mapping[str, Value]) -> float | None:
    value = found.get(THROUGHPUT)
    return None if value is None or isinstance(value, Range) else _mean(value)


def _interactivity(point: cap.Point, stat: str, concurrency: int | None) -> float | None:
    if stat == PER_USER:
        return point.throughput / concurrency if concurrency else None
    value = point.latencies.get(stat)
    return 1000 / value if value is not None and value > 0 else None


def _capacity(points: Sequence[cap.Point], slo: Mapping[str, float], gpus: int | None) -> tuple[float, float] | None:
    """Capacity under the SLO on the chart's axes, per GPU when the chart is."""
    if not slo or len(points) < 2:
        return None
    found = cap.capacity_point(cap.capacity(points, slo), cap.frontier(points, None, slo), slo)
    if found is None:
        return None
    return found[0], found[1] / gpus if gpus else found[1]
