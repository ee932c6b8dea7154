"""One comparison of a metric's repetitions against the baseline's, and the decision it supports.

`compare` is the only place the tool turns samples into a verdict; pages, the summary, `check`
and export read its `Comparison` and never compute their own. The rules (issue #12,
docs/guide/decisions.md):

- Independent repetitions use Welch's t (no equal-variance assumption); repetitions matched by
  position (same prompts, same seed: ``paired=True``) use the paired t on the differences.
- The (1 - alpha) confidence interval is that of the difference of means, in the metric's unit,
  and as a percent of the baseline mean (raw sign: + means the number went up).
- Decision, with the change oriented so that + is better (latency: lower is better):
  ``better`` / ``worse``: the interval excludes 0 on that side and the point change is at least
  ``min_effect`` percent; ``no-change``: the interval lies inside +-min_effect (bounds included);
  ``inconclusive``: anything else with n >= 2 on both sides; ``unreplicated``: n = 1 on either
  side (only the point change is reported, never called better or worse).
- For ``inconclusive``, `reps_needed` is the smallest n per side at which a two-sided test at
  alpha has power >= 0.8 to detect a true change of ``min_effect`` percent at the observed
  spread (noncentral t), searched up to `REPS_CAP`.

Edge cases, each deliberate:

- Empty or non-finite samples, ``alpha`` outside (0, 1), negative ``min_effect``: ValueError.
  So are samples whose mean or spread overflows a float. Paired with unequal n: ValueError
  naming both counts (validation reports it with positions before anything gets here).
- No spread at all (every repetition identical on both sides; paired: every difference
  identical): t is undefined, so `p_value` is None, the interval is the point itself and the
  decision compares the point change with ``min_effect`` (better/worse at or beyond it,
  no-change inside). Deterministic metrics (accept length under greedy decoding) behave so.
- Baseline mean 0: no percent exists, so the percent fields are None and the decision is made
  in the metric's unit, where ``min_effect`` percent of 0 is 0: better/worse when the interval
  excludes 0, no-change only when the interval is exactly [0, 0]. `reps_needed` is None.
- Very large n: the statistics are O(n) with numpy and scipy's t quantiles hold at any degrees
  of freedom; nothing is special-cased.

scipy and numpy are imported inside the functions so that importing this module stays cheap
for commands that never compare anything.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

Decision = Literal["better", "worse", "no-change", "inconclusive", "unreplicated"]
Test = Literal["welch", "paired"]

DECISIONS: tuple[Decision, ...] = ("better", "worse", "no-change", "inconclusive", "unreplicated")
POWER = 0.8
REPS_CAP = 10_000


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
    difference: float  # mean - baseline_mean, in the metric's unit
    ci_low: float | None  # interval of the difference, metric's unit; None when unreplicated
    ci_high: float | None
    change_percent: float | None  # difference / |baseline_mean| * 100; None when baseline mean is 0
    ci_low_percent: float | None
    ci_high_percent: float | None
    p_value: float | None  # None when unreplicated or when nothing varies (t undefined)
    test: Test | None  # None when unreplicated
    decision: Decision
    reps_needed: int | None  # only for inconclusive; None there means "more than REPS_CAP" or undefined
    reps_over_cap: bool  # True: even REPS_CAP repetitions per side would not reach the power
    higher_is_better: bool
    alpha: float
    min_effect: float

    @property
    def gain_percent(self) -> float | None:
        """The change in percent, + = better for this metric's direction."""
        return None if self.change_percent is None else self._orient(self.change_percent)

    @property
    def gain_low_percent(self) -> float | None:
        """The interval's worse end, oriented (+ = better): what the summary ranks `better` by."""
        bounds = self._oriented_bounds()
        return None if bounds is None else bounds[0]

    @property
    def gain_high_percent(self) -> float | None:
        """The interval's better end, oriented (+ = better)."""
        bounds = self._oriented_bounds()
        return None if bounds is None else bounds[1]

    @property
    def single_shot(self) -> bool:
        return self.decision == "unreplicated"

    def _orient(self, value: float) -> float:
        return value if self.higher_is_better else -value

    def _oriented_bounds(self) -> tuple[float, float] | None:
        if self.ci_low_percent is None or self.ci_high_percent is None:
            return None
        a, b = self._orient(self.ci_low_percent), self._orient(self.ci_high_percent)
        return (min(a, b), max(a, b))


