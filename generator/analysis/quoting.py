"""Where prose quotes figures: each `{{ ... }}` in a prose field of a file's data, with its place.

Apart from `analysis.figures` (which looks the figures up in the analysis) so that the analysis
can note each record's quotes once, when it analyses the record, and keep them with it: the
pages and `check` then read them instead of walking every record's data again.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from generator.project.load import Loaded, RecordFile

REFERENCE = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")

# The prose fields, those the pages fill through their `inline`, `cell` and `paragraphs` filters.
# Shell text (`before:`, `inside:`, flag values, commands, environment) is never scanned: a step
# such as `docker ps --format '{{.Names}}'` holds braces that are no reference.
PROSE_FIELDS = frozenset(
    {
        "action",
        "caveats",
        "cause",
        "command_note",
        "context",
        "description",
        "detail",
        "finding",
        "hypothesis",
        "label",
        "missing",
        "note",
        "quote",
        "reason",
        "standing_note",
        "summary",
        "symptom",
        "title",
        "verdict",
    }
)
# Maps whose keys are free names (an environment variable could be called `note`).
_FREE_KEYS = frozenset({"env", "details"})


def prose_strings(data: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """Each prose string of a file's data, with its path; a list of prose (`caveats`) counts."""
    if isinstance(data, str):
        field = next((p for p in reversed(path) if isinstance(p, str)), None)
        if field in PROSE_FIELDS:
            yield path, data
    elif isinstance(data, dict):
        for key, value in data.items():
            if str(key) not in _FREE_KEYS:
                yield from prose_strings(value, (*path, str(key)))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from prose_strings(value, (*path, i))


Quote = tuple[tuple[str | int, ...], str, str]


def file_quotes(loaded: Loaded) -> tuple[Quote, ...]:
    """`quotes_in` a loaded file's data; none, without the walk, when its text cannot hold one.

    A parsed string holds `{{` only where the text does, or through an escape of a
    double-quoted scalar (`"\\x7b\\x7b"`, a `\\` before a line break), which needs a backslash:
    almost no record quotes anything, and searching its text is a hundredth of walking its data.
    """
    text = loaded.text
    if text is not None and "{{" not in text and "\\" not in text:
        return ()
    return quotes_in(loaded.data)


def quotes_in(data: Any) -> tuple[Quote, ...]:
    """Each reference in the prose of a file's `data`: (the field's path, `{{ ... }}` as written, the text inside)."""
    out: list[Quote] = []
    _collect(data, [], None, out)
    return tuple(out)


def _collect(data: Any, path: list[str | int], field: str | None, out: list[Quote]) -> None:
    """`prose_strings` and the search in one walk, the path made a tuple only at a reference.

    Every record is walked each run (`check` too); the generators' and paths' cost per node was
    most of the walk, and almost no string quotes anything.
    """
    if isinstance(data, str):
        if "{{" in data and field in PROSE_FIELDS:
            out.extend((tuple(path), m.group(0), m.group(1)) for m in REFERENCE.finditer(data))
    elif isinstance(data, dict):
        for key, value in data.items():
            name = str(key)
            if name not in _FREE_KEYS:
                path.append(name)
                _collect(value, path, name, out)
                path.pop()
    elif isinstance(data, list):
        for i, value in enumerate(data):
            path.append(i)
            _collect(value, path, field, out)
            path.pop()


def record_names(rec: RecordFile) -> tuple[str, ...]:
    """The names a quote may give a record by (its first part): its slug, `07` and `7`."""
    return tuple(dict.fromkeys((rec.slug, f"{rec.number:02d}", str(rec.number))))


@dataclass(frozen=True)
class TemplateQuote:
    """A reference quoted in an override template's own text: a string the template hands a prose
    filter (`{{ "gain {{ 02.c64.output_throughput.change }}" | inline }}`) or a `{% raw %}` block."""

    shown: str  # templates/NAME, as `check` names the file
    line: int
    col: int
    written: str
    inside: str


def template_quotes(root: Path) -> tuple[TemplateQuote, ...]:
    """Every reference the campaign's override templates (templates/ under `root`) quote in their text.

    Read with Jinja's own lexer, so that only the text a template writes out or hands a filter
    counts, never its `{{ page.x }}` expressions. A template Jinja cannot read gives what comes
    before the error (the build reports the error at the template's line).
    """
    folder = root / "templates"
    try:
        paths = sorted(p for p in folder.iterdir() if p.is_file()) if folder.is_dir() else []
    except OSError:
        return ()
    if not paths:
        return ()  # no override: `check` imports no Jinja (tests/test_imports.py)
    import jinja2

    lexer = jinja2.Environment()
    out: list[TemplateQuote] = []
    for path in paths:
        try:
            source = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        lines = source.splitlines()
        try:
            for lineno, kind, value in lexer.lex(source, path.name):
                if kind not in ("string", "data") or "{{" not in value:
                    continue
                for m in REFERENCE.finditer(value):
                    line = lineno + value.count("\n", 0, m.start())
                    at = lines[line - 1].find(m.group(0)) if line <= len(lines) else -1
                    out.append(
                        TemplateQuote(f"templates/{path.name}", line, at + 1 if at >= 0 else 1, m.group(0), m.group(1))
                    )
        except jinja2.TemplateSyntaxError:
            continue
    return tuple(out)
