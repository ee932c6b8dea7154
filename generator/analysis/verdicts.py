"""A record's status against its evidence: `check` warns when the two disagree.

`adopted` says the change helps; `rejected` says it does not. When the record's own
primary-metric decision (from the analysis, never recomputed) says the opposite, the status
or the evidence is wrong, and a reader of the summary would be misled either way. Only
decided evidence counts: `unreplicated` and `inconclusive` results contradict nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generator.base.problems import Problem, rel
from generator.model import variants
from generator.model.launch import Step, split_command
from generator.model.quantity import fmt_number, fmt_percent, listed, stat
from generator.model.record import Change, Setup

if TYPE_CHECKING:
    # Types only: `check` imports this module whether or not it analyses any record.
    from generator.analysis.records import Analysed, ResolvedResult

# How a note begins that says a result's baseline was skipped: the comparison-not-made warning.
SKIPPED = "Not compared: the campaign baseline result"

# status -> the decisions that contradict it
_CONTRADICTS: dict[str, tuple[str, ...]] = {
    "adopted": ("worse", "no-change"),
    "rejected": ("better",),
}


def status_problems(analysis: Analysed) -> list[Problem]:
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
        out.append(
            Problem(
                rel(rec.path, root),
                *rec.positions.of(("status",)),
                "status-contradicts-evidence",
                f"status `{status}` contradicts the evidence: `{primary.metric}` in result `{primary.label}` "
                f"is `{c.decision}`{change}",
                "change the status, or measure again and say in `verdict` why the evidence is set aside",
                severity="warning",
            )
        )
    return out


def decider_problems(analysis: Analysed) -> list[Problem]:
    """A warning where the metric a record says decided it (`decided_by`) disagrees with its numbers."""
    out: list[Problem] = []
    for entry in analysis.records:
        rec = entry.file
        for d in entry.deciders:
            if d.agrees is not False:
                continue
            c = d.comparison
            if c is not None:
                change = f" ({fmt_percent(c.change_percent)})" if c.change_percent is not None else ""
                seen = f"`{c.decision}`{change}"
            elif isinstance(d.reported_change, tuple):
                seen = f"reported as {fmt_number(d.reported_change[0])}% to {fmt_number(d.reported_change[1])}%"
            else:
                seen = f"reported as {fmt_percent(d.reported_change or 0.0)}"
            stated = f", stated as {fmt_percent(d.stated)}" if d.stated is not None else ""
            whose = f"variant `{d.owner}`'s outcome" if d.owner is not None else f"status `{rec.record.status}`"
            out.append(
                Problem(
                    rel(rec.path, analysis.project.root),
                    *rec.positions.of(d.at),
                    "status-contradicts-evidence",
                    f"{whose} is said to be decided by `{d.metric}` in result `{d.result}`"
                    f"{stated}, but its numbers give {seen}",
                    "correct `decided_by.change`, or name the result and metric that decided it",
                    severity="warning",
                )
            )
    return out


def removed_flag_problems(analysis: Analysed) -> list[Problem]:
    """A warning for each `remove_flags` entry that names a flag the command it applies to lacks.

    The command is the change's own `base_command`, else its setup's, else the campaign
    baseline's, with the flags of what the record builds on added: removing a flag none of
    them has removes nothing, which is usually a misspelt flag or the wrong baseline.
    """
    out: list[Problem] = []
    project = analysis.project
    campaign = project.campaign
    steps: dict[str, Step] | None = None
    # Every record, analysed or not (`asked`): what is read here is the file's own.
    for rec in project.records:
        places: list[tuple[tuple[str | int, ...], Change | None, Setup | None]] = [
            (("change",), rec.record.change, rec.record.setup)
        ]
        places += [
            (("variants", k, "change"), v.change, v.setup or rec.record.setup)
            for k, v in enumerate(rec.record.variants)
        ]
        if not any(change is not None and change.remove_flags for _, change, _ in places):
            continue
        entry = analysis.by_path(rec.path)
        launch = entry.launch if entry is not None else None
        if launch is None:
            # An analysis made without launches (`check`'s): this record's alone, made here.
            from generator.analysis.launches import launch_steps, record_launch

            steps = launch_steps(project) if steps is None else steps
            launch = record_launch(project, rec, steps)
        added = {f.flag for other in launch.chain for f in (variants.effective_change(other.record) or Change()).flags}
        for at, change, setup in places:
            if change is None or not change.remove_flags:
                continue
            base = (
                change.base_command or (setup.base_command if setup is not None else None) or campaign.baseline.command
            )
            present = {t.split("=", 1)[0] for t in split_command(base) if t.startswith("-")} | added
            for i, flag in enumerate(change.remove_flags):
                if flag in present or any(f.flag == flag for f in change.flags):
                    continue
                out.append(
                    Problem(
                        rel(rec.path, analysis.project.root),
                        *rec.positions.of((*at, "remove_flags", i)),
                        "invalid-value",
                        f"`remove_flags` names `{flag}`, which the command it applies to does not have",
                        "check the flag's spelling, or the base command the change applies to",
                        severity="warning",
                    )
                )
    return out


def _spreads(res: ResolvedResult) -> list[tuple[str, str]]:
    """(metric, what is spread) for each metric whose repetitions span more than one configuration
    plausibly gives: the comparison's flag, or, where none is made (no baseline), the values' own
    (two rows of one file at 1841.95 and 9987.78 tok/s are not one result of 5915 without a word)."""
    out: list[tuple[str, str]] = []
    for name, value in res.metrics.items():
        c = res.comparisons.get(name)
        if c is not None:
            if c.spread_flag:
                out.append((name, c.spread_flag))
            continue
        s = stat(value)
        if s.wide:
            out.append((name, f"repetitions {listed(s)} span {s.high / s.low:.1f}x (max/min)"))
    return out


def evidence_problems(analysis: Analysed) -> list[Problem]:
    """Warnings about the evidence itself: comparisons not made, spreads, coarse sweeps, guardrails.

    Each names the comparison and why, at the result it is about; none stops a build.

    Over 60 lines: most of it the four warnings' own texts, kept side by side so they read alike.
    """
    out: list[Problem] = []
    root = analysis.project.root
    for entry in analysis.records:
        rec = entry.file
        shown = rel(rec.path, root)
        for path, res in entry.placed_results():
            label = res.result.label
            skipped = [n for n in res.notes if n.startswith(SKIPPED)]
            spreads = _spreads(res)
            if not skipped and not spreads:
                continue
            # Looked up only for a result warned about: a file's positions cost a second parse.
            line, col = rec.positions.of(path)
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
            for name, flag in spreads:
                out.append(
                    Problem(
                        shown,
                        line,
                        col,
                        "spread-beyond-one-configuration",
                        f"`{name}` in result `{label}`: {flag}, more than one configuration plausibly gives",
                        "check that every repetition ran the same settings; split them if not",
                        severity="warning",
                    )
                )
        for s in entry.sweeps:
            for whose, side in (("the record", s.record), ("the baseline", s.baseline)):
                found = side.capacity
                if found is not None and found.grid_warning:
                    out.append(
                        Problem(
                            shown,
                            *rec.positions.of(("results",)),
                            "coarse-sweep",
                            f"capacity of {whose} ({s.workload}): {found.grid_warning}",
                            "add a load between the two",
                            severity="warning",
                        )
                    )
        primary = entry.primary
        if rec.record.status == "adopted" and primary is not None and primary.guardrail_broken:
            broken = ", ".join(
                f"`{g.metric}` (margin {fmt_number(g.margin)}%"
                + (f", change {fmt_percent(g.change_percent)}" if g.change_percent is not None else "")
                + (f", in result `{g.result}`" if g.result not in (None, primary.label) else "")
                + (", as reported)" if g.reported else ")")
                for g in primary.broken_guardrails
            )
            out.append(
                Problem(
                    shown,
                    *rec.positions.of(("status",)),
                    "guardrail-broken",
                    f"adopted, but result `{primary.label}` breaks its guardrail {broken}: "
                    "shown worse beyond the margin",
                    "measure the guardrail metric again, or say in `verdict` why the loss is accepted",
                    severity="warning",
                )
            )
    return out