def compare(
    samples: Sequence[float],
    baseline: Sequence[float],
    *,
    higher_is_better: bool,
    paired: bool = False,
    alpha: float = 0.05,
    min_effect: float = 1.0,
) -> Comparison:
    """Compare `samples` (the record's repetitions) with `baseline` and decide; see the module doc."""
    x, b = _validated(samples, baseline, paired=paired, alpha=alpha, min_effect=min_effect)
    mean, base_mean = _means(x, b)
    difference = mean - base_mean
    single = Comparison(
        n=len(x),
        baseline_n=len(b),
        mean=mean,
        baseline_mean=base_mean,
        difference=difference,
        ci_low=None,
        ci_high=None,
        change_percent=_percent(difference, base_mean),
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
    )
    if len(x) < 2 or len(b) < 2:
        return single
    low, high, p_value, sds = _interval(x, b, paired=paired, alpha=alpha)
    low_pct, high_pct = _percent(low, base_mean), _percent(high, base_mean)
    if single.change_percent is not None and low_pct is not None and high_pct is not None:
        decision = _decide(single.change_percent, low_pct, high_pct, min_effect, higher_is_better)
    else:
        # A zero baseline mean: min_effect percent of it is zero in the metric's unit.
        decision = _decide(difference, low, high, 0.0, higher_is_better)
    reps: int | None = None
    effect = min_effect / 100 * abs(base_mean)
    if decision == "inconclusive" and effect > 0:
        reps = reps_for_power(effect, sds[0], baseline_sd=None if paired else sds[1], alpha=alpha)
    return replace(
        single,
        ci_low=low,
        ci_high=high,
        ci_low_percent=low_pct,
        ci_high_percent=high_pct,
        p_value=p_value,
        test="paired" if paired else "welch",
        decision=decision,
        reps_needed=reps,
        reps_over_cap=decision == "inconclusive" and effect > 0 and reps is None,
    )


def _validated(
    samples: Sequence[float], baseline: Sequence[float], *, paired: bool, alpha: float, min_effect: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    x = _as_samples(samples, "samples")
    b = _as_samples(baseline, "baseline")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha!r}")
    if not (math.isfinite(min_effect) and min_effect >= 0):
        raise ValueError(f"min_effect must be a finite percent >= 0, got {min_effect!r}")
    if paired and len(x) != len(b):
        raise ValueError(
            f"a paired comparison needs as many repetitions as the baseline has "
            f"(matched by position), got {len(x)} and {len(b)}"
        )
    return x, b


def _as_samples(values: Sequence[float], what: str) -> NDArray[np.float64]:
    import numpy as np

    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what} must be numbers: {exc}") from None
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{what} must be a non-empty flat list of numbers")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what} must be finite numbers (no NaN or infinity)")
    return arr


def _means(x: NDArray[np.float64], b: NDArray[np.float64]) -> tuple[float, float]:
    # The same mean the pages print (generator.model.quantity.stat, statistics.fmean: exactly rounded),
    # so a comparison's means and the Stat beside them in the export are one number, not two
    # that differ in the last digit.
    import statistics

    try:
        mean, base_mean = statistics.fmean(x.tolist()), statistics.fmean(b.tolist())
    except OverflowError:
        mean, base_mean = math.inf, math.inf  # reported as a ValueError just below
    _require_finite(mean, base_mean, mean - base_mean)
    return mean, base_mean


def _require_finite(*values: float) -> None:
    if not all(math.isfinite(v) for v in values):
        raise ValueError("the samples are too large to average in floating point")


def _percent(value: float, base_mean: float) -> float | None:
    return None if base_mean == 0 else value / abs(base_mean) * 100


def _interval(
    x: NDArray[np.float64], b: NDArray[np.float64], *, paired: bool, alpha: float
) -> tuple[float, float, float | None, tuple[float, float]]:
    """(low, high, p, (sd, baseline sd)) of mean(x) - mean(b); for paired, sd is that of the differences."""
    import numpy as np
    from scipy import stats

    if paired:
        d = x - b
        flat = bool(np.ptp(d) == 0)
        sds = (float(np.std(d, ddof=1)), 0.0)
    else:
        flat = bool(np.ptp(x) == 0 and np.ptp(b) == 0)
        sds = (float(np.std(x, ddof=1)), float(np.std(b, ddof=1)))
    _require_finite(*sds)
    point = float(np.mean(x) - np.mean(b))
    if flat:
        # Nothing varies, so t is 0/0: the interval collapses to the point, and there is no p.
        return point, point, None, (0.0, 0.0)
    # Nearly identical repetitions make scipy warn about precision loss; the result is still
    # the right (very narrow) interval, and a warning on a user's terminal would help nobody.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        result = stats.ttest_rel(x, b) if paired else stats.ttest_ind(x, b, equal_var=False)
        ci = result.confidence_interval(confidence_level=1 - alpha)
    return float(ci.low), float(ci.high), float(result.pvalue), sds


