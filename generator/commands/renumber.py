"""`improvements renumber`: move a record to another number, or close the gaps and collisions.

Records refer to each other by slug, never by number, so a renumbering only renames files:
the record files here, and the generated series pages (rebuilt by the one render path).
Moving onto a number another record holds is refused rather than shifting the others: a
shift silently renames records the user did not name, and `--compact` exists for that.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from generator.cli import resolve_root, root_option


@click.command(
    "renumber",
    epilog="""\b
Examples:
  improvements renumber mscclpp-all-reduce 4
  improvements renumber 12 10 --dry-run
  improvements renumber --compact            # 1, 2, 3... with no gaps or duplicates
""",
)
@root_option
@click.argument("record", metavar="[SLUG|NN]", required=False)
@click.argument("number", metavar="[NN]", type=click.IntRange(min=0), required=False)
@click.option("--compact", is_flag=True, help="Renumber every record 1, 2, 3... in the current order.")
@click.option("--dry-run", is_flag=True, help="Show the plan; change nothing.")
def command(root: Path | None, record: str | None, number: int | None, compact: bool, dry_run: bool) -> None:
    """Move a record to another number, or close the gaps.

    Renames the record files and rebuilds the generated series, so old pages go and new
    ones appear. References between records use slugs, so they stay intact. A number that
    another record holds is refused (no silent shifting); `--compact` renumbers everything
    1, 2, 3... in the current order and so also resolves duplicate numbers. While an
    `improvements run` is going it renames nothing (the run links into its record when it ends).
    """
    # Longer than most: a command's steps in the order that keeps the user's files safe (check,
    # change, check the result, write); split up, that order would be harder to see.
    from generator.authoring.records import find_record, no_run_going
    from generator.authoring.renumber import plan_compact, plan_move, rebuild_or_undo, rename_all, validate
    from generator.base.fsio import edit_locks
    from generator.base.problems import ProblemsFound, Report, rel
    from generator.checks.validate import load_project
    from generator.project.load import record_files

    if compact == (record is not None):
        raise click.UsageError("give either SLUG|NN and a new number, or --compact")
    if record is not None and number is None:
        raise click.UsageError("missing the new number: improvements renumber SLUG|NN NN")
    repo = resolve_root(root)
    report = Report()
    project = load_project(repo, report)
    # Duplicate numbers are what this command fixes; any other error must be fixed first,
    # because the series cannot be rebuilt from a broken record.
    blocking = [p for p in report.errors if p.code != "duplicate-number"]
    if project is None or blocking:
        raise ProblemsFound(Report(blocking or report.problems))
    files, _strays = record_files(project.improvements_dir)
    if compact:
        moves = plan_compact(files)
    else:
        assert record is not None and number is not None
        moves = plan_move(files, find_record(project, report, record), number)
    if not moves:
        sys.stdout.write("nothing to renumber\n")
        return

    series = project.campaign.series
    docs = project.docs_dir
    verb = "would rename" if dry_run else "renamed"
    lines = []
    for m in moves:
        lines.append(f"{verb} {rel(m.old, repo)} -> {rel(m.new, repo)}")
        if m.old_number == m.new_number:
            continue  # only the campaign's width changed the file's name; the page keeps its name
        old_page = docs / f"{series}-{m.old_number:02d}-{m.slug}.md"
        new_page = docs / f"{series}-{m.new_number:02d}-{m.slug}.md"
        lines.append(f"  page {rel(old_page, repo)} -> {rel(new_page, repo)}")
    validate(moves, repo, docs, series)
    if dry_run:
        sys.stdout.write("\n".join(lines) + "\n")
        return
    # The renamed files are locked as `status` and `import` lock them, so an edit in flight
    # finishes before its file moves, and one that waited finds the new name. A run going links
    # into a record when it ends: no record moves under it.
    with no_run_going(repo, "renumber"), edit_locks(repo, [m.old for m in moves]):
        gone = [m.old for m in moves if not m.old.exists()]
        if gone:
            raise click.UsageError(f"{rel(gone[0], repo)} was moved or removed meanwhile; nothing was renamed")
        rename_all(moves, repo)
        result = rebuild_or_undo(moves, repo)
    sys.stdout.write("\n".join(lines) + "\n")
    if result is None:
        sys.stderr.write("the series was not rebuilt; fix these, then run `improvements build`:\n")
        after = Report()
        load_project(repo, after)
        raise ProblemsFound(after)
    sys.stdout.write(f"series rebuilt: {len(result.written)} written, {len(result.removed)} removed\n")
