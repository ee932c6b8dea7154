"""Every rule across files: numbers, slugs, references, sources, status rules, and imported runs.

Each file is checked against its model as it is loaded (`project`); what only shows when
the files are seen together is checked here. `load_project` is the read and the check in
one, for every command; `require_project` is that, for a command that writes.
"""

from __future__ import annotations

import difflib
import gc
import os
from pathlib import Path

from generator.base import incremental
from generator.base.problems import Problem, ProblemsFound, Report, rel
from generator.base.read import Path_, Positions
from generator.checks.evidence import evidence_problems
from generator.checks.links import attempt_problems, reference_problems
from generator.checks.runnable import runnable_problems
from generator.checks.runs import run_problems
from generator.checks.shell import shell_problems
from generator.checks.stack import stack_problems
from generator.checks.values import value_problems
from generator.checks.variants import variant_problems
from generator.model import variants
from generator.model.record import DecidedBy, Record
from generator.model.result import Result
from generator.project.load import Project, RecordFile, RecordName, read_project


def load_project(root: Path, report: Report, build_cache: incremental.BuildCache | None = None) -> Project | None:
    """Load and validate every file of the campaign at `root`, adding all problems to `report`.

    Returns the project when the campaign file itself loaded (records that failed to load
    are left out), so callers that only warn can go on; callers that write must check
    `report.ok` first.
    """
    # Loading makes hundreds of thousands of objects and no reference cycles, so the cyclic
    # collector would only walk the growing heap again and again: about a tenth of `check`.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        project, files = read_project(root, report, build_cache)
        if project is not None:
            report.extend(cross_check(project, files, build_cache))
            # The files on disk as they are, so not part of judging an edit (`cross_check`): an
            # import checks its edit before the raw files it brings are written.
            report.extend(evidence_problems(project))
        return project
    finally:
        if was_enabled:
            gc.enable()


def require_project(root: Path, build_cache: incremental.BuildCache | None = None) -> Project:
    """Load a campaign for a command that writes: any error stops it before anything is written."""
    report = Report()
    project = load_project(root, report, build_cache)
    if project is None or not report.ok:
        raise ProblemsFound(report)
    return project


def _metric_problems(result: Result, base: Path_, pos: Positions, shown: str) -> list[Problem]:
    problems: list[Problem] = []
    extra = [n for n in result.baseline if n not in result.metrics]
    if extra and result.metrics:
        line, col = pos.of((*base, "baseline", extra[0]), key=True)
        problems.append(
            Problem(
                shown,
                line,
                col,
                "metric-mismatch",
                f"baseline has {', '.join(f'`{n}`' for n in extra)}, which the result does not measure",
                "a baseline holds the same metric names as the result",
            )
        )
    return problems


def _results_problems(results: list[Result], base: Path_, pos: Positions, shown: str) -> list[Problem]:
    problems: list[Problem] = []
    labels: dict[str, int] = {}
    for i, result in enumerate(results):
        loc = (*base, i)
        problems += _metric_problems(result, loc, pos, shown)
        if result.label in labels:
            line, col = pos.of((*loc, "label"))
            problems.append(
                Problem(
                    shown,
                    line,
                    col,
                    "duplicate-label",
                    f"label `{result.label}` is already used by result {labels[result.label] + 1}",
                )
            )
        labels.setdefault(result.label, i)
    return problems


def _source_problem(source: str, root: Path, loc: Path_, pos: Positions, shown: str) -> Problem | None:
    results_dir = (root / "results").resolve()
    line, col = pos.of(loc)
    # No NUL reaches here (the OS would refuse the path with a ValueError): the reader refuses
    # a control character in any text before a model is built.
    candidate = Path(source)
    if candidate.is_absolute() or ".." in candidate.parts:
        return Problem(
            shown,
            line,
            col,
            "path-outside",
            f"source `{source}` leaves results/",
            "give a path under results/, such as results/runs/x.json",
        )
    try:
        full = (root / candidate).resolve()
        exists = full.is_file()
    except (OSError, RuntimeError):  # a symlink loop, a name too long for the OS
        full, exists = results_dir, False
    if not full.is_relative_to(results_dir):
        return Problem(
            shown,
            line,
            col,
            "path-outside",
            f"source `{source}` resolves outside results/ (through a symlink?)",
            "keep benchmark files under results/ so they travel with the records",
        )
    if not exists:
        return Problem(shown, line, col, "missing-source", f"source `{source}` does not exist")
    return None


