"""The noise model (issue 47): variance components, what a design detects, pinned to independent computations."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from generator.analysis import sequential as seq
from generator.analysis.noise import blocks_needed, components, detectable_change


def _launches(rng: np.random.Generator, sizes: list[int], launch_sd: float, within_sd: float) -> list[list[float]]:
    return [np.exp(2.6 + rng.normal(0, launch_sd) + rng.normal(0, within_sd, s)).tolist() for s in sizes]


@pytest.mark.parametrize(("seed", "k", "m", "launch_sd", "within_sd"), [(1, 30, 4, 0.15, 0.12), (2, 12, 3, 0.3, 0.1)])
def test_components_are_reml_on_balanced_launches(
    seed: int, k: int, m: int, launch_sd: float, within_sd: float
) -> None:
    import pandas as pd
    import statsmodels.formula.api as smf

    groups = _launches(np.random.default_rng(seed), [m] * k, launch_sd, within_sd)
    c = components(groups)
    assert c is not None
    frame = pd.DataFrame({"y": np.log(np.array(groups)).ravel(), "g": np.repeat(np.arange(k), m)})
    fit = smf.mixedlm("y ~ 1", frame, groups=frame["g"]).fit(reml=True)
    assert c.launch_var == pytest.approx(float(fit.cov_re.iloc[0, 0]), rel=1e-4)
    assert c.within_var == pytest.approx(float(fit.scale), rel=1e-4)
    assert (c.launches, c.runs, c.runs_per_launch) == (k, k * m, m)
    assert c.icc == pytest.approx(c.launch_var / (c.launch_var + c.within_var))
    assert c.launch_var_ci[0] < c.launch_var < c.launch_var_ci[1]
    assert c.within_var_ci[0] < c.within_var < c.within_var_ci[1]


def test_unbalanced_launches_use_n0() -> None:
    # By hand: logs {0, 0.2}, {0.5}, {1, 1.2, 1.1}; the textbook n0 = (N - sum n_i^2 / N) / (k - 1).
    groups = [[math.exp(0), math.exp(0.2)], [math.exp(0.5)], [math.exp(1), math.exp(1.2), math.exp(1.1)]]
    c = components(groups)
    assert c is not None
    logs = [[0, 0.2], [0.5], [1, 1.2, 1.1]]
    n, k = 6, 3
    grand = sum(map(sum, logs)) / n
    msw = (0.02 + 0 + 0.02) / (n - k)
    msb = sum(len(g) * (sum(g) / len(g) - grand) ** 2 for g in logs) / (k - 1)
    n0 = (n - (4 + 1 + 9) / n) / (k - 1)
    assert c.within_var == pytest.approx(msw)
    assert c.launch_var == pytest.approx((msb - msw) / n0)
    assert c.runs_per_launch == pytest.approx(2.0)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("k", "sizes", "launch_sd", "within_sd"),
    [(10, [2], 0.1, 0.1), (8, [3], 0.05, 0.2), (20, [1, 2, 3, 4], 0.1, 0.1), (30, [4], 0.15, 0.12)],
)
def test_intervals_cover_at_their_level(k: int, sizes: list[int], launch_sd: float, within_sd: float) -> None:
    rng = np.random.default_rng(47)
    trials, launch_hits, within_hits = 2000, 0, 0
    for _ in range(trials):
        c = components(_launches(rng, [sizes[i % len(sizes)] for i in range(k)], launch_sd, within_sd))
        assert c is not None
        launch_hits += c.launch_var_ci[0] <= launch_sd**2 <= c.launch_var_ci[1]
        within_hits += c.within_var_ci[0] <= within_sd**2 <= c.within_var_ci[1]
    # 95% intervals; 2000 trials put the observed share within +-0.015 of it (3 standard errors).
    assert 0.93 <= launch_hits / trials <= 0.97
    assert 0.93 <= within_hits / trials <= 0.97


@pytest.mark.parametrize(
    "groups",
    [
        [[1.0, 1.1]],  # one launch
        [[1.0], [1.1], [1.2]],  # one run each: nothing measures the within-launch part
        [[1.0, 0.0], [1.1, 1.2]],  # no logarithm
        [[2.0, 2.0], [2.0, 2.0]],  # no spread at all
        [[], [1.0, 1.1]],  # one launch with a run
    ],
)
def test_not_estimable(groups: list[list[float]]) -> None:
    assert components(groups) is None


def test_no_launch_spread_is_zero_not_negative() -> None:
    c = components([[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]])
    assert c is not None
    assert c.launch_var == 0.0 and c.icc == 0.0
    assert c.launch_var_ci[0] == 0.0


def test_issue_figures() -> None:
    # Issue 47: 25% block spread, 5 blocks sees about +52%; +10% needs 56 fixed / 104 sequential
    # blocks, and 34 / 61-67 at 19%.
    assert detectable_change(0.25, 5, 0.05, 0.8, False) == pytest.approx(52.3, abs=0.1)
    assert detectable_change(0.25, 56, 0.05, 0.8, False) <= 10.0 < detectable_change(0.25, 55, 0.05, 0.8, False)
    assert detectable_change(0.25, 104, 0.05, 0.8, True) == pytest.approx(10.0, abs=0.15)
    assert detectable_change(0.19, 34, 0.05, 0.8, False) == pytest.approx(10.0, abs=0.15)
    assert 61 <= min(n for n in range(50, 80) if detectable_change(0.19, n, 0.05, 0.8, True) <= 10.0) <= 67


def test_fixed_design_is_the_noncentral_t() -> None:
    from statsmodels.stats.power import TTestPower

    for n, alpha, power in [(5, 0.05, 0.8), (20, 0.1, 0.9), (3, 0.05, 0.5)]:
        # The rule calls `better` from the upper tail of the two-sided test: one-sided at alpha / 2.
        effect = TTestPower().solve_power(nobs=n, alpha=alpha / 2, power=power, alternative="larger")
        assert detectable_change(0.2, n, alpha, power, False) == pytest.approx(100 * math.expm1(0.2 * effect), rel=1e-4)


def test_fixed_design_detects_at_its_power_by_simulation() -> None:
    from scipy import stats

    rng = np.random.default_rng(5)
    n, sd = 8, 0.25
    change = detectable_change(sd, n, 0.05, 0.8, False)
    diffs = rng.normal(math.log1p(change / 100), sd, (20_000, n))
    res = stats.ttest_1samp(diffs, 0.0, axis=1)
    better = np.mean((res.pvalue < 0.05) & (res.statistic > 0))
    assert better == pytest.approx(0.8, abs=0.015)


def _sequence_power(change: float, sd: float, blocks: int, paths: int, rng: np.random.Generator) -> float:
    """The tool's rule (`sequential.look`) after every block, stopping at the first call."""
    hits = 0
    for _ in range(paths):
        diffs = rng.normal(math.log1p(change / 100), sd, blocks).tolist()
        for k in range(2, blocks + 1):
            lk = seq.look(diffs[:k], alpha=0.05, min_effect=0.0, higher_is_better=True)
            if lk.settled:
                hits += lk.call == "better"
                break
    return hits / paths


