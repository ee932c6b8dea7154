"""One comparison of a metric's repetitions against the baseline's, and the decision it supports.

`compare` is the only place the tool turns samples into a verdict; pages, the summary, `check`
and export read its `Comparison` and never compute their own. The rules (issue #23,
docs/guide/decisions.md):

- **The ratio scale.** When every value on both sides is positive, the interval of a change is
  that of the ratio of the two sides: Welch's t on the logarithms of the values, with
  Welch-Satterthwaite degrees of freedom, exponentiated (paired: a t interval on
  log(x_i / b_i)). Its bounds never pass -100%, and swapping the two sides gives the reciprocal
  interval, so "106x lower" and its interval agree. The point change is the ratio of the
  arithmetic means, the means the pages print; the interval is that of the geometric means'
  ratio, which differs from it by a few hundredths of a point on serving data (the guide gives
  the cases). A value <= 0 on either side has no logarithm: the interval is then that of the
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
for commands that never compare anything.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from generator.analysis.tdist import t_interval, t_p_value, welch_df
from generator.model.quantity import WIDE

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

Decision = Literal["better", "worse", "no-change", "inconclusive", "unreplicated"]
# "sequence": a paired result `improvements run --until-decided` made (analysis/sequential.py).
Test = Literal["welch", "paired", "delta", "sequence"]
Scale = Literal["ratio", "difference"]

DECISIONS: tuple[Decision, ...] = ("better", "worse", "no-change", "inconclusive", "unreplicated")
POWER = 0.8
REPS_CAP = 10_000
# The simulation behind `reps_needed` (`rule_power`): variance draws per candidate n, and their seed.
SIMULATIONS = 2_000
SEED = 20230523
# Repetitions whose largest value is more than this many times the smallest: more spread than
# one configuration plausibly gives (a mixed-up run, another setting); flagged, not dropped. The
# model's rule (`quantity.WIDE`), which also lists such values where no comparison is made.
SPREAD_FLAG = WIDE


@dataclass(frozen=True)
class Moments:
    """A side given as summary statistics (`{mean, sd, n}`): compared as its repetitions would be."""

    mean: float
    sd: float | None  # None: no spread given, so no interval and no direction
    n: int


@dataclass(frozen=True)
class Fold:
    """A change as a number of times over or under its baseline: "106x lower (133x to 84x)"."""

    times: float  # max(mean, baseline mean) / min(...), so >= 1
    word: Literal["higher", "lower"]
    # The interval of `times`, low to high: the ratio scale's interval turned the same way; None
    # on the difference scale or when an end reaches -100%.
    interval: tuple[float, float] | None


@dataclass(frozen=True)
class Comparison:
    """The statistics of one metric of one result against its baseline.

    Raw fields keep the sign of the numbers (+ = went up); the ``gain_*`` properties orient
    them so that + is better, for ranking and for words like "better by".
    """

    n: int
    baseline_n: int
    mean: float
    baseline_mean: float
    # The point change in the metric's unit: mean - baseline_mean, or on the ratio scale
    # baseline_mean * (geometric means' ratio - 1), the point the interval is built on.
    difference: float
    # The 1 - alpha interval in the metric's unit (ratio scale: baseline_mean * (ratio - 1)); None when unreplicated.
    ci_low: float | None
    ci_high: float | None
    # difference / |baseline_mean| * 100 (ratio scale: the geometric means' ratio - 1); None when
    # the baseline mean is 0.
    change_percent: float | None
    ci_low_percent: float | None
    ci_high_percent: float | None
    p_value: float | None  # None when unreplicated or when nothing varies (t undefined)
    test: Test | None  # None when unreplicated
    decision: Decision
    # Inconclusive only: n per side for an 80% chance of `reps_target` at the change seen. None
    # there means more than REPS_CAP (`reps_over_cap`) or undefined.
    reps_needed: int | None
    reps_over_cap: bool
    higher_is_better: bool
    alpha: float
    min_effect: float
    scale: Scale = "ratio"
    # The 1 - 2 alpha interval in percent: what `no-change` (TOST at alpha) reads.
    eq_low_percent: float | None = None
    eq_high_percent: float | None = None
    # Ratio scale: the log of the geometric means' ratio, its standard error and degrees of
    # freedom, for composing steps (the road). None on the difference scale; a single shot has
    # the log ratio alone.
    log_ratio: float | None = None
    log_se: float | None = None
    df: float | None = None
    reps_target: Decision | None = None
    # n per side for an 80% chance of `better` if the true change were +min_effect.
    reps_needed_min_effect: int | None = None
    # The spread behind the counts comes from 2 repetitions on a side: the counts are rough.
    reps_rough: bool = False
    # "statistics" when a side was given as {mean, sd, n}, else "repetitions".
    basis: Literal["repetitions", "statistics"] = "repetitions"
    # A side given as a mean without a spread: shown, never called better or worse.
    spread_unknown: bool = False
    # Why the repetitions look like more than one configuration ("baseline: max/min 5.4"), or None.
    spread_flag: str | None = None
    # The ratio of the arithmetic means - 1, in percent: shown beside the point, labelled, where it
    # differs from it (the ratio scale); None when the baseline mean is 0.
    arith_change_percent: float | None = None
    # The alpha of the interval shown when it is not `alpha`: a Holm step's (best of k), whose
    # interval goes with the corrected word.
    interval_alpha: float | None = None

    @property
    def gain_percent(self) -> float | None:
        """The change in percent, + = better for this metric's direction."""
        return None if self.change_percent is None else self._orient(self.change_percent)

    @property
    def gain_low_percent(self) -> float | None:
        """The interval's worse end, oriented (+ = better): what the summary ranks `better` by."""
        bounds = self._oriented_bounds(self.ci_low_percent, self.ci_high_percent)
        return None if bounds is None else bounds[0]

    @property
    def gain_high_percent(self) -> float | None:
        """The interval's better end, oriented (+ = better)."""
        bounds = self._oriented_bounds(self.ci_low_percent, self.ci_high_percent)
        return None if bounds is None else bounds[1]

    @property
    def gain_eq_low_percent(self) -> float | None:
        """The 1 - 2 alpha interval's worse end, oriented: what a non-inferiority margin reads."""
        bounds = self._oriented_bounds(self.eq_low_percent, self.eq_high_percent)
        return None if bounds is None else bounds[0]

    @property
    def gain_eq_high_percent(self) -> float | None:
        """The 1 - 2 alpha interval's better end, oriented: what a broken guardrail reads."""
        bounds = self._oriented_bounds(self.eq_low_percent, self.eq_high_percent)
        return None if bounds is None else bounds[1]

    @property
    def ratio(self) -> float | None:
        """The point ratio the change is (geometric means' on the ratio scale), when both means are
        positive: the "x" the pages print and the factor the road composes."""
        if self.mean <= 0 or self.baseline_mean <= 0:
            return None
        if self.log_ratio is not None:
            return math.exp(self.log_ratio)
        return self.mean / self.baseline_mean

    @property
    def within_min_effect(self) -> bool:
        """`better` or `worse` while the point change lies inside +-min_effect: a real change too
        small to matter, which the pages say beside the word (a secondary metric's -0.7% at
        p 0.044 once read plain `better`)."""
        gain = self.gain_percent
        return self.decision in ("better", "worse") and gain is not None and abs(gain) < self.min_effect

    @property
    def fold(self) -> Fold | None:
        """The change as times over or under the baseline, which a percent near -100% hides."""
        r = self.ratio
        if r is None or r <= 0:
            return None
        # The printed estimate's own ratio (the geometric means' on the ratio scale), so the fold
        # and the percent beside it are one number (issue 36).
        low, high = self.ci_low_percent, self.ci_high_percent
        interval = None
        if self.scale == "ratio" and low is not None and high is not None and low > -100 and high > -100:
            ends = sorted((1 + low / 100, 1 + high / 100))
            interval = (1 / ends[1], 1 / ends[0]) if r < 1 else (ends[0], ends[1])
        return Fold(max(r, 1 / r), "higher" if r > 1 else "lower", interval)

    @property
    def single_shot(self) -> bool:
        return self.decision == "unreplicated"

    def _orient(self, value: float) -> float:
        return value if self.higher_is_better else -value

    def _oriented_bounds(self, low: float | None, high: float | None) -> tuple[float, float] | None:
        if low is None or high is None:
            return None
        a, b = self._orient(low), self._orient(high)
        return (min(a, b), max(a, b))


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
    """Compare `samples` (the record's repetitions) with `baseline` and decide; see the module doc."""
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
    single = Comparison(
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
        return _geometric_point(single, x, b)
    ratio = x.log_mean is not None and b.log_mean is not None
    est = _estimate(x, b, paired=paired, ratio=ratio)
    p_value, (low, high), (eq_low, eq_high) = _intervals(est, alpha)
    scale: Scale = "ratio" if ratio else "difference"
    if ratio:
        unit_low, unit_high = b.mean * math.expm1(low), b.mean * math.expm1(high)
        pct: list[float | None] = [_log_percent(v) for v in (low, high, eq_low, eq_high)]
        single = replace(single, difference=b.mean * math.expm1(est.point), change_percent=_log_percent(est.point))
    else:
        unit_low, unit_high = low, high
        pct = [_percent(v, b.mean) for v in (low, high, eq_low, eq_high)]
    if all(v is not None for v in pct) and single.change_percent is not None:
        threshold, bounds = min_effect, [v for v in pct if v is not None]
    else:
        # A zero baseline mean: min_effect percent of it is zero in the metric's unit.
        threshold, bounds = 0.0, [low, high, eq_low, eq_high]
    decision = decide(*bounds, threshold=threshold, higher_is_better=higher_is_better)
    out = replace(
        single,
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
    if decision == "inconclusive" and single.change_percent is not None:
        out = _with_reps(out, est, ratio=ratio)
    return out


def _geometric_point(c: Comparison, x: _Side, b: _Side) -> Comparison:
    """A single shot's point on the ratio scale, when both sides have one: the geometric means'
    ratio, the estimate a replicated comparison of the same values would print."""
    if x.log_mean is None or b.log_mean is None or b.mean <= 0:
        return c
    log_ratio = x.log_mean - b.log_mean
    return replace(
        c, difference=b.mean * math.expm1(log_ratio), change_percent=_log_percent(log_ratio), log_ratio=log_ratio
    )


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
    import numpy as np

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
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what} must be numbers: {exc}") from None
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{what} must be a non-empty flat list of numbers")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what} must be finite numbers (no NaN or infinity)")
    import statistics

    # The same mean the pages print (statistics.fmean, exactly rounded), so a comparison's means
    # and the Stat beside them in the export are one number.
    try:
        mean = statistics.fmean(arr.tolist())
    except OverflowError:
        mean = math.inf
    sd = float(np.std(arr, ddof=1)) if arr.size > 1 else 0.0
    _require_finite(mean, sd)
    log_mean: float | None = None
    log_sd: float | None = None
    if bool(np.all(arr > 0)):
        logs = np.log(arr)
        log_mean = float(np.mean(logs))
        log_sd = float(np.std(logs, ddof=1)) if arr.size > 1 else 0.0
    return _Side(int(arr.size), mean, sd, log_mean, log_sd, tuple(arr.tolist()))


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


