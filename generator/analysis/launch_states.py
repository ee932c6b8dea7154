"""Launch states: whether launches fall into two levels (issue 47), and whether the arms share them.

On one H200 the launches of one configuration fell into a fast state and a slow one (66 launches
at 13.5 ms a decode step, 24 at 20.9 ms), from the host. Averaging such launches gives a mean
that no launch has, and a spread that more blocks only slowly tame; an arm that lands in the slow
state more often than the other is an effect or a bias to investigate, not noise.

The check fits a two-component Gaussian mixture with one shared variance to a side's launch
means (log scale), by EM, against one Gaussian, and flags the states when the mixture is clearly
better: its BIC lower by more than `BIC_GAIN`, the centres more than `SEPARATION` shared standard
deviations apart (past 2 the mixture's density has two modes: two levels, not one skewed one),
and each state holding at least `MIN_STATE` launches. A shared variance, because with a variance
each a single outlying launch makes a state of its own, with a likelihood as large as its
variance is small.

The EM is written here: scipy has no mixture fit, and scikit-learn's (the usual one) would be a
large dependency for a one-dimensional fit of four numbers. tests/test_launch_states.py pins it
against a direct maximisation of the same likelihood with scipy's optimiser.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

# The states are looked for from this many launches: below, two states of MIN_STATE launches
# each cannot be told from one spread.
MIN_LAUNCHES = 8
MIN_STATE = 2
BIC_GAIN = 10.0
SEPARATION = 2.0
# The shared variance is kept above this share of the total: two clusters of identical values
# would otherwise give an unbounded likelihood.
VARIANCE_FLOOR = 1e-4
# EM steps from one start. Two clear states converge in a few dozen; one spread crawls for
# hundreds with nothing to find (200 launches took 2 s at 500), and stopping it early can only
# understate the mixture's likelihood, so never flags states that are not there.
_ITERATIONS = 100
STARTS = 4


@dataclass(frozen=True)
class Mixture:
    """The best two-state fit of some launch means (log scale)."""

    log_likelihood: float
    share_high: float  # the weight of the higher state
    low: float  # the lower state's centre (log)
    high: float  # the higher state's centre (log)
    variance: float  # the shared variance (log)
    one_log_likelihood: float  # one Gaussian's
    high_members: tuple[bool, ...]  # each launch, in the order given: more likely in the higher state


@dataclass(frozen=True)
class States:
    """Launch states of one side (or both pooled) and one metric."""

    launches: int
    bic_gain: float  # BIC of one Gaussian minus the mixture's: above BIC_GAIN, clearly two states
    separation: float  # the centres apart, in shared standard deviations
    flagged: bool
    slow_centre: float  # in the metric's unit (exp of the state's log centre)
    fast_centre: float
    slow_share: float  # the mixture weight of the slow state
    slow: tuple[bool, ...]  # each launch: in the slow state
    slow_launches: int = 0  # how many


def fit(values: Sequence[float]) -> Mixture | None:
    """The maximum-likelihood two-state mixture (shared variance) of `values` (logs), by EM from
    the likeliest splits of the sorted values; None without spread or with fewer than 2 * MIN_STATE values.

    Plain Python: a campaign's sides hold tens of launches, where numpy's per-call cost is most
    of the work.
    """
    x = list(values)
    n = len(x)
    mean = sum(x) / n if n else 0.0
    total = sum((v - mean) ** 2 for v in x) / n if n else 0.0
    if n < 2 * MIN_STATE or total == 0:
        return None
    floor = VARIANCE_FLOOR * total
    one = -0.5 * n * (math.log(2 * math.pi * total) + 1)
    order = sorted(x)
    starts: list[tuple[float, float, float, float, float]] = []
    for cut in range(1, n):
        lo, hi = order[:cut], order[cut:]
        if lo[-1] == hi[0]:
            continue
        m_lo, m_hi = sum(lo) / len(lo), sum(hi) / len(hi)
        within = (sum((v - m_lo) ** 2 for v in lo) + sum((v - m_hi) ** 2 for v in hi)) / n
        start = (cut / n, m_lo, m_hi, max(within, floor))
        starts.append((_log_likelihood(x, *start), *start))
    # EM from the STARTS splits whose own likelihood is highest (as k-means starts a mixture fit):
    # from every split, a side of 90 launches took seconds.
    best: tuple[float, float, float, float, float] | None = None
    for _ll, w, m_lo, m_hi, var in sorted(starts, reverse=True)[:STARTS]:
        found = _em(x, w, m_lo, m_hi, var, floor)
        if best is None or found[0] > best[0] + 1e-12:
            best = found
    if best is None:
        return None
    ll, w_low, mu_low, mu_high, var = best
    if mu_low > mu_high:
        w_low, mu_low, mu_high = 1 - w_low, mu_high, mu_low
    resp = _high_responsibility(x, 1 - w_low, mu_low, mu_high, var)
    return Mixture(ll, 1 - w_low, mu_low, mu_high, var, one, tuple(r > 0.5 for r in resp))


def _em(
    x: list[float], w: float, mu1: float, mu2: float, var: float, floor: float
) -> tuple[float, float, float, float, float]:
    """EM from one start: (log likelihood, weight of the first component, its centre, the
    second's, the shared variance)."""
    n = len(x)
    ll = -math.inf
    for _ in range(_ITERATIONS):
        r2 = _high_responsibility(x, 1 - w, mu1, mu2, var)
        n2 = sum(r2)
        n1 = n - n2
        if n1 <= 0 or n2 <= 0:
            break
        w = n1 / n
        mu1 = sum((1 - r) * v for r, v in zip(r2, x, strict=True)) / n1
        mu2 = sum(r * v for r, v in zip(r2, x, strict=True)) / n2
        spread = sum((1 - r) * (v - mu1) ** 2 + r * (v - mu2) ** 2 for r, v in zip(r2, x, strict=True))
        var = max(spread / n, floor)
        new = _log_likelihood(x, w, mu1, mu2, var)
        if new - ll < 1e-8:
            ll = max(ll, new)
            break
        ll = new
    return (_log_likelihood(x, w, mu1, mu2, var), w, mu1, mu2, var)


def _log_likelihood(x: list[float], w1: float, mu1: float, mu2: float, var: float) -> float:
    total = 0.0
    for v in x:
        a = math.log(w1) - (v - mu1) ** 2 / (2 * var) if w1 > 0 else -math.inf
        b = math.log(1 - w1) - (v - mu2) ** 2 / (2 * var) if w1 < 1 else -math.inf
        top = max(a, b)
        total += top + math.log(math.exp(a - top) + math.exp(b - top))
    return total - 0.5 * len(x) * math.log(2 * math.pi * var)


def _high_responsibility(x: list[float], w2: float, mu1: float, mu2: float, var: float) -> list[float]:
    """Each value's posterior probability of the second component."""
    if w2 <= 0:
        return [0.0] * len(x)
    if w2 >= 1:
        return [1.0] * len(x)
    la, lb = math.log(1 - w2), math.log(w2)
    out = []
    for v in x:
        # The log odds of the second component, kept finite: exp of its negative at most overflows to inf.
        odds = lb - la - ((v - mu2) ** 2 - (v - mu1) ** 2) / (2 * var)
        out.append(1 / (1 + math.exp(-odds)) if odds > -700 else 0.0)
    return out


def states(values: Sequence[float], *, higher_is_better: bool) -> States | None:
    """The launch states of these launch means (the metric's values, not logs); None below
    MIN_LAUNCHES launches, with a value <= 0, or without spread."""
    if len(values) < MIN_LAUNCHES or not all(math.isfinite(v) and v > 0 for v in values):
        return None
    m = fit([math.log(v) for v in values])
    if m is None:
        return None
    n = len(values)
    # BIC = -2 log L + parameters * log n: the mixture has 4 (a weight, two centres, a variance), one Gaussian 2.
    gain = (-2 * m.one_log_likelihood + 2 * math.log(n)) - (-2 * m.log_likelihood + 4 * math.log(n))
    separation = (m.high - m.low) / math.sqrt(m.variance)
    # The slow state: the lower centre for a metric where higher is better, the higher one otherwise.
    slow = m.high_members if not higher_is_better else tuple(not h for h in m.high_members)
    held = sum(m.high_members)
    flagged = gain > BIC_GAIN and separation > SEPARATION and min(held, n - held) >= MIN_STATE
    slow_centre, fast_centre = (m.low, m.high) if higher_is_better else (m.high, m.low)
    return States(
        launches=n,
        bic_gain=gain,
        separation=separation,
        flagged=flagged,
        slow_centre=math.exp(slow_centre),
        fast_centre=math.exp(fast_centre),
        slow_share=m.share_high if not higher_is_better else 1 - m.share_high,
        slow=slow,
        slow_launches=sum(slow),
    )


@dataclass(frozen=True)
class ArmShares:
    """Both arms' launches in the pooled states: how often each landed in the slow state."""

    slow: tuple[int, int]  # slow launches: this record's arm, the baseline's
    launches: tuple[int, int]
    p_value: float  # Fisher's exact test, two-sided: do the arms land in the slow state equally often?
    differ: bool  # p_value < alpha


def arm_shares(pooled: States, own_launches: int, alpha: float) -> ArmShares:
    """The pooled fit's slow launches split by arm (this record's first `own_launches`, then the
    baseline's), and Fisher's exact test of the 2x2 table."""
    own_slow = sum(pooled.slow[:own_launches])
    base_n = pooled.launches - own_launches
    base_slow = sum(pooled.slow[own_launches:])
    p = fisher_exact(own_slow, own_launches, base_slow, base_n)
    return ArmShares((own_slow, base_slow), (own_launches, base_n), p, p < alpha)


def fisher_exact(a: int, n1: int, b: int, n2: int) -> float:
    """Fisher's exact test, two-sided, of a out of n1 against b out of n2: the probability, given
    the margins, of a table no more likely than the one seen (scipy.stats.fisher_exact's rule,
    which builds do not import: docs/guide/performance.md; tests pin the two together)."""
    total = a + b
    size = math.comb(n1 + n2, total)

    def prob(x: int) -> float:
        return math.comb(n1, x) * math.comb(n2, total - x) / size

    seen = prob(a)
    lo, hi = max(0, total - n2), min(n1, total)
    # The same relative tolerance as scipy, so tables as likely as the one seen count with it.
    return min(1.0, sum(q for x in range(lo, hi + 1) if (q := prob(x)) <= seen * (1 + 1e-7)))
