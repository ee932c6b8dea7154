"""The statistics behind every decision, pinned against values computed without scipy's tests.

References come from the textbook formulas written out here with `math` (means, SDs, the
Welch-Satterthwaite degrees of freedom), Student's t quantiles from `scipy.stats.t.ppf` (a
distribution, not a test), the closed-form t distribution for 4 degrees of freedom, the numbers
the issue quotes, Cohen's published sample-size table, and a seeded simulation.
"""

from __future__ import annotations

import itertools
import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst
from scipy.stats import norm, t

from generator.analysis.stats import REPS_CAP, Comparison, compare, rank_key, reps_for_power, t_power

# The issue's promoted arm: five content-matched repetitions whose paired differences are
# +6.7, +6.2, +4.6, +22.1, +8.2 tok/s. The baseline values are ours; their mean, 144.0 tok/s,
# is what the issue's own numbers imply: +9.56 tok/s reads as "+6.6%" and as a CI of
# "+0.5% to +12.8%" only for a baseline mean between about 143.8 and 144.4 tok/s.
DIFFS = [6.7, 6.2, 4.6, 22.1, 8.2]
BASE = [132.0, 150.4, 139.8, 151.3, 146.5]
ARM = [b + d for b, d in zip(BASE, DIFFS, strict=True)]


def mean(xs: list[float]) -> float:
    return math.fsum(xs) / len(xs)


def var(xs: list[float]) -> float:
    m = mean(xs)
    return math.fsum((x - m) ** 2 for x in xs) / (len(xs) - 1)


def p_two_sided_df4(t_stat: float) -> float:
    # Student's t with 4 degrees of freedom in closed form: P(|T| < t) = sin(a) * (1 + cos(a)^2 / 2),
    # a = atan(t / 2) (Abramowitz & Stegun 26.7.3), so this p owes nothing to scipy.
    a = math.atan(abs(t_stat) / 2)
    return 1 - math.sin(a) * (1 + math.cos(a) ** 2 / 2)


def test_issue_paired_case_reproduces_the_issue_numbers() -> None:
    c = compare(ARM, BASE, higher_is_better=True, paired=True)
    # By hand: mean difference 9.56; deviations -2.86 -3.36 -4.96 12.54 -1.36, squares summing to
    # 203.172, so SD = sqrt(203.172 / 4) = 7.12692 and SE = SD / sqrt(5) = 3.18726.
    sd = math.sqrt(203.172 / 4)
    se = sd / math.sqrt(5)
    assert var(DIFFS) == pytest.approx(203.172 / 4, rel=1e-12)
    q = 2.7764451051977987  # t(0.975, 4): printed tables give 2.776
    assert t.ppf(0.975, 4) == pytest.approx(q, rel=1e-12)
    low, high = 9.56 - q * se, 9.56 + q * se
    assert c.test == "paired"
    assert (c.n, c.baseline_n) == (5, 5)
    assert c.baseline_mean == pytest.approx(144.0)
    assert c.difference == pytest.approx(9.56)
    assert c.ci_low == pytest.approx(low, rel=1e-9)
    assert c.ci_high == pytest.approx(high, rel=1e-9)
    assert c.p_value == pytest.approx(p_two_sided_df4(9.56 / se), rel=1e-9)
    # The issue's figures, to the precision it states.
    assert round(c.p_value, 2) == 0.04
    assert round(c.change_percent, 1) == 6.6
    assert round(c.ci_low_percent, 1) == 0.5
    assert round(c.ci_high_percent, 1) == 12.8
    assert c.ci_low_percent == pytest.approx(0.4935826614, rel=1e-8)
    assert c.ci_high_percent == pytest.approx(12.7841951164, rel=1e-9)
    # The interval excludes 0 and the change (+6.6%) is at least min_effect (1%), although the
    # interval's low end (+0.5%) is below it: better.
    assert c.decision == "better"
    assert c.reps_needed is None
    assert c.gain_low_percent == pytest.approx(c.ci_low_percent)


