"""Finding a record by slug or number, and checking an edit of it before it is written.

Shared by every command that edits a record (status, new, import, renumber), so that each
finds records and judges an edited text the same way.
"""

from __future__ import annotations

import contextlib
import difflib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from generator.base.problems import CommandError, UsageProblem

if TYPE_CHECKING:
    from generator.base.problems import Problem, Report
    from generator.project.load import Project


def find_record(project: Project, report: Report, ref: str) -> Path:
    """The record file that `ref` (a slug or a number) names; a usage error when none or several do.

    A file that failed to load is still found, so that its own problems can be shown.
    """
    return locate_record(project.improvements_dir, ref)


def locate_record(improvements: Path, ref: str) -> Path:
    """`find_record` from the file names alone, before the campaign is loaded (to lock the file first)."""
    from generator.project.load import record_files

    try:
        files, _strays = record_files(improvements)
    except OSError as exc:
        raise CommandError(f"cannot read {improvements}: {exc.strerror or exc}") from None
    if _is_number(ref):
        hits = [path for path, number, _slug in files if number == int(ref)]
        if len(hits) > 1:
            names = ", ".join(p.name for p in hits)
            raise UsageProblem(
                f"number {int(ref):02d} is used by {names}; name the record by its slug, "
                "or run `improvements renumber --compact`"
            )
    else:
        hits = [path for path, _number, slug in files if slug == ref]
    if not hits:
        slugs = [slug for _path, _number, slug in files]
        near = difflib.get_close_matches(ref, slugs, n=1)
        hint = f"; did you mean `{near[0]}`?" if near else "; `improvements summary` lists the records"
        raise UsageProblem(f"no record has {'number' if _is_number(ref) else 'slug'} `{ref}`{hint}")
    return hits[0]


def lock_target(repo: Path, ref: str) -> Path:
    """The record file an edit will change, named before the campaign is loaded (to lock it first);
    a ref that names no record is reported after the campaign's own problems, as without the lock."""
    folder = repo / "improvements"
    try:
        return locate_record(folder, ref)
    except CommandError:
        return folder


def _is_number(ref: str) -> bool:
    # ASCII only: str.isdigit and int() also take Arabic-Indic and fullwidth digits.
    return ref.isascii() and ref.isdigit()


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
    edited = RecordFile(
        path, loaded.model, loaded.data, loaded.positions, loaded.text, number=int(m["number"]), slug=m["slug"]
    )
    others = [r for r in project.records if r.path != path]
    candidate = replace(project, records=sorted([*others, edited], key=lambda r: (r.number, r.slug)))
    files, _strays = record_files(project.improvements_dir)
    return [p for p in cross_check(candidate, files) if p.path == shown]


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
        if _is_number(ref):
            index = int(ref) - 1
            if not 0 <= index < len(blockers):
                raise UsageProblem(f"--resolve-blocker {ref}: the record has {len(blockers)} blocker(s)")
        else:
            index = next((i for i, b in enumerate(blockers) if _get(b, "id") == ref or _get(b, "ref") == ref), -1)
            if index < 0:
                raise UsageProblem(f"--resolve-blocker {ref}: {_blocker_names(blockers)}")
        blocker = blockers[index]
        if _get(blocker, "ref") is not None:
            shared = str(_get(blocker, "ref"))
            owner = next((r for r in project.records if any(b.id == shared for b in r.record.blockers)), None)
            where = f" in improvements/{owner.path.name}" if owner is not None and owner.path != path else ""
            raise UsageProblem(
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


def open_blockers(data: Any) -> list[tuple[str, str]]:
    """The record's own open blockers: (name as shown, value for --resolve-blocker)."""
    out = []
    for i, b in enumerate(data.get("blockers") or [], 1):
        if _get(b, "status") == "open":
            ident = _get(b, "id")
            out.append((f"`{ident}`", str(ident)) if ident else (f"#{i}", str(i)))
    return out


def with_cli_hint(problem: Problem, status: str, verdict: str | None) -> Problem:
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


# How long `renumber` and `new` wait for the runs going before they say why they stop.
RUNS_GRACE_S = 5.0


def no_run_going(repo: Path, verb: str) -> contextlib.AbstractContextManager[None]:
    """The campaign's runs lock, alone: a command that moves or adds records waits a few seconds
    for the runs going to end, then stops and says what to do (a run may go on for hours; each
    links its runs into the records when it ends, and `check` must pass then)."""
    return runs_held(
        repo,
        shared=False,
        busy=f"an `improvements run` is going in this campaign; it links its runs into the records when it ends, "
        f"so `improvements {verb}` changes no record until then: run it again once the run has ended",
    )


@contextlib.contextmanager
def runs_held(repo: Path, *, shared: bool, busy: str) -> Iterator[None]:
    """The campaign's runs lock (`base.fsio.runs_lock`), waited for a few seconds; CommandError(busy)
    when it stays taken. Only the taking says `busy`: a LockBusy of the work under it is its own."""
    from generator.base.fsio import LockBusy, runs_lock

    try:
        held = runs_lock(repo, shared=shared, wait=RUNS_GRACE_S)
        held.__enter__()
    except LockBusy:
        raise CommandError(busy) from None
    with contextlib.ExitStack() as stack:
        stack.push(held)
        yield
