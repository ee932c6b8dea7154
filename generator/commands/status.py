"""`improvements status`: move a record to another status, editing its file in place."""

from __future__ import annotations

import difflib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from generator.cli import resolve_root, root_option
from generator.model.record import STATUSES

if TYPE_CHECKING:
    from generator.base.problems import Problem, Report
    from generator.project.load import Project


def find_record(project: Project, report: Report, ref: str) -> Path:
    """The record file that `ref` (a slug or a number) names; a usage error when none or several do.

    A file that failed to load is still found, so that its own problems can be shown.
    """
    from generator.project.load import record_files

    files, _strays = record_files(project.improvements_dir)
    if ref.isdigit():
        hits = [path for path, number, _slug in files if number == int(ref)]
        if len(hits) > 1:
            names = ", ".join(p.name for p in hits)
            raise click.UsageError(
                f"number {int(ref):02d} is used by {names}; name the record by its slug, "
                "or run `improvements renumber --compact`"
            )
    else:
        hits = [path for path, _number, slug in files if slug == ref]
    if not hits:
        slugs = [slug for _path, _number, slug in files]
        near = difflib.get_close_matches(ref, slugs, n=1)
        hint = f"; did you mean `{near[0]}`?" if near else "; `improvements summary` lists the records"
        raise click.UsageError(f"no record has {'number' if ref.isdigit() else 'slug'} `{ref}`{hint}")
    return hits[0]


def problems_of(project: Project, report: Report, path: Path) -> list[Problem]:
    """The problems `report` holds for one file."""
    from generator.base.problems import rel

    shown = rel(path, project.root)
    return [p for p in report.problems if p.path == shown]


def check_edited(project: Project, path: Path, text: str) -> list[Problem]:
    """Every problem the record at `path` would have if it held `text`: syntax, model, status rules, cross-file."""
    from dataclasses import replace

    from generator.base.problems import Report, rel
    from generator.checks.validate import cross_check
    from generator.model.record import FILENAME_RE, Record
    from generator.model.result import metric_context
    from generator.project.load import RecordFile, load_text, record_files

    shown = rel(path, project.root)
    report = Report()
    loaded = load_text(path, text, Record, shown, report, metric_context(project.campaign_file.data))
    if loaded.model is None:
        return report.problems
    m = FILENAME_RE.match(path.name)
    assert m is not None  # record_files only yields names that match
    edited = RecordFile(path, loaded.model, loaded.data, loaded.positions, int(m["number"]), m["slug"])
    others = [r for r in project.records if r.path != path]
    candidate = replace(project, records=sorted([*others, edited], key=lambda r: (r.number, r.slug)))
    files, _strays = record_files(project.improvements_dir)
    return [p for p in cross_check(candidate, files) if p.path == shown]


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
    from generator.base.problems import ProblemsFound, Report, rel
    from generator.checks.validate import load_project
    from generator.model.record import Record

    if superseded_by is not None and status != "superseded":
        raise click.UsageError("--superseded-by goes with status `superseded`")
    if verdict is not None and not verdict.strip():
        raise click.UsageError("--verdict needs some text")
    repo = resolve_root(root)
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
    still_open = _open_blockers(doc.data) if old_status == "blocked" and status != "blocked" else []
    if errors:
        refused = Report([_with_cli_hint(p, status, verdict) for p in errors])
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


def resolve_blockers(data: Any, refs: tuple[str, ...], project: Project, path: Path) -> list[tuple[str, str]]:
    """Set `status: resolved` on the record's blockers that `refs` name; (name, old status) of each.

    A blocker is named by its `id` or by its place in `blockers:` (1 is the first). One shared
    from another record (`ref:`) is resolved where it is defined, not here.
    """
    from generator.authoring.edit import set_key
    from generator.model.record import Blocker

    blockers = data.get("blockers") or []
    out: list[tuple[str, str]] = []
    for ref in refs:
        if ref.isdigit():
            index = int(ref) - 1
            if not 0 <= index < len(blockers):
                raise click.UsageError(f"--resolve-blocker {ref}: the record has {len(blockers)} blocker(s)")
        else:
            index = next((i for i, b in enumerate(blockers) if _get(b, "id") == ref or _get(b, "ref") == ref), -1)
            if index < 0:
                raise click.UsageError(f"--resolve-blocker {ref}: {_blocker_names(blockers)}")
        blocker = blockers[index]
        if _get(blocker, "ref") is not None:
            shared = str(_get(blocker, "ref"))
            owner = next((r for r in project.records if any(b.id == shared for b in r.record.blockers)), None)
            where = f" in improvements/{owner.path.name}" if owner is not None and owner.path != path else ""
            raise click.UsageError(
                f"--resolve-blocker {ref}: blocker `{shared}` is shared and defined{where}; "
                "set its `status: resolved` there"
            )
        name = f"`{_get(blocker, 'id')}`" if _get(blocker, "id") else f"#{index + 1}"
        before = str(_get(blocker, "status"))
        if before != "resolved":
            set_key(blocker, "status", "resolved", list(Blocker.model_fields))
            out.append((name, before))
    return out


def _get(blocker: Any, key: str) -> Any:
    return blocker.get(key) if isinstance(blocker, dict) else None


def _blocker_names(blockers: list[Any]) -> str:
    if not blockers:
        return "the record has no blockers"
    names = [
        f"{i} (`{_get(b, 'id') or _get(b, 'ref')}`)" if _get(b, "id") or _get(b, "ref") else str(i)
        for i, b in enumerate(blockers, 1)
    ]
    return "no blocker has that id; its blockers are " + ", ".join(names)


def _open_blockers(data: Any) -> list[tuple[str, str]]:
    """The record's own open blockers: (name as shown, value for --resolve-blocker)."""
    out = []
    for i, b in enumerate(data.get("blockers") or [], 1):
        if _get(b, "status") == "open":
            ident = _get(b, "id")
            out.append((f"`{ident}`", str(ident)) if ident else (f"#{i}", str(i)))
    return out


def _with_cli_hint(problem: Problem, status: str, verdict: str | None) -> Problem:
    """A status-rule problem with a hint saying how to meet the rule from here."""
    from dataclasses import replace

    if problem.code != "status-rule":
        return problem
    steps = []
    if "verdict" in problem.message and verdict is None:
        steps.append('pass --verdict "..."')
    if "result" in problem.message:
        steps.append("add a result under `results:` (or `improvements import FILE --record SLUG`) first")
    if "superseded_by" in problem.message:
        steps.append("pass --superseded-by SLUG")
    if "open blocker" in problem.message:
        steps.append("add a blocker with `status: open` first")
    if not steps:
        return problem
    return replace(problem, hint="; ".join(steps))