def test_welch_on_the_same_data_is_inconclusive() -> None:
    c = compare(ARM, BASE, higher_is_better=True)
    v1, v2 = var(ARM) / 5, var(BASE) / 5
    se = math.sqrt(v1 + v2)
    df = (v1 + v2) ** 2 / (v1**2 / 4 + v2**2 / 4)
    q = t.ppf(0.975, df)
    assert c.test == "welch"
    assert df == pytest.approx(6.602440192, rel=1e-8)
    assert c.ci_low == pytest.approx(9.56 - q * se, rel=1e-9)
    assert c.ci_high == pytest.approx(9.56 + q * se, rel=1e-9)
    assert c.p_value == pytest.approx(2 * t.sf(9.56 / se, df), rel=1e-9)
    assert round(c.p_value, 3) == 0.215
    assert (round(c.ci_low_percent, 1), round(c.ci_high_percent, 1)) == (-4.9, 18.2)
    # Same numbers, different decision: ignoring the pairing lets the spread between prompts
    # swamp the consistent per-prompt gain.
    assert c.decision == "inconclusive"
    assert c.change_percent == compare(ARM, BASE, higher_is_better=True, paired=True).change_percent


def test_what_it_would_take_for_the_welch_case() -> None:
    c = compare(ARM, BASE, higher_is_better=True)
    effect = 0.01 * 144.0
    # Normal approximation (z instead of t), a lower bound the t-based answer exceeds only slightly.
    z = norm.ppf(0.975) + norm.ppf(0.8)
    n_normal = z**2 * (var(ARM) + var(BASE)) / effect**2
    assert c.reps_needed is not None and not c.reps_over_cap
    assert math.ceil(n_normal) <= c.reps_needed <= math.ceil(n_normal) + 2
    assert c.reps_needed == 921
    assert t_power(c.reps_needed, effect, math.sqrt(var(ARM)), baseline_sd=math.sqrt(var(BASE))) >= 0.8
    assert t_power(c.reps_needed - 1, effect, math.sqrt(var(ARM)), baseline_sd=math.sqrt(var(BASE))) < 0.8


@pytest.mark.parametrize(("samples", "baseline"), [([150.0], [144.0]), ([150.0], BASE), (ARM, [144.0])])
def test_a_single_shot_is_unreplicated_never_better(samples: list[float], baseline: list[float]) -> None:
    c = compare(samples, baseline, higher_is_better=True)
    assert c.decision == "unreplicated" and c.single_shot
    assert c.change_percent == pytest.approx((mean(samples) - mean(baseline)) / mean(baseline) * 100)
    assert (c.ci_low, c.ci_high, c.ci_low_percent, c.ci_high_percent) == (None, None, None, None)
    assert (c.p_value, c.test, c.reps_needed) == (None, None, None)


def test_no_change_when_the_interval_lies_inside_min_effect() -> None:
    base = [100.0, 100.2, 99.8, 100.1, 99.9]
    arm = [100.1, 100.3, 99.9, 100.2, 100.0]
    c = compare(arm, base, higher_is_better=True)
    se = math.sqrt(var(arm) / 5 + var(base) / 5)
    half = t.ppf(0.975, 8) * se  # equal variances and n: Welch's df is 2n - 2 = 8
    assert c.ci_low_percent == pytest.approx((0.1 - half) / 100 * 100, rel=1e-9)
    assert c.ci_high_percent == pytest.approx((0.1 + half) / 100 * 100, rel=1e-9)
    assert -1 < c.ci_low_percent < 0 < c.ci_high_percent < 1
    assert c.decision == "no-change"
    # A tighter min_effect turns the same interval into "cannot tell".
    assert compare(arm, base, higher_is_better=True, min_effect=0.2).decision == "inconclusive"


