"""What is said beside a record's headline, wherever it is summarised (issue #36).

The regressions beyond min_effect a `better` must not hide, the guardrails not held (broken or
not shown), the record's own expected load beside the load it is ranked at, and what a record
without a primary comparison did measure. Worded here once; the page header, the summary, the
home page, the road and the report read them.
"""

from __future__ import annotations

from generator.analysis.campaign import Primary, RecordAnalysis, Regression
from generator.analysis.records import Decider, Guardrail
from generator.model import metrics
from generator.model.quantity import fmt_number, fmt_percent


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


def _label(vocabulary: metrics.Vocabulary, name: str) -> str:
    metric = vocabulary.lookup(name)
    return metric.label if metric else name


def one_decider_text(d: Decider, vocabulary: metrics.Vocabulary, *, beside_variant: bool = False) -> str:
    """One `decided_by` read on its numbers, with its note."""
    c = d.comparison
    if c is not None and c.change_percent is not None:
        seen = fmt_percent(c.change_percent)
        if c.ci_low_percent is not None and c.ci_high_percent is not None:
            seen += f" (interval {fmt_percent(c.ci_low_percent)} to {fmt_percent(c.ci_high_percent)})"
        seen += f", {c.decision}"
    elif isinstance(d.reported_change, tuple):
        seen = f"{fmt_number(d.reported_change[0])}% to {fmt_number(d.reported_change[1])}% as reported"
    elif d.reported_change is not None:
        seen = f"{fmt_percent(d.reported_change)} as reported"
    else:
        seen = "not compared"
    named = d.variant and d.owner is None and not beside_variant
    where = f"variant {d.variant}'s result {d.result}" if named else f"result {d.result}"
    text = f"{_label(vocabulary, d.metric)} in {where}: {seen}"
    if d.stated is not None:
        text += f"; stated {fmt_percent(d.stated)}" + (
            "" if d.agrees is not False else ", which the numbers do not give"
        )
    elif d.agrees is False:
        text += "; the numbers went the other way"
    return f"{text} ({d.note})" if d.note else text


def variant_reasons(ra: RecordAnalysis, vocabulary: metrics.Vocabulary = metrics.BUILTIN) -> list[tuple[str, str]]:
    """Why each variant came out as it did, beside it: its `reason` as written, the `decided_by`
    that names it (its own, or the record's naming it), and the guardrails its own results broke
    (read on every variant, not only the retained one). (label, text) per variant with any."""
    out: list[tuple[str, str]] = []
    for v, guards in zip(
        ra.file.record.variants, ra.variant_guardrails or [()] * len(ra.file.record.variants), strict=True
    ):
        parts = [v.reason] if v.reason else []
        parts += [
            "decided by " + one_decider_text(d, vocabulary, beside_variant=True)
            for d in ra.deciders
            if v.label in (d.owner, d.variant)
        ]
        broken = [g for g in guards if g.state == "broken"]
        if broken:
            parts.append("guardrail broken: " + ", ".join(_guardrail_at(g, vocabulary) for g in broken))
        if parts:
            out.append((v.label, "; ".join(parts)))
    return out


def _guardrail_at(g: Guardrail, vocabulary: metrics.Vocabulary) -> str:
    change = f" {fmt_percent(g.change_percent)}" if g.change_percent is not None else ""
    stated = " as reported" if g.reported else ""
    return f"{_label(vocabulary, g.metric)}{change}{stated} ({g.result})"
