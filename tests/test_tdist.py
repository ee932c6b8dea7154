"""The one Welch-Satterthwaite df, t interval and t test, pinned against scipy.stats."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from generator.analysis.tdist import t_interval, t_p_value, t_quantile, welch_df


@pytest.mark.parametrize("seed", range(5))
def test_welch_df_and_p_are_scipys_welch_test(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x, b = rng.normal(10, 2, 4 + seed), rng.normal(11, 0.5 + seed, 3 + 2 * seed)
    vx, vb = x.var(ddof=1) / len(x), b.var(ddof=1) / len(b)
    expected = stats.ttest_ind(x, b, equal_var=False)
    se = math.sqrt(vx + vb)
    df = welch_df([(vx, len(x) - 1.0), (vb, len(b) - 1.0)])
    assert df == pytest.approx(expected.df, rel=1e-12)
    assert t_p_value(x.mean() - b.mean(), se, df) == pytest.approx(expected.pvalue, rel=1e-9)
    low, high = t_interval(x.mean() - b.mean(), se, df, 0.05)
    ci = expected.confidence_interval(0.95)
    assert (low, high) == pytest.approx((ci.low, ci.high), rel=1e-9)


def test_welch_df_of_three_parts_is_satterthwaites_sum() -> None:
    parts = [(0.4, 3.0), (0.1, 9.0), (0.25, 5.0)]
    expected = sum(v for v, _ in parts) ** 2 / sum(v * v / d for v, d in parts)
    assert welch_df(parts) == pytest.approx(expected, rel=1e-15)


def test_parts_without_variance_or_df_add_nothing_to_the_denominator() -> None:
    assert welch_df([(0.3, 4.0), (0.0, 7.0)]) == pytest.approx(4.0)
    # A variance with no known df still counts in the sum: (0.3 + 0.1)^2 / (0.09 / 4).
    assert welch_df([(0.3, 4.0), (0.1, None)]) == pytest.approx(0.16 / 0.0225)


def test_no_variance_at_all_gives_the_pooled_df() -> None:
    assert welch_df([(0.0, 4.0), (0.0, 2.0)]) == 6.0
    assert welch_df([(0.0, None)]) == 0.0


@pytest.mark.parametrize(("df", "q"), [(1.0, 0.975), (3.7, 0.95), (29.0, 0.995)])
def test_quantile_is_scipys(df: float, q: float) -> None:
    assert t_quantile(df, q) == pytest.approx(float(stats.t.ppf(q, df)), rel=1e-12)


def test_one_sample_interval_is_scipys() -> None:
    values = np.array([9.1, 10.4, 9.8, 10.9, 10.2])
    se = values.std(ddof=1) / math.sqrt(len(values))
    expected = stats.t.interval(0.9, len(values) - 1, loc=values.mean(), scale=se)
    assert t_interval(values.mean(), se, len(values) - 1.0, 0.1) == pytest.approx(expected, rel=1e-12)


def test_when_no_part_varies_the_df_is_the_parts_pooled() -> None:
    # t is 0/0 here, so no interval depends on it, but the value is the sum of the df, a number.
    assert welch_df([(0.0, 3.0), (0.0, 5.0)]) == 8.0
    assert welch_df([(0.0, 3.0), (0.0, None), (0.0, 2.0)]) == 5.0
