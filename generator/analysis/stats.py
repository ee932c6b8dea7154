"""One comparison of a metric's repetitions against the baseline's, and the decision it supports.

`compare` is the only place the tool turns samples into a verdict; pages, the summary, `check`
and export read its `Comparison` and never compute their own. The rules (issue #23,
docs/guide/decisions.md):

- **The ratio scale.** When every value on both sides is positive, the interval of a change is
  that of the ratio of the two sides: Welch's t on the logarithms of the values, with
  Welch-Satterthwaite degrees of freedom, exponentiated (paired: a t interval on
  log(x_i / b_i)). Its bounds never pass -100%, and swapping the two sides gives the reciprocal
  interval, so "106x lower" and its interval agree. The point change is the estimate that
  interval is built on, one estimator wherever a change is printed: the geometric mean of the
  paired ratios (paired) or the ratio of the two sides' geometric means (unpaired), minus 1.
  `difference` (baseline mean times that change) and `Comparison.ratio` (the "x") are the same
  estimate. The ratio of the arithmetic means, the means the pages print, is another estimator
  (`arith_change_percent`), shown under its own name where it differs as rounded: on serving
  data by up to a point or more (+61.5% against +62.5% in the runner example's record 01). A
  value <= 0 on either side has no logarithm: the change and its interval are then those of the
  difference of the means (Welch or paired t), as a percent of the baseline mean.
- **Decision** (the change oriented so that + is better; m = ``min_effect`` percent):
  ``no-change`` when the 1 - 2 alpha interval lies inside +-m (the two one-sided tests, TOST, at
  alpha); else ``better`` / ``worse`` when the 1 - alpha interval excludes 0 on that side (a
  two-sided test at alpha); else ``inconclusive``. ``unreplicated``: n = 1 on either side, or a
  side given as a mean without a spread (only the point change is reported, never a direction).
  The point change is not a condition: requiring it to reach m would cap the chance of
  ``better`` at one half when the true change is m (see the guide), and a change shown to be
  smaller than m is already ``no-change``.
- **Repetitions needed** (``inconclusive`` only): the smallest n per side at which this same rule
  says ``better`` (``worse`` for a loss; ``no-change`` when the change seen lies inside +-m) with a
  probability of at least 0.8 if the true change were the one observed, and the n for ``better``
  if it were +m, at the spread seen. Computed by a seeded simulation of the rule itself
  (`rule_power`), so the count is deterministic; with 2 repetitions on a side the spread, and
  so the count, is rough (`reps_rough`).

Edge cases, each deliberate:

- Empty or non-finite samples, ``alpha`` outside (0, 0.5), negative ``min_effect``: ValueError.
  So are samples whose mean or spread overflows a float. Paired with unequal n: ValueError
  naming both counts (validation reports it with positions before anything gets here).
- No spread at all (every repetition identical on both sides; paired: every ratio identical):
  t is undefined, so `p_value` is None and both intervals are the point itself; the rule then
  reads the point. Deterministic metrics (accept length under greedy decoding) behave so.
- Baseline mean 0: no percent exists, so the percent fields are None and the decision is made
  on the difference in the metric's unit, where m percent of 0 is 0: better/worse when the
  interval excludes 0, no-change only when the interval is exactly [0, 0].

scipy and numpy are imported inside the functions so that importing this module stays cheap
for commands that never compare anything. The `Comparison` made here is defined in
`comparison`, the repetitions needed are simulated in `power`, and a guardrail's states and the
ranking key are read in `ranking`; their names stay importable from here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from generator.analysis.comparison import DECISIONS as DECISIONS
from generator.analysis.comparison import Comparison as Comparison
from generator.analysis.comparison import Decision as Decision
from generator.analysis.comparison import Fold as Fold
from generator.analysis.comparison import Moments as Moments
from generator.analysis.comparison import Scale as Scale
from generator.analysis.comparison import Test as Test
from generator.analysis.power import POWER as POWER
from generator.analysis.power import REPS_CAP as REPS_CAP
from generator.analysis.power import SEED as SEED
from generator.analysis.power import SIMULATIONS as SIMULATIONS
from generator.analysis.power import reps_for_rule
from generator.analysis.power import rule_power as rule_power
from generator.analysis.ranking import GROUPS as GROUPS
from generator.analysis.ranking import GuardrailState as GuardrailState
from generator.analysis.ranking import guardrail_state as guardrail_state
from generator.analysis.ranking import holm as holm
from generator.analysis.ranking import rank_group as rank_group
from generator.analysis.ranking import rank_key as rank_key
from generator.analysis.tdist import t_interval, t_p_value, welch_df
from generator.model.quantity import WIDE

# Repetitions whose largest value is more than this many times the smallest: more spread than
# one configuration plausibly gives (a mixed-up run, another setting); flagged, not dropped. The
# model's rule (`quantity.WIDE`), which also lists such values where no comparison is made.
SPREAD_FLAG = WIDE


@dataclass(frozen=True)
class _Side:
    n: int
    mean: float
    sd: float | None
    # On the log scale, when every value is positive (for moments: a positive mean).
    log_mean: float | None
    log_sd: float | None
    values: tuple[float, ...] | None  # None for moments


def compare(
    samples: Sequence[float] | Moments,
    baseline: Sequence[float] | Moments,
    *,
    higher_is_better: bool,
    paired: bool = False,
    alpha: float = 0.05,
    min_effect: float = 1.0,
) -> Comparison:
    """Compare `samples` (the record's repetitions) with `baseline` and decide; see the module doc.

    Over 60 lines: the fields of one Comparison filled in order (their table is a third of it),
    each step reading what the one before found.
    """
    if not 0 < alpha < 0.5:
        raise ValueError(f"alpha must lie strictly between 0 and 0.5, got {alpha!r}")
    if not (math.isfinite(min_effect) and min_effect >= 0):
        raise ValueError(f"min_effect must be a finite percent >= 0, got {min_effect!r}")
    x, b = _side(samples, "samples"), _side(baseline, "baseline")
    if paired and (x.values is None or b.values is None):
        raise ValueError("a paired comparison needs the repetitions themselves, not summary statistics")
    if paired and x.n != b.n:
        raise ValueError(
            f"a paired comparison needs as many repetitions as the baseline has "
            f"(matched by position), got {x.n} and {b.n}"
        )
    difference = x.mean - b.mean
    _require_finite(difference)
    statistics = isinstance(samples, Moments) or isinstance(baseline, Moments)
    arith = _percent(difference, b.mean)
    # The fields, filled in as the comparison goes and made into a Comparison once: a frozen
    # dataclass of 30 fields made again by `replace` at each step was half of `compare`'s time.
    fields: dict[str, Any] = dict(
        n=x.n,
        baseline_n=b.n,
        mean=x.mean,
        baseline_mean=b.mean,
        difference=difference,
        ci_low=None,
        ci_high=None,
        change_percent=arith,
        ci_low_percent=None,
        ci_high_percent=None,
        p_value=None,
        test=None,
        decision="unreplicated",
        reps_needed=None,
        reps_over_cap=False,
        higher_is_better=higher_is_better,
        alpha=alpha,
        min_effect=min_effect,
        basis="statistics" if statistics else "repetitions",
        spread_unknown=x.sd is None or b.sd is None,
        spread_flag=_spread_flag(x, b),
        arith_change_percent=arith,
    )
    if x.n < 2 or b.n < 2 or x.sd is None or b.sd is None:
        return Comparison(**_geometric_point(fields, x, b))
    ratio = x.log_mean is not None and b.log_mean is not None
    est = _estimate(x, b, paired=paired, ratio=ratio)
    p_value, (low, high), (eq_low, eq_high) = _intervals(est, alpha)
    scale: Scale = "ratio" if ratio else "difference"
    if ratio:
        unit_low, unit_high = b.mean * math.expm1(low), b.mean * math.expm1(high)
        pct: list[float | None] = [_log_percent(v) for v in (low, high, eq_low, eq_high)]
        fields.update(difference=b.mean * math.expm1(est.point), change_percent=_log_percent(est.point))
    else:
        unit_low, unit_high = low, high
        pct = [_percent(v, b.mean) for v in (low, high, eq_low, eq_high)]
    if all(v is not None for v in pct) and fields["change_percent"] is not None:
        threshold, bounds = min_effect, [v for v in pct if v is not None]
    else:
        # A zero baseline mean: min_effect percent of it is zero in the metric's unit.
        threshold, bounds = 0.0, [low, high, eq_low, eq_high]
    decision = decide(*bounds, threshold=threshold, higher_is_better=higher_is_better)
    fields.update(
        ci_low=unit_low,
        ci_high=unit_high,
        ci_low_percent=pct[0],
        ci_high_percent=pct[1],
        eq_low_percent=pct[2],
        eq_high_percent=pct[3],
        p_value=p_value,
        test="paired" if paired else "welch",
        decision=decision,
        scale=scale,
        log_ratio=est.point if ratio else None,
        log_se=est.se if ratio else None,
        df=est.df if ratio else None,
    )
    out = Comparison(**fields)
    if decision == "inconclusive" and out.change_percent is not None:
        out = _with_reps(out, est, ratio=ratio)
    return out


def _geometric_point(c: dict[str, Any], x: _Side, b: _Side) -> dict[str, Any]:
    """A single shot's fields with its point on the ratio scale, when both sides have one: the
    geometric means' ratio, the estimate a replicated comparison of the same values would print."""
    if x.log_mean is None or b.log_mean is None or b.mean <= 0:
        return c
    log_ratio = x.log_mean - b.log_mean
    return {
        **c,
        "difference": b.mean * math.expm1(log_ratio),
        "change_percent": _log_percent(log_ratio),
        "log_ratio": log_ratio,
    }


def from_log_estimate(
    mean: float,
    baseline_mean: float,
    log_ratio: float,
    log_se: float,
    df: float,
    *,
    n: int,
    baseline_n: int,
    higher_is_better: bool,
    alpha: float,
    min_effect: float,
) -> Comparison:
    """A comparison of two estimates given on the log scale (capacity's delta method), with the
    same intervals, point and rule as `compare`: the point is exp(log_ratio) - 1."""
    est = _Estimate(log_ratio, log_se, df, (0.0, None))
    p_value, (low, high), (eq_low, eq_high) = _intervals(est, alpha)
    pct = [_log_percent(v) for v in (low, high, eq_low, eq_high)]
    decision = decide(*pct, threshold=min_effect, higher_is_better=higher_is_better)
    return Comparison(
        n=n,
        baseline_n=baseline_n,
        mean=mean,
        baseline_mean=baseline_mean,
        difference=baseline_mean * math.expm1(log_ratio),
        ci_low=baseline_mean * math.expm1(low),
        ci_high=baseline_mean * math.expm1(high),
        change_percent=_log_percent(log_ratio),
        ci_low_percent=pct[0],
        ci_high_percent=pct[1],
        p_value=p_value,
        test="delta",
        decision=decision,
        reps_needed=None,
        reps_over_cap=False,
        higher_is_better=higher_is_better,
        alpha=alpha,
        min_effect=min_effect,
        eq_low_percent=pct[2],
        eq_high_percent=pct[3],
        log_ratio=log_ratio,
        log_se=log_se,
        df=df,
        arith_change_percent=_percent(mean - baseline_mean, baseline_mean),
    )


def _side(values: Sequence[float] | Moments, what: str) -> _Side:
    if isinstance(values, Moments):
        for name, v in (("mean", values.mean), ("sd", values.sd)):
            if v is not None and not math.isfinite(v):
                raise ValueError(f"{what}: the {name} must be a finite number")
        if values.n < 1 or (values.sd is not None and values.sd < 0):
            raise ValueError(f"{what}: n must be at least 1 and sd at least 0")
        if values.sd is None or values.mean <= 0:
            return _Side(values.n, values.mean, values.sd, None, None, None)
        sd = values.sd
        # The log-normal with this mean and SD: its log SD is sqrt(log(1 + cv^2)), its log mean
        # log(mean) - log_sd^2 / 2; what the log values of such repetitions would give.
        spread = math.sqrt(math.log1p((sd / values.mean) ** 2))
        return _Side(values.n, values.mean, sd, math.log(values.mean) - spread**2 / 2, spread, None)
    xs = _floats(values, what)
    if not all(math.isfinite(v) for v in xs):
        raise ValueError(f"{what} must be finite numbers (no NaN or infinity)")
    import statistics

    # The same mean the pages print (statistics.fmean, exactly rounded), so a comparison's means
    # and the Stat beside them in the export are one number.
    try:
        mean = statistics.fmean(xs)
    except OverflowError:
        mean = math.inf
    sd = _sd(xs) if len(xs) > 1 else 0.0
    _require_finite(mean, sd)
    log_mean: float | None = None
    log_sd: float | None = None
    if all(v > 0 for v in xs):
        import numpy as np

        # numpy's log, not math.log: the two differ in the last bit for a few values in 10,000,
        # and every number the pages print was computed with numpy's.
        logs = np.log(np.asarray(xs, dtype=float)).tolist()
        log_mean = _sum(logs, 0, len(logs)) / len(logs)
        log_sd = _sd(logs) if len(logs) > 1 else 0.0
    return _Side(len(xs), mean, sd, log_mean, log_sd, tuple(xs))


def _floats(values: Sequence[float], what: str) -> list[float]:
    """The repetitions as floats, as `numpy.asarray(values, dtype=float)` converts them."""
    # Floats and small ints (exactly representable) convert alike in Python and numpy; anything
    # else goes through numpy, which also says why it is not a flat list of numbers.
    if isinstance(values, list | tuple) and all(
        type(v) is float or (type(v) is int and abs(v) <= 2**53) for v in values
    ):
        xs = [float(v) for v in values]
    else:
        import numpy as np

        try:
            arr = np.asarray(values, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{what} must be numbers: {exc}") from None
        xs = arr.tolist() if arr.ndim == 1 else []
    if not xs:
        raise ValueError(f"{what} must be a non-empty flat list of numbers")
    return xs


def _sum(a: list[float], start: int, n: int) -> float:
    """numpy's sum of a[start:start + n], operation for operation: its pairwise summation.

    A comparison has a handful of repetitions a side, where numpy's per-call overhead was most
    of `compare`'s time at 1,000 records; the same additions in the same order give the same
    bits (tests/test_stats.py holds them to numpy's).
    """
    if n < 8:
        total = -0.0
        for i in range(start, start + n):
            total += a[i]
        return total
    if n <= 128:
        r = a[start : start + 8]
        i = 8
        while i < n - n % 8:
            for j in range(8):
                r[j] += a[start + i + j]
            i += 8
        total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        for k in range(start + i, start + n):
            total += a[k]
        return total
    half = n // 2
    half -= half % 8
    return _sum(a, start, half) + _sum(a, start + half, n - half)


def _sd(a: list[float]) -> float:
    """numpy.std(a, ddof=1), operation for operation."""
    n = len(a)
    mean = _sum(a, 0, n) / n
    squares = [(v - mean) * (v - mean) for v in a]
    return math.sqrt(_sum(squares, 0, n) / (n - 1))


def _spread_flag(x: _Side, b: _Side) -> str | None:
    found = []
    for name, side in (("record", x), ("baseline", b)):
        if side.values is None or len(side.values) < 2:
            continue
        low, high = min(side.values), max(side.values)
        if low > 0 and high / low > SPREAD_FLAG:
            found.append(f"{name} repetitions span {high / low:.1f}x (max/min)")
    return "; ".join(found) or None


def _require_finite(*values: float) -> None:
    if not all(math.isfinite(v) for v in values):
        raise ValueError("the samples are too large to average in floating point")


def _percent(value: float, base_mean: float) -> float | None:
    return None if base_mean == 0 else value / abs(base_mean) * 100


def _log_percent(value: float) -> float:
    return math.expm1(value) * 100


@dataclass(frozen=True)
class _Estimate:
    """A t estimate on one scale (log or unit): point, standard error, degrees of freedom, spreads."""

    point: float
    se: float
    df: float
    sds: tuple[float, float | None]  # (sd, baseline sd); paired: (sd of the differences, None)


def _estimate(x: _Side, b: _Side, *, paired: bool, ratio: bool) -> _Estimate:
    import numpy as np

    if paired:
        assert x.values is not None and b.values is not None
        xs, bs = np.asarray(x.values), np.asarray(b.values)
        d = np.log(xs) - np.log(bs) if ratio else xs - bs
        # Equal ratios make log differences that differ by a few ulps: rounding, not noise.
        flat = float(np.ptp(d)) <= 1e-12 * max(1.0, float(np.max(np.abs(d))))
        sd = 0.0 if flat else float(np.std(d, ddof=1))
        _require_finite(sd)
        return _Estimate(float(np.mean(d)), sd / math.sqrt(x.n), x.n - 1.0, (sd, None))
    if ratio:
        assert x.log_mean is not None and b.log_mean is not None
        mx, mb, sx, sb = x.log_mean, b.log_mean, x.log_sd or 0.0, b.log_sd or 0.0
    else:
        mx, mb, sx, sb = x.mean, b.mean, x.sd or 0.0, b.sd or 0.0
    vx, vb = sx * sx / x.n, sb * sb / b.n
    se = math.sqrt(vx + vb)
    _require_finite(se)
    df = welch_df([(vx, x.n - 1.0), (vb, b.n - 1.0)])
    return _Estimate(mx - mb, se, df, (sx, sb))


def _intervals(est: _Estimate, alpha: float) -> tuple[float | None, tuple[float, float], tuple[float, float]]:
    """(p, the 1 - alpha interval, the 1 - 2 alpha interval) on the estimate's scale."""
    if est.se == 0:
        # Nothing varies, so t is 0/0: the intervals collapse to the point, and there is no p.
        return None, (est.point, est.point), (est.point, est.point)
    return (
        t_p_value(est.point, est.se, est.df),
        t_interval(est.point, est.se, est.df, alpha),
        # The 1 - 2 alpha interval (TOST at alpha) is the two-sided interval at 2 alpha.
        t_interval(est.point, est.se, est.df, 2 * alpha),
    )


def decide(
    low: float, high: float, eq_low: float, eq_high: float, *, threshold: float, higher_is_better: bool
) -> Decision:
    """The rule for n >= 2 on both sides; the four bounds and `threshold` in one unit (percent or the metric's).

    `low`/`high`: the 1 - alpha interval; `eq_low`/`eq_high`: the 1 - 2 alpha interval.
    """
    sign = 1.0 if higher_is_better else -1.0
    g_low, g_high = sorted((sign * low, sign * high))
    e_low, e_high = sorted((sign * eq_low, sign * eq_high))
    if -threshold <= e_low and e_high <= threshold:
        return "no-change"
    if g_low > 0:
        return "better"
    if g_high < 0:
        return "worse"
    return "inconclusive"


def _with_reps(c: Comparison, est: _Estimate, *, ratio: bool) -> Comparison:
    gain, seen = c.gain_percent, c.change_percent
    assert gain is not None and seen is not None
    sd, baseline_sd = est.sds
    if sd == 0 and not baseline_sd:
        return c
    if abs(gain) < c.min_effect:
        target: Decision = "no-change"
    else:
        target = "better" if gain > 0 else "worse"
    common = {
        "alpha": c.alpha,
        "min_effect": c.min_effect,
        "higher_is_better": c.higher_is_better,
        "ratio": ratio,
        "baseline_mean": c.baseline_mean,
    }
    found = reps_for_rule(seen, sd, baseline_sd=baseline_sd, target=target, **common)
    at_min = None
    if c.min_effect > 0:
        # +min_effect in the better direction, raw sign.
        better = c.min_effect if c.higher_is_better else -c.min_effect
        at_min = reps_for_rule(better, sd, baseline_sd=baseline_sd, target="better", **common)
    return replace(
        c,
        reps_needed=found,
        reps_over_cap=found is None,
        reps_target=target,
        reps_needed_min_effect=at_min,
        reps_rough=min(c.n, c.baseline_n) <= 2,
    )
