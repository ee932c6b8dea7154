"""`improvements status`: move a record to another status, editing its file in place."""

from __future__ import annotations

import difflib
import sys
from pathlib import Path

import click

from generator.cli import resolve_root, root_option
from generator.model.record import STATUSES


@click.command(
    "status",
    epilog="""\b
Examples:
  improvements status mscclpp-all-reduce in-progress
  improvements status 12 adopted --verdict "Faster at every concurrency measured."
  improvements status 07 superseded --superseded-by mscclpp-all-reduce
  improvements status 01 rejected --resolve-blocker fp4-jit-graph-breaks --verdict "..."
""",
)
@root_option
@click.argument("record", metavar="SLUG|NN")
@click.argument("status", type=click.Choice(STATUSES), metavar="STATUS")
@click.option("--verdict", help="Set the verdict (adopted and rejected need one).")
@click.option("--superseded-by", "superseded_by", metavar="SLUG", help="The record that replaces this one.")
@click.option(
    "--resolve-blocker",
    "resolve",
    multiple=True,
    metavar="ID|N",
    help="Set this blocker's status to resolved in the same edit: its `id`, or its place in "
    "`blockers:` counting from 1 (repeatable).",
)
def command(
    root: Path | None,
    record: str,
    status: str,
    verdict: str | None,
    superseded_by: str | None,
    resolve: tuple[str, ...],
) -> None:
    """Change a record's status in place.

    STATUS is one of: proposed, in-progress, blocked, adopted, rejected, superseded.

    Only the changed lines of the file differ afterwards: comments, key order, quoting and
    blank lines stay as written. The result is checked first (the status rules, for example
    that `adopted` needs a result and a verdict), and nothing is written when it fails.

    A blocked record whose blocker has just been resolved moves on in one step:
    `--resolve-blocker ID` sets that blocker's `status: resolved` in the same edit.
    """
    # Longer than most: a command's steps in the order that keeps the user's files safe (check,
    # change, check the result, write); split up, that order would be harder to see.
    from generator.authoring.edit import Document, delete_key, set_key, write_edited
    from generator.authoring.records import (
        check_edited,
        find_record,
        open_blockers,
        problems_of,
        resolve_blockers,
        with_cli_hint,
    )
    from generator.base.fsio import edit_lock
    from generator.base.problems import ProblemsFound, Report, rel
    from generator.checks.validate import load_project
    from generator.model.record import Record

    if superseded_by is not None and status != "superseded":
        raise click.UsageError("--superseded-by goes with status `superseded`")
    if verdict is not None and not verdict.strip():
        raise click.UsageError("--verdict needs some text")
    repo = resolve_root(root)
    # Locked from the first read to the write, so a concurrent edit of the file (another
    # `status`, an `import`) is seen, never overwritten.
    with edit_lock(repo, _lock_target(repo, record)):
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
            raise click.UsageError(f"no record has slug `{superseded_by}`{hint}")

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
            return

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
    sys.stdout.write("Run `improvements build` to update the series and the summary.\n")


def _lock_target(repo: Path, ref: str) -> Path:
    """The record file the edit will change, named before the campaign is loaded; a ref that names
    no record is reported after the campaign's own problems, as without the lock."""
    from generator.authoring.records import locate_record
    from generator.base.problems import CommandError

    folder = repo / "improvements"
    try:
        return locate_record(folder, ref)
    except CommandError:
        return folder
