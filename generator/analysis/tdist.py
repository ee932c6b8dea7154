"""Student's t pieces every interval and test of the analysis shares: one implementation each.

`stats.compare` (a change's interval and p), `road` (a level's interval, composed steps, whether a
step's baseline is the level before it) and `expect` (a threshold read on a mean's interval) all
call these, so the Welch-Satterthwaite degrees of freedom, the t interval and the t test are
written once. scipy.special's ufuncs are the ones behind scipy.stats.t.ppf and t.sf
(`stdtrit(df, q)`, `stdtr(df, -x)`): the same numbers, and a third of scipy.stats's import.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable


def welch_df(parts: Iterable[tuple[float, float | None]]) -> float:
    """Welch-Satterthwaite degrees of freedom of a sum of variances, each given with its df.

    A part with no variance, or whose df is not known, adds nothing to the denominator. When no
    part varies, t is 0/0 and no interval depends on the df; the pooled df (the sum) stands in,
    so that the value is still a number.
    """
    total, denominator, pooled = 0.0, 0.0, 0.0
    for variance, df in parts:
        total += variance
        if variance and df:
            denominator += variance * variance / df
            pooled += df
        elif df:
            pooled += df
    return total**2 / denominator if denominator > 0 else pooled


def t_quantile(df: float, q: float) -> float:
    """The q quantile of Student's t with df degrees of freedom (scipy.stats.t.ppf)."""
    from scipy import special

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(special.stdtrit(df, q))


def t_interval(point: float, se: float, df: float, alpha: float) -> tuple[float, float]:
    """The two-sided 1 - alpha t interval of an estimate with standard error se."""
    half = t_quantile(df, 1 - alpha / 2) * se
    return point - half, point + half


def t_p_value(point: float, se: float, df: float) -> float:
    """The two-sided p of t = point / se (se > 0) with df degrees of freedom."""
    from scipy import special

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(2 * special.stdtr(df, -abs(point / se)))
