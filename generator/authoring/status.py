"""`improvements status`'s transaction: a record's status changed in its file, checked first.

Locked from the first read to the write, so a concurrent edit of the file (another `status`,
an `import`) is seen, never overwritten; the edited text is checked in full before anything
is written, and nothing is written when it fails.
"""

from __future__ import annotations

import difflib
import sys
from pathlib import Path

from generator.authoring.edit import Document, delete_key, set_key, write_edited
from generator.authoring.records import (
    check_edited,
    find_record,
    lock_target,
    open_blockers,
    problems_of,
    resolve_blockers,
    with_cli_hint,
)
from generator.base.fsio import edit_lock
from generator.base.problems import ProblemsFound, Report, UsageProblem, rel
from generator.checks.validate import load_project
from generator.model.record import Record


def change_status(
    repo: Path, record: str, status: str, verdict: str | None, superseded_by: str | None, resolve: tuple[str, ...]
) -> bool:
    """Move `record` to `status` (with its verdict, replacement and resolved blockers); False when
    it already had them and nothing was written.

    Longer than most: the steps in the order that keeps the user's file safe (check, change,
    check the result, write); split up, that order would be harder to see.
    """
    # Locked from the first read to the write, so a concurrent edit of the file (another
    # `status`, an `import`) is seen, never overwritten.
    with edit_lock(repo, lock_target(repo, record)):
        report = Report()
        project = load_project(repo, report)
        if project is None:
            raise ProblemsFound(report)
        path = find_record(project, report, record)
        # Edit only a record that loads: a broken file first needs the user's own fix. A status
        # rule it breaks is another matter: the new status (or a resolved blocker) may be the fix,
        # and the edited text is checked in full before anything is written.
        own = [p for p in problems_of(project, report, path) if p.severity == "error" and p.code != "status-rule"]
        if own:
            raise ProblemsFound(Report(own))
        if superseded_by is not None and superseded_by not in project.by_slug():
            near = difflib.get_close_matches(superseded_by, list(project.by_slug()), n=1)
            hint = f"; did you mean `{near[0]}`?" if near else ""
            raise UsageProblem(f"no record has slug `{superseded_by}`{hint}")

        doc = Document.from_path(path)
        order = list(Record.model_fields)
        old_status = str(doc.data.get("status"))
        set_key(doc.data, "status", status, order)
        if verdict is not None:
            set_key(doc.data, "verdict", verdict.strip(), order)
        resolved = resolve_blockers(doc.data, resolve, project, path)
        if superseded_by is not None:
            set_key(doc.data, "superseded_by", superseded_by, order)
        elif status != "superseded" and "superseded_by" in doc.data:
            # Back from superseded: the replacement no longer stands.
            delete_key(doc.data, "superseded_by")
        text = doc.text()
        shown = rel(path, repo)
        if text == doc.original:
            sys.stdout.write(f"{shown}: status is already {status}; nothing to change\n")
            return False

        problems = check_edited(project, path, text)
        errors = [p for p in problems if p.severity == "error"]
        still_open = open_blockers(doc.data) if old_status == "blocked" and status != "blocked" else []
        if errors:
            refused = Report([with_cli_hint(p, status, verdict) for p in errors])
            sys.stderr.write(f"{shown}: not changed to `{status}`; the record would have these problems:\n")
            if still_open:
                names = ", ".join(name for name, _arg in still_open)
                sys.stderr.write(
                    f"(blocker {names} is still open; if it has been resolved, "
                    f"`--resolve-blocker {still_open[0][1]}` marks it so in the same edit)\n"
                )
            raise ProblemsFound(refused)
        write_edited(path, text)
        if old_status != status:
            sys.stdout.write(f"{shown}: status {old_status} -> {status}\n")
        for name, before in resolved:
            sys.stdout.write(f"{shown}: blocker {name} {before} -> resolved\n")
        for name, arg in still_open:
            sys.stderr.write(f"{shown}: blocker {name} is still open; `--resolve-blocker {arg}` marks it resolved\n")
        for p in problems:
            sys.stderr.write(p.text() + "\n")
    return True
