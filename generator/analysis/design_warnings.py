"""`check`'s warnings about how a comparison's runs were made, read from the analysis' `Design`.

Each names the result and what the design lets through: arms run in blocks (`design-blocked`),
a side whose values move with time (`design-trend`), a side that is one launch (`design-one-launch`),
a paired result whose launches do not pair up, so it is compared unpaired (`design-unpaired`).
None stops a build; the record page and the summary row say the same.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generator.base.problems import Problem, rel

if TYPE_CHECKING:
    # Types only: `check` imports this module whether or not it analyses any record.
    from generator.analysis.records import Analysed, ResolvedResult

# code -> the hint `check` gives with it
_HINTS = {
    "design-blocked": "interleave the arms (run every arm once per block, in a random order) and measure again",
    "design-trend": "look for what drifted (clocks, host load, thermals); interleave the arms and measure again",
    "design-one-launch": "restart the server or process between repetitions: each launch is one observation",
    "design-unpaired": "list each block's runs together, as many a side, so that launch i pairs with launch i",
}


def design_problems(analysis: Analysed) -> list[Problem]:
    """A warning per design finding of each result of each record, at that result."""
    out: list[Problem] = []
    root = analysis.project.root
    for entry in analysis.records:
        rec = entry.file
        shown = rel(rec.path, root)
        for path, res in entry.placed_results():
            # Looked up only for a result warned about: a file's positions cost a second parse.
            out += [
                Problem(
                    shown,
                    *rec.positions.of(path),
                    code,
                    f"result `{res.result.label}`: {text}",
                    _HINTS[code],
                    severity="warning",
                )
                for code, text in findings(res)
            ]
    return out


def findings(res: ResolvedResult) -> list[tuple[str, str]]:
    """(code, words) for each design finding of one compared result."""
    d = res.design
    if not any(c is not None for c in res.comparisons.values()):
        return []
    out: list[tuple[str, str]] = []
    if d.blocked:
        out.append(("design-blocked", "run in blocks, not interleaved: drift can look like an effect"))
    for side in d.trend:
        out.append(("design-trend", f"{side}'s `{d.trend_metric}` moves with its start times: {d.trend_reading}"))
    for side in d.single_launch:
        out.append(("design-one-launch", f"{side}: one launch: a single shot, whatever its runs"))
    if d.unpaired_why is not None:
        seq = " (not the confidence sequence it was run under)" if res.result.sequential is not None else ""
        out.append(
            (
                "design-unpaired",
                f"paired by position, but {d.unpaired_why}: compared unpaired, Welch's t on launch means{seq}",
            )
        )
    return out