# --- repetitions needed: the power of the rule itself ----------------------------------------------


def rule_power(
    n: int,
    true_change: float,
    sd: float,
    *,
    baseline_sd: float | None,
    target: Decision,
    alpha: float,
    min_effect: float,
    higher_is_better: bool = True,
    ratio: bool = True,
    baseline_mean: float = 1.0,
    runs: int = SIMULATIONS,
) -> float:
    """P(the rule says `target`) with n repetitions per side at a true change of `true_change` percent
    (raw sign: + = the number goes up).

    `sd` and `baseline_sd` are the spreads on the comparison's scale (log values for the ratio
    scale, the metric's unit otherwise, where the change is taken of `baseline_mean`);
    ``baseline_sd=None`` is the paired t with `sd` that of the differences.

    The sample variances are simulated (seeded chi-square draws); given them, the point estimate
    is normal and independent of them, so the chance that `decide` lands on `target` is a
    difference of normal CDFs, averaged over the draws: far less noise than simulating whole
    samples, and deterministic.
    """
    import numpy as np
    from scipy import special

    if n < 2:
        raise ValueError(f"the rule needs n >= 2, got {n}")
    if ratio:
        delta = math.log1p(true_change / 100)
        lim_low, lim_high = math.log1p(-min(min_effect, 99.999999) / 100), math.log1p(min_effect / 100)
    else:
        scale = abs(baseline_mean)
        delta, lim_low, lim_high = true_change / 100 * scale, -min_effect / 100 * scale, min_effect / 100 * scale
    rng = np.random.default_rng(SEED)
    chi = rng.chisquare(n - 1, (2, runs)) / (n - 1)
    if baseline_sd is None:
        spread = sd / math.sqrt(n)
        v = sd * sd * chi[0] / n
        df: NDArray[np.float64] | float = n - 1.0
    else:
        spread = math.sqrt((sd * sd + baseline_sd * baseline_sd) / n)
        vx, vb = sd * sd * chi[0] / n, baseline_sd * baseline_sd * chi[1] / n
        v = vx + vb
        with np.errstate(invalid="ignore", divide="ignore"):
            df = np.where(v > 0, v * v / ((vx * vx + vb * vb) / (n - 1)), 2.0 * n - 2)
    se = np.sqrt(v)
    # scipy.special's ufuncs behind stats.t.ppf and stats.norm.cdf, without their per-call overhead.
    q1, q2 = special.stdtrit(df, 1 - alpha / 2), special.stdtrit(df, 1 - alpha)

    def within(a: NDArray[np.float64] | float, b: NDArray[np.float64] | float) -> NDArray[np.float64]:
        """P(a < point < b), 0 where the interval is empty."""
        p = special.ndtr((np.asarray(b) - delta) / spread) - special.ndtr((np.asarray(a) - delta) / spread)
        return np.asarray(np.where(np.asarray(b) > np.asarray(a), p, 0.0), dtype=float)

    # no-change: both ends of the 1 - 2 alpha interval inside the limits.
    nc_low, nc_high = lim_low + q2 * se, lim_high - q2 * se
    no_change = within(nc_low, nc_high)
    up = within(q1 * se, math.inf) - within(np.maximum(nc_low, q1 * se), nc_high)
    down = within(-math.inf, -q1 * se) - within(nc_low, np.minimum(nc_high, -q1 * se))
    better, worse = (up, down) if higher_is_better else (down, up)
    chosen = {"no-change": no_change, "better": better, "worse": worse}.get(target)
    if chosen is None:
        chosen = 1 - no_change - better - worse
    return float(np.mean(chosen))