def cross_check(
    project: Project, files: list[RecordName], build_cache: incremental.BuildCache | None = None
) -> list[Problem]:
    """Rules across files: numbers, slugs, references, sources, status rules and metrics; what one
    file's rules find alone is kept in `build_cache` (a build) under the file's digest."""
    problems, by_slug = _name_problems(project.root, files)
    problems += _name_length_problems(project, files)
    problems += reference_problems(project)
    problems += _campaign_problems(project)
    blocker_ids, duplicates = _blocker_ids(project)
    problems += duplicates
    shared = _shared_blockers(project)
    successors = {rec.slug: rec.record.superseded_by for rec in project.records}
    for rec in project.records:
        problems += _record_problems(project, rec, by_slug, blocker_ids, shared, successors)
    # Changes that build on each other: references, circles, and the adopted records' conflicts.
    problems += stack_problems(project, by_slug)
    # Imported runs: references that resolve, and results comparable with their baseline.
    problems += run_problems(project)
    # Numbers as written (not as converted), shell names, variants' values.
    problems += value_problems(project, build_cache)
    # Text printed for a shell, read by bash itself.
    problems += shell_problems(project)
    problems += runnable_problems(project)
    return problems


def _name_problems(root: Path, files: list[RecordName]) -> tuple[list[Problem], dict[str, Path]]:
    """Numbers and slugs used twice, and every slug's file (records that failed to load too)."""
    problems: list[Problem] = []
    by_number: dict[int, Path] = {}
    by_slug: dict[str, Path] = {}
    for path, number, slug in files:
        shown = rel(path, root)
        if number in by_number:
            problems.append(
                Problem(
                    shown,
                    1,
                    1,
                    "duplicate-number",
                    f"number {number:02d} is also used by {by_number[number].name}",
                    f"run `improvements renumber {slug} NN` or `improvements renumber --compact`",
                )
            )
        by_number.setdefault(number, path)
        if slug in by_slug:
            problems.append(
                Problem(
                    shown,
                    1,
                    1,
                    "duplicate-slug",
                    f"slug `{slug}` is also used by {by_slug[slug].name}",
                    "slugs are record identities; rename one file",
                )
            )
        by_slug.setdefault(slug, path)
    return problems, by_slug


# The longest file name Linux, macOS and Windows file systems all take (bytes or UTF-16 units).
NAME_MAX = 255


def _name_length_problems(project: Project, files: list[RecordName]) -> list[Problem]:
    """Records whose page would get a file name too long to write: the page's name is the record's
    with the series before it, so a name that fits in improvements/ can fail at `build`."""
    problems: list[Problem] = []
    for path, number, slug in files:
        name = f"{project.campaign.series}-{number:02d}-{slug}.md"
        if len(name.encode()) > NAME_MAX:
            problems.append(
                Problem(
                    rel(path, project.root),
                    1,
                    1,
                    "bad-filename",
                    f"the record's page would be named `{name[:60]}...`, {len(name.encode())} characters, "
                    f"over the {NAME_MAX} a file name may have",
                    f"shorten the slug by at least {len(name.encode()) - NAME_MAX} characters",
                )
            )
    return problems


def _campaign_problems(project: Project) -> list[Problem]:
    cf = project.campaign_file
    cshown = rel(cf.path, project.root)
    problems = _results_problems(project.campaign.baseline.results, ("baseline", "results"), cf.positions, cshown)
    docs_problem = _docs_dir_problem(project.campaign.docs_dir, project.root)
    if docs_problem is not None:
        line, col = cf.positions.of(("docs_dir",))
        problems.append(
            Problem(cshown, line, col, "path-outside", docs_problem, "give a folder such as docs/improvements")
        )
    return problems


def _blocker_ids(project: Project) -> tuple[dict[str, str], list[Problem]]:
    """Each shared blocker id and the file that defines it first; the ids defined again."""
    problems: list[Problem] = []
    blocker_ids: dict[str, str] = {}
    for rec in project.records:
        for j, blocker in enumerate(rec.record.blockers):
            if blocker.id is None:
                continue
            if blocker.id in blocker_ids:
                line, col = rec.positions.of(("blockers", j, "id"))
                problems.append(
                    Problem(
                        rel(rec.path, project.root),
                        line,
                        col,
                        "duplicate-blocker",
                        f"blocker id `{blocker.id}` is also defined in {blocker_ids[blocker.id]}",
                        "define a shared blocker once and point at it with `ref`",
                    )
                )
            blocker_ids.setdefault(blocker.id, rec.path.name)
    return blocker_ids, problems


