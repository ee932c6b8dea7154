"""`improvements new`: start a record with the next free number, from a commented starter."""

from __future__ import annotations

import datetime as dt
import re
import sys
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING

import click

from generator.cli import resolve_root, root_option

if TYPE_CHECKING:
    from generator.project.load import Project

# Slugs name files and appear in links and commands: a few words say which idea it is, the
# title says the rest.
SLUG_MAX = 40
SLUG_WORDS = 5
_SLUG_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
# A parenthesised or bracketed aside ("(NCCL_P2P_DISABLE=1)") is detail, not the idea's name.
_ASIDE_RE = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")


def slugify(title: str) -> str:
    """The file-name slug of a title: its first few lowercase ASCII words joined by hyphens.

    "MSCCL++ all-reduce" -> "mscclpp-all-reduce"; asides in parentheses are dropped
    ("Disable NCCL peer-to-peer (NCCL_P2P_DISABLE=1)" -> "disable-nccl-peer-to-peer"), unless
    nothing else is left; at most SLUG_WORDS words and SLUG_MAX characters, cut at a word.
    """
    slug = _short_slug(_words(_ASIDE_RE.sub(" ", title)))
    return slug or _short_slug(_words(title))


def _words(text: str) -> list[str]:
    # "++" reads as "plus plus" (C++, MSCCL++); "pp" keeps the name recognisable.
    text = text.replace("+", "p")
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    return re.findall(r"[a-z0-9]+", text)


def _short_slug(words: list[str]) -> str:
    slug = ""
    for word in words[:SLUG_WORDS]:
        candidate = f"{slug}-{word}" if slug else word
        if len(candidate) > SLUG_MAX and slug:
            break
        slug = candidate[:SLUG_MAX]
    return slug


def yaml_scalar(value: str, key: str, *, indent: int = 2, width: int = 92) -> str:
    """`value` as YAML that reads back as exactly `value`: plain, folded (long text) or quoted."""
    import textwrap

    import yaml

    from generator.base.read import MAX_LINE_CHARS, YamlProblem, check_text, parse

    too_long = False

    def reads_back(rendered: str) -> bool:
        nonlocal too_long
        try:
            data, _ = parse(f"{key}: {rendered}\n")
            check_text(f"{' ' * indent}{key}: {rendered}\n")
        except YamlProblem as exc:
            # Text that reads back but breaks a file limit would be written, then refused by `check`.
            too_long = too_long or exc.code in ("line-too-long", "file-too-large")
            return False
        return isinstance(data, dict) and data.get(key) == value

    candidates = []
    if len(value) + len(key) + 2 > width and "\n" not in value:
        lines = textwrap.wrap(value, width - indent, break_long_words=False, break_on_hyphens=False)
        candidates.append(">-\n" + "\n".join(" " * indent + line for line in lines))
    dumped = yaml.safe_dump(value, allow_unicode=True, width=10**6, default_style=None)
    candidates.append(dumped.removesuffix("\n...\n").rstrip("\n"))
    candidates.append(yaml.safe_dump(value, allow_unicode=True, width=10**6, default_style='"').rstrip("\n"))
    for rendered in candidates:
        if reads_back(rendered):
            return rendered
    if too_long:
        raise click.UsageError(
            f"the {key} is too long for a record: a line holds at most {MAX_LINE_CHARS:,} characters "
            "and a word cannot be folded"
        )
    raise click.UsageError(f"cannot write this {key} as YAML; use `--edit` and type it in the file")


def starter_text(
    project: Project, *, title: str, tier: int, slug: str, tags: list[str], hypothesis: str, date: dt.date | None = None
) -> str:
    """The commented starter record: every field explained, the optional ones commented out."""
    import os
    from importlib.resources import files

    import jinja2

    source = files("generator").joinpath("templates", "starter.yaml.j2").read_text(encoding="utf-8")
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False)
    schema = Path(os.path.relpath(project.root / "schema" / "record.schema.json", project.improvements_dir))
    return env.from_string(source).render(
        schema=schema.as_posix(),
        title=yaml_scalar(title, "title"),
        tier=tier,
        tiers=[(n, _comment_wrap(text)) for n, text in sorted(project.campaign.tiers.items())],
        slug=slug,
        tags="[" + ", ".join(tags) + "]",
        date=(date or dt.date.today()).isoformat(),
        hypothesis=yaml_scalar(hypothesis, "hypothesis") if hypothesis else "",
    )


def _comment_wrap(text: str) -> str:
    import textwrap

    return "\n#      ".join(textwrap.wrap(" ".join(text.split()), 86))


def _split_tags(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> list[str]:
    tags: list[str] = []
    for value in values:
        for tag in value.split(","):
            tag = tag.strip()
            if not tag:
                continue
            if not _SLUG_RE.match(tag):
                raise click.BadParameter(f"`{tag}` is not lowercase words joined by hyphens", ctx, param)
            if tag not in tags:
                tags.append(tag)
    return tags


def ensure_schema(project: Project) -> Path | None:
    """Write schema/record.schema.json when the repository has none, so editors can complete keys."""
    from generator.base.fsio import create_exclusive
    from generator.commands.schema import schema_text

    path = project.root / "schema" / "record.schema.json"
    if path.exists():
        return None
    path.parent.mkdir(exist_ok=True)
    # The campaign's own metrics too, so the editor does not flag a name `check` accepts.
    return path if create_exclusive(path, schema_text("record", project.campaign.metrics)) else None


def allocate(project: Project, slug: str, text: str) -> Path:
    """Create NN-slug.yaml with the next free number, exclusively.

    Two `new` runs at once must not take the same number, even for different slugs (which
    O_EXCL alone would allow), so numbering happens under the repository's lock;
    and the folder is scanned again after the file is created, in case a writer that does not
    take the lock got there first.
    """
    from generator.base import fsio
    from generator.project.load import record_files

    folder = project.improvements_dir
    with fsio.lock(project.root / fsio.LOCK_NAME):
        files, _strays = record_files(folder)
        taken = {slug_: path for path, _n, slug_ in files}
        if slug in taken:
            raise click.UsageError(
                f"slug `{slug}` is taken by improvements/{taken[slug].name}; choose another title, or pass --slug SLUG"
            )
        number = max((n for _p, n, _s in files), default=0) + 1
        for _attempt in range(1000):
            path = folder / f"{number:02d}-{slug}.yaml"
            if fsio.create_exclusive(path, text):
                again, _ = record_files(folder)
                if [p for p, n, _s in again if n == number and p != path]:
                    path.unlink()
                    number += 1
                    continue
                return path
            number += 1
    raise click.ClickException("could not find a free record number")


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
    that is already taken is refused.
    """
    from generator.base.problems import ProblemsFound, Report, rel
    from generator.checks.validate import load_project
    from generator.commands.status import check_edited

    title = title.strip()
    if not title:
        raise click.UsageError("the title is empty")
    slug = slug_opt if slug_opt is not None else slugify(title)
    if not _SLUG_RE.match(slug):
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
