"""What is said beside a record's headline, wherever it is summarised (issue #36).

The regressions beyond min_effect a `better` must not hide, the guardrails not held (broken or
not shown), the record's own expected load beside the load it is ranked at, and what a record
without a primary comparison did measure. Worded here once; the page header, the summary, the
home page, the road and the report read them.
"""

from __future__ import annotations

from generator.analysis.campaign import Primary, RecordAnalysis, Regression
from generator.model import metrics
from generator.model.quantity import fmt_percent


def regressions_text(found: tuple[Regression, ...], vocabulary: metrics.Vocabulary = metrics.BUILTIN) -> str | None:
    """ "worse elsewhere: Time to first token +54.4% (batch 8), +6.2% (batch 32)": every regression
    beyond min_effect of a record, by metric, so a `better` never hides one."""
    if not found:
        return None
    by_metric: dict[str, list[str]] = {}
    for g in found:
        by_metric.setdefault(g.metric, []).append(f"{fmt_percent(g.change_percent)} ({g.label})")
    parts = []
    for name, changes in by_metric.items():
        metric = vocabulary.lookup(name)
        parts.append(f"{metric.label if metric else name} {', '.join(changes)}")
    return "worse elsewhere: " + "; ".join(parts)


def guardrails_text(primary: Primary) -> str | None:
    """The guardrails that are not held, by state: broken (ranks with `worse`) or not shown (neither)."""
    parts = []
    for state, found in (("broken", primary.broken_guardrails), ("not shown", primary.unshown_guardrails)):
        if found:
            each = ", ".join(
                (f"{g.metric} {fmt_percent(g.change_percent)}" if g.change_percent is not None else g.metric)
                + (
                    f" (at this spread only a change beyond {fmt_percent(g.smallest_breach)} could have shown it)"
                    if state == "not shown" and g.smallest_breach is not None
                    else ""
                )
                for g in found
            )
            parts.append(f"guardrail {state}: {each}")
    return "; ".join(parts) or None


def own_load_text(primary: Primary) -> str | None:
    """The record's own expected load beside the load it is ranked at (the goal's), never instead."""
    if primary.expected_load is None:
        return None
    _label, concurrency, c = primary.expected_load
    change = fmt_percent(c.change_percent) if c.change_percent is not None else "no percent"
    interval = ""
    if c.ci_low_percent is not None and c.ci_high_percent is not None:
        interval = f" ({fmt_percent(c.ci_low_percent)} to {fmt_percent(c.ci_high_percent)})"
    return f"at its own expected load, concurrency {concurrency}: {change}{interval}, {c.decision}"


def unranked_text(ra: RecordAnalysis, vocabulary: metrics.Vocabulary = metrics.BUILTIN) -> str:
    """Why a record without evidence as reported has no primary comparison, and what it did measure:
    "no output_throughput in this run; decode_throughput +21.6%, better", or "no baseline"."""
    name = ra.primary_metric
    if name is None:
        return "no primary metric"
    if ra.unranked_why == "no baseline":
        return f"{name} measured, no baseline to compare it with"
    if ra.measured_instead is not None:
        other, label, c = ra.measured_instead
        change = fmt_percent(c.change_percent) if c.change_percent is not None else "no percent (baseline mean 0)"
        word = "unreplicated (single shot)" if c.decision == "unreplicated" else c.decision
        return f"no {name} in this run; {other} {change} ({label}), {word}"
    return f"{name} not measured"
