"""Sequential stopping for `improvements run --until-decided`: an always-valid confidence sequence.

Each block gives one paired difference (`block_difference`): the log of the arm's launch mean
over the comparator's (the mean of each launch's measured runs, so sub-samples of one launch
count once). The runner's looks (`runner/execute.py`) and the page's final analysis
(`as_sequential`) both make their differences with it and read them with `look`: the interval
the page prints is the one the runner stopped on. With the
variance unknown, the sequence is Lai's (1976) t confidence sequence, in the closed form of
Wang and Ramdas (2023, "Anytime-valid t-tests and confidence sequences for Gaussian means with
unknown variance"): the likelihood ratio of the scale-invariant data (the differences up to a
common positive factor) for a standardized effect `delta`, mixed over delta ~ N(0, tau^2),
against delta = 0. For n differences shifted by a candidate mean m (S their sum, Q their sum of
squares):

    M_n(m) = (1 + n tau^2) ** -1/2 * (1 - (S^2 / Q) * tau^2 / (1 + n tau^2)) ** (-n / 2)

Under mean m it is a nonnegative martingale with M_1 = 1, so by Ville's inequality it ever
reaches 1/alpha with probability at most alpha: {m : M_n(m) < 1/alpha} holds the true mean at
every n at once, with probability 1 - alpha, whenever the looks are taken and however the
stopping depends on them. M_n grows with |mean - m|, so the set is an interval around the mean
(`radius`).

The decision reads the campaign's rule off that one interval: `better` when it lies above 0,
`worse` below, `no-change` inside +-min_effect; a wrong call of any kind needs the interval to
miss the true mean, so each has probability at most alpha with a look after every block. The
price against a fixed design is a wider interval at a given n (the guide gives the numbers).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from generator.analysis.stats import Comparison

RULE = "t confidence sequence (Lai 1976; Wang and Ramdas 2023), normal mixture tau = 1"
TAU2 = 1.0

Call = Literal["better", "worse", "no-change", "inconclusive"]


def mixture(diffs: Sequence[float], m: float = 0.0, tau2: float = TAU2) -> float:
    """M_n(m): the mixture likelihood ratio of the differences' scale-invariant part at mean m."""
    n = len(diffs)
    shifted = [d - m for d in diffs]
    s, q = sum(shifted), sum(x * x for x in shifted)
    if n == 0 or q == 0:
        return 1.0
    k = tau2 / (1 + n * tau2)
    return float((1 + n * tau2) ** -0.5 * (1 - (s * s / q) * k) ** (-n / 2))


def radius(n: int, ss: float, alpha: float, tau2: float = TAU2) -> float:
    """Half the width of the confidence sequence after n differences whose squared deviations
    from their mean sum to `ss`; infinite while it cannot exclude anything yet."""
    if n < 2:
        return math.inf
    # M_n >= 1/alpha  <=>  u >= U, with u = n^2 d^2 / (ss + n d^2) and d the distance to the mean.
    k = tau2 / (1 + n * tau2)
    bound = (1 - (alpha**2 / (1 + n * tau2)) ** (1 / n)) / k
    if bound >= n:
        return math.inf
    return math.sqrt(bound * ss / (n * (n - bound)))


def block_difference(arm: Sequence[float], comparator: Sequence[float]) -> float | None:
    """One block's paired difference: log(the arm launch's mean / the comparator launch's mean).

    None when either launch has no value or a mean <= 0 (no logarithm): that block is left out.
    """
    if not arm or not comparator:
        return None
    mine, theirs = sum(arm) / len(arm), sum(comparator) / len(comparator)
    if mine <= 0 or theirs <= 0:
        return None
    return math.log(mine) - math.log(theirs)


@dataclass(frozen=True)
class Look:
    """The confidence sequence after the blocks so far, and what the rule reads from it."""

    n: int
    mean: float  # of the log ratios
    low: float
    high: float
    call: Call

    @property
    def settled(self) -> bool:
        return self.call != "inconclusive"

    def percent(self) -> tuple[float, float, float]:
        """The mean and the interval as changes in percent."""
        return tuple(100 * math.expm1(x) if math.isfinite(x) else x for x in (self.mean, self.low, self.high))  # type: ignore[return-value]


def look(diffs: Sequence[float], *, alpha: float, min_effect: float, higher_is_better: bool) -> Look:
    """The rule after these paired log-ratio differences (arm over comparator), one a block.

    `min_effect` is in percent, as in the campaign's `decision`.
    """
    n = len(diffs)
    mean = sum(diffs) / n if n else math.nan
    ss = sum((d - mean) ** 2 for d in diffs) if n else 0.0
    r = radius(n, ss, alpha)
    low, high = mean - r, mean + r
    sign = 1.0 if higher_is_better else -1.0
    g_low, g_high = sorted((sign * low, sign * high))
    threshold = math.log1p(min_effect / 100)
    call: Call = "inconclusive"
    if math.isfinite(r):
        if -threshold <= g_low and g_high <= threshold:
            call = "no-change"
        elif g_low > 0:
            call = "better"
        elif g_high < 0:
            call = "worse"
    return Look(n, mean, low, high, call)


def as_sequential(c: Comparison, values: Sequence[float], base: Sequence[float]) -> Comparison:
    """A paired comparison read from the confidence sequence instead of the fixed-n t interval.

    For a result `improvements run --until-decided` made: the number of blocks depended on the
    looks, so only an interval valid at every look keeps the decision's error rate. Both bounds
    (the one `better`/`worse` read and the one `no-change` reads) are the sequence's, which
    holds the true change with probability 1 - alpha at any stopping time. `values` and `base`
    are one observation a block each (a launch's mean when a launch holds several runs), as the
    runner's looks read them.
    """
    from dataclasses import replace

    if c.scale != "ratio" or len(values) != len(base) or len(values) < 2 or min(*values, *base) <= 0:
        return c
    found = [block_difference([x], [b]) for x, b in zip(values, base, strict=True)]
    diffs = [d for d in found if d is not None]
    lk = look(diffs, alpha=c.alpha, min_effect=c.min_effect, higher_is_better=c.higher_is_better)
    low: float | None = None
    high: float | None = None
    unit: tuple[float | None, float | None] = (None, None)
    if math.isfinite(lk.low):
        low, high = 100 * math.expm1(lk.low), 100 * math.expm1(lk.high)
        unit = (c.baseline_mean * math.expm1(lk.low), c.baseline_mean * math.expm1(lk.high))
    return replace(
        c,
        ci_low=unit[0],
        ci_high=unit[1],
        ci_low_percent=low,
        ci_high_percent=high,
        eq_low_percent=low,
        eq_high_percent=high,
        p_value=None,
        test="sequence",
        decision=lk.call,
        reps_needed=None,
        reps_over_cap=False,
        reps_needed_min_effect=None,
    )