def _record_problems(
    project: Project,
    rec: RecordFile,
    by_slug: dict[str, Path],
    blocker_ids: dict[str, str],
    shared: dict[str, str],
    successors: dict[str, str | None],
) -> list[Problem]:
    """One record's references, results, sources and status, checked against the others.

    Over 60 lines: one check after another in the order a reader meets them in the file, each
    a few lines; split up, the order of the report would be harder to see.
    """
    problems: list[Problem] = []
    r, pos, shown = rec.record, rec.positions, rel(rec.path, project.root)
    for i, slug in enumerate(r.related):
        if slug not in by_slug:
            problems.append(_unknown_slug(shown, pos, ("related", i), slug, by_slug))
        elif slug == rec.slug:
            line, col = pos.of(("related", i))
            problems.append(Problem(shown, line, col, "unknown-slug", "a record cannot be related to itself"))
    if r.superseded_by is not None and r.superseded_by not in by_slug:
        problems.append(_unknown_slug(shown, pos, ("superseded_by",), r.superseded_by, by_slug))
    elif r.superseded_by is not None and (cycle := _supersession_cycle(successors, rec.slug)):
        line, col = pos.of(("superseded_by",))
        problems.append(
            Problem(
                shown,
                line,
                col,
                "invalid-value",
                "superseded_by goes round in a circle: " + " -> ".join(cycle),
                "a record is replaced by a newer one, which is not itself replaced by the first",
            )
        )
    for j, blocker in enumerate(r.blockers):
        if blocker.ref is not None and blocker.ref not in blocker_ids.keys() | project.unloaded_blocker_ids:
            line, col = pos.of(("blockers", j, "ref"))
            near = difflib.get_close_matches(blocker.ref, list(blocker_ids), n=1)
            problems.append(
                Problem(
                    shown,
                    line,
                    col,
                    "unknown-blocker",
                    f"no blocker has id `{blocker.ref}`",
                    f"did you mean `{near[0]}`?" if near else "give the shared blocker an `id`",
                )
            )
    problems += _results_problems(r.results, ("results",), pos, shown)
    for i, result in enumerate(r.results):
        if result.source is not None:
            p = _source_problem(result.source, project.root, ("results", i, "source"), pos, shown)
            if p is not None:
                problems.append(p)
    problems += attempt_problems(r.results, project.root, ("results",), pos, shown)
    problems += variant_problems(r, pos, shown)
    for k, variant in enumerate(r.variants):
        problems += _results_problems(variant.results, ("variants", k, "results"), pos, shown)
        problems += attempt_problems(variant.results, project.root, ("variants", k, "results"), pos, shown)
        for i, result in enumerate(variant.results):
            if result.source is not None:
                where = ("variants", k, "results", i, "source")
                p = _source_problem(result.source, project.root, where, pos, shown)
                if p is not None:
                    problems.append(p)
    problems += _decided_by_problems(r, pos, shown)
    problems += status_problems(rec, shown, project, shared)
    return problems


def _decided_by_problems(r: Record, pos: Positions, shown: str) -> list[Problem]:
    """Every `decided_by` (the record's, one or a list; each variant's) names a result the record
    holds: of the variant it says, or, on a variant, of that variant; and `headline` names one
    of the record's headline results."""
    out: list[Problem] = []
    many = not isinstance(r.decided_by, DecidedBy)
    for i, d in enumerate(r.deciders):
        if variants.find_result(r, d.variant, d.result) is None:
            at: tuple[str | int, ...] = ("decided_by", i, "result") if many else ("decided_by", "result")
            where = f"variant `{d.variant}`'s results" if d.variant is not None else "the record's own results"
            held = [x.label for x in (r.results if d.variant is None else variants.all_results(r))]
            hint = "; a variant's result needs `variant`" if d.variant is None and r.variants else ""
            out.append(
                _unknown_result(
                    shown, pos.of(at), f"`decided_by` names result `{d.result}`, not among {where}", held, hint
                )
            )
    for k, v in enumerate(r.variants):
        many = not isinstance(v.decided_by, DecidedBy)
        for i, d in enumerate(v.deciders):
            base: tuple[str | int, ...] = ("variants", k, "decided_by") + ((i,) if many else ())
            if d.variant is not None and d.variant != v.label:
                out.append(
                    Problem(
                        shown,
                        *pos.of((*base, "variant")),
                        "unknown-result",
                        f"variant `{v.label}`'s `decided_by` names variant `{d.variant}`",
                        "a variant's `decided_by` reads its own results: leave `variant` out",
                    )
                )
            elif not any(x.label == d.result for x in v.results):
                msg = f"variant `{v.label}`'s `decided_by` names result `{d.result}`, not among its results"
                out.append(_unknown_result(shown, pos.of((*base, "result")), msg, [x.label for x in v.results], ""))
    if r.headline is not None:
        kept = variants.retained(r)
        held = [x.label for x in (kept.results if kept is not None else r.results)]
        if r.headline.result not in held:
            where = f"the retained variant `{kept.label}`'s results" if kept is not None else "the record's own results"
            msg = f"`headline` names result `{r.headline.result}`, not among {where}"
            out.append(_unknown_result(shown, pos.of(("headline", "result")), msg, held, ""))
    return out


