"""Edits to YAML files that keep everything the user wrote: comments, key order, quoting, blank lines.

ruamel.yaml's round trip keeps comments and order, but it still re-emits the whole file in
its own style (indentation of sequences, spacing inside flow collections, line folding).
So an edit is made on the round-trip tree, and only the lines that the edit changed in
ruamel's rendering are spliced into the original text: every other line stays byte for byte
what the user wrote.

Writing is not done here: the commands write through generator.base.fsio (atomic writes,
exclusive creates, the lock), the one file-system module.
"""

from __future__ import annotations

import difflib
import io
import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.scalarstring import (
    DoubleQuotedScalarString,
    FoldedScalarString,
    LiteralScalarString,
    SingleQuotedScalarString,
)

from generator.base.fsio import atomic_write

# Wide enough that ruamel never re-folds a long line the user kept on one line.
_WIDTH = 4096


def _yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = _WIDTH
    yaml.allow_duplicate_keys = False
    return yaml


def _guess_indent(text: str) -> tuple[int, int]:
    """(mapping indent, sequence dash offset) as most of the file uses them, so fewer lines need splicing."""
    from collections import Counter

    mappings: Counter[int] = Counter()
    offsets: Counter[int] = Counter()
    # Comment lines say nothing about the structure: a list may open with one, at any indent.
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    for line, nxt in itertools.pairwise(lines):
        stripped = line.rstrip()
        if not stripped.endswith(":") or not nxt.strip():
            continue
        base = len(line) - len(line.lstrip(" -"))
        inner = len(nxt) - len(nxt.lstrip())
        if nxt.lstrip().startswith("- "):
            offsets[max(inner - base, 0)] += 1
        elif inner > base:
            mappings[inner - base] += 1
    mapping = mappings.most_common(1)[0][0] if mappings else 2
    offset = offsets.most_common(1)[0][0] if offsets else 0
    return mapping, offset


class Document:
    """A YAML file loaded for editing: the round-trip tree plus the text it came from."""

    def __init__(self, text: str) -> None:
        self.original = text
        # ruamel keeps a CR inside comments; edit LF text and put each line's CR back when done.
        self._lf = text.replace("\r\n", "\n")
        self._yaml = _yaml()
        mapping, offset = _guess_indent(self._lf)
        self._yaml.indent(mapping=mapping, sequence=mapping + offset, offset=offset)
        self.data: Any = self._yaml.load(self._lf)
        # ruamel's rendering of the untouched tree: the base the edit is measured against.
        self._base = self._dump()

    @classmethod
    def from_path(cls, path: Path) -> Document:
        with open(path, encoding="utf-8", newline="") as f:
            return cls(f.read())

    def _dump(self) -> str:
        buf = io.StringIO()
        self._yaml.dump(self.data, buf)
        return buf.getvalue()

    def text(self) -> str:
        """The edited file: the original with only the lines the edit changed replaced, each
        kept line with its own line ending."""
        dumped = self._dump()
        edited = splice(self._lf, self._base, dumped, keep_restyled=True)
        if edited != self._lf and not _same_data(edited, dumped):
            edited = splice(self._lf, self._base, dumped)
        if edited == self._lf:
            return self.original
        return _endings_like(self.original, edited) if "\r" in self.original else edited


def _same_data(text: str, rendered: str) -> bool:
    """Whether the spliced text holds what ruamel's rendering of the edit holds."""
    from generator.base.read import YamlProblem, parse

    try:
        return bool(parse(text)[0] == parse(rendered)[0])
    except YamlProblem:
        return False


def _endings_like(original: str, edited: str) -> str:
    """`edited` (LF only) with each line the original had kept with that line's own ending, and
    new lines ending as most of the file's lines do: a file with mixed endings stays mixed."""
    old = original.split("\n")
    crlf = sum(line.endswith("\r") for line in old[:-1])
    new_ending = "\r" if crlf * 2 > len(old) - 1 else ""
    keys = [line.removesuffix("\r") for line in old]
    lines = edited.split("\n")
    out: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, keys, lines, autojunk=False).get_opcodes():
        if tag == "equal":
            out.extend(old[i1:i2])
            continue
        # A changed line keeps the ending of the line it replaces; an added one, the file's.
        for k, line in enumerate(lines[j1:j2]):
            replaced = old[i1 + k] if i1 + k < i2 else None
            out.append(line + ("\r" if replaced is not None and replaced.endswith("\r") else new_ending))
    # The last piece is what follows the final newline: never given an ending of its own.
    if out and lines[-1] == "":
        out[-1] = ""
    return "\n".join(out)