# Memoised in the process: a pure, seeded function of its arguments, a dozen simulations a call,
# and a process that builds many times (`serve`, the plugin, the tests) asks it the same questions
# for every build of the same records.
@functools.lru_cache(maxsize=4096)
def reps_for_rule(
    true_change: float,
    sd: float,
    *,
    baseline_sd: float | None,
    target: Decision,
    alpha: float,
    min_effect: float,
    higher_is_better: bool = True,
    ratio: bool = True,
    baseline_mean: float = 1.0,
    power: float = POWER,
    cap: int = REPS_CAP,
) -> int | None:
    """The smallest n per side (>= 2) at which `rule_power` reaches `power`; None if `cap` does not.

    The rule's power rises with n for these targets, so a bisection over [2, cap] finds it in
    about log2(cap) simulations (each seeded alike, so neighbouring n share their noise).
    """

    def enough(k: int) -> bool:
        p = rule_power(
            k,
            true_change,
            sd,
            baseline_sd=baseline_sd,
            target=target,
            alpha=alpha,
            min_effect=min_effect,
            higher_is_better=higher_is_better,
            ratio=ratio,
            baseline_mean=baseline_mean,
        )
        return p >= power

    if not enough(cap):
        return None
    if enough(2):
        return 2
    low, high = 2, cap  # invariant: not enough at low, enough at high
    while high - low > 1:
        mid = (low + high) // 2
        if enough(mid):
            high = mid
        else:
            low = mid
    return high


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


