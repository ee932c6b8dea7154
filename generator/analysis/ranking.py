"""Reading comparisons: a guardrail's three states, Holm's adjusted p-values and the ranking key."""

from __future__ import annotations

import math
from collections.abc import Sequence
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

# Within a tier, most promising first (docs/guide/decisions.md, "Ranking"). "not settled" holds
# single shots and replicated inconclusive results alike, by point change: a single +0.1% run
# once ranked above n = 5 at +30% because single shots had a group of their own.
GROUPS = (
    "better",
    "not settled",
    "no-change",
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
    if c.decision in ("unreplicated", "inconclusive"):
        return "not settled"
    return c.decision


def rank_key(c: Comparison | None, *, guardrail_broken: bool = False) -> tuple[int, float]:
    """Sort key within a tier (ascending = shown first).

    `better` by the interval's oriented low end, highest first; not settled (single shots and
    inconclusive, each marked where shown) by the point change, highest first; no-change
    together; worse by the interval's better end, least bad first; a broken guardrail goes with
    worse. Without a number (a zero baseline mean), last in its group; the caller's next key
    decides ties.
    """
    group = rank_group(c, guardrail_broken=guardrail_broken)
    index = GROUPS.index(group)
    if c is None or group == "no-change":
        return (index, 0.0)
    if group == "better":
        value = c.gain_low_percent
    elif group == "worse":
        value = c.gain_high_percent if c.gain_high_percent is not None else c.gain_percent
    else:
        value = c.gain_percent
    return (index, math.inf if value is None else -value)


# The author's standing, before the evidence within a tier (docs/guide/decisions.md, "Ranking"):
# the configuration the campaign recommends above an undecided patch however large its point
# change, and an adopted record since overtaken ("historical") below the open ones. A record
# without a standing sits between.
STANDING_ORDER = {"recommended": 0, "latest": 1, None: 2, "undecided": 2, "historical": 3}


def standing_rank(standing: str | None) -> int:
    """The sort key component of a record's standing (ascending = shown first)."""
    return STANDING_ORDER.get(standing, 2)
