"""Launch states (issue 47): the mixture fit pinned to scipy's optimiser, the flag, the arms' shares.

scikit-learn (the usual mixture fit) is not a dependency, so the EM is pinned to a direct
maximisation of the same likelihood with scipy.optimize, from the true parameters and the EM's own.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from generator.analysis.launch_states import arm_shares, fisher_exact, fit, states


def _negative_log_likelihood(params: np.ndarray, x: np.ndarray) -> float:
    from scipy import stats

    logit, mu1, mu2, log_sd = params
    w = 1 / (1 + math.exp(-logit))
    sd = math.exp(log_sd)
    density = w * stats.norm.pdf(x, mu1, sd) + (1 - w) * stats.norm.pdf(x, mu2, sd)
    return float(-np.sum(np.log(density)))


@pytest.mark.parametrize(
    ("seed", "slow", "fast"), [(1, 24, 66), (2, 4, 8), (3, 10, 10)], ids=["issue-47", "few-launches", "even"]
)
def test_fit_is_the_maximum_likelihood(seed: int, slow: int, fast: int) -> None:
    from scipy import optimize, stats

    rng = np.random.default_rng(seed)
    x = np.log(np.concatenate([rng.normal(20.9, 0.8, slow), rng.normal(13.5, 0.5, fast)]))
    m = fit(x.tolist())
    assert m is not None
    best = None
    starts = [
        [math.log(slow / fast), math.log(20.9), math.log(13.5), math.log(0.05)],
        [math.log(m.share_high / (1 - m.share_high)), m.high, m.low, 0.5 * math.log(m.variance)],
    ]
    for start in starts:
        found = optimize.minimize(
            _negative_log_likelihood,
            start,
            args=(x,),
            method="Nelder-Mead",
            options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 20000},
        )
        if best is None or found.fun < best.fun:
            best = found
    assert best is not None
    assert m.log_likelihood == pytest.approx(-best.fun, abs=1e-6)
    logit, mu_high, mu_low, log_sd = best.x
    assert (m.low, m.high) == pytest.approx((mu_low, mu_high), abs=1e-4)
    assert m.share_high == pytest.approx(1 / (1 + math.exp(-logit)), abs=1e-4)
    assert m.variance == pytest.approx(math.exp(2 * log_sd), rel=1e-3)
    one = float(np.sum(stats.norm.logpdf(x, x.mean(), x.std())))
    assert m.one_log_likelihood == pytest.approx(one)


def test_the_issue_states_are_flagged() -> None:
    rng = np.random.default_rng(47)
    values = np.concatenate([rng.normal(13.5, 0.5, 66), rng.normal(20.9, 0.8, 24)])
    rng.shuffle(values)
    s = states(values.tolist(), higher_is_better=False)  # ms per step: the slow state is the higher one
    assert s is not None and s.flagged
    assert s.slow_centre == pytest.approx(20.9, rel=0.02)
    assert s.fast_centre == pytest.approx(13.5, rel=0.02)
    assert sum(s.slow) == 24 and s.slow_share == pytest.approx(24 / 90, abs=0.01)
    assert [v > 17 for v in values] == list(s.slow)
    # Throughput, higher is better: the slow state is the lower one.
    t = states((1000 / values).tolist(), higher_is_better=True)
    assert t is not None and t.flagged and t.slow == s.slow


@pytest.mark.parametrize(
    "values",
    [
        np.exp(np.random.default_rng(5).normal(2.6, 0.15, 90)).tolist(),  # one spread
        [*np.random.default_rng(6).normal(13.5, 0.3, 19).tolist(), 25.0],  # one outlying launch
        [13.0, 13.5, 14.0, 20.0, 21.0, 20.5, 13.2],  # too few launches
        [2.0] * 12,  # no spread
    ],
    ids=["unimodal", "outlier", "few", "constant"],
)
def test_one_state_is_not_flagged(values: list[float]) -> None:
    s = states(values, higher_is_better=True)
    assert s is None or not s.flagged


def test_fisher_exact_is_scipys() -> None:
    from scipy import stats

    for n1, n2 in [(5, 5), (6, 6), (3, 9), (66, 24)]:
        for a in range(n1 + 1):
            for b in range(0, n2 + 1, max(1, n2 // 8)):
                expected = stats.fisher_exact([[a, n1 - a], [b, n2 - b]]).pvalue
                assert fisher_exact(a, n1, b, n2) == pytest.approx(expected, abs=1e-12)


def test_arms_that_land_in_the_slow_state_more_often_differ() -> None:
    rng = np.random.default_rng(8)
    # This record's 20 launches: 12 slow; the baseline's 20: 2 slow.
    own = [*rng.normal(20.9, 0.5, 12), *rng.normal(13.5, 0.4, 8)]
    base = [*rng.normal(20.9, 0.5, 2), *rng.normal(13.5, 0.4, 18)]
    pooled = states([*own, *base], higher_is_better=False)
    assert pooled is not None and pooled.flagged
    shares = arm_shares(pooled, len(own), 0.05)
    assert shares.slow == (12, 2) and shares.launches == (20, 20)
    assert shares.differ and shares.p_value == pytest.approx(fisher_exact(12, 20, 2, 20))
