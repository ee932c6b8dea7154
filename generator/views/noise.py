"""A result's noise model as its page says it (the analysis' `Noise`, in words and tables).

Nothing here computes: every number is a field of `analysis.noise_model` (percents included).
"""

from __future__ import annotations

from generator.analysis.comparison import Comparison
from generator.analysis.noise import BLOCKS_CAP, SEQUENTIAL_CAP
from generator.analysis.noise_model import ArmNoise, MetricNoise, Noise, Settle
from generator.model import metrics
from generator.model.quantity import fmt_number, fmt_percent
from generator.views.markdown import cell, code

SLOW_NOTE = "a difference in shares is an effect or a bias to investigate, not noise to average away"


def _parts(arm: ArmNoise) -> str:
    c = arm.components
    if c is None or arm.launch_sd_percent is None or arm.within_sd_percent is None:
        return "one run per launch: not split" if arm.runs == arm.launches else "not estimable"
    return f"{arm.launch_sd_percent:.1f}% / {arm.within_sd_percent:.1f}% (ICC {c.icc:.2f})"


def _drift(arm: ArmNoise) -> str:
    d = arm.drift
    if d is None:
        return "fewer than 5 launches"
    text = (
        f"{fmt_percent(d.per_launch_percent)} ({fmt_percent(d.ci_low_percent)} to "
        f"{fmt_percent(d.ci_high_percent)}), p = {d.p_value:.2g}"
    )
    return f"**{text}**" if d.clear else text


def _states(arm: ArmNoise, unit: str) -> str:
    s = arm.states
    if s is None:
        return "fewer than 8 launches"
    if not s.flagged:
        return "one state"
    return (
        f"**two: {s.slow_launches} of {s.launches} slow** ({fmt_number(s.slow_centre)} against "
        f"{fmt_number(s.fast_centre)} {unit})"
    )


def _label(name: str, vocabulary: metrics.Vocabulary) -> tuple[str, str]:
    m = vocabulary.lookup(name)
    return (m.label, m.unit) if m is not None else (name, "")


def noise_table(noise: Noise, vocabulary: metrics.Vocabulary) -> list[str]:
    """The table of each metric's sides: launches, spreads, drift and states; markdown lines."""
    lines = [
        "| Metric | Side | Launches (runs) | Spread between launches | Launch / within-launch sd | "
        "Drift per launch | Launch states |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for m in noise.metrics:
        label, unit = _label(m.metric, vocabulary)
        for arm in m.arms:
            lines.append(
                f"| {cell(label)} | {arm.side} | {arm.launches} ({arm.runs}) | {arm.spread_percent:.1f}% | "
                f"{_parts(arm)} | {_drift(arm)} | {_states(arm, unit)} |"
            )
    return lines


def _pairing(m: MetricNoise, label: str) -> str | None:
    p = m.pairing
    if p is None:
        return None
    r = f"correlate r = {p.correlation:.2f}" if p.correlation is not None else "are too few to correlate"
    return (
        f"{label}: across {p.blocks} blocks the arms' launch means {r}; the blocks' differences vary by "
        f"{p.block_sd_percent:.1f}% (what the comparison's interval is made of)."
    )


def _shares(m: MetricNoise, label: str, unit: str) -> str | None:
    s, pooled = m.shares, m.pooled_states
    if s is None or pooled is None:
        return None
    verdict = "the arms differ" if s.differ else "no difference shown"
    return (
        f"**Launch states** in {label}: the launches fall into a slow state (about "
        f"{fmt_number(pooled.slow_centre)} {unit}) and a fast one (about {fmt_number(pooled.fast_centre)} "
        f"{unit}). This record's arm landed slow in {s.slow[0]} of {s.launches[0]} launches, the baseline's in "
        f"{s.slow[1]} of {s.launches[1]} (Fisher's exact test, p = {s.p_value:.2g}: {verdict}); {SLOW_NOTE}."
    )


def _hours(hours: float | None) -> str:
    return f" (about {hours:.1f} h)" if hours is not None else ""


def settle_text(s: Settle, c: Comparison | None, label: str) -> str:
    """What an inconclusive result's design could see, and what would settle it."""
    design = "sequential design" if s.sequential else "design"
    sees = (
        f"this {design} ({s.blocks} blocks) sees {fmt_percent(s.detectable_percent)} or more at 80% power"
        if s.detectable_percent is not None
        else f"this {design} ({s.blocks} blocks) can detect no change at 80% power"
    )
    interval = ""
    if c is not None and c.ci_low_percent is not None and c.ci_high_percent is not None:
        interval = f"; the interval is {fmt_percent(c.ci_low_percent)} to {fmt_percent(c.ci_high_percent)}"
    fixed = (
        f"{s.blocks_fixed} blocks fixed{_hours(s.hours_fixed)}"
        if s.blocks_fixed is not None
        else f"more than {BLOCKS_CAP:,} blocks fixed"
    )
    looked = (
        f"{s.blocks_sequential} sequential{_hours(s.hours_sequential)}"
        if s.blocks_sequential is not None
        else f"more than {SEQUENTIAL_CAP:,} sequential"
    )
    pace = f", at {s.seconds_per_block:.0f} s a block" if s.seconds_per_block is not None else ""
    head = f"**What this design could see** ({label}, inconclusive): {sees}{interval}."
    if not s.min_effect:
        # No min_effect: any change at all is what would settle it, which no number of blocks reaches.
        return head
    return (
        f"{head} To settle a change of {fmt_number(s.min_effect)}% (min_effect) at the blocks' spread "
        f"measured here: {fixed}, {looked}{pace}."
    )


def noise_lines(noise: Noise, comparisons: dict[str, Comparison | None], vocabulary: metrics.Vocabulary) -> list[str]:
    """The list items below the table: pairing, launch states shared by the arms, what would settle it."""
    out: list[str] = []
    for m in noise.metrics:
        label, unit = _label(m.metric, vocabulary)
        named = f"{label} ({code(m.metric)})"
        for line in (_pairing(m, named), _shares(m, named, unit)):
            if line is not None:
                out.append(line)
        if m.settle is not None:
            out.append(settle_text(m.settle, comparisons.get(m.metric), named))
    return out