def test_a_real_but_too_small_change_is_no_change() -> None:
    base = [100.0, 100.01, 99.99, 100.0]
    arm = [100.5, 100.51, 100.49, 100.5]
    c = compare(arm, base, higher_is_better=True)
    assert c.ci_low_percent > 0 and c.p_value < 1e-6  # clearly real
    assert c.decision == "no-change"  # but +0.5% is below min_effect = 1%


def test_latency_lower_is_better() -> None:
    base = [50.0, 52.0, 51.0, 49.0, 50.0]
    arm = [45.0, 46.0, 44.0, 45.0, 46.0]
    c = compare(arm, base, higher_is_better=False)
    assert c.change_percent == pytest.approx((45.2 - 50.4) / 50.4 * 100)  # raw sign: went down
    assert c.ci_high_percent < 0
    assert c.decision == "better"
    assert c.gain_percent == pytest.approx(-c.change_percent)
    assert c.gain_low_percent == pytest.approx(-c.ci_high_percent)
    assert c.gain_high_percent == pytest.approx(-c.ci_low_percent)
    assert compare(base, arm, higher_is_better=False).decision == "worse"
    assert compare(arm, base, higher_is_better=True).decision == "worse"


def test_zero_spread_decides_from_the_point() -> None:
    c = compare([10.0, 10.0, 10.0], [9.5, 9.5, 9.5], higher_is_better=True)
    assert c.p_value is None and c.test == "welch"
    assert c.ci_low == c.ci_high == c.difference == 0.5
    assert c.ci_low_percent == c.ci_high_percent == pytest.approx(100 / 19)
    assert c.decision == "better"
    assert compare([9.5, 9.5], [10.0, 10.0], higher_is_better=True).decision == "worse"
    assert compare([100.5, 100.5], [100.0, 100.0], higher_is_better=True).decision == "no-change"
    assert compare([3.0, 3.0], [3.0, 3.0], higher_is_better=True).decision == "no-change"
    # Paired: every difference is exactly +2 although each side varies.
    p = compare([102.0, 103.0, 104.0], [100.0, 101.0, 102.0], higher_is_better=True, paired=True)
    assert (p.decision, p.p_value, p.ci_low, p.ci_high) == ("better", None, 2.0, 2.0)


def test_one_flat_side_is_still_a_welch_test() -> None:
    c = compare([10.0, 11.0, 12.0], [9.0, 9.0, 9.0], higher_is_better=True)
    se = math.sqrt(1.0 / 3)
    assert c.ci_low == pytest.approx(2.0 - t.ppf(0.975, 2) * se, rel=1e-9)  # df = n - 1 of the varying side
    assert c.p_value == pytest.approx(2 * t.sf(2.0 / se, 2), rel=1e-9)


def test_baseline_mean_zero_decides_in_the_metric_unit() -> None:
    still = compare([0.0, 0.0, 0.0], [0.0, 0.0, 0.0], higher_is_better=False)
    assert (still.change_percent, still.ci_low_percent, still.ci_high_percent) == (None, None, None)
    assert still.decision == "no-change"
    failed = compare([2.0, 3.0, 4.0], [0.0, 0.0, 0.0], higher_is_better=False)
    assert failed.change_percent is None and failed.ci_low > 0
    assert failed.decision == "worse"
    noisy = compare([0.1, -0.1, 0.05], [0.1, -0.1, 0.0], higher_is_better=True)
    assert noisy.decision == "inconclusive"
    assert (noisy.reps_needed, noisy.reps_over_cap) == (None, False)  # 1% of 0 cannot be detected
    assert rank_key(failed) == (3, 0.0)


def test_paired_needs_equal_n() -> None:
    with pytest.raises(ValueError, match=r"paired.*got 5 and 4"):
        compare(ARM, BASE[:4], higher_is_better=True, paired=True)


