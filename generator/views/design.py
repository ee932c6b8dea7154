"""How a result's runs were made, as its page says it (the analysis' `Design`, in words)."""

from __future__ import annotations

import datetime as dt

from generator.analysis.design import SIDES, Design
from generator.model.quantity import fmt_number
from generator.views.markdown import code

# Up to this many runs a side, each run's start time is listed (as the values are).
_LISTED = 10


def _span(span: tuple[str, str] | None) -> str | None:
    if span is None:
        return None
    first, last = (dt.datetime.fromisoformat(s).strftime("%Y-%m-%d %H:%M:%S") for s in span)
    return f"{first} to {last} UTC" if first != last else f"{first} UTC"


def design_lines(d: Design, compared: bool, names: tuple[str, str] = SIDES) -> list[str]:
    """Markdown list items (without the dash), in the order a reader needs them; `names` calls
    the two sides (`compare` calls them candidate and baseline)."""
    out: list[str] = []
    spans = [_span(s) for s in d.spans]
    # Without a comparison there is one side, the result's own: no side is named.
    sides = names if compared else ("", "")
    called = dict(zip(SIDES, names, strict=True))
    if spans[0] or spans[1]:
        parts = [f"{side} {text}".strip() for side, text in zip(sides, spans, strict=True) if text]
        order = ""
        if compared and spans[0] and spans[1]:
            order = ", one side after the other" if d.blocked else ", interleaved"
        out.append("Runs started: " + "; ".join(parts) + order + ".")
    for side, starts in zip(sides, d.starts, strict=True):
        if 1 < len(starts) <= _LISTED:
            times = ", ".join(dt.datetime.fromisoformat(t).strftime("%H:%M:%S") for t in starts)
            whose = f", {side}" if side else ""
            out.append(f"Start of each run{whose} (UTC, in the order of its values): {times}.")
    if d.pair_gap_s is not None:
        low, high = (fmt_number(round(x, 1)) for x in d.pair_gap_s)
        out.append(f"The runs of a pair started {low} to {high} s apart: drift faster than that is not paired away.")
    if not compared:
        return out
    if d.blocked:
        out.append(
            "**Run in blocks, not interleaved: drift can look like an effect.** Every run of one side "
            "started before every run of the other, so anything that drifted meanwhile (clocks, host load, "
            "caches) is in the change."
        )
    for side in d.trend:
        out.append(
            f"**A clear time trend** in {code(d.trend_metric or '')} on {called[side]}'s side (Kendall's tau against "
            "the start times, two-sided at half the campaign's alpha a side, so at most alpha for the two): "
            f"{d.trend_reading}."
        )
    for side in d.single_launch:
        out.append(
            f"**One launch: a single shot.** {called[side].capitalize()}'s runs all come from one launch: runs of "
            "one launch vary together, so they are one observation, and the comparison cannot say "
            "`better` or `worse` on them alone."
        )
    out.extend(_launch_lines(d))
    if d.shared_launch is not None:
        out.append(
            f"Both sides ran inside one launch ({code(d.shared_launch)}), interleaved: the comparison holds "
            "for that launch; how much the change varies from one launch to the next is not measured."
        )
    for side in d.may_share:
        out.append(
            f"Launches not recorded, and {called[side]}'s runs all come from one file: they may share a launch. If "
            "they do, they are one observation rather than one per run, and the interval is narrower than "
            "the evidence allows."
        )
    return out


def _launch_lines(d: Design) -> list[str]:
    """What the comparison counted when runs share launches, and a pairing it had to drop."""
    out: list[str] = []
    if d.by_launch is not None and d.launch_pairs:
        out.append(
            f"Compared on launch means, paired by block: {d.by_launch[0]} block(s), the runs of each launch "
            "averaged into one observation (runs of one launch are not independent repetitions), each "
            "launch's mean paired with its block partner's."
        )
    elif d.by_launch is not None:
        own, base = d.by_launch
        out.append(
            f"Compared on launch means: {own} launch(es) against {base}, the runs of each launch averaged "
            "into one observation (runs of one launch are not independent repetitions)."
        )
    if d.unpaired_why is not None:
        out.append(
            f"**Pairing dropped.** The result pairs its runs by position, but {d.unpaired_why}: it is "
            "compared unpaired (Welch's t on launch means), and a sequential run's confidence sequence "
            "is not read."
        )
    return out
