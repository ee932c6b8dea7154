"""`improvements new`: start a record with the next free number, from a commented starter."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

import click

from generator.authoring.starter import SLUG_RE, slugify
from generator.cli import resolve_root, root_option


def _split_tags(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> list[str]:
    tags: list[str] = []
    for value in values:
        for tag in value.split(","):
            tag = tag.strip()
            if not tag:
                continue
            if not SLUG_RE.match(tag):
                raise click.BadParameter(f"`{tag}` is not lowercase words joined by hyphens", ctx, param)
            if tag not in tags:
                tags.append(tag)
    return tags


@click.command(
    "new",
    epilog="""\b
Examples:
  improvements new "MSCCL++ all-reduce" --tier 1
  improvements new "Disable NCCL peer-to-peer" --tier 1 --date 2026-03-02
  improvements new "NCCL Simple protocol" --tier 1 --tags nccl,all-reduce \\
      --hypothesis "Forcing NCCL_PROTO=Simple may speed up the all-reduces over PCIe."
  $EDITOR $(improvements new "TP4 + PP2" --tier 2)
""",
)
@root_option
@click.argument("title")
@click.option(
    "--tier",
    type=click.IntRange(1, 3),
    required=True,
    metavar="N",
    help="1, 2 or 3, as campaign.yaml's `tiers` describe them.",
)
@click.option("--tags", "tags", multiple=True, callback=_split_tags, metavar="TAG[,TAG...]", help="Tags (repeatable).")
@click.option("--hypothesis", default="", help="Fill in the hypothesis, so the record checks clean at once.")
@click.option("--slug", "slug_opt", metavar="SLUG", help="File-name slug (default: a few words of the title).")
@click.option(
    "--date",
    "date_opt",
    type=click.DateTime(formats=["%Y-%m-%d"]),
    metavar="YYYY-MM-DD",
    help="The experiment's date (default: today).",
)
@click.option("--edit", is_flag=True, help="Open the new record in $EDITOR (or $VISUAL).")
def command(
    root: Path | None,
    title: str,
    tier: int,
    tags: list[str],
    hypothesis: str,
    slug_opt: str | None,
    date_opt: dt.datetime | None,
    edit: bool,
) -> None:
    """Start a new record with the next free number.

    The slug comes from the title: its first few words, lowercase ASCII joined by hyphens,
    without asides in parentheses. The file is
    written from a commented starter that explains every field, and its path is printed.
    It never overwrites a file: two `new` runs at once get two different numbers, and a slug
    that is already taken is refused. While an `improvements run` is going it adds no record
    (the run links into the campaign when it ends, and a new record fails `check` until written).
    """
    from generator.authoring.records import check_edited, no_run_going
    from generator.authoring.starter import allocate, ensure_schema, starter_text
    from generator.base.problems import ProblemsFound, Report, rel
    from generator.checks.validate import load_project

    title = title.strip()
    if not title:
        raise click.UsageError("the title is empty")
    slug = slug_opt if slug_opt is not None else slugify(title)
    if not SLUG_RE.match(slug):
        hint = "" if slug_opt else f" from the title {title!r}; pass --slug SLUG"
        raise click.UsageError(f"cannot make a slug (lowercase words joined by hyphens){hint}")
    repo = resolve_root(root)
    # Only the campaign must load: a half-written record elsewhere must not stop a new one.
    report = Report()
    project = load_project(repo, report)
    if project is None:
        raise ProblemsFound(report)
    date = date_opt.date() if date_opt is not None else None
    text = starter_text(project, title=title, tier=tier, slug=slug, tags=tags, hypothesis=hypothesis.strip(), date=date)
    # A run going links into the campaign when it ends, and a new record's blank hypothesis
    # fails `check` until it is written: no record is added under a run.
    with no_run_going(repo, "new"):
        path = allocate(project, slug, text)
    schema = ensure_schema(project)
    sys.stdout.write(rel(path, Path.cwd()) + "\n")
    if schema is not None:
        sys.stderr.write(f"wrote {rel(schema, repo)}, so that editors complete and check the record's keys\n")
    if not hypothesis.strip() and not edit:
        sys.stderr.write("fill in `hypothesis:` next; `improvements check` fails until you do\n")
    if edit:
        click.edit(filename=str(path))
        again = load_project(repo, Report())
        if again is None:
            raise ProblemsFound(report)
        problems = check_edited(again, path, path.read_text(encoding="utf-8"))
        if any(p.severity == "error" for p in problems):
            raise ProblemsFound(Report(problems))