@pytest.mark.parametrize(
    ("samples", "baseline", "kwargs", "message"),
    [
        ([1.0, math.nan], [1.0, 2.0], {}, "finite"),
        ([1.0, 2.0], [math.inf, 2.0], {}, "finite"),
        ([], [1.0], {}, "non-empty"),
        ([[1.0, 2.0]], [1.0], {}, "non-empty flat"),
        (["fast"], [1.0], {}, "numbers"),
        ([1.0, 2.0], [1.0, 2.0], {"alpha": 0.0}, "alpha"),
        ([1.0, 2.0], [1.0, 2.0], {"alpha": 1.5}, "alpha"),
        ([1.0, 2.0], [1.0, 2.0], {"min_effect": -1.0}, "min_effect"),
        ([1e308, 1e308], [1.0, 2.0], {}, "too large"),
    ],
)
def test_bad_input_is_rejected(samples: list, baseline: list, kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        compare(samples, baseline, higher_is_better=True, **kwargs)


def test_very_large_n() -> None:
    rng = np.random.default_rng(12)
    base = rng.normal(100.0, 5.0, 200_000)
    arm = rng.normal(100.3, 5.0, 200_000)
    c = compare(arm.tolist(), base.tolist(), higher_is_better=True)
    se = math.sqrt(arm.var(ddof=1) / arm.size + base.var(ddof=1) / base.size)
    diff = float(arm.mean() - base.mean())
    assert c.ci_low == pytest.approx(diff - norm.ppf(0.975) * se, rel=1e-4)  # t is normal by now
    assert c.ci_low_percent > 0
    assert c.decision == "no-change"  # a real +0.3% is below min_effect
    assert c.p_value < 1e-10


def test_reps_needed_matches_cohens_table() -> None:
    # Two-sided alpha 0.05, power 0.80, equal groups. Cohen (1988, Table 2.4.1) prints 393, 64 and
    # 26 per group for d = 0.2, 0.5, 0.8; the exact noncentral-t answers (R's power.t.test: n =
    # 393.41, 63.77, 25.52) round up to 394, 64, 26. With equal SDs Welch's df is Student's 2n - 2.
    assert reps_for_power(0.2, 1.0, baseline_sd=1.0) == 394
    assert t_power(393, 0.2, 1.0, baseline_sd=1.0) == pytest.approx(0.7996, abs=1e-4)
    assert reps_for_power(0.5, 1.0, baseline_sd=1.0) == 64
    assert reps_for_power(0.8, 1.0, baseline_sd=1.0) == 26
    # One-sample / paired t, d = 0.5: n = 33.37 in R's power.t.test(type = "one.sample"), so 34.
    assert reps_for_power(0.5, 1.0) == 34
    assert t_power(34, 0.5, 1.0) == pytest.approx(0.808, abs=5e-4)


def test_reps_needed_agrees_with_a_simulation() -> None:
    # Welch with unequal spreads, checked by simulating the test written out by hand.
    effect, sd, base_sd = 1.0, 1.2, 0.6
    n = reps_for_power(effect, sd, baseline_sd=base_sd)
    assert n == 16
    rng = np.random.default_rng(2026)

    def simulated_power(k: int, trials: int = 40_000) -> float:
        a = rng.normal(effect, sd, (trials, k))
        b = rng.normal(0.0, base_sd, (trials, k))
        va, vb = a.var(axis=1, ddof=1) / k, b.var(axis=1, ddof=1) / k
        df = (va + vb) ** 2 / (va**2 / (k - 1) + vb**2 / (k - 1))
        tstat = (a.mean(axis=1) - b.mean(axis=1)) / np.sqrt(va + vb)
        return float(np.mean(np.abs(tstat) > t.ppf(0.975, df)))

    # 40,000 trials: the standard error of a power near 0.8 is 0.002.
    assert simulated_power(n) == pytest.approx(t_power(n, effect, sd, baseline_sd=base_sd), abs=0.01)
    assert simulated_power(n) > 0.79
    assert simulated_power(n - 2) < 0.8


def test_reps_needed_is_monotone() -> None:
    powers = [t_power(k, 1.0, 2.0, baseline_sd=1.0) for k in range(2, 60)]
    assert all(a < b for a, b in itertools.pairwise(powers))
    by_effect = [reps_for_power(e, 1.0) for e in (0.2, 0.3, 0.5, 0.8, 1.2)]
    assert all(a > b for a, b in itertools.pairwise(by_effect))
    by_sd = [reps_for_power(1.0, s, baseline_sd=s) for s in (0.5, 1.0, 2.0, 4.0)]
    assert all(a < b for a, b in itertools.pairwise(by_sd))
    assert reps_for_power(10.0, 0.1) == 2  # the smallest n a t-test has


def test_more_than_the_cap_is_said_so() -> None:
    assert reps_for_power(0.001, 1.0) is None
    base = [100.0, 130.0, 70.0, 110.0]
    arm = [95.0, 140.0, 75.0, 105.0]
    c = compare(arm, base, higher_is_better=True, min_effect=0.01)
    assert c.decision == "inconclusive"
    assert (c.reps_needed, c.reps_over_cap) == (None, True)
    assert REPS_CAP == 10_000


def make(decision: str, gain: float | None = None, low: float | None = None) -> Comparison:
    return Comparison(
        n=5,
        baseline_n=1 if decision == "unreplicated" else 5,
        mean=1.0,
        baseline_mean=1.0,
        difference=0.0,
        ci_low=None,
        ci_high=None,
        change_percent=gain,
        ci_low_percent=low,
        ci_high_percent=None if low is None else low + 4,
        p_value=None,
        test=None,
        decision=decision,  # type: ignore[arg-type]
        reps_needed=None,
        reps_over_cap=False,
        higher_is_better=True,
        alpha=0.05,
        min_effect=1.0,
    )


def test_rank_key_orders_the_summary() -> None:
    shown = {
        "better, low +3": make("better", 6.0, 3.0),
        "better, low +0.5 but bigger change": make("better", 12.0, 0.5),
        "unreplicated +12": make("unreplicated", 12.0),
        "unreplicated +2": make("unreplicated", 2.0),
        "no-change": make("no-change", 0.1, -0.3),
        "inconclusive": make("inconclusive", 5.0, -2.0),
        "worse": make("worse", -9.0, -12.0),
        "not measured": None,
    }
    order = sorted(shown, key=lambda name: rank_key(shown[name]))
    assert order == list(shown)
    assert rank_key(shown["no-change"]) == rank_key(shown["inconclusive"])  # the record number decides


def test_rank_key_orients_latency() -> None:
    fast = compare([40.0, 41.0, 40.5], [50.0, 50.5, 49.5], higher_is_better=False)
    faster = compare([30.0, 31.0, 30.5], [50.0, 50.5, 49.5], higher_is_better=False)
    assert fast.decision == faster.decision == "better"
    assert rank_key(faster) < rank_key(fast)


@settings(max_examples=40, deadline=None)
@given(
    hst.lists(hst.floats(50, 150), min_size=2, max_size=8),
    hst.lists(hst.floats(50, 150), min_size=2, max_size=8),
    hst.floats(0.1, 1000),
)
def test_decision_is_unit_free_and_direction_flips_it(arm: list[float], base: list[float], scale: float) -> None:
    c = compare(arm, base, higher_is_better=True)
    scaled = compare([x * scale for x in arm], [x * scale for x in base], higher_is_better=True)
    flipped = compare(arm, base, higher_is_better=False)
    swap = {"better": "worse", "worse": "better"}
    assert flipped.decision == swap.get(c.decision, c.decision)
    if c.p_value is not None and 1e-6 < c.p_value < 1 - 1e-6:
        assert scaled.p_value == pytest.approx(c.p_value, rel=1e-6)
        assert scaled.change_percent == pytest.approx(c.change_percent, rel=1e-6, abs=1e-9)


@pytest.mark.slow
def test_importing_the_module_loads_neither_numpy_nor_scipy() -> None:
    code = "import sys, generator.analysis.stats; print(sorted(m for m in ('numpy', 'scipy') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "[]"
