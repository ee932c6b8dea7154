"""A level of the road's metric and its interval, composed over the sets of runs it rests on.

Its log is a sum of the log means of those sets, each with a coefficient: the baseline's runs
+1, then each step's runs +1 and its baseline's runs -1. A set that appears twice (a step
measured against the runs of the step before it) is one term, so shared runs cancel and the
level is the configuration in force measured directly; sets that differ are independent runs,
whose variances add (Welch-Satterthwaite degrees of freedom). A paired step whose baseline is not
shared enters as one term with its paired standard error. Pure functions of values; `road` uses
them (issue #36: adding each step's variance as if independent was 2-3x too wide, and too
narrow where two steps share a baseline).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from generator.analysis.stats import Comparison
from generator.analysis.tdist import t_interval, welch_df
from generator.model.quantity import Value, stat
from generator.model.result import Statistics


@dataclass(frozen=True)
class Term:
    """One set of runs in a level: its coefficient, log mean, and the variance of that log mean."""

    coef: int
    centre: float  # the set's log mean, `log_mean` (a paired step: the mean log ratio)
    var: float | None  # None: no spread (a single number)
    df: float | None


@dataclass(frozen=True)
class Level:
    """A level of the road's metric: its value and, when every part has a spread, its interval."""

    value: float
    low: float | None
    high: float | None
    # The log level's variance and its degrees of freedom; None without a spread.
    log_var: float | None
    df: float | None
    alpha: float = 0.05
    # The sets of runs the level rests on: key -> its term; None when the level is a range (no
    # distribution to compose further steps with).
    terms: tuple[tuple[object, Term], ...] | None = None

    @property
    def has_interval(self) -> bool:
        return self.low is not None and self.high is not None


def log_spread(value: Value) -> tuple[float, float] | None:
    """(variance of the log mean, its degrees of freedom) of a value with repetitions, else None."""
    if isinstance(value, list) and len(value) >= 2 and all(v > 0 for v in value):
        logs = [math.log(v) for v in value]
        m = sum(logs) / len(logs)
        var = sum((x - m) ** 2 for x in logs) / (len(logs) - 1)
        return var / len(logs), len(logs) - 1.0
    if isinstance(value, Statistics) and value.sd is not None and value.n >= 2 and value.mean > 0:
        return math.log1p((value.sd / value.mean) ** 2) / value.n, value.n - 1.0
    return None


def log_mean(value: Value) -> float:
    """The log of a value's centre that a level composes (docs/guide/format.md, "the road"): the
    mean of its runs' logs (the log of their geometric mean), the interval's own centre; for
    `{mean, sd, n}` the log-normal's with that mean and SD (as `stats.compare` reads them); for
    one number, its log. 0 for a value at or below 0, which has no log (such a step is not chained).

    The arithmetic mean's log once centred a level whose interval was built on the log mean, so
    the level sat above the middle of its own interval (issue 51).
    """
    if isinstance(value, list) and value and all(v > 0 for v in value):
        return math.fsum(math.log(v) for v in value) / len(value)
    if isinstance(value, Statistics) and value.sd is not None and value.mean > 0:
        return math.log(value.mean) - math.log1p((value.sd / value.mean) ** 2) / 2
    mean = stat(value).mean
    return math.log(mean) if mean > 0 else 0.0


def level_of(value: Value, alpha: float) -> Level:
    s = stat(value)
    if s.kind == "range":
        # A range is its own interval, with no distribution to compose further steps with.
        return Level(s.mean, s.low, s.high, None, None, alpha)
    key, term = _set_term(value)
    return _from_terms(((key, term),), alpha)


def _set_term(value: Value, coef: int = 1) -> tuple[object, Term]:
    """A value's runs as one term of a level, keyed by the runs themselves (so shared runs match)."""
    s = stat(value)
    spread = log_spread(value)
    var, df = spread if spread is not None else (None, None)
    if isinstance(value, list):
        key: object = ("runs", tuple(float(v) for v in value))
    elif isinstance(value, Statistics):
        key = ("statistics", value.mean, value.sd, value.n)
    else:
        key = ("one", s.mean)
    return key, Term(coef, log_mean(value), var, df)


def _from_terms(terms: Sequence[tuple[object, Term]], alpha: float) -> Level:
    """The level a sum of terms gives: exp of the sum, with its interval when every term has a spread."""
    kept = tuple((k, t) for k, t in terms if t.coef != 0)
    value = math.exp(sum(t.coef * t.centre for _, t in kept))
    if any(t.var is None for _, t in kept):
        return Level(value, None, None, None, None, alpha, kept)
    parts = [(t.coef * t.coef * (t.var or 0.0), t.df) for _, t in kept]
    var = sum(v for v, _ in parts)
    # No part that varies: no df, and the level is its own interval (`_with_interval`).
    df = welch_df(parts) if any(v > 0 and d for v, d in parts) else None
    return _with_interval(Level(value, None, None, var, df, alpha, kept))


def _with_interval(level: Level) -> Level:
    if level.log_var is None:
        return level
    if level.log_var == 0 or level.df is None:
        return replace(level, low=level.value, high=level.value)
    low, high = t_interval(0.0, math.sqrt(level.log_var), level.df, level.alpha)
    return replace(level, low=level.value * math.exp(low), high=level.value * math.exp(high))


def compose(level: Level, after: Value, before: Value, paired: Comparison | None) -> Level:
    """The level times a step's measured ratio, its runs' terms merged with the level's (shared runs cancel).

    `paired`: the step's paired comparison; when its baseline runs are not among the level's, the
    step enters as one term with its paired standard error (the pairing's covariance is in it).
    """
    x_key, x_term = _set_term(after)
    b_key, b_term = _set_term(before, -1)
    if level.terms is None:
        return Level(level.value * math.exp(x_term.centre - b_term.centre), None, None, None, None, level.alpha)
    terms = dict(level.terms)
    if paired is not None and b_key not in terms and paired.log_se is not None:
        step = Term(1, x_term.centre - b_term.centre, paired.log_se**2, paired.df)
        terms[("paired", x_key, b_key)] = step
        return _from_terms(tuple(terms.items()), level.alpha)
    for key, term in ((x_key, x_term), (b_key, b_term)):
        had = terms.get(key)
        terms[key] = term if had is None else replace(had, coef=had.coef + term.coef)
    return _from_terms(tuple(terms.items()), level.alpha)
