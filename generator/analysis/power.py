"""Repetitions needed: the power of the decision rule itself, by a seeded simulation.

For an `inconclusive` comparison, `stats.compare` asks `reps_for_rule` for the smallest n per
side at which the same rule (`stats.decide`) says `better` (`worse`, `no-change`) with a
probability of at least `POWER`. numpy and scipy are imported inside `rule_power`, so that
importing this module stays cheap.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from generator.analysis.comparison import Decision

POWER = 0.8
REPS_CAP = 10_000
# The simulation behind `reps_needed` (`rule_power`): variance draws per candidate n, and their seed.
SIMULATIONS = 2_000
SEED = 20230523


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
