"""The headline tells the whole truth (issue 36): one estimate, and a road level from the runs in force.

Each case is pinned against scipy (the geometric means, the t interval) or a seeded simulation
(the road's coverage in chains whose steps are independent, share runs, or move together).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst
from scipy import stats as sp

from generator.analysis import road, stats
from generator.analysis.stats import Moments, compare
from generator.model.quantity import fmt_percent

# --- one estimate: the point the interval is built on -----------------------------------------------


def test_summary_statistics_with_unequal_spreads_print_the_geometric_point() -> None:
    # Equal means, very unequal spreads: the arithmetic means' ratio is 0.0%, outside the interval.
    c = compare(Moments(1000, 600, 200), Moments(1000, 10, 200), higher_is_better=True)
    # Each side's log-normal of that mean and SD: log mean log(m) - s^2 / 2, s^2 = log(1 + cv^2).
    s2x, s2b = math.log1p(0.6**2), math.log1p(0.01**2)
    assert c.change_percent == pytest.approx(math.expm1((s2b - s2x) / 2) * 100)
    assert round(c.change_percent, 1) == -14.2 and c.arith_change_percent == 0.0
    assert (round(c.ci_low_percent or 0, 1), round(c.ci_high_percent or 0, 1)) == (-20.6, -7.4)
    assert c.decision == "worse"
    assert (c.ci_low_percent or 0) <= c.change_percent <= (c.ci_high_percent or 0)


def test_raw_repetitions_with_unequal_spreads_print_the_geometric_point() -> None:
    x, b = [500.0, 1500.0] * 50, [990.0, 1010.0] * 50
    c = compare(x, b, higher_is_better=True)
    assert c.change_percent == pytest.approx((sp.gmean(x) / sp.gmean(b) - 1) * 100)
    assert c.arith_change_percent == pytest.approx(0.0, abs=1e-12)
    welch = sp.ttest_ind(np.log(x), np.log(b), equal_var=False).confidence_interval(0.95)
    assert (c.ci_low_percent, c.ci_high_percent) == pytest.approx(
        (math.expm1(welch.low) * 100, math.expm1(welch.high) * 100)
    )
    assert c.decision == "worse" and (c.ci_low_percent or 0) < c.change_percent < (c.ci_high_percent or 0)
    # The ratio the pages print ("0.87x") and the road composes is the same point.
    assert c.ratio == pytest.approx(sp.gmean(x) / sp.gmean(b))


positive = hst.floats(min_value=1e-6, max_value=1e12, allow_nan=False, allow_infinity=False)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(hst.lists(positive, min_size=2, max_size=8), hst.lists(positive, min_size=2, max_size=8), hst.booleans())
def test_the_point_always_lies_inside_its_interval(x: list[float], b: list[float], paired: bool) -> None:
    if paired:
        b = (b * len(x))[: len(x)]
    c = compare(x, b, higher_is_better=True, paired=paired)
    assert c.change_percent is not None and c.ci_low_percent is not None and c.ci_high_percent is not None
    # A relative tolerance for the rounding of exp(log(...)); the fixed order holds otherwise.
    slack = 1e-9 * max(1.0, abs(c.change_percent))
    assert c.ci_low_percent - slack <= c.change_percent <= c.ci_high_percent + slack
    assert c.eq_low_percent is not None and c.eq_high_percent is not None
    assert c.eq_low_percent - slack <= c.change_percent <= c.eq_high_percent + slack


def test_an_extreme_ratio_prints_without_float_noise() -> None:
    c = compare([1e30, 1.1e30], [1e-3, 1.1e-3], higher_is_better=True)
    assert c.ci_low_percent is not None and c.ci_high_percent is not None
    assert c.ci_low_percent <= (c.change_percent or 0) <= c.ci_high_percent
    text = fmt_percent(c.change_percent or 0)
    assert text == "+100000000000000000000000000000000000%"
    assert fmt_percent(9.999999999999987e31) == "+100000000000000000000000000000000%"
    assert fmt_percent(-12.34) == "-12.3%" and fmt_percent(12345.6) == "+12350%"


# --- the road: the level from the runs in force, shared runs cancelling -------------------------------


def _chain(rng: np.random.Generator, kind: str, template: stats.Comparison, n: int = 5, s: float = 0.1) -> bool:
    """One chain of three steps; True when the level's 95% interval covers the final configuration's mean."""
    mus = np.cumsum(np.r_[math.log(100.0), rng.normal(0.1, 0.05, 3)])

    def runs(mu: float, common: np.ndarray | float = 0.0) -> list[float]:
        return [float(v) for v in np.exp(mu + rng.normal(0, s, n) + common)]

    prev = runs(mus[0])
    level = road._level_of(prev, 0.05)
    for i in range(1, 4):
        paired = None
        if kind == "shared":  # each step measured against the runs of the step before it
            before, after = prev, runs(mus[i])
        elif kind == "independent":  # each step against a fresh baseline of the configuration before
            before, after = runs(mus[i - 1]), runs(mus[i])
        else:  # correlated: each step's runs move with its baseline's, repetition by repetition (paired)
            u = rng.normal(0, 2 * s, n)
            before, after = runs(mus[i - 1], u), runs(mus[i], u)
            logs = np.log(after) - np.log(before)
            # The paired standard error and df, by scipy, as `stats.compare(paired=True)` gives them.
            paired = replace(template, log_se=float(sp.sem(logs)), df=n - 1.0)
        level = road._compose(level, after, before, paired)
        prev = after
    assert level.low is not None and level.high is not None
    truth = math.exp(mus[-1] + s * s / 2)
    return level.low <= truth <= level.high


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["independent", "shared", "correlated"])
def test_the_road_level_interval_covers_at_the_stated_level(kind: str) -> None:
    template = compare([1.0, 1.1], [1.0, 1.2], higher_is_better=True, paired=True)
    rng = np.random.default_rng(20260436)
    coverage = float(np.mean([_chain(rng, kind, template) for _ in range(1500)]))
    assert 0.93 <= coverage <= 0.97, coverage


def test_shared_runs_cancel_so_the_level_is_the_last_steps_own_runs() -> None:
    a, b, c = [100.0, 102.0, 98.0], [120.0, 118.0, 123.0], [150.0, 147.0, 152.0]
    level = road._compose(road._compose(road._level_of(a, 0.05), b, a, None), c, b, None)
    own = road._level_of(c, 0.05)
    assert (level.value, level.low, level.high) == pytest.approx((own.value, own.low, own.high))
    ci = sp.ttest_1samp(np.log(c), 0.0).confidence_interval(0.95)
    half = (ci.high - ci.low) / 2
    assert (level.low, level.high) == pytest.approx((np.mean(c) * math.exp(-half), np.mean(c) * math.exp(half)))


def test_a_level_that_composes_to_the_goal_passes_it_by_nothing() -> None:
    from generator.analysis.road import _residue_free

    assert _residue_free(250.00000000000001421 - 250.0, 250.0) == 0.0
    assert _residue_free(250.0 * 1.2 / 1.2 - 250.0, 250.0) == 0.0
    assert _residue_free(1e-3, 250.0) == 1e-3
