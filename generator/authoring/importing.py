"""`improvements import`'s transaction: benchmark files read, checked, and linked from a record.

Every file is read and the edited record checked before anything is written; the runs, the
kept raw files and the record are then written together or not at all
(`generator.authoring.link_runs`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from pathlib import Path

from generator.authoring.link_runs import campaign_mapping, link, read_all, unique_runs, write_all
from generator.authoring.records import find_record, lock_target
from generator.base.fsio import edit_lock
from generator.base.problems import ProblemsFound, Report, rel
from generator.checks.validate import require_project
from generator.project.load import Project
from generator.project.runs.parse import ParsedFile

# How the caller shows progress over the files as they are read (a progress bar, or nothing).
Progress = Callable[[tuple[Path, ...]], AbstractContextManager[Iterable[Path]]]


def import_files(
    repo: Path,
    files: tuple[Path, ...],
    record_ref: str | None,
    baseline: bool,
    label: str | None,
    format_name: str | None,
    arms: tuple[str, str] | None,
    progress: Progress,
) -> None:
    """Import `files` as runs and link them from `record_ref` or the campaign baseline.

    Longer than most: the steps in the order that keeps the user's files safe (check, change,
    check the result, write); split up, that order would be harder to see.
    """
    # Locked from the first read to the write: two imports into one record, or an import beside
    # `status`, queue up instead of the later write dropping the earlier one's links.
    campaign = repo / "improvements" / "campaign.yaml"
    edited = campaign if baseline or record_ref is None else lock_target(repo, record_ref)
    with edit_lock(repo, edited):
        project = require_project(repo)
        target = project.campaign_file.path if baseline else find_record(project, Report(), record_ref or "")

        mapping = campaign_mapping(project, format_name) if format_name is not None else None
        with progress(files) as shown_files:
            parsed, problems = read_all(shown_files, mapping)
        if problems:
            raise ProblemsFound(Report(problems))

        runs = unique_runs(parsed)
        text, added, problems = link(project, target, runs, label, baseline, arms)
        if problems:
            sys.stderr.write(
                f"{rel(target, repo)}: nothing imported; the edit would leave these problems "
                "(positions are in the edited text, not in the file as it is):\n"
            )
            raise ProblemsFound(Report(problems))

        write_all(repo, target, text if added else None, parsed)

    shown = rel(target, repo)
    _warn_provenance(project, parsed)
    for p in parsed:
        if p.redacted:
            # Where, never what: the key path or line names the place, the value stays unsaid.
            sys.stderr.write(f"{p.shown}: redacted {len(p.redacted)} secret value(s) before writing\n")
            for where in p.redacted:
                sys.stderr.write(f"  {where}\n")
    if not added:
        sys.stdout.write(f"{len(runs)} run(s) already imported and linked from {shown}; nothing changed\n")
        return
    sys.stdout.write(f"imported {len(added)} run(s) from {len(parsed)} file(s), linked from {shown}:\n")
    for run, result_label in added:
        sys.stdout.write(f"  {run.id}  {result_label}\n")


def _warn_provenance(project: Project, parsed: list[ParsedFile]) -> None:
    """Say where a file names another model or engine than the campaign: imported all the same, it may be a mix-up."""
    from generator.project.runs.provenance import mismatches

    seen: set[tuple[str, str]] = set()
    for p in parsed:
        # Every line that holds a run, a run a file repeats included, in the file's order.
        by_id = {run.id: run for run in p.runs}
        places = [(run.source.get("line", 1), run) for run in p.runs]
        places += [(line, by_id[rid]) for rid, lines in p.repeats.items() for line in lines]
        for line, run in sorted(places, key=lambda place: place[0]):
            for key, what in mismatches(project.campaign, run):
                where = f"{p.shown}:{line}: {key}"
                if (where, what) not in seen:
                    seen.add((where, what))
                    sys.stderr.write(f"warning: {where}: {what} (improvements/campaign.yaml)\n")