@pytest.mark.slow
@pytest.mark.parametrize(("sd", "blocks"), [(0.25, 12), (0.1, 30)])
def test_sequential_design_matches_a_simulation_of_the_rule(sd: float, blocks: int) -> None:
    change = detectable_change(sd, blocks, 0.05, 0.8, True)
    rng = np.random.default_rng(11)
    log_change = math.log1p(change / 100)
    below = _sequence_power(100 * math.expm1(0.9 * log_change), sd, blocks, 3000, rng)
    at = _sequence_power(change, sd, blocks, 3000, rng)
    above = _sequence_power(100 * math.expm1(1.1 * log_change), sd, blocks, 3000, rng)
    # Within 10% of its value: 10% smaller falls short of 80% power, 10% larger reaches it.
    assert below < 0.8 < above
    assert at == pytest.approx(0.8, abs=0.025)


def test_detectable_change_edges() -> None:
    assert detectable_change(0.25, 1, 0.05, 0.8, False) == math.inf
    assert detectable_change(0.25, 2, 0.05, 0.8, True) == math.inf  # the sequence excludes nothing yet
    assert detectable_change(0.0, 5, 0.05, 0.8, True) == 0.0
    assert detectable_change(0.0, 10, 0.05, 0.8, False) == 0.0
    with pytest.raises(ValueError):
        detectable_change(-0.1, 5, 0.05, 0.8, False)
    with pytest.raises(ValueError):
        detectable_change(0.1, 5, 0.6, 0.8, False)