# --- guardrails: three states ---------------------------------------------------------------------

GuardrailState = Literal["held", "broken", "not shown", "not measured"]


def guardrail_state(c: Comparison | None, margin: float) -> GuardrailState:
    """A guardrail on `c` (may not get worse by more than `margin` percent), in one of three states.

    Both tests read the 1 - 2 alpha interval, oriented (+ = better), each one-sided at alpha:
    ``held`` when its worse end stays within the margin (non-inferiority shown); ``broken`` when
    its better end lies beyond the margin (a regression beyond the margin shown); ``not shown``
    when neither (a single shot, or an interval across the margin: no evidence either way).
    Calling "not shown" broken called a record that left its guardrail untouched broken 60% of
    the time at a 5% spread (issue #36). ``not measured``: no comparison of the metric.
    """
    if c is None:
        return "not measured"
    worse_end, better_end = c.gain_eq_low_percent, c.gain_eq_high_percent
    if worse_end is None or better_end is None:
        return "not shown"
    if worse_end >= -margin:
        return "held"
    if better_end < -margin:
        return "broken"
    return "not shown"


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given (each at most 1)."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    k = len(p_values)
    out = [1.0] * k
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (k - rank) * p_values[i]))
        out[i] = running
    return out


# --- ranking ---------------------------------------------------------------------------------------

