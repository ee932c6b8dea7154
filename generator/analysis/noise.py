"""Where a campaign's noise comes from, read from its own launches (issue 47), and what a design sees.

Everything is on the natural-log scale: the tool's headline change is the geometric mean of
paired ratios, so a variance here is that of log values, and sqrt(variance) reads as a relative
spread (0.1 is about 10%).

**Variance components** (`components`): the runs of one launch are a group; a one-way
random-effects model y_ij = mu + L_i + e_ij splits the spread into the launch-to-launch part
sigma^2_L (var L_i) and the within-launch part sigma^2_W (var e_ij). The estimate is the method of
moments of the one-way ANOVA (the ANOVA or Henderson I estimator): sigma^2_W = MSW and
sigma^2_L = (MSB - MSW) / n0, truncated at 0, with n0 = (N - sum n_i^2 / N) / (k - 1) for
unbalanced launches (k launches, N runs). On balanced data it is the REML estimate whenever
that is inside the parameter space (tests/test_noise.py pins it against statsmodels' MixedLM).
It is written here rather than fitted with MixedLM because it has closed-form intervals, needs no
optimiser that may not converge, and is what the planning formulas read.

Intervals (95%):
- sigma^2_W: the exact chi-square interval, SSW / chi^2_{N-k}, since SSW / sigma^2_W is
  chi-square with N - k degrees of freedom under the model.
- sigma^2_L: the modified large-sample (MLS) interval for a difference of expected mean squares
  (Graybill and Wang 1980; Ting, Burdick, Graybill and Gui 1990; Burdick and Graybill 1992,
  section 5.2), written for balanced launches; with unbalanced ones n0 stands in for the common
  launch size, an approximation (the exact-for-balanced interval read at the effective size).
  It keeps close to its nominal coverage even with few launches and a small sigma^2_L, where
  the Satterthwaite interval does not; tests/test_noise.py checks the coverage by a seeded
  simulation, launches of 1 to 4 runs among them. Bounds are truncated at 0.

`detectable_change` is the smallest true change a design of `blocks` paired blocks calls
`better` with probability `power`, at a block-to-block spread `sd_block_log` of the paired log
differences.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from generator.analysis import sequential as seq

CONFIDENCE = 0.95
# The sequential design's power (`detectable_change`): seeded block paths of the confidence
# sequence; 10,000 put the 80% quantile of the critical change within about 1% of its limit.
SEQUENTIAL_PATHS = 10_000
SEQUENTIAL_SEED = 20261203
# The most blocks `blocks_needed` looks for: the fixed design's (cheap, a root each) and the
# sequential one's (one simulated pass of this many blocks, about a second, once per process).
BLOCKS_CAP = 10_000
SEQUENTIAL_CAP = 1_024
# The simulated passes, short first: the k-th block's draws are the same in each, so a shorter
# pass is the start of a longer one and the answers agree.
HORIZONS = (64, 256, SEQUENTIAL_CAP)


@dataclass(frozen=True)
class Components:
    """One arm (or pooled arms) and one metric, on the natural-log scale."""

    launches: int  # number of launches with >= 1 run
    runs: int  # total runs
    runs_per_launch: float  # mean runs per launch
    launch_var: float  # between-launch variance component sigma^2_L (log scale), >= 0
    within_var: float  # within-launch variance component sigma^2_W (log scale), >= 0
    launch_var_ci: tuple[float, float]  # 95% interval (MLS)
    within_var_ci: tuple[float, float]  # 95% interval (chi-square)
    icc: float  # launch_var / (launch_var + within_var)


def components(groups: Sequence[Sequence[float]]) -> Components | None:
    """groups: the raw positive values of each launch (one list per launch). None when not estimable.

    Not estimable: fewer than two launches with a run, no launch with two runs (nothing measures
    the within-launch part), a value <= 0 or not finite (no logarithm), or no spread at all (a
    deterministic metric has no noise to split, and its ICC is 0/0).
    """
    from scipy import special

    kept = [list(g) for g in groups if len(g) > 0]
    values = [v for g in kept for v in g]
    if not all(math.isfinite(v) and v > 0 for v in values):
        return None
    logs = [[math.log(v) for v in g] for g in kept]
    k, n = len(logs), len(values)
    if k < 2 or n - k < 1:
        return None
    means = [sum(g) / len(g) for g in logs]
    grand = sum(sum(g) for g in logs) / n
    ssw = sum((y - m) ** 2 for g, m in zip(logs, means, strict=True) for y in g)
    ssb = sum(len(g) * (m - grand) ** 2 for g, m in zip(logs, means, strict=True))
    df_b, df_w = k - 1, n - k
    msb, msw = ssb / df_b, ssw / df_w
    if msb == 0 and msw == 0:
        return None
    n0 = (n - sum(len(g) ** 2 for g in logs) / n) / df_b
    launch_var = max(0.0, (msb - msw) / n0)
    within_var = msw
    a = 1 - CONFIDENCE
    # chdtri(df, q): the chi-square quantile with upper tail q (scipy.stats.chi2.isf, its ufunc).
    within_ci = (ssw / float(special.chdtri(df_w, a / 2)), ssw / float(special.chdtri(df_w, 1 - a / 2)))
    return Components(
        launches=k,
        runs=n,
        runs_per_launch=n / k,
        launch_var=launch_var,
        within_var=within_var,
        launch_var_ci=_mls_interval(msb, msw, df_b, df_w, n0, a),
        within_var_ci=within_ci,
        icc=launch_var / (launch_var + within_var),
    )


def _mls_interval(msb: float, msw: float, df_b: int, df_w: int, n0: float, a: float) -> tuple[float, float]:
    """The MLS interval for (MSB - MSW) / n0 (Burdick and Graybill 1992, eq. 5.11), truncated at 0."""
    from scipy import special

    # F with infinite denominator degrees of freedom is chi-square over its df; scipy.special's
    # ufuncs (those behind scipy.stats, which builds do not import: docs/guide/performance.md).
    f1, f2 = float(special.chdtri(df_b, a / 2)) / df_b, float(special.chdtri(df_b, 1 - a / 2)) / df_b
    f3, f4 = float(special.chdtri(df_w, a / 2)) / df_w, float(special.chdtri(df_w, 1 - a / 2)) / df_w
    f5, f6 = float(special.fdtri(df_b, df_w, 1 - a / 2)), float(special.fdtri(df_b, df_w, a / 2))
    g1, g2 = 1 - 1 / f1, 1 - 1 / f3
    h1, h2 = 1 / f2 - 1, 1 / f4 - 1
    g12 = ((f5 - 1) ** 2 - g1 * g1 * f5 * f5 - h2 * h2) / f5
    h12 = ((1 - f6) ** 2 - h1 * h1 * f6 * f6 - g2 * g2) / f6
    diff = msb - msw
    low = diff - math.sqrt(max(0.0, g1 * g1 * msb * msb + h2 * h2 * msw * msw + g12 * msb * msw))
    high = diff + math.sqrt(max(0.0, h1 * h1 * msb * msb + g2 * g2 * msw * msw + h12 * msb * msw))
    return max(0.0, low / n0), max(0.0, high / n0)


def detectable_change(sd_block_log: float, blocks: int, alpha: float, power: float, sequential: bool) -> float:
    """The smallest true change, in percent (+52.0 for +52%), that `blocks` paired blocks call
    `better` with probability `power`, when the block's log difference (arm over comparator) has
    standard deviation `sd_block_log`. The same log distance downwards, 100 * (exp(-d) - 1)
    percent, is detected as `worse` with the same power. `math.inf` when the design can detect
    nothing (fewer than 2 blocks; a sequence that cannot exclude anything within `blocks`).

    - Fixed design: the paired t on the blocks' log differences (two-sided at alpha, as
      `stats.compare` decides), whose power at a true log change d is that of the noncentral t
      with n - 1 degrees of freedom and noncentrality d sqrt(n) / sd, solved for d.
    - Sequential (`--until-decided`): the tool's own confidence sequence (`sequential.radius`),
      looked at after every block up to `blocks` and stopping at the first call, by seeded
      simulation. It is scale-invariant, so one set of standard normal paths serves every sd.
      Each path has a critical change: the smallest d at which it says `better` before ever
      saying `worse`; the detectable change is the `power` quantile of those. The decision's
      `no-change` exit (an interval inside +-min_effect) is left out: it needs `min_effect`, and
      a run that stops there has not detected the change either way.
    """
    if not (sd_block_log >= 0 and math.isfinite(sd_block_log)):
        raise ValueError(f"sd_block_log must be a finite number >= 0, got {sd_block_log!r}")
    if not 0 < alpha < 0.5 or not 0 < power < 1:
        raise ValueError(f"alpha must lie in (0, 0.5) and power in (0, 1), got {alpha!r} and {power!r}")
    if blocks < 2:
        return math.inf
    d = _standard_sequential(blocks, alpha, power) if sequential else _standard_fixed(blocks, alpha, power)
    if not math.isfinite(d):
        return math.inf
    return 100 * math.expm1(d * sd_block_log)


@functools.lru_cache(maxsize=4096)
def _standard_fixed(n: int, alpha: float, power: float) -> float:
    """The change in standard deviations of a block difference that the paired t detects."""
    from scipy import special

    from generator.analysis.tdist import t_quantile

    crit = t_quantile(n - 1, 1 - alpha / 2)
    # The noncentrality at which the noncentral t's cdf at the critical value is 1 - power
    # (scipy.special.nctdtrinc: the inverse of scipy.stats.nct.cdf in its noncentrality).
    nc = float(special.nctdtrinc(n - 1, 1 - power, crit))
    return nc / math.sqrt(n)


def blocks_needed(
    change_percent: float, sd_block_log: float, alpha: float, power: float, sequential: bool
) -> int | None:
    """The fewest blocks (>= 2) whose `detectable_change` reaches a change of `change_percent`
    (its log distance: -9.1% is as far as +10%); None beyond `BLOCKS_CAP` (fixed) or
    `SEQUENTIAL_CAP` (sequential), or for no change at all."""
    if not (math.isfinite(change_percent) and change_percent > -100) or change_percent == 0:
        return None
    target = abs(math.log1p(change_percent / 100))
    if sd_block_log == 0:
        return 2
    need = target / sd_block_log  # in block standard deviations
    if sequential:
        # The sequence is wider than the fixed t at every n, so it never needs fewer blocks.
        fixed = blocks_needed(change_percent, sd_block_log, alpha, power, False)
        if fixed is None or fixed > SEQUENTIAL_CAP:
            return None
        for horizon in (h for h in HORIZONS if h >= fixed):
            curve = _sequential_curve(horizon, alpha, power)
            found = next((k + 1 for k, d in enumerate(curve) if k >= 1 and d <= need), None)
            if found is not None:
                return found
        return None
    cap = BLOCKS_CAP
    if _standard_fixed(cap, alpha, power) > need:
        return None
    low, high = 1, cap  # detectable at high, not at low
    while high - low > 1:
        mid = (low + high) // 2
        if _standard_fixed(mid, alpha, power) <= need:
            high = mid
        else:
            low = mid
    return high


def _standard_sequential(n: int, alpha: float, power: float) -> float:
    """The change in standard deviations of a block difference that the sequence detects within n blocks."""
    horizon = next((h for h in HORIZONS if h >= n), n)
    return _sequential_curve(horizon, alpha, power)[n - 1]


# Memoised: a planner and every inconclusive result ask it at the same alpha and power; one pass
# gives every horizon up to `n`, since the k-th block's draws do not depend on the horizon.
@functools.lru_cache(maxsize=16)
def _sequential_curve(n: int, alpha: float, power: float) -> tuple[float, ...]:
    """For each horizon k = 1..n, the change in standard deviations of a block difference that
    the sequence, looked at after every block up to k, calls `better` with probability `power`.

    A path of standardized differences z_1..z_k looks at block j with mean zbar_j and radius r_j:
    `better` at a true change d when d + zbar_j - r_j > 0, `worse` when d + zbar_j + r_j < 0. Both
    bounds move with d alone (the radius reads only the deviations from the mean), so the path
    says `better` first for every d above min_j max(r_j - zbar_j, max_{i<j} (-zbar_i - r_i)).
    """
    import numpy as np

    rng = np.random.default_rng(SEQUENTIAL_SEED)
    critical = np.full(SEQUENTIAL_PATHS, np.inf)
    worst = np.full(SEQUENTIAL_PATHS, -np.inf)  # the largest d yet at which the path said `worse`
    total = np.zeros(SEQUENTIAL_PATHS)
    squares = np.zeros(SEQUENTIAL_PATHS)
    rank = min(SEQUENTIAL_PATHS - 1, math.ceil(power * SEQUENTIAL_PATHS) - 1)
    out: list[float] = []
    for k in range(1, n + 1):
        z = rng.standard_normal(SEQUENTIAL_PATHS)
        total += z
        squares += z * z
        # r_k = sqrt(ss) * radius(k, 1): the tool's own radius, at unit sum of squares.
        unit = seq.radius(k, 1.0, alpha)
        if math.isfinite(unit):
            mean = total / k
            r = np.sqrt(np.maximum(squares - total * total / k, 0.0)) * unit
            critical = np.minimum(critical, np.maximum(r - mean, worst))
            worst = np.maximum(worst, -mean - r)
        out.append(float(np.partition(critical, rank)[rank]))
    return tuple(out)
