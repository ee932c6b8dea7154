"""A new record's starter text and its file: the slug, the YAML scalars, the next free number."""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING

from generator.base.problems import CommandError, UsageProblem

if TYPE_CHECKING:
    from generator.project.load import Project

# Slugs name files and appear in links and commands: a few words say which idea it is, the
# title says the rest.
SLUG_MAX = 40
SLUG_WORDS = 5
SLUG_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
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
        raise UsageProblem(
            f"the {key} is too long for a record: a line holds at most {MAX_LINE_CHARS:,} characters "
            "and a word cannot be folded"
        )
    raise UsageProblem(f"cannot write this {key} as YAML; use `--edit` and type it in the file")


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


def ensure_schema(project: Project) -> Path | None:
    """Write schema/record.schema.json when the repository has none, so editors can complete keys."""
    from generator.base.fsio import create_exclusive
    from generator.model.schema import schema_text

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
    from generator.authoring.renumber import file_name, number_width
    from generator.base import fsio
    from generator.project.load import record_files

    folder = project.improvements_dir
    with fsio.lock(project.root / fsio.LOCK_NAME):
        files, _strays = record_files(folder)
        taken = {slug_: path for path, _n, slug_ in files}
        if slug in taken:
            raise UsageProblem(
                f"slug `{slug}` is taken by improvements/{taken[slug].name}; choose another title, or pass --slug SLUG"
            )
        number = max((n for _p, n, _s in files), default=0) + 1
        _refuse_long_names(project, number, slug)
        width = number_width(p for p, _n, _s in files)
        for _attempt in range(1000):
            path = folder / file_name(number, slug, width)
            if fsio.create_exclusive(path, text):
                again, _ = record_files(folder)
                if [p for p, n, _s in again if n == number and p != path]:
                    path.unlink()
                    number += 1
                    continue
                return path
            number += 1
    raise CommandError("could not find a free record number")


def _refuse_long_names(project: Project, number: int, slug: str) -> None:
    """Refuse, before anything is written, a slug whose record file or page name the file system
    cannot hold (the page's name is longer: the series comes first); `check` says the same."""
    from generator.checks.validate import NAME_MAX

    for name in (f"{number:02d}-{slug}.yaml", f"{project.campaign.series}-{number:02d}-{slug}.md"):
        if len(name.encode()) > NAME_MAX:
            raise UsageProblem(
                f"the slug is too long: `{name[:40]}...` would be {len(name.encode())} bytes, over the "
                f"{NAME_MAX} a file name may have; pass a shorter --slug"
            )
