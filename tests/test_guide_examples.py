"""The worked examples of docs/guide/decisions.md and capacity.md: recomputed here with scipy and
statsmodels (not the tool's code path), checked to be what the guide prints and what the tool
computes.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from generator.analysis.capacity import Repetition, aggregate, capacity
from generator.analysis.stats import compare

from conftest import REPO

# Line breaks fall anywhere in the guide's prose: compare with single spaces.
DECISIONS = " ".join((REPO / "docs" / "guide" / "decisions.md").read_text().split())
CAPACITY = " ".join((REPO / "docs" / "guide" / "capacity.md").read_text().split())


def _pct(v: float) -> str:
    return f"{math.expm1(v) * 100:+.2f}%".replace("-", "−")


def _welch(x: list[float], b: list[float], alpha: float = 0.05) -> tuple[str, str, float]:
    res = stats.ttest_ind(np.log(x), np.log(b), equal_var=False)
    ci = res.confidence_interval(1 - alpha)
    return _pct(ci.low), _pct(ci.high), float(res.pvalue)


@pytest.mark.parametrize(
    ("x", "b", "alpha", "higher"),
    [
        ([0.040, 0.045, 0.0425], [4.0, 4.5, 5.0], 0.05, False),
        ([0.040, 0.045, 0.0425], [4.0, 4.5, 5.0], 0.01, False),
        ([0.040, 0.045], [4.0, 4.5], 0.05, False),
        ([108.0, 103.0, 110.0, 105.0, 106.0], [100.0, 104.0, 98.0, 102.0, 96.0], 0.05, True),
    ],
)
def test_welch_examples_are_the_guides_and_the_tools(
    x: list[float], b: list[float], alpha: float, higher: bool
) -> None:
    low, high, _ = _welch(x, b, alpha)
    assert f"{low} to {high}".replace("+", "") in DECISIONS.replace("+", "")
    c = compare(x, b, higher_is_better=higher, alpha=alpha)
    assert (_pct(math.log1p(c.ci_low_percent / 100)), _pct(math.log1p(c.ci_high_percent / 100))) == (low, high)
    assert c.decision == "better"


def test_the_n2_p_value() -> None:
    _, _, p = _welch([0.040, 0.045], [4.0, 4.5])
    assert round(p, 5) == 0.00033 and "p = 0.00033" in DECISIONS


def test_the_paired_example() -> None:
    x, b = [150.0, 170.0, 140.0, 160.0], [100.0, 115.0, 95.0, 105.0]
    ci = stats.ttest_1samp(np.log(np.array(x) / np.array(b)), 0.0).confidence_interval()
    assert f"**{_pct(ci.low)} to {_pct(ci.high)}**".replace("−", "-") in DECISIONS.replace("−", "-")
    unpaired = _welch(x, b)
    assert f"{unpaired[0]} to {unpaired[1]}".replace("−", "-") in DECISIONS.replace("−", "-")
    assert compare(x, b, higher_is_better=True, paired=True).decision == "better"


def test_the_tost_example() -> None:
    from statsmodels.stats.weightstats import ttost_ind

    a, b = [98.7, 100.0, 100.0, 99.7, 99.0], [99.6, 98.9, 98.6, 100.2, 98.9]
    p, _, _ = ttost_ind(a, b, -0.01 * np.mean(b), 0.01 * np.mean(b), usevar="unequal")
    assert round(p, 3) == 0.047 and "p = 0.047" in DECISIONS
    ci = stats.ttest_ind(np.log(a), np.log(b), equal_var=False).confidence_interval(0.90)
    assert "−0.50% to +0.99%" in DECISIONS
    assert (round(math.expm1(ci.low) * 100, 2), round(math.expm1(ci.high) * 100, 2)) == (-0.50, 0.99)
    assert compare(a, b, higher_is_better=True).decision == "no-change"


def test_the_capacity_example_with_repetitions() -> None:
    points = [
        aggregate(32, [Repetition(1000, {"tpot_p99": t}) for t in (40, 42, 38)]),
        aggregate(64, [Repetition(1600, {"tpot_p99": t}) for t in (60, 52, 70)]),
    ]
    c = capacity(points, {"tpot_p99": 50})
    # The means of the repetitions, 40 and 60.67: t = (50 - 40) / (60.67 - 40).
    assert c.throughput == pytest.approx(1000 + 600 * 10 / (182 / 3 - 40))
    assert f"{c.throughput:.1f} tok/s" in CAPACITY
