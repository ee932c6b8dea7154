"""Reasons beside the primary comparison: guardrails read across a record, and the metric it says decided it.

A guardrail is read on every result of the record's headline that measures its metric, not
only on the primary comparison's result: a TTFT measured at 124K in a second result of the
record is evaluated there too. A change the source only reported (`reported_change`) is read
at face value: beyond the margin it breaks the guardrail; within it, it shows nothing, since a
reported number has no interval. A mean without spread is read the same way (its comparison
has no interval). Kept apart from `campaign.py` so the states a reading takes and where it is
read can change separately.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from generator.analysis.ranking import smallest_breach
from generator.analysis.records import Decider, Guardrail, ResolvedResult
from generator.analysis.stats import Comparison, guardrail_state
from generator.model import metrics
from generator.model.record import DecidedBy, Record
from generator.model.result import Range, stated_percent

# A write-up rounds its percents: a stated change agrees with the numbers within this many points.
STATED_TOLERANCE = 1.0


def measured_reading(name: str, margin: float, c: Comparison, label: str) -> Guardrail:
    """A guardrail read on a computed comparison, in one of three states (`stats.guardrail_state`):
    held (non-inferiority shown), broken (a regression beyond the margin shown), not shown."""
    state = guardrail_state(c, margin)
    held = {"held": True, "broken": False}.get(state)
    breach = smallest_breach(c, margin) if state == "not shown" else None
    return Guardrail(
        name,
        margin,
        c.change_percent,
        c.eq_low_percent,
        c.eq_high_percent,
        held,
        label,
        state=state,
        smallest_breach=breach,
    )


def reported_reading(name: str, margin: float, change: float | Range, higher_is_better: bool, label: str) -> Guardrail:
    """A guardrail read on a change the source reported: it can break, never hold (no interval).

    The write-up's own number is its author's statement of a regression: beyond the margin at
    its better end too, it is broken as stated; otherwise nothing is shown either way.
    """
    ends = (change, change) if isinstance(change, float | int) else (change.min, change.max)
    best = max(e if higher_is_better else -e for e in ends)
    state = "broken" if best < -margin else "not shown"
    point = float(change) if isinstance(change, float | int) else None
    low, high = (None, None) if isinstance(change, float | int) else (change.min, change.max)
    held = False if state == "broken" else None
    return Guardrail(name, margin, point, low, high, held, label, reported=True, state=state)


def margins(record: Record, campaign: Mapping[str, float]) -> Mapping[str, float]:
    """The record's guardrails (metric -> margin percent): its own `expected.guardrails`, else the campaign's."""
    expected = record.expected
    return expected.guardrails if expected is not None and expected.guardrails is not None else campaign


def guardrails_across(
    results: Sequence[ResolvedResult],
    first: int,
    primary_metric: str,
    margins: Mapping[str, float],
    vocabulary: metrics.Vocabulary,
) -> tuple[Guardrail, ...]:
    """Each guardrail read on every result that measures it, the primary comparison's result first.

    A guardrail no result measures is one reading, `not measured`, with no result.
    """
    order = [results[first], *(r for i, r in enumerate(results) if i != first)] if results else []
    out: list[Guardrail] = []
    for name, margin in margins.items():
        if name == primary_metric:
            continue
        found: list[Guardrail] = []
        for res in order:
            c = res.comparisons.get(name)
            given = res.result.reported_change.get(name)
            reported = stated_percent(given) if given is not None else None
            metric = vocabulary.lookup(name)
            if c is not None:
                found.append(measured_reading(name, margin, c, res.result.label))
            elif reported is not None and metric is not None:
                found.append(reported_reading(name, margin, reported, metric.higher_is_better, res.result.label))
        out += found or [Guardrail(name, margin, None, None, None, None)]
    return tuple(out)


def variant_guardrails(
    by_variant: Sequence[Sequence[ResolvedResult]],
    primary_metric: str | None,
    margins: Mapping[str, float],
    vocabulary: metrics.Vocabulary,
) -> tuple[tuple[Guardrail, ...], ...]:
    """Each variant's guardrails read on its own results, as the retained one's are: a rejected
    arm whose TTFT broke its guardrail says so beside it. A variant without results reads none."""
    return tuple(guardrails_across(rs, 0, primary_metric or "", margins, vocabulary) if rs else () for rs in by_variant)


def _find(
    record: Record, own: Sequence[ResolvedResult], by_variant: Sequence[Sequence[ResolvedResult]], variant: str | None
) -> list[ResolvedResult]:
    if variant is None:
        return list(own)
    return [r for v, rs in zip(record.variants, by_variant, strict=True) if v.label == variant for r in rs]


# A variant's outcome read as the status it decided, for `_agrees`.
_OUTCOME_STATUS = {"retained": "adopted", "rejected": "rejected"}


def deciders(
    record: Record, own: Sequence[ResolvedResult], by_variant: Sequence[Sequence[ResolvedResult]]
) -> tuple[Decider, ...]:
    """Every `decided_by` of the record (its own, one mapping or a list, then each variant's), read
    on the numbers of the result each names; one whose result is not there is left out (`check`
    reports the reference)."""
    out: list[Decider] = []
    for i, d in enumerate(record.deciders):
        at: tuple[str | int, ...] = ("decided_by",) if isinstance(record.decided_by, DecidedBy) else ("decided_by", i)
        found = _read(d, _find(record, own, by_variant, d.variant), record.status, d.variant, None, at)
        out += [found] if found is not None else []
    for k, (v, rs) in enumerate(zip(record.variants, by_variant, strict=True)):
        status = _OUTCOME_STATUS.get(v.outcome, "")
        for i, d in enumerate(v.deciders):
            at = ("variants", k, "decided_by") + (() if isinstance(v.decided_by, DecidedBy) else (i,))
            found = _read(d, rs, status, v.label, v.label, at)
            out += [found] if found is not None else []
    return tuple(out)


def _read(
    d: DecidedBy,
    results: Sequence[ResolvedResult],
    status: str,
    variant: str | None,
    owner: str | None,
    at: tuple[str | int, ...],
) -> Decider | None:
    res = next((r for r in results if r.result.label == d.result), None)
    if res is None:
        return None
    c = res.comparisons.get(d.metric)
    given = res.result.reported_change.get(d.metric)
    reported: float | tuple[float, float] | None = None
    if given is not None:
        percent = stated_percent(given)
        reported = (percent.min, percent.max) if isinstance(percent, Range) else float(percent)
    return Decider(
        d.metric,
        d.result,
        variant,
        c,
        reported,
        d.change,
        _agrees(status, d.change, c, reported),
        note=d.note,
        owner=owner,
        at=at,
    )


def _agrees(
    status: str,
    stated: float | None,
    c: Comparison | None,
    reported: float | tuple[float, float] | None,
) -> bool | None:
    """Whether the numbers bear out the stated change and the status it decided (None: nothing to check)."""
    if c is not None and (status, c.decision) in (("rejected", "better"), ("adopted", "worse")):
        # The metric said to decide the record went the other way, by the rule itself.
        return False
    if stated is None:
        return None
    if c is not None and c.change_percent is not None:
        return abs(c.change_percent - stated) <= STATED_TOLERANCE
    if isinstance(reported, tuple):
        return reported[0] - STATED_TOLERANCE <= stated <= reported[1] + STATED_TOLERANCE
    if reported is not None:
        return abs(reported - stated) <= STATED_TOLERANCE
    return None