def _unknown_result(shown: str, at: tuple[int, int], msg: str, held: list[str], hint: str) -> Problem:
    labels = ", ".join(f"`{x}`" for x in held) or "none"
    return Problem(shown, *at, "unknown-result", msg, f"the results are labelled: {labels}{hint}")


def _docs_dir_problem(docs_dir: str, root: Path) -> str | None:
    """Why the series cannot be written to `docs_dir`, or None: it stays inside the repository."""
    if Path(docs_dir).is_absolute():
        return f"docs_dir `{docs_dir}` is an absolute path; the series is written inside the repository"
    target, repo = (root / docs_dir).resolve(), root.resolve()
    lexical = os.path.normpath(docs_dir)
    if lexical == "." or lexical.startswith(".."):
        return f"docs_dir `{docs_dir}` leaves the repository (or is its root)"
    if not target.is_relative_to(repo) or target == repo:
        return f"docs_dir `{docs_dir}` resolves outside the repository (through a symlink?)"
    for own in ("improvements", "results"):
        if target.is_relative_to(repo / own):
            return f"docs_dir `{docs_dir}` is inside {own}/, which holds the records' own files"
    return None


def _supersession_cycle(successors: dict[str, str | None], start: str) -> list[str]:
    """The chain of superseded_by from `start` when it comes back to `start`, else empty.

    `successors` (slug -> superseded_by) is made once per check by the caller: once per
    superseded record was O(n^2), 2 s of a build at 1,000 records.
    """
    chain, slug = [start], successors.get(start)
    seen = {start}
    while slug is not None and slug not in seen:
        chain.append(slug)
        seen.add(slug)
        slug = successors.get(slug)
    return [*chain, start] if slug == start else []


def _unknown_slug(shown: str, pos: Positions, loc: Path_, slug: str, by_slug: dict[str, Path]) -> Problem:
    line, col = pos.of(loc)
    near = difflib.get_close_matches(slug, list(by_slug), n=1)
    return Problem(
        shown,
        line,
        col,
        "unknown-slug",
        f"no record has slug `{slug}`",
        f"did you mean `{near[0]}`?" if near else "slugs are the part of a file name after the number",
    )


def status_problems(rec: RecordFile, shown: str, project: Project, shared: dict[str, str]) -> list[Problem]:
    """The status rules: what each status needs before a record may claim it.

    Over 60 lines: one rule after another, each a few lines; split up they would only be harder
    to compare.

    `shared` is `_shared_blockers(project)`, made once for all the records.
    """
    r, pos = rec.record, rec.positions
    out: list[Problem] = []
    if r.status in ("adopted", "rejected"):
        missing = []
        if not r.verdict:
            missing.append("a `verdict`")
        if not variants.has_results(r):
            missing.append("at least one result")
        if missing:
            out.append(
                Problem(
                    shown,
                    *pos.of(("status",)),
                    "status-rule",
                    f"status `{r.status}` needs {' and '.join(missing)}",
                    "measure it first, or keep the status `in-progress`",
                )
            )
    if r.status == "blocked":
        unknown = project.unloaded_blocker_ids
        open_ = [
            b for b in r.blockers if b.status == "open" or (b.ref and (shared.get(b.ref) == "open" or b.ref in unknown))
        ]
        if not open_:
            out.append(
                Problem(
                    shown,
                    *pos.of(("status",)),
                    "status-rule",
                    "status `blocked` needs an open blocker",
                    "add a blocker with `status: open`, or change the status",
                )
            )
    if r.status != "superseded" and r.superseded_by is not None:
        line, col = pos.of(("superseded_by",), key=True)
        out.append(
            Problem(
                shown,
                line,
                col,
                "status-rule",
                f"`superseded_by` is set, but the status is `{r.status}`",
                "set the status to `superseded`, or remove `superseded_by`",
            )
        )
    if r.status == "superseded" and r.superseded_by is None:
        out.append(
            Problem(
                shown,
                *pos.of(("status",)),
                "status-rule",
                "status `superseded` needs `superseded_by`",
                "name the slug of the record that replaces this one",
            )
        )
    return out


def _shared_blockers(project: Project) -> dict[str, str]:
    return {b.id: b.status or "" for rec in project.records for b in rec.record.blockers if b.id}
