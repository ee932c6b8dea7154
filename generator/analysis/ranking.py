"""Reading comparisons: a guardrail's three states, Holm's adjusted p-values and the ranking key."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from generator.analysis.comparison import Comparison

GuardrailState = Literal["held", "broken", "not shown", "not measured"]


def guardrail_state(c: Comparison | None, margin: float) -> GuardrailState:
    """A guardrail on `c` (may not get worse by more than `margin` percent), in one of three states.

    Both tests read the 1 - 2 alpha interval, oriented (+ = better), each one-sided at alpha:
    ``held`` when its worse end stays within the margin (non-inferiority shown); ``broken`` when
    its better end lies beyond the margin (a regression beyond the margin shown); ``not shown``
    when neither (a single shot, or an interval across the margin: no evidence either way).
    Calling "not shown" broken called a record that left its guardrail untouched broken 60% of
    the time at a 5% spread (issue #36). ``not measured``: no comparison of the metric.
    """
    if c is None:
        return "not measured"
    worse_end, better_end = c.gain_eq_low_percent, c.gain_eq_high_percent
    if worse_end is None or better_end is None:
        return "not shown"
    if worse_end >= -margin:
        return "held"
    if better_end < -margin:
        return "broken"
    return "not shown"


def smallest_breach(c: Comparison, margin: float) -> float | None:
    """The smallest change (raw sign, in percent) that data of this spread could have shown as a
    broken guardrail: the point at which the 1 - 2 alpha interval, as wide as this one on the log
    scale, would lie wholly beyond the margin. None without an interval (a single shot shows none).

    A "not shown" guardrail said nothing of what it could have seen (issue 50: 87% of readings at
    a 15% spread and n = 5 were "not shown"); this is that, at the spread measured.
    """
    low, high = c.eq_low_percent, c.eq_high_percent
    if low is None or high is None or c.scale != "ratio" or low <= -100 or high <= -100 or margin >= 100:
        return None
    half = (math.log1p(high / 100) - math.log1p(low / 100)) / 2
    if c.higher_is_better:
        return 100 * math.expm1(math.log1p(-margin / 100) - half)
    return 100 * math.expm1(math.log1p(margin / 100) + half)


@dataclass(frozen=True)
class Multiplicity:
    """How many decisions a record's results make at once, which the record page states.

    Each metric is decided on its own at alpha, with no correction across metrics: with k
    metrics compared in one result, a change that moved none of them reads `better` or `worse`
    on at least one with probability up to 1 - (1 - alpha)^k (independent metrics; less when they
    move together): about 23% for five. The record's decision reads its primary metric alone.
    """

    metrics: int
    family_percent: float  # 100 (1 - (1 - alpha)^metrics)
    # A result of the record is sequential: it has no p-value, so Holm's correction (which steps
    # down fixed-n p-values) does not apply to it.
    sequential: bool


def multiplicity(results: Iterable[Iterable[Comparison | None]], alpha: float) -> Multiplicity | None:
    """The most metrics one result decides (each able to say better or worse), and the chance
    that a null change reads better or worse on at least one; None when no result decides two."""
    most, sequential = 0, False
    for comparisons in results:
        deciding = [c for c in comparisons if c is not None and c.decision != "unreplicated"]
        most = max(most, len(deciding))
        sequential = sequential or any(c.test == "sequence" for c in deciding)
    if most < 2:
        return None
    return Multiplicity(most, 100 * (1 - (1 - alpha) ** most), sequential)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given (each at most 1)."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    k = len(p_values)
    out = [1.0] * k
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (k - rank) * p_values[i]))
        out[i] = running
    return out


# --- ranking ---------------------------------------------------------------------------------------

# Within a tier, most promising first (docs/guide/decisions.md, "Ranking"): by evidence, not by
# the point alone. "not settled" holds replicated inconclusive results, by the worse end of their
# interval, then single shots that did not go the wrong way, by their point; a single shot that
# went the wrong way ("single-shot regression") ranks below a settled no-change (issue 50: a
# single shot at +31% outranked n = 5 vs 5 at +28.2% [-5.3, +73.5], and a -40% single shot
# ranked above a settled no-change).
GROUPS = (
    "better",
    "not settled",
    "no-change",
    "single-shot regression",
    "worse",
    "reported",
    "not measured",
)


def rank_group(c: Comparison | None, *, guardrail_broken: bool = False) -> str:
    """The ranking group of a comparison (one of `GROUPS`)."""
    if c is None:
        return "not measured"
    if guardrail_broken:
        return "worse"
    if c.decision == "unreplicated":
        gain = c.gain_percent
        return "single-shot regression" if gain is not None and gain < 0 else "not settled"
    if c.decision == "inconclusive":
        return "not settled"
    return c.decision


def rank_key(c: Comparison | None, *, guardrail_broken: bool = False) -> tuple[int, float, float]:
    """Sort key within a tier (ascending = shown first): (group, part, number).

    `better` by the interval's oriented low end, highest first. Not settled: replicated
    inconclusive results first, by the interval's oriented worse end (the lower bound; the upper
    for lower-is-better), highest first, then single shots by their point change: a single shot
    has no interval, so it says less than any replicated result whatever its point. No-change
    together; single-shot regressions by their point, least bad first; worse by the interval's
    better end, least bad first; a broken guardrail goes with worse. Without a number (a zero
    baseline mean), last in its part; the caller's next key decides ties.
    """
    group = rank_group(c, guardrail_broken=guardrail_broken)
    index = GROUPS.index(group)
    if c is None or group == "no-change":
        return (index, 0, 0.0)
    part = 0
    if group == "better":
        value = c.gain_low_percent
    elif group == "worse":
        value = c.gain_high_percent if c.gain_high_percent is not None else c.gain_percent
    elif c.decision == "unreplicated":
        part, value = (1 if group == "not settled" else 0), c.gain_percent
    else:
        value = c.gain_low_percent if c.gain_low_percent is not None else c.gain_percent
    return (index, part, math.inf if value is None else -value)


# The author's standing, before the evidence within a tier (docs/guide/decisions.md, "Ranking"):
# the configuration the campaign recommends above an undecided patch however large its point
# change, and an adopted record since overtaken ("historical") below the open ones. A record
# without a standing sits between.
STANDING_ORDER = {"recommended": 0, "latest": 1, None: 2, "undecided": 2, "historical": 3}


def standing_rank(standing: str | None) -> int:
    """The sort key component of a record's standing (ascending = shown first)."""
    return STANDING_ORDER.get(standing, 2)