def test_blocks_needed_is_the_first_design_that_detects_the_change() -> None:
    from generator.analysis.noise import blocks_needed

    for sequential in (False, True):
        n = blocks_needed(10.0, 0.25, 0.05, 0.8, sequential)
        assert n is not None
        assert detectable_change(0.25, n, 0.05, 0.8, sequential) <= 10.0
        assert detectable_change(0.25, n - 1, 0.05, 0.8, sequential) > 10.0
    # Issue 47's counts: 56 fixed, about 104 sequential at 25%; 34 and 61-67 at 19%.
    assert blocks_needed(10.0, 0.25, 0.05, 0.8, False) == 56
    assert 100 <= (blocks_needed(10.0, 0.25, 0.05, 0.8, True) or 0) <= 110
    assert blocks_needed(10.0, 0.19, 0.05, 0.8, False) == 34
    # The same log distance down: -9.09% is +10% read the other way.
    assert blocks_needed(100 * (1 / 1.1 - 1), 0.25, 0.05, 0.8, False) == 56
    assert blocks_needed(1.0, 0.25, 0.05, 0.8, True) is None  # beyond the sequential cap
    assert blocks_needed(0.0, 0.25, 0.05, 0.8, False) is None
    assert blocks_needed(10.0, 0.0, 0.05, 0.8, False) == 2


def test_a_short_pass_is_the_start_of_a_long_one() -> None:
    from generator.analysis.noise import _sequential_curve

    assert _sequential_curve(256, 0.05, 0.8)[:64] == _sequential_curve(64, 0.05, 0.8)


RUN_GUIDE = " ".join((Path(__file__).resolve().parent.parent / "docs" / "guide" / "run.md").read_text().split())
NOISE_GUIDE = " ".join((Path(__file__).resolve().parent.parent / "docs" / "guide" / "noise.md").read_text().split())


@pytest.mark.slow
@pytest.mark.parametrize(("change", "sd"), [(10, 0.19), (10, 0.25)])
def test_the_guides_real_noise_rows(change: int, sd: float) -> None:
    """run.md's cost table at the example's real noise, recomputed from the closed form of the
    sequence with arrays (as tests/test_sequential.py does for the quiet rows, over more blocks)."""
    from scipy import stats

    horizon = 400
    delta = math.log1p(change / 100)
    d = np.random.default_rng(1).normal(delta, sd, (2000, horizon))
    k = np.arange(1, horizon + 1)
    mean = d.cumsum(axis=1) / k
    ss = (d**2).cumsum(axis=1) - k * mean**2
    c = (1 - (0.05**2 / (1 + k)) ** (1 / k)) * (1 + k)  # tau = 1
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(c < k, np.sqrt(c * ss / (k * (k - c))), np.inf)
    thr = math.log1p(0.01)
    low, high = mean - r, mean + r
    settled = np.isfinite(r) & ((low > 0) | (high < 0) | ((low >= -thr) & (high <= thr)))
    settled[:, 0] = False
    assert settled.any(axis=1).all()
    stops = settled.argmax(axis=1) + 1
    fixed = next(
        n
        for n in range(2, 500)
        if 1 - stats.nct.cdf(stats.t.ppf(0.975, n - 1), n - 1, delta / (sd / math.sqrt(n))) >= 0.8
    )
    row = (
        f"| +{change}% | {round(sd * 100)}% | {fixed} blocks | {np.median(stops):g} | "
        f"{stops.mean():.1f} | {np.percentile(stops, 80):g} |"
    )
    assert row in RUN_GUIDE, row
    # The 80th percentile against the fixed design: the guide's "1.8-1.9x".
    assert 1.75 <= np.percentile(stops, 80) / fixed <= 1.95


def test_the_noise_guides_table() -> None:
    rows = [
        (0.05, "5% (a quiet serving benchmark)"),
        (0.19, "19% (the example, mean of 4 runs per launch)"),
        (0.25, "25% (the example, one run per launch)"),
    ]
    for sd, label in rows:
        cells = [f"{detectable_change(sd, n, 0.05, 0.8, False):+.1f}%" for n in (5, 10, 20)]
        needed = [blocks_needed(c, sd, 0.05, 0.8, s) for c, s in ((10, False), (10, True), (20, False), (20, True))]
        row = f"| {label} | {' | '.join(cells)} | {needed[0]} / {needed[1]} | {needed[2]} / {needed[3]} |"
        assert row in NOISE_GUIDE, row
