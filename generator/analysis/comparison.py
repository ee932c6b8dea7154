"""A comparison's result: the `Comparison` of one metric against its baseline, and its words.

`stats.compare` makes every `Comparison`; pages, the summary, `check` and export read it and
compute nothing of their own. The rules behind its fields are in `stats`' module doc and
docs/guide/decisions.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

Decision = Literal["better", "worse", "no-change", "inconclusive", "unreplicated"]
# "sequence": a paired result `improvements run --until-decided` made (analysis/sequential.py).
Test = Literal["welch", "paired", "delta", "sequence"]
Scale = Literal["ratio", "difference"]

DECISIONS: tuple[Decision, ...] = ("better", "worse", "no-change", "inconclusive", "unreplicated")

# What `--fail-on` may gate on (docs/guide/workflow.md, "Gating a pull request"): `worse`, any
# comparison decided `worse`; `regression`, one decided `worse` whose point loss is at least
# min_effect (a `worse` the pages call "within min_effect" passes).
FailOn = Literal["worse", "regression"]
FAIL_ON: tuple[FailOn, ...] = ("worse", "regression")


@dataclass(frozen=True)
class Moments:
    """A side given as summary statistics (`{mean, sd, n}`): compared as its repetitions would be."""

    mean: float
    sd: float | None  # None: no spread given, so no interval and no direction
    n: int


@dataclass(frozen=True)
class Fold:
    """A change as a number of times over or under its baseline: "106x lower (133x to 84x)"."""

    times: float  # max(mean, baseline mean) / min(...), so >= 1
    word: Literal["higher", "lower"]
    # The interval of `times`, low to high: the ratio scale's interval turned the same way; None
    # on the difference scale or when an end reaches -100%.
    interval: tuple[float, float] | None


@dataclass(frozen=True)
class Comparison:
    """The statistics of one metric of one result against its baseline.

    Raw fields keep the sign of the numbers (+ = went up); the ``gain_*`` properties orient
    them so that + is better, for ranking and for words like "better by".
    """

    n: int
    baseline_n: int
    mean: float
    baseline_mean: float
    # The point change in the metric's unit: mean - baseline_mean, or on the ratio scale
    # baseline_mean * (geometric means' ratio - 1), the point the interval is built on.
    difference: float
    # The 1 - alpha interval in the metric's unit (ratio scale: baseline_mean * (ratio - 1)); None when unreplicated.
    ci_low: float | None
    ci_high: float | None
    # difference / |baseline_mean| * 100 (ratio scale: the geometric means' ratio - 1); None when
    # the baseline mean is 0.
    change_percent: float | None
    ci_low_percent: float | None
    ci_high_percent: float | None
    p_value: float | None  # None when unreplicated or when nothing varies (t undefined)
    test: Test | None  # None when unreplicated
    decision: Decision
    # Inconclusive only: n per side for an 80% chance of `reps_target` at the change seen. None
    # there means more than REPS_CAP (`reps_over_cap`) or undefined.
    reps_needed: int | None
    reps_over_cap: bool
    higher_is_better: bool
    alpha: float
    min_effect: float
    scale: Scale = "ratio"
    # The 1 - 2 alpha interval in percent: what `no-change` (TOST at alpha) reads.
    eq_low_percent: float | None = None
    eq_high_percent: float | None = None
    # Ratio scale: the log of the geometric means' ratio, its standard error and degrees of
    # freedom, for composing steps (the road). None on the difference scale; a single shot has
    # the log ratio alone.
    log_ratio: float | None = None
    log_se: float | None = None
    df: float | None = None
    reps_target: Decision | None = None
    # n per side for an 80% chance of `better` if the true change were +min_effect.
    reps_needed_min_effect: int | None = None
    # The spread behind the counts comes from 2 repetitions on a side: the counts are rough.
    reps_rough: bool = False
    # "statistics" when a side was given as {mean, sd, n}, else "repetitions".
    basis: Literal["repetitions", "statistics"] = "repetitions"
    # A side given as a mean without a spread: shown, never called better or worse.
    spread_unknown: bool = False
    # Why the repetitions look like more than one configuration ("baseline: max/min 5.4"), or None.
    spread_flag: str | None = None
    # The ratio of the arithmetic means - 1, in percent: shown beside the point, labelled, where it
    # differs from it (the ratio scale); None when the baseline mean is 0.
    arith_change_percent: float | None = None
    # The alpha of the interval shown when it is not `alpha`: a Holm step's (best of k), whose
    # interval goes with the corrected word.
    interval_alpha: float | None = None

    @property
    def gain_percent(self) -> float | None:
        """The change in percent, + = better for this metric's direction."""
        return None if self.change_percent is None else self._orient(self.change_percent)

    @property
    def gain_low_percent(self) -> float | None:
        """The interval's worse end, oriented (+ = better): what the summary ranks `better` by."""
        bounds = self._oriented_bounds(self.ci_low_percent, self.ci_high_percent)
        return None if bounds is None else bounds[0]

    @property
    def gain_high_percent(self) -> float | None:
        """The interval's better end, oriented (+ = better)."""
        bounds = self._oriented_bounds(self.ci_low_percent, self.ci_high_percent)
        return None if bounds is None else bounds[1]

    @property
    def gain_eq_low_percent(self) -> float | None:
        """The 1 - 2 alpha interval's worse end, oriented: what a non-inferiority margin reads."""
        bounds = self._oriented_bounds(self.eq_low_percent, self.eq_high_percent)
        return None if bounds is None else bounds[0]

    @property
    def gain_eq_high_percent(self) -> float | None:
        """The 1 - 2 alpha interval's better end, oriented: what a broken guardrail reads."""
        bounds = self._oriented_bounds(self.eq_low_percent, self.eq_high_percent)
        return None if bounds is None else bounds[1]

    @property
    def ratio(self) -> float | None:
        """The point ratio the change is (geometric means' on the ratio scale), when both means are
        positive: the "x" the pages print and the factor the road composes."""
        if self.mean <= 0 or self.baseline_mean <= 0:
            return None
        if self.log_ratio is not None:
            return math.exp(self.log_ratio)
        return self.mean / self.baseline_mean

    @property
    def within_min_effect(self) -> bool:
        """`better` or `worse` while the point change lies inside +-min_effect: a real change too
        small to matter, which the pages say beside the word (a secondary metric's -0.7% at
        p 0.044 once read plain `better`)."""
        gain = self.gain_percent
        return self.decision in ("better", "worse") and gain is not None and abs(gain) < self.min_effect

    @property
    def fold(self) -> Fold | None:
        """The change as times over or under the baseline, which a percent near -100% hides."""
        r = self.ratio
        if r is None or r <= 0:
            return None
        # The printed estimate's own ratio (the geometric means' on the ratio scale), so the fold
        # and the percent beside it are one number (issue 36).
        low, high = self.ci_low_percent, self.ci_high_percent
        interval = None
        if self.scale == "ratio" and low is not None and high is not None and low > -100 and high > -100:
            ends = sorted((1 + low / 100, 1 + high / 100))
            interval = (1 / ends[1], 1 / ends[0]) if r < 1 else (ends[0], ends[1])
        return Fold(max(r, 1 / r), "higher" if r > 1 else "lower", interval)

    def fails(self, rule: FailOn) -> bool:
        """Whether this comparison fails a `--fail-on` gate (see `FailOn`)."""
        if self.decision != "worse":
            return False
        return rule == "worse" or not self.within_min_effect

    @property
    def single_shot(self) -> bool:
        return self.decision == "unreplicated"

    def _orient(self, value: float) -> float:
        return value if self.higher_is_better else -value

    def _oriented_bounds(self, low: float | None, high: float | None) -> tuple[float, float] | None:
        if low is None or high is None:
            return None
        a, b = self._orient(low), self._orient(high)
        return (min(a, b), max(a, b))
