"""The sequential rule of `improvements run --until-decided`, pinned against independent computations."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import optimize, stats

from generator.analysis.sequential import look, mixture, radius


def test_radius_is_where_the_mixture_reaches_one_over_alpha() -> None:
    rng = np.random.default_rng(4)
    for n in (3, 5, 12, 40):
        d = list(rng.normal(0.03, 0.05, n))
        mean = sum(d) / n
        ss = sum((x - mean) ** 2 for x in d)
        r = radius(n, ss, 0.05)
        if math.isinf(r):
            # Too few differences: the mixture's limit at any distance stays below 1/alpha.
            assert mixture(d, mean + 1e9) < 20
            continue
        # Independently: the root of M_n(m) = 1/alpha, found numerically from the formula.
        root = optimize.brentq(lambda m, d=d: mixture(d, m) - 20, mean, mean + 100)
        assert r == pytest.approx(root - mean, rel=1e-9)


def test_the_sequence_is_wider_than_the_fixed_t_interval() -> None:
    # The price of looking after every block: never narrower than the one-look t interval.
    rng = np.random.default_rng(5)
    for n in (3, 6, 20, 80):
        d = rng.normal(0, 1, n)
        half = stats.t.ppf(0.975, n - 1) * d.std(ddof=1) / math.sqrt(n)
        assert radius(n, float(((d - d.mean()) ** 2).sum()), 0.05) > half


@pytest.mark.slow
@pytest.mark.parametrize("alpha", [0.05, 0.1])
def test_false_better_or_worse_under_the_null_is_at_most_alpha_with_a_look_every_block(alpha: float) -> None:
    rng = np.random.default_rng(20261202)
    sims, blocks = 3000, 40
    false = 0
    for _ in range(sims):
        d = rng.normal(0.0, rng.uniform(0.005, 0.2), blocks)
        for k in range(2, blocks + 1):
            call = look(list(d[:k]), alpha=alpha, min_effect=1.0, higher_is_better=True).call
            if call in ("better", "worse"):
                false += 1
                break
            if call == "no-change":
                break
    rate = false / sims
    # The binomial's upper 99.9% bound stays under alpha: the rate itself, not luck.
    upper = stats.binom.ppf(0.999, sims, rate) / sims
    assert upper <= alpha, (rate, upper)


@pytest.mark.slow
def test_a_real_change_is_found() -> None:
    rng = np.random.default_rng(7)
    found = 0
    for _ in range(500):
        d = rng.normal(math.log(1.10), 0.03, 30)
        calls = [look(list(d[:k]), alpha=0.05, min_effect=1.0, higher_is_better=True).call for k in range(2, 31)]
        found += "better" in calls and "worse" not in calls
    assert found / 500 > 0.95
    lower = look([math.log(0.9)] * 2 + [math.log(0.91)] * 8, alpha=0.05, min_effect=1.0, higher_is_better=False)
    assert lower.call == "better"  # a latency 9-10% lower is better


def test_a_sequential_result_reads_the_sequence_not_the_fixed_t() -> None:
    from generator.analysis.sequential import as_sequential
    from generator.analysis.stats import compare

    x = [104.0, 106.5, 103.0, 105.5, 107.0, 104.5]
    b = [100.0, 101.0, 99.5, 100.5, 101.5, 100.0]
    fixed = compare(x, b, higher_is_better=True, paired=True, alpha=0.05, min_effect=1.0)
    seq = as_sequential(fixed, x, b)
    d = np.log(np.array(x) / np.array(b))
    r = radius(len(d), float(((d - d.mean()) ** 2).sum()), 0.05)
    assert seq.ci_low_percent == pytest.approx(100 * math.expm1(d.mean() - r))
    assert seq.ci_high_percent == pytest.approx(100 * math.expm1(d.mean() + r))
    t = stats.ttest_1samp(d, 0.0).confidence_interval(0.95)
    assert seq.ci_low_percent < 100 * math.expm1(t.low) and seq.ci_high_percent > 100 * math.expm1(t.high)
    assert seq.decision == "better" and seq.p_value is None and seq.test == "sequence"


RUN_GUIDE = " ".join((Path(__file__).resolve().parent.parent / "docs" / "guide" / "run.md").read_text().split())


def _fixed_n(delta: float, sd: float) -> int:
    """Blocks for 80% power of the two-sided paired t at 0.05 (the noncentral t, not the tool's code)."""
    for n in range(2, 500):
        df, nc = n - 1, delta / (sd / math.sqrt(n))
        if 1 - stats.nct.cdf(stats.t.ppf(0.975, df), df, nc) >= 0.8:
            return n
    raise AssertionError


@pytest.mark.slow
@pytest.mark.parametrize(("change", "sd"), [(5, 0.03), (5, 0.05), (10, 0.05)])
def test_the_guides_cost_table(change: int, sd: float) -> None:
    delta = math.log1p(change / 100)
    d = np.random.default_rng(1).normal(delta, sd, (2000, 60))
    # The rule recomputed with arrays, from the closed form (not the tool's code): the radius
    # after k blocks, and the first k whose interval settles `better`, `worse` or `no-change`.
    k = np.arange(1, 61)
    mean = d.cumsum(axis=1) / k
    ss = (d**2).cumsum(axis=1) - k * mean**2
    c = (1 - (0.05**2 / (1 + k)) ** (1 / k)) * (1 + k)  # tau = 1
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(c < k, np.sqrt(c * ss / (k * (k - c))), np.inf)
    thr = math.log1p(0.01)
    low, high = mean - r, mean + r
    settled = np.isfinite(r) & ((low > 0) | (high < 0) | ((low >= -thr) & (high <= thr)))
    settled[:, 0] = False
    stops = np.where(settled.any(axis=1), settled.argmax(axis=1) + 1, 60)

    # The tool's rule agrees on every simulated path it is asked about.
    def settles(i: int, n: int) -> bool:
        return look(list(d[i, :n]), alpha=0.05, min_effect=1.0, higher_is_better=True).settled

    # The tool's rule stops at the same block on the paths it is asked about.
    for i in range(0, 2000, 97):
        n = int(stops[i])
        assert settles(i, n) == bool(settled[i].any()) and not settles(i, n - 1)
    s = np.array(stops)
    row = (
        f"| +{change}% | {round(sd * 100)}% | {_fixed_n(delta, sd)} blocks | {np.median(s):g} | "
        f"{s.mean():.1f} | {np.percentile(s, 80):g} |"
    )
    assert row in RUN_GUIDE, row


@pytest.mark.slow
def test_the_guides_peeking_rate() -> None:
    # A t test after every block, stopping at the first p < 0.05 (the t statistic from running sums).
    d = np.random.default_rng(2).normal(0, 1, (2000, 40))
    k = np.arange(1, 41)
    mean = d.cumsum(axis=1) / k
    var = ((d**2).cumsum(axis=1) - k * mean**2)[:, 1:] / (k[1:] - 1)
    t = mean[:, 1:] / np.sqrt(var / k[1:])
    p = 2 * stats.t.sf(np.abs(t), k[1:] - 1)
    assert p[0, 5] == pytest.approx(stats.ttest_1samp(d[0, :7], 0).pvalue)
    false = int((p < 0.05).any(axis=1).sum())
    assert f"calls {round(100 * false / 2000)}% of identical pairs" in RUN_GUIDE


def _integrated_mixture(d: list[float], m: float, tau2: float) -> float:
    """M_n(m) by numerical integration: the scale-invariant likelihood ratio of the standardized
    effect, mixed over N(0, tau2), independent of the closed form in the module."""
    from scipy import integrate

    x = np.asarray(d) - m
    n, s, v = len(x), float(x.sum()), float((x * x).sum())

    def ratio(delta: float) -> float:
        return integrate.quad(
            lambda r: r ** (n - 1) * math.exp(-(r * r * v - 2 * r * delta * s + n * delta**2) / 2), 0, np.inf
        )[0]

    den = integrate.quad(lambda r: r ** (n - 1) * math.exp(-r * r * v / 2), 0, np.inf)[0]
    prior = stats.norm(0, math.sqrt(tau2)).pdf
    return integrate.quad(lambda t: ratio(t) * prior(t), -np.inf, np.inf)[0] / den


@pytest.mark.parametrize("tau2", [0.25, 1.0, 4.0])
def test_the_mixture_is_the_integrated_likelihood_ratio_at_any_prior_width(tau2: float) -> None:
    d = [0.08, -0.02, 0.05, 0.11, 0.03]
    # The default mean is 0: no change.
    assert mixture(d, tau2=tau2) == pytest.approx(_integrated_mixture(d, 0.0, tau2), rel=1e-6)
    assert mixture(d, 0.04, tau2) == pytest.approx(_integrated_mixture(d, 0.04, tau2), rel=1e-6)
    # And the radius is where it reaches 1/alpha, at that width too.
    mean = sum(d) / len(d)
    r = radius(len(d), sum((x - mean) ** 2 for x in d), 0.2, tau2)
    assert mixture(d, mean + r, tau2) == pytest.approx(1 / 0.2, rel=1e-9)


def test_no_differences_or_no_spread_give_a_ratio_of_one() -> None:
    assert mixture([]) == 1.0
    # Every difference exactly at m: nothing to weigh (and no division by a zero spread).
    assert mixture([0.2, 0.2, 0.2], 0.2) == 1.0
    empty = look([], alpha=0.05, min_effect=1.0, higher_is_better=True)
    assert (empty.n, empty.call) == (0, "inconclusive") and math.isnan(empty.mean)


def _settled(d: list[float]) -> tuple[float, float]:
    """The mean and the radius of the sequence after `d`, at alpha 0.05."""
    mean = sum(d) / len(d)
    return mean, radius(len(d), sum((x - mean) ** 2 for x in d), 0.05)


@pytest.mark.parametrize("higher_is_better", [True, False])
def test_each_call_of_the_rule_and_its_direction(higher_is_better: bool) -> None:
    up = [0.10, 0.11, 0.09, 0.10, 0.105, 0.095, 0.10, 0.10]
    mean, r = _settled(up)
    seen = look(up, alpha=0.05, min_effect=1.0, higher_is_better=higher_is_better)
    assert (seen.n, seen.mean, seen.low, seen.high) == pytest.approx((8, mean, mean - r, mean + r), rel=1e-12)
    # The number went up by about 10.5%: better where higher is better, worse where lower is.
    assert seen.call == ("better" if higher_is_better else "worse")
    down = look([-x for x in up], alpha=0.05, min_effect=1.0, higher_is_better=higher_is_better)
    assert down.call == ("worse" if higher_is_better else "better")
    # A sequence inside +-min_effect: no change, with room (1.5x) on either side of the limits.
    flat = [0.001, -0.002, 0.0015, 0.0, -0.001, 0.0005, 0.001, -0.0005, 0.0, 0.0005]
    mean, r = _settled(flat)
    edge = 1.5 * max(abs(mean - r), abs(mean + r))
    min_effect = 100 * math.expm1(edge)
    assert look(flat, alpha=0.05, min_effect=min_effect, higher_is_better=higher_is_better).call == "no-change"
    # Limits narrower than the sequence: not settled.
    narrow = 100 * math.expm1(edge / 2)
    assert look(flat, alpha=0.05, min_effect=narrow, higher_is_better=higher_is_better).call == "inconclusive"


def test_a_sequential_result_carries_the_sequence_everywhere_it_is_read() -> None:
    from generator.analysis.sequential import as_sequential
    from generator.analysis.stats import compare

    # Values under 1 (seconds, say) are as good as any: only a value of 0 or less has no log.
    x = [0.52, 0.533, 0.515, 0.528, 0.535, 0.522]
    b = [0.5, 0.505, 0.497, 0.503, 0.508, 0.5]
    fixed = compare(x, b, higher_is_better=True, paired=True, alpha=0.05, min_effect=1.0)
    seq = as_sequential(fixed, x, b)
    d = np.log(np.array(x) / np.array(b))
    r = radius(len(d), float(((d - d.mean()) ** 2).sum()), 0.05)
    low, high = math.expm1(d.mean() - r), math.expm1(d.mean() + r)
    assert (seq.ci_low, seq.ci_high) == pytest.approx((fixed.baseline_mean * low, fixed.baseline_mean * high))
    # The bound `no-change` reads is the sequence's too, and nothing of the fixed design is left.
    assert (seq.eq_low_percent, seq.eq_high_percent) == (seq.ci_low_percent, seq.ci_high_percent)
    assert seq.reps_needed is None and seq.reps_needed_min_effect is None and seq.reps_over_cap is False
    # Two blocks: a sequence that excludes nothing yet, never the fixed t interval.
    two = as_sequential(compare(x[:2], b[:2], higher_is_better=True, paired=True), x[:2], b[:2])
    assert (two.test, two.decision, two.ci_low_percent, two.ci_high_percent, two.ci_low) == (
        "sequence",
        "inconclusive",
        None,
        None,
        None,
    )


def test_what_has_no_sequence_is_left_as_compared() -> None:
    from generator.analysis.sequential import as_sequential
    from generator.analysis.stats import compare

    one = compare([5.0], [4.0], higher_is_better=True)
    assert as_sequential(one, [5.0], [4.0]) is one
    paired = compare([5.0, 5.2, 5.1], [4.0, 4.1, 4.2], higher_is_better=True, paired=True)
    assert as_sequential(paired, [5.0, 5.2, 5.1], [4.0, 4.1]) is paired
    # A value of 0 on either side has no log ratio: the comparison is on the difference scale.
    for x, b in (([0.0, 1.0, 2.0], [1.0, 1.0, 1.0]), ([1.0, 1.0, 1.0], [0.0, 1.0, 2.0])):
        c = compare(x, b, higher_is_better=True, paired=True)
        assert as_sequential(c, x, b) is c
