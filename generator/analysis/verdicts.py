"""A record's status against its evidence: `check` warns when the two disagree.

`adopted` says the change helps; `rejected` says it does not. When the record's own
primary-metric decision (from the analysis, never recomputed) says the opposite, the status
or the evidence is wrong, and a reader of the summary would be misled either way. Only
decided evidence counts: `unreplicated` and `inconclusive` results contradict nothing.
"""

from __future__ import annotations

from generator.analysis.campaign import Analysis, ResolvedResult
from generator.base.problems import Problem, rel
from generator.model.quantity import fmt_number, fmt_percent

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


def evidence_problems(analysis: Analysis) -> list[Problem]:
    """Warnings about the evidence itself: comparisons not made, spreads, coarse sweeps, guardrails.

    Each names the comparison and why, at the result it is about; none stops a build.
    """
    out: list[Problem] = []
    root = analysis.project.root
    for entry in analysis.records:
        rec = entry.file
        shown = rel(rec.path, root)
        placed: list[tuple[tuple[str | int, ...], ResolvedResult]] = [
            (("results", i), r) for i, r in enumerate(entry.results)
        ]
        placed += [
            (("variants", k, "results", i), r) for k, rs in enumerate(entry.variant_results) for i, r in enumerate(rs)
        ]
        for path, res in placed:
            line, col = rec.positions.of(path)
            label = res.result.label
            skipped = [n for n in res.notes if n.startswith("Not compared: the baseline result")]
            for note in skipped:
                out.append(
                    Problem(
                        shown,
                        line,
                        col,
                        "comparison-not-made",
                        f"result `{label}` is not compared: {note.removeprefix('Not compared: ').rstrip('.')}",
                        "give the result its own `baseline` measured on its workload",
                        severity="warning",
                    )
                )
            for name, c in res.comparisons.items():
                if c is not None and c.spread_flag:
                    out.append(
                        Problem(
                            shown,
                            line,
                            col,
                            "spread-beyond-one-configuration",
                            f"`{name}` in result `{label}`: {c.spread_flag}, more than one configuration "
                            "plausibly gives",
                            "check that every repetition ran the same settings; split them if not",
                            severity="warning",
                        )
                    )
        for s in entry.sweeps:
            for whose, side in (("the record", s.record), ("the baseline", s.baseline)):
                found = side.capacity
                if found is not None and found.grid_warning:
                    line, col = rec.positions.of(("results",))
                    out.append(
                        Problem(
                            shown,
                            line,
                            col,
                            "coarse-sweep",
                            f"capacity of {whose} ({s.workload}): {found.grid_warning}",
                            "add a load between the two",
                            severity="warning",
                        )
                    )
        primary = entry.primary
        if rec.record.status == "adopted" and primary is not None and primary.guardrail_broken:
            line, col = rec.positions.of(("status",))
            broken = ", ".join(
                f"`{g.metric}` (margin {fmt_number(g.margin)}%"
                + (f", change {fmt_percent(g.change_percent)})" if g.change_percent is not None else ")")
                for g in primary.broken_guardrails
            )
            out.append(
                Problem(
                    shown,
                    line,
                    col,
                    "guardrail-broken",
                    f"adopted, but result `{primary.label}` breaks its guardrail {broken}: "
                    "shown worse beyond the margin",
                    "measure the guardrail metric again, or say in `verdict` why the loss is accepted",
                    severity="warning",
                )
            )
    return out
