"""One answer per record, beside its primary comparison (issue #36).

Holm's correction over a best of k (only the variants with a p-value count) and the interval
that goes with its word; the regressions beyond min_effect a headline must not hide; and, for a
record without a primary comparison, why and what it measured instead; which of several runs of
one comparison it reads (`model.reruns`). `campaign` calls these;
they read the resolved results and never resolve anything themselves.
"""

from __future__ import annotations

from dataclasses import replace

from generator.analysis import stats
from generator.analysis.records import Primary, Regression, ResolvedResult
from generator.analysis.stats import Comparison
from generator.model import quantity, reruns, variants
from generator.model.quantity import Value
from generator.model.result import Statistics
from generator.project.load import RecordFile


def value_side(value: Value) -> list[float] | stats.Moments:
    """What `stats.compare` takes for a value: its repetitions, or its summary statistics."""
    if isinstance(value, Statistics):
        return stats.Moments(value.mean, value.sd, value.n)
    return quantity.samples(value)


def rerun_notes(results: tuple[ResolvedResult, ...], alpha: float) -> tuple[ResolvedResult, ...]:
    """The results, noted where a later plan of their comparison replaces them, and where a new
    sequence follows undecided ones and what its guarantee then covers (`model.reruns`)."""
    plain = [r.result for r in results]
    notes = reruns.replaced_notes(plain)
    restarts = reruns.restart_notes(plain, alpha)
    return tuple(
        replace(r, notes=(*r.notes, *(n[i] for n in (restarts, notes) if i in n))) if i in notes or i in restarts else r
        for i, r in enumerate(results)
    )


def regressions(
    results: tuple[ResolvedResult, ...], primary: Primary | None, min_effect: float
) -> tuple[Regression, ...]:
    """Every comparison of `results` (bar the primary one) shown worse by more than min_effect.

    Its whole 1 - alpha interval lies beyond -min_effect on the worse side: a real regression
    that matters, never one inside the noise. The primary metric at other loads counts too.
    """
    out = []
    for index, r in enumerate(results):
        for name, c in r.comparisons.items():
            if c is None or c.decision != "worse" or c.change_percent is None:
                continue
            if primary is not None and primary.kind == "metric" and name == primary.metric and index == primary.index:
                continue
            high, low, high_raw = c.gain_high_percent, c.ci_low_percent, c.ci_high_percent
            if high is None or high >= -min_effect or low is None or high_raw is None:
                continue
            out.append(Regression(name, r.result.label, r.result.concurrency, c.change_percent, low, high_raw))
    return tuple(out)


def best_of(
    rec: RecordFile, by_variant: tuple[tuple[ResolvedResult, ...], ...], primary: Primary, alpha: float
) -> Primary:
    """A retained variant picked among k >= 2 candidates: its decision survives only Holm's correction.

    Each candidate variant's comparison on the primary metric (at the primary's load, else its
    first) gives one p; only arms with a p-value count (a mean without a spread tests nothing,
    and counting it as p = 1 once turned a real A/B inconclusive). Holm's step-down adjusts
    them; the retained variant keeps `better` or `worse` only while its adjusted p is below
    alpha, else it is `inconclusive`. The interval shown is the one that goes with the word
    (`_holm_interval`).
    """
    if primary.kind != "metric" or not rec.record.variants:
        return primary
    candidates = [(v, rs) for v, rs in zip(rec.record.variants, by_variant, strict=True) if v.outcome != "diagnostic"]
    if len(candidates) < 2 or not any(v.outcome == "retained" for v, _ in candidates):
        return primary
    ps: list[float] = []
    kept: int | None = None
    for v, rs in candidates:
        found = [r.comparisons.get(primary.metric) for r in rs]
        at = [
            c for r, c in zip(rs, found, strict=True) if c is not None and r.result.concurrency == primary.concurrency
        ]
        c = at[0] if at else next((c for c in found if c is not None), None)
        if c is None or c.p_value is None:
            continue
        if v.outcome == "retained":
            kept = len(ps)
        ps.append(c.p_value)
    if kept is None or len(ps) < 2:
        return primary
    adjusted = stats.holm(ps)[kept]
    c = primary.comparison
    if c.decision in ("better", "worse") and c.p_value is not None:
        level = _holm_level(ps, kept, alpha, kept=adjusted < alpha)
        c = _holm_interval(_retained_result(primary, rec, by_variant), primary.metric, c, level)
        if adjusted >= alpha:
            c = replace(c, decision="inconclusive")
    return replace(primary, comparison=c, best_of=len(candidates), holm_p=adjusted, best_of_tested=len(ps))


def _holm_level(ps: list[float], index: int, alpha: float, *, kept: bool) -> float:
    """The alpha of the interval that goes with Holm's word for arm `index`.

    Kept: alpha / (k - rank), the step at which Holm rejects it, whose interval excludes 0
    (its (k - rank) p is at most the adjusted p, below alpha). Not kept: alpha / k (Bonferroni),
    whose interval holds 0 (the adjusted p is at most k p, so k p >= alpha).
    """
    k = len(ps)
    if not kept:
        return alpha / k
    rank = sorted(range(k), key=lambda i: ps[i]).index(index)
    return alpha / (k - rank)


def _retained_result(
    primary: Primary, rec: RecordFile, by_variant: tuple[tuple[ResolvedResult, ...], ...]
) -> ResolvedResult | None:
    """The retained variant's result the primary comparison comes from."""
    kept = variants.retained(rec.record)
    if kept is None:
        return None
    results = by_variant[rec.record.variants.index(kept)]
    return results[primary.index] if 0 <= primary.index < len(results) else None


def _holm_interval(res: ResolvedResult | None, metric: str, c: Comparison, level: float) -> Comparison:
    """`c` with its interval at `level` (the Holm step's), computed again from the same values."""
    if res is None or metric not in res.metrics or metric not in res.baseline:
        return c
    x, b = value_side(res.metrics[metric]), value_side(res.baseline[metric])
    again = stats.compare(
        x, b, higher_is_better=c.higher_is_better, paired=res.result.paired, alpha=level, min_effect=c.min_effect
    )
    return replace(
        c,
        ci_low=again.ci_low,
        ci_high=again.ci_high,
        ci_low_percent=again.ci_low_percent,
        ci_high_percent=again.ci_high_percent,
        interval_alpha=level,
    )


def unranked_why(results: tuple[ResolvedResult, ...], metric: str | None) -> str | None:
    """ "no baseline" when a headline result measured the primary metric with nothing to compare it with."""
    if metric is not None and any(metric in r.metrics and r.comparisons.get(metric) is None for r in results):
        return "no baseline"
    return None


def measured_instead(results: tuple[ResolvedResult, ...]) -> tuple[str, str, Comparison] | None:
    for r in results:
        for name, c in r.comparisons.items():
            if c is not None:
                return name, r.result.label, c
    return None