def _decide(point: float, low: float, high: float, threshold: float, higher_is_better: bool) -> Decision:
    """The decision for n >= 2 on both sides, all four numbers in one unit (percent or the metric's)."""
    sign = 1.0 if higher_is_better else -1.0
    gain = sign * point
    g_low, g_high = sorted((sign * low, sign * high))
    if g_low > 0 and gain >= threshold:
        return "better"
    if g_high < 0 and gain <= -threshold:
        return "worse"
    if -threshold <= g_low and g_high <= threshold:
        return "no-change"
    return "inconclusive"


def t_power(n: int, effect: float, sd: float, *, baseline_sd: float | None = None, alpha: float = 0.05) -> float:
    """Power of the two-sided t-test at `alpha` with `n` repetitions per side to detect a true
    difference `effect` (metric's unit).

    ``baseline_sd=None``: the paired t, `sd` being the SD of the differences. Otherwise Welch's t
    with SDs `sd` and `baseline_sd` and n on each side (Welch-Satterthwaite degrees of freedom).
    """
    from scipy import stats

    if n < 2:
        raise ValueError(f"a t-test needs n >= 2, got {n}")
    var_sum = sd * sd if baseline_sd is None else sd * sd + baseline_sd * baseline_sd
    if var_sum == 0:
        # No noise: any true difference is seen every time; no difference is "seen" at rate alpha.
        return 1.0 if effect != 0 else alpha
    df = n - 1.0 if baseline_sd is None else (n - 1.0) * var_sum**2 / (sd**4 + baseline_sd**4)
    ncp = abs(effect) / math.sqrt(var_sum / n)
    crit = stats.t.ppf(1 - alpha / 2, df)
    upper = float(stats.nct.sf(crit, df, ncp))
    lower = float(stats.nct.cdf(-crit, df, ncp))
    # scipy returns NaN for this far tail once ncp is large (from about 7.6); it is below
    # P(T' < 0) = Phi(-ncp) < 1e-13 there, so it counts as 0.
    return upper + (lower if math.isfinite(lower) else 0.0)


def reps_for_power(
    effect: float,
    sd: float,
    *,
    baseline_sd: float | None = None,
    alpha: float = 0.05,
    power: float = POWER,
    cap: int = REPS_CAP,
) -> int | None:
    """The smallest n per side (>= 2) at which `t_power` reaches `power`; None if `cap` does not.

    Power rises with n (the noncentrality grows and the critical value falls), so a bisection
    over [2, cap] finds the smallest n in about log2(cap) evaluations.
    """
    if effect == 0:
        return None
    if t_power(cap, effect, sd, baseline_sd=baseline_sd, alpha=alpha) < power:
        return None
    low, high = 1, cap  # invariant: power(low) < target (n = 1 has no test), power(high) >= target
    while high - low > 1:
        mid = (low + high) // 2
        if t_power(mid, effect, sd, baseline_sd=baseline_sd, alpha=alpha) >= power:
            high = mid
        else:
            low = mid
    return high


_GROUP: dict[Decision, int] = {"better": 0, "unreplicated": 1, "no-change": 2, "inconclusive": 2, "worse": 3}


def rank_key(c: Comparison | None) -> tuple[int, float]:
    """Sort key for the summary's decision order (ascending = shown first), used after tier.

    better, by the interval's oriented lower bound (highest first); then unreplicated, by the
    point change (highest first); then no-change and inconclusive together; then worse; then
    not measured (None). Within a group that has no number, and for a baseline mean of 0 (no
    percent, placed last in its group), the caller's next key (the record number) decides.
    """
    if c is None:
        return (4, 0.0)
    group = _GROUP[c.decision]
    if c.decision == "better":
        value = c.gain_low_percent
    elif c.decision == "unreplicated":
        value = c.gain_percent
    else:
        return (group, 0.0)
    return (group, math.inf if value is None else -value)