def splice(original: str, base: str, edited: str, *, keep_restyled: bool = False) -> str:
    """Apply the change from `base` to `edited` (ruamel renderings) onto `original` (the user's text).

    Lines are matched between the user's text and ruamel's rendering of it; each changed hunk
    is widened until both its ends sit on lines the two agree on, so a region ruamel
    re-styled is only replaced when the edit itself falls inside it. With `keep_restyled`, an
    insertion right after such a region (a new item after a flow mapping the user wrote over
    several lines) goes before the next shared line instead, leaving the region as written;
    the caller checks that the result still holds the edit's data.
    """
    if base == edited:
        return original
    if original == base:
        return edited
    a = original.splitlines(keepends=True)
    b = base.splitlines(keepends=True)
    c = edited.splitlines(keepends=True)
    # b line index -> a line index, for lines the user's text and ruamel's rendering share.
    to_a: dict[int, int] = {}
    for block in difflib.SequenceMatcher(None, b, a, autojunk=False).get_matching_blocks():
        for k in range(block.size):
            to_a[block.a + k] = block.b + k
    ops = [op for op in difflib.SequenceMatcher(None, b, c, autojunk=False).get_opcodes() if op[0] != "equal"]
    spans: list[tuple[int, int, int, int]] = []  # (a_start, a_end, j1, j2)
    for _tag, i1, i2, j1, j2 in ops:
        span = _direct(i1, i2, len(b), len(a), to_a, keep_restyled)
        if span is None:
            # Widen until both ends sit on lines the user's text and ruamel's rendering share.
            while i1 > 0 and (i1 - 1) not in to_a:
                i1, j1 = i1 - 1, j1 - 1
            while i2 < len(b) and i2 not in to_a:
                i2, j2 = i2 + 1, j2 + 1
            span = (to_a[i1 - 1] + 1 if i1 > 0 else 0, to_a[i2] if i2 < len(b) else len(a))
        if spans and span[0] < spans[-1][1]:
            prev = spans.pop()
            span = (min(prev[0], span[0]), max(prev[1], span[1]))
            j1 = min(prev[2], j1)
            j2 = max(prev[3], j2)
        spans.append((span[0], span[1], j1, j2))
    out: list[str] = []
    a_pos = 0
    if a and not a[-1].endswith("\n") and spans and spans[-1][0] == len(a):
        a[-1] += "\n"  # appending after a last line that had no newline
    for a_start, a_end, j1, j2 in spans:
        if a_start == a_end:
            # A new key goes above the comment lines that sit right on top of the key after it:
            # those comments describe that key.
            a_start = a_end = _above_comments(a, a_start, a_pos)
        out.extend(a[a_pos:a_start])
        out.extend(c[j1:j2])
        a_pos = a_end
    out.extend(a[a_pos:])
    return "".join(out)


def _above_comments(a: list[str], at: int, floor: int) -> int:
    if at >= len(a):
        return at
    indent = len(a[at]) - len(a[at].lstrip())
    while at > floor and a[at - 1].lstrip().startswith("#") and len(a[at - 1]) - len(a[at - 1].lstrip()) == indent:
        at -= 1
    return at


def _direct(
    i1: int, i2: int, n: int, n_a: int, to_a: dict[int, int], keep_restyled: bool = False
) -> tuple[int, int] | None:
    """Where a hunk of ruamel's rendering sits in the user's text, when that needs no widening."""
    if i1 == i2:  # an insertion: it needs the line above it shared, or ruamel's indentation may not fit the user's
        above = i1 == 0 or (i1 - 1) in to_a
        if not above and keep_restyled and (i2 == n or i2 in to_a):
            return (n_a, n_a) if i2 == n else (to_a[i2], to_a[i2])
        if not above:
            return None
        if i2 == n:
            return (n_a, n_a)
        if i2 in to_a:
            return (to_a[i2], to_a[i2])
        return (to_a[i1 - 1] + 1, to_a[i1 - 1] + 1) if i1 > 0 else None
    if any(i not in to_a for i in range(i1, i2)):
        return None
    first = to_a[i1]
    if [to_a[i] for i in range(i1, i2)] != list(range(first, first + i2 - i1)):
        return None
    return (first, to_a[i2 - 1] + 1)


# Text longer than this is written as a block scalar, which ruamel folds at `_WIDTH`: on one
# line it would pass the reader's line limit (read.MAX_LINE_CHARS) and `check` would refuse
# the file the edit wrote.
_FOLD_OVER = _WIDTH


def write_edited(path: Path, text: str) -> None:
    """Write an edited user file atomically. A record that is a symlink stays one: the file it
    points at is edited (replacing the link with a copy would cut it from where it lives)."""
    import os

    atomic_write(Path(os.path.realpath(path)) if path.is_symlink() else path, text)


def styled_like(old: Any, new: str) -> Any:
    """`new` in the quoting style of `old`, so a quoted value stays quoted after an edit."""
    if len(new) > _FOLD_OVER and not isinstance(old, FoldedScalarString | LiteralScalarString):
        return (LiteralScalarString if "\n" in new else FoldedScalarString)(new)
    for kind in (DoubleQuotedScalarString, SingleQuotedScalarString):
        if isinstance(old, kind):
            return kind(new)
    if isinstance(old, FoldedScalarString | LiteralScalarString):
        return type(old)(new)
    return new


def set_key(mapping: CommentedMap, key: str, value: Any, order: Sequence[str] = ()) -> None:
    """Set `key`, keeping its place and quoting if it exists, else inserting it where `order` puts it.

    `order` is the canonical key order (the model's fields): a new key goes right after the
    last existing key that comes before it there, or at the end.
    """
    if key in mapping:
        mapping[key] = styled_like(mapping[key], value) if isinstance(value, str) else value
        return
    position = len(mapping)
    if key in order:
        before = set(order[: order.index(key)])
        keys = list(mapping)
        for i in range(len(keys) - 1, -1, -1):
            if keys[i] in before:
                position = i + 1
                break
        else:
            position = 0
    mapping.insert(position, key, value)


def delete_key(mapping: CommentedMap, key: str) -> None:
    if key in mapping:
        del mapping[key]
