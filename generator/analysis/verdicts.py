"""A record's status against its evidence: `check` warns when the two disagree.

`adopted` says the change helps; `rejected` says it does not. When the record's own
primary-metric decision (from the analysis, never recomputed) says the opposite, the status
or the evidence is wrong, and a reader of the summary would be misled either way. Only
decided evidence counts: `unreplicated` and `inconclusive` results contradict nothing.
"""

from __future__ import annotations

from generator.analysis.campaign import Analysis
from generator.base.problems import Problem, rel
from generator.model.quantity import fmt_percent

# status -> the decisions that contradict it
_CONTRADICTS: dict[str, tuple[str, ...]] = {
    "adopted": ("worse", "no-change"),
    "rejected": ("better",),
}


def status_problems(analysis: Analysis) -> list[Problem]:
    """A warning for each record whose status contradicts its primary metric's decision."""
    out: list[Problem] = []
    root = analysis.project.root
    for entry in analysis.records:
        rec, primary = entry.file, entry.primary
        status = rec.record.status
        if primary is None or primary.comparison.decision not in _CONTRADICTS.get(status, ()):
            continue
        c = primary.comparison
        change = "" if c.change_percent is None else f" ({fmt_percent(c.change_percent)}, n={c.n} vs {c.baseline_n})"
        line, col = rec.positions.of(("status",))
        out.append(
            Problem(
                rel(rec.path, root),
                line,
                col,
                "status-contradicts-evidence",
                f"status `{status}` contradicts the evidence: `{primary.metric}` in result `{primary.label}` "
                f"is `{c.decision}`{change}",
                "change the status, or measure again and say in `verdict` why the evidence is set aside",
                severity="warning",
            )
        )
    return out
