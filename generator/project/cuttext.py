"""Prose cut short by a `#`: an unquoted "issue #8" in a note ends the text at the `#`.

YAML reads ` #` after a plain (unquoted) scalar as the start of a comment, so the text
silently stops there. The parsed data cannot show it (comments are gone), so this reads the
raw line after each prose value: a plain scalar followed by a comment on its own line is the
usual sign. Comments elsewhere (after a number, a status, a key on its own) are left alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from generator.base.problems import Problem
from generator.base.read import Path_, Positions

# The fields that hold sentences, where a `#` is far more likely part of the text than a comment.
PROSE_KEYS = frozenset(
    {
        "title",
        "hypothesis",
        "summary",
        "verdict",
        "note",
        "detail",
        "cause",
        "symptom",
        "finding",
        "quote",
        "missing",
        "description",
        "command_note",
        "action",
    }
)
# Lists whose items are sentences.
PROSE_LISTS = frozenset({"caveats", "context"})
# Any line with something before a ` #`: without one, no file can have the problem, and the
# positions (a second parse) are not needed.
_COMMENT_AFTER_TEXT = re.compile(r"\S[ \t]+#")
_COMMENT = re.compile(r"[ \t]#")


def _prose(data: Any, path: Path_) -> Iterator[tuple[Path_, str]]:
    if isinstance(data, dict):
        for key, value in data.items():
            if isinstance(value, str) and key in PROSE_KEYS:
                yield (*path, key), value
            elif isinstance(value, list) and key in PROSE_LISTS:
                yield from (((*path, key, i), v) for i, v in enumerate(value) if isinstance(v, str))
            else:
                yield from _prose(value, (*path, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from _prose(value, (*path, i))


def _comment_column(lines: list[str], line: int, col: int, value: str) -> tuple[int, int] | None:
    """Where the comment that ends the plain scalar at (line, col) starts, or None."""
    first = lines[line - 1][col - 1 :]
    if not first or first[0] in "\"'|>":
        return None  # quoted or a block scalar: a `#` inside is text
    # A plain scalar folds its lines into one with single spaces, so it spans at most one
    # line more than it has spaces.
    for j in range(line - 1, min(len(lines), line + value.count(" ") + 1)):
        start = col - 1 if j == line - 1 else 0
        found = _COMMENT.search(lines[j], start)
        if found is None:
            continue
        before = lines[j][start : found.start()].strip()
        if before and value.endswith(before):
            return j + 1, found.start() + 2
        return None
    return None


def cut_text_problems(text: str, data: Any, positions: Positions, shown: str) -> list[Problem]:
    """A warning for each prose value that a `#` comment may have cut short."""
    # The substring tests first: a search of a whole file by the pattern costs ten times more.
    if (" #" not in text and "\t#" not in text) or not _COMMENT_AFTER_TEXT.search(text):
        return []
    lines = text.split("\n")
    out: list[Problem] = []
    for path, value in _prose(data, ()):
        words = value.split()
        # Positions cost a second parse of the file: only a value whose last word is followed
        # by a comment somewhere in the text can have been cut, so only such a value asks.
        if not words or not re.search(re.escape(words[-1]) + r"[ \t]+#", text):
            continue
        line, col = positions.of(path)
        where = _comment_column(lines, line, col, value)
        if where is None:
            continue
        field = f"`{path[-1]}`" if isinstance(path[-1], str) else f"`{path[-2]}` item {int(path[-1]) + 1}"
        out.append(
            Problem(
                shown,
                *where,
                "cut-text",
                f"the text of {field} stops at this `#`, which YAML reads as a comment",
                'quote the text ("... #8 ...") if the `#` belongs to it, or put the comment on a line of its own',
                severity="warning",
            )
        )
    return out
