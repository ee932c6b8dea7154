"""The problems of results that name imported runs: unknown runs, no baseline, not comparable.

Which baseline a run result is compared with is `results.matching`'s; this turns what it
finds into `check`'s errors (a run that does not exist) and warnings (no baseline, an
ambiguous one, one that differs in more than the record's change).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping

from generator.base.problems import Problem, rel
from generator.base.read import Positions
from generator.model import reruns, variants
from generator.model.quantity import stat
from generator.model.result import Result
from generator.project.comparable import declared_settings, differences
from generator.project.load import Project, RecordFile
from generator.project.matching import configuration, match, name_text, result_numbers
from generator.project.runs.provenance import mismatches
from generator.project.runs.run import Run


def _unknown_run(
    shown: str, pos: Positions, loc: tuple[str | int, ...], rid: str, known: Mapping[str, Run], why: str | None
) -> Problem:
    line, col = pos.of(loc)
    if why is not None:
        return Problem(shown, line, col, "unknown-run", why, "import the benchmark file again to rewrite it")
    near = difflib.get_close_matches(rid, list(known), n=1)
    return Problem(
        shown,
        line,
        col,
        "unknown-run",
        f"no imported run has id `{rid}`",
        f"did you mean `{near[0]}`?" if near else "import the file with `improvements import FILE --record SLUG`",
    )


def run_problems(project: Project) -> list[Problem]:
    """Run references that do not resolve (errors); results without a baseline or not comparable with it (warnings)."""
    out: list[Problem] = []
    cf = project.campaign_file
    places: list[tuple[str, Positions, tuple[str | int, ...], list[Result], RecordFile | None]] = [
        (rel(cf.path, project.root), cf.positions, ("baseline", "results"), project.campaign.baseline.results, None)
    ]
    places += [(rel(r.path, project.root), r.positions, ("results",), r.record.results, r) for r in project.records]
    places += [
        (rel(r.path, project.root), r.positions, ("variants", k, "results"), v.results, r)
        for r in project.records
        for k, v in enumerate(r.record.variants)
    ]
    for shown, pos, base_loc, results, rec in places:
        for i, result in enumerate(results):
            out += _result_problems(project, result, rec, shown, pos, (*base_loc, i))
        out += _rerun_problems(results, shown, pos, base_loc)
    return out


def _rerun_problems(
    results: list[Result], shown: str, pos: Positions, base_loc: tuple[str | int, ...]
) -> list[Problem]:
    """A warning at each result a later plan of its comparison replaces: shown, never used."""
    return [
        Problem(
            shown,
            *pos.of((*base_loc, i)),
            "rerun-unused",
            f"result `{results[i].label}` is an earlier run of a comparison a later plan measured "
            f"again: the headline, the summary and references by load read `{results[j].label}`, "
            "not this one",
            "keep it as the record of that run, or remove it; to pool the runs of several plans, see "
            "docs/guide/decisions.md, several runs of one comparison",
            severity="warning",
        )
        for i, j in reruns.replaced(results).items()
    ]


def _result_problems(
    project: Project, result: Result, rec: RecordFile | None, shown: str, pos: Positions, loc: tuple[str | int, ...]
) -> list[Problem]:
    """One result's run problems, in the order `check` prints them.

    Longer than most: each check decides whether the next one can run (a run that does not
    exist has no baseline to look for), and that chain reads best in one place.
    """
    runs, broken = project.runs, project.broken_runs
    out: list[Problem] = []
    typed = [k for k in ("metrics", "baseline") if result.run is not None and getattr(result, k)]
    if typed:
        out.append(
            Problem(
                shown,
                *pos.of((*loc, typed[0]), key=True),
                "invalid-value",
                f"result `{result.label}` names run `{result.run}` and also types `{typed[0]}`",
                "an imported run's numbers and its baseline's come from the run files; remove the typed ones",
            )
        )
    single = isinstance(result.run, str)
    for j, rid in enumerate(result.run_ids):
        if rid not in runs:
            where = (*loc, "run") if single else (*loc, "run", j)
            out.append(_unknown_run(shown, pos, where, rid, runs, broken.get(rid)))
    single_base = isinstance(result.baseline_run, str)
    for j, rid in enumerate(result.baseline_run_ids):
        if rid not in runs:
            where = (*loc, "baseline_run") if single_base else (*loc, "baseline_run", j)
            out.append(_unknown_run(shown, pos, where, rid, runs, broken.get(rid)))
    resolvable = all(rid in runs for rid in (*result.run_ids, *result.baseline_run_ids))
    if resolvable:
        out += _repeat_problems(result, runs, shown, pos, loc)
    for rid in (r for r in result.run_ids if r in runs):
        out += _other_setup(project, result, runs[rid], shown, pos, loc)
    first = runs[result.run_ids[0]] if resolvable and result.run_ids else None
    found = match(project, result, first) if rec is not None and first is not None else None
    if found is not None and found.ambiguous:
        listed = "; ".join(f"`{c.id}` ({name_text(c)})" for c in found.ambiguous)
        out.append(
            Problem(
                shown,
                *pos.of(loc),
                "no-baseline",
                f"result `{result.label}` has an ambiguous baseline: {len(found.ambiguous)} baseline runs "
                f"match its workload and load but are different configurations: {listed}; "
                "none is compared with and its numbers are shown without a delta",
                "name the baseline run to compare with in `baseline_run`",
                severity="warning",
            )
        )
    # Evidence given only as reported (no metrics, no run) has nothing to compare: no warning.
    elif (
        rec is not None
        and resolvable
        and (result.metrics or result.run)
        and result_numbers(project, result, rec).no_baseline
    ):
        out.append(
            Problem(
                shown,
                *pos.of(loc),
                "no-baseline",
                f"result `{result.label}` has no baseline: its numbers are shown without a delta",
                "add `baseline` numbers, import a baseline run with `improvements import --baseline`, "
                "or name one with `baseline_run`",
                severity="warning",
            )
        )
    if rec is not None and resolvable and result.paired:
        out += _paired_problems(project, result, rec, shown, pos, loc)
    if found is None or rec is None:
        return out
    allowed = declared_settings(variants.change_for(rec.record, result), project.campaign.baseline.command)
    diffs = sorted({d for rid in result.run_ids for b in found.runs for d in differences(runs[rid], b, allowed)})
    if diffs:
        out.append(
            Problem(
                shown,
                *pos.of(loc),
                "not-comparable",
                f"result `{result.label}` differs from its baseline in more than the record's change: "
                + "; ".join(diffs),
                "measure both with the same workload and setup, or name the baseline with `baseline_run`",
                severity="warning",
            )
        )
    return out


def _repeat_problems(
    result: Result, runs: Mapping[str, Run], shown: str, pos: Positions, loc: tuple[str | int, ...]
) -> list[Problem]:
    """Runs listed as repetitions must be one configuration: anything else is not a sample of it."""
    ids = result.run_ids
    if len(ids) < 2:
        return []
    first = configuration(runs[ids[0]])
    for j, rid in enumerate(ids[1:], 1):
        if configuration(runs[rid]) != first:
            return [
                Problem(
                    shown,
                    *pos.of((*loc, "run", j)),
                    "invalid-value",
                    f"result `{result.label}` lists run `{rid}` as a repetition of `{ids[0]}`, but the two are "
                    "different configurations (another benchmark, load, workload or name)",
                    "list only repeated runs of one configuration in `run`; give the other its own result",
                )
            ]
    return []


def _paired_problems(
    project: Project, result: Result, rec: RecordFile, shown: str, pos: Positions, loc: tuple[str | int, ...]
) -> list[Problem]:
    """`paired: true` matches repetitions by position, so every compared metric needs equal n on both sides."""
    found = result_numbers(project, result, rec)
    for name, value in found.metrics.items():
        base = found.baseline.get(name)
        if base is None:
            continue
        n, base_n = stat(value).n, stat(base).n
        if n != base_n:
            return [
                Problem(
                    shown,
                    *pos.of((*loc, "paired"), key=True),
                    "invalid-value",
                    f"result `{result.label}` is `paired: true` but `{name}` has {n} repetition(s) here and "
                    f"{base_n} in its baseline; paired repetitions are matched by position",
                    "give both sides the same repetitions in the same order, or remove `paired: true`",
                )
            ]
    return []


def _other_setup(
    project: Project, result: Result, run: Run, shown: str, pos: Positions, loc: tuple[str | int, ...]
) -> list[Problem]:
    """A warning per fact where the run's file names another model or engine than campaign.yaml."""
    return [
        Problem(
            shown,
            *pos.of((*loc, "run")),
            "other-setup",
            f"result `{result.label}` names run `{run.id}`, and {what} (the file's `{key}`)",
            "import the file into the campaign it was measured for, or say in the result's `note` why it belongs here",
            severity="warning",
        )
        for key, what in mismatches(project.campaign, run)
    ]