# Within a tier, most promising first (docs/guide/decisions.md, "Ranking"). "not settled" holds
# single shots and replicated inconclusive results alike, by point change: a single +0.1% run
# once ranked above n = 5 at +30% because single shots had a group of their own.
GROUPS = (
    "better",
    "not settled",
    "no-change",
    "worse",
    "reported",
    "not measured",
)


def rank_group(c: Comparison | None, *, guardrail_broken: bool = False) -> str:
    """The ranking group of a comparison (one of `GROUPS`)."""
    if c is None:
        return "not measured"
    if guardrail_broken:
        return "worse"
    if c.decision in ("unreplicated", "inconclusive"):
        return "not settled"
    return c.decision


def rank_key(c: Comparison | None, *, guardrail_broken: bool = False) -> tuple[int, float]:
    """Sort key within a tier (ascending = shown first).

    `better` by the interval's oriented low end, highest first; not settled (single shots and
    inconclusive, each marked where shown) by the point change, highest first; no-change
    together; worse by the interval's better end, least bad first; a broken guardrail goes with
    worse. Without a number (a zero baseline mean), last in its group; the caller's next key
    decides ties.
    """
    group = rank_group(c, guardrail_broken=guardrail_broken)
    index = GROUPS.index(group)
    if c is None or group == "no-change":
        return (index, 0.0)
    if group == "better":
        value = c.gain_low_percent
    elif group == "worse":
        value = c.gain_high_percent if c.gain_high_percent is not None else c.gain_percent
    else:
        value = c.gain_percent
    return (index, math.inf if value is None else -value)
