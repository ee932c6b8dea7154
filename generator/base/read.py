"""Bytes to plain data, with the position of every key and value: the pipeline's first stage.

This is the fast read path: libyaml (PyYAML's C parser) composes the node tree, and we
build plain Python data from it ourselves so that every key and value keeps its line and
column, duplicate keys are caught, and aliases cannot expand without bound. ruamel.yaml's
round trip is kept for the commands that edit files (`edit`), where comments matter more
than speed. Nothing here imports the rest of the package.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

MAX_FILE_BYTES = 1024 * 1024
MAX_LINE_CHARS = 10_000
MAX_DEPTH = 64
# Nodes built from one file, aliases counted each time they are used. A real record has a
# few hundred; a "billion laughs" file reaches the bound after a few milliseconds.
MAX_NODES = 100_000

Path_ = tuple[str | int, ...]
_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class Positions:
    """Line and column (1-based) of each key and value, by path from the document root.

    Parsed files get theirs on first use, from the text: only a file with a problem needs
    them, and recording a path for every node of every file would cost `check` as much
    again as parsing does.
    """

    def __init__(
        self,
        keys: dict[Path_, tuple[int, int]] | None = None,
        values: dict[Path_, tuple[int, int]] | None = None,
        *,
        text: str | None = None,
    ) -> None:
        self._keys = keys if keys is not None or text is not None else {}
        self._values = values if values is not None or text is not None else {}
        self._text = text

    @property
    def keys(self) -> dict[Path_, tuple[int, int]]:
        if self._keys is None:
            self._fill()
        return self._keys  # type: ignore[return-value]

    @property
    def values(self) -> dict[Path_, tuple[int, int]]:
        if self._values is None:
            self._fill()
        return self._values  # type: ignore[return-value]

    def _fill(self) -> None:
        keys: dict[Path_, tuple[int, int]] = {}
        values: dict[Path_, tuple[int, int]] = {}
        if self._text is not None:
            # The text parsed without a problem before, so this cannot raise.
            root = _compose(self._text)[0]
            _record_positions(root, (), keys, values)
            values[()] = _mark(root.start_mark)
        self._keys, self._values, self._text = keys, values, None

    def of(self, loc: Path_, *, key: bool = False) -> tuple[int, int]:
        """The position of `loc`, or of its nearest ancestor that has one."""
        loc = tuple(loc)
        while loc:
            table = self.keys if key else self.values
            if loc in table:
                return table[loc]
            if loc in self.values:
                return self.values[loc]
            loc = loc[:-1]
            key = True  # for a missing child, point at the parent's key
        return self.values.get((), (1, 1))


class YamlProblem(Exception):
    def __init__(self, line: int, col: int, code: str, message: str, hint: str | None = None):
        super().__init__(message)
        self.line, self.col, self.code, self.message, self.hint = line, col, code, message, hint


def read_text(path: Path) -> str:
    """A YAML file's text, refusing what is too large, not UTF-8 or not text."""
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise YamlProblem(
            1,
            1,
            "file-too-large",
            f"file is {size:,} bytes, over the limit of {MAX_FILE_BYTES:,}",
            "a record this large is almost surely not one; keep raw benchmark output under results/",
        )
    with path.open("rb") as f:
        # Read at most one byte over the limit: the file may have grown since stat. Its size and
        # a byte more first: asked for the limit, the reader maps a megabyte for every file.
        data = f.read(size + 1)
        if len(data) > size:
            data += f.read(MAX_FILE_BYTES + 1 - len(data))
    if len(data) > MAX_FILE_BYTES:
        raise YamlProblem(1, 1, "file-too-large", f"file is over the limit of {MAX_FILE_BYTES:,} bytes")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise YamlProblem(1, 1, "not-utf8", "file is UTF-16, not UTF-8", "save the file as UTF-8")
    if data.startswith(b"\xef\xbb\xbf"):
        raise YamlProblem(
            1,
            1,
            "byte-order-mark",
            "file starts with a UTF-8 byte-order mark",
            "save the file as UTF-8 without BOM",
        )
    nul = data.find(b"\x00")
    if nul >= 0:
        line, col = byte_position(data, nul)
        raise YamlProblem(line, col, "nul-byte", "file contains a NUL byte", "is this a binary file?")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, col = byte_position(data, exc.start)
        raise YamlProblem(
            line,
            col,
            "not-utf8",
            f"byte 0x{data[exc.start]:02x} is not valid UTF-8",
            "save the file as UTF-8",
        ) from None
    check_text(text)
    return text


def check_text(text: str) -> None:
    """The limits a file's text is held to, for text a command is about to write as much as for
    text read: an edit that `check` would refuse is refused before it is written."""
    if len(text) > MAX_FILE_BYTES // 4 and len(text.encode("utf-8", "surrogatepass")) > MAX_FILE_BYTES:
        raise YamlProblem(1, 1, "file-too-large", f"the file would be over the limit of {MAX_FILE_BYTES:,} bytes")
    nul = text.find("\x00")
    if nul >= 0:
        raise YamlProblem(*text_position(text, nul), "nul-byte", "text contains a NUL character")
    # A text no longer than the limit has no line over it; most records are, and skip the split.
    for n, line_text in enumerate(text.splitlines() if len(text) > MAX_LINE_CHARS else (), 1):
        if len(line_text) > MAX_LINE_CHARS:
            raise YamlProblem(
                n,
                MAX_LINE_CHARS + 1,
                "line-too-long",
                f"line is {len(line_text):,} characters, over the limit of {MAX_LINE_CHARS:,}",
                "use a block scalar (|) for long text",
            )


# What YAML 1.1 does not allow in a stream (its printable set is tab, line breaks, U+0020-U+007E,
# U+0085, U+00A0-U+D7FF, U+E000-U+FFFD and above U+FFFF).
_NOT_PRINTABLE = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


# Control characters other than tab and line feed, which a double-quoted escape can produce.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _first_unprintable(text: str) -> tuple[int, int] | None:
    bad = _NOT_PRINTABLE.search(text)
    return None if bad is None else text_position(text, bad.start())


def text_position(text: str, offset: int) -> tuple[int, int]:
    """Line and column (1-based) of a character offset."""
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


def byte_position(data: bytes, offset: int) -> tuple[int, int]:
    """Line and column of a byte offset, the column counted in characters like the parser's."""
    start = data.rfind(b"\n", 0, offset) + 1
    return data.count(b"\n", 0, offset) + 1, len(data[start:offset].decode("utf-8", "replace")) + 1


def _mark(mark: Any) -> tuple[int, int]:
    return (mark.line + 1, mark.column + 1)


def parse(text: str) -> tuple[Any, Positions]:
    """Plain data and positions from YAML text; one document only."""
    nodes = _compose(text)
    if not nodes:
        raise YamlProblem(
            1,
            1,
            "empty-file",
            "file holds no YAML document",
            "start from `improvements new` or a copy of another record",
        )
    if len(nodes) > 1:
        line, col = _mark(nodes[1].start_mark)
        raise YamlProblem(
            line,
            col,
            "multiple-documents",
            "file holds more than one YAML document",
            "remove the `---` separator; one record per file",
        )
    data = _Builder().build(nodes[0], 0)
    return data, Positions(text=text)


def _compose(text: str) -> list[yaml.Node]:
    """libyaml's node trees of every document in `text`, or a positioned problem."""
    try:
        return list(yaml.compose_all(text, Loader=_ComposeLoader))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = _mark(mark) if mark is not None else (1, 1)
        problem = exc.problem or "invalid YAML"
        if mark is not None and _is_tab(text, mark.line, mark.column):
            problem = "tab"
        if "nesting depth" in problem:
            raise YamlProblem(line, col, "yaml-too-deep", f"nesting deeper than libyaml allows: {problem}") from None
        if "\t" in problem or "tab" in problem:
            raise YamlProblem(
                line, col, "yaml-tab", "a tab character is used for indentation", "YAML indents with spaces only"
            ) from None
        context = f" {exc.context}" if exc.context else ""
        if exc.context_mark is not None and mark is not None and exc.context_mark.line != mark.line:
            # An unclosed bracket or quote is found lines later; say where it opened.
            context += f" that starts at line {exc.context_mark.line + 1}, column {exc.context_mark.column + 1}"
        raise YamlProblem(line, col, "yaml-syntax", f"{problem}{context}".strip()) from None
    except RecursionError:
        # Only without libyaml: PyYAML's pure-Python composer recurses once per level.
        raise YamlProblem(1, 1, "yaml-too-deep", "nesting is too deep to parse") from None
    except yaml.YAMLError as exc:
        # libyaml's reader checks the whole stream first and reports a character it refuses
        # (a control character) at the start; point at the character instead.
        raise YamlProblem(*(_first_unprintable(text) or (1, 1)), "yaml-syntax", str(exc).splitlines()[0]) from None


def _is_tab(text: str, line: int, col: int) -> bool:
    """Whether the parser stopped on a tab in a line's indentation (libyaml reports it vaguely)."""
    lines = text.splitlines()
    if line >= len(lines):
        return False
    indent = lines[line][: len(lines[line]) - len(lines[line].lstrip(" \t"))]
    return "\t" in indent and col <= len(indent)


_STD = "tag:yaml.org,2002:"
_SEQ_TAG, _MAP_TAG = _STD + "seq", _STD + "map"
_SCALAR_WORDS = {_STD + "int": "whole number", _STD + "float": "number", _STD + "bool": "boolean (true or false)"}
_SCALAR_WORDS[_STD + "timestamp"] = "date"


def _tag_name(tag: str) -> str:
    return "!!" + tag.removeprefix(_STD) if tag.startswith(_STD) else tag


def _check_tag(node: yaml.Node, *allowed: str) -> None:
    if node.tag not in allowed:
        raise YamlProblem(
            *_mark(node.start_mark),
            "yaml-unsupported",
            f"tag {_tag_name(node.tag)} is not allowed",
            "records use plain YAML values, lists and mappings only",
        )


class _ComposeLoader(_Loader):  # type: ignore[misc,valid-type]
    """libyaml's composer with PyYAML's tag resolution cut down to what it does for us.

    The C composer calls back into Python three times per node (descend, resolve, ascend);
    PyYAML's versions consult path resolvers that nothing registers. These give YAML 1.2's core
    tags (see `_CORE`) in a fraction of the time, which is most of the gap between our parse and libyaml's.
    """

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        return None

    def ascend_resolver(self) -> None:
        return None

    def resolve(self, kind: type, value: Any, implicit: tuple[bool, bool]) -> str:
        if kind is yaml.ScalarNode:
            if implicit[0]:
                for tag, regexp in _IMPLICIT.get(value[:1], ()):
                    if regexp.match(value):
                        return tag
            return _STR_TAG
        return _SEQ_TAG if kind is yaml.SequenceNode else _MAP_TAG


_STR_TAG, _MERGE_TAG = _STD + "str", _STD + "merge"
# Plain scalars are read by YAML 1.2's core schema, as the editing commands (ruamel.yaml) read
# them, not by PyYAML's YAML 1.1 rules: there `on`, `yes` and `n` are booleans, `010` is eight,
# `1:30` is ninety and `2024-01-01` a date, so a key written `on:` became `True`, `tier: yes`
# became 1 and a title that looks like a date was not text. In 1.2 each of these is the text
# the user wrote; a date field reads its text as a date, and an explicit tag still works.
_CORE: tuple[tuple[str, Any], ...] = (
    (_STD + "bool", re.compile(r"(?:true|True|TRUE|false|False|FALSE)\Z")),
    (_STD + "int", re.compile(r"(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)\Z")),
    (
        _STD + "float",
        re.compile(
            r"(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))\Z"
        ),
    ),
    (_STD + "null", re.compile(r"(?:~|null|Null|NULL|)\Z")),
    (_MERGE_TAG, re.compile(r"<<\Z")),
)
_BOOL, _INT, _FLOAT, _NULL, _MERGE = _CORE
# The resolvers that can match, by a scalar's first character (checked once per plain scalar).
# Any other first character starts text: none of the patterns can match it (the null's empty
# alternative matches only the empty scalar, whose first character is "").
_IMPLICIT: dict[str, tuple[tuple[str, Any], ...]] = {
    **{c: (_BOOL,) for c in "tTfF"},
    **{c: (_INT, _FLOAT) for c in "-+0123456789"},
    **{".": (_FLOAT,), "~": (_NULL,), "n": (_NULL,), "N": (_NULL,), "<": (_MERGE,), "": (_NULL,)},
}
_CONSTRUCTOR = _Loader("")


_DECIMAL, _OCTAL = re.compile(r"[-+]?[0-9]+\Z"), re.compile(r"0o[0-7]+\Z")
# The core schema's numbers without infinities and NaN: what Python's float() reads as PyYAML would.
_PLAIN_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z")


def _core_int(node: yaml.ScalarNode) -> int:
    """A YAML 1.2 integer (decimal with any leading zeros, 0o octal, 0x hex); other forms
    under an explicit `!!int` tag as PyYAML reads them."""
    value = node.value
    if _DECIMAL.match(value):
        return int(value, 10)
    if _OCTAL.match(value):
        return int(value[2:], 8)
    return int(_CONSTRUCTOR.construct_yaml_int(node))


def _core_float(node: yaml.ScalarNode) -> float:
    """A YAML 1.2 float; infinities, NaN and other forms under an explicit `!!float` tag
    (`1_000.5`, `1:30`) as PyYAML reads them.

    A plain decimal is Python's float() of its text, the number PyYAML's constructor gives
    (it strips the sign, lowercases the exponent and multiplies the sign back) in a third of
    the time: a record holds dozens of them.
    """
    value = node.value
    if _PLAIN_FLOAT.match(value):
        return float(value)
    return float(_CONSTRUCTOR.construct_yaml_float(node))


# Text is taken as it is; these are the other scalars records may hold.
_SCALARS: dict[str, Any] = {
    _STD + "null": _CONSTRUCTOR.construct_yaml_null,
    _STD + "bool": _CONSTRUCTOR.construct_yaml_bool,
    _STD + "int": _core_int,
    _STD + "float": _core_float,
    _STD + "timestamp": _CONSTRUCTOR.construct_yaml_timestamp,
}


class _Builder:
    """Plain data from a node tree, refusing what records do not use. Positions are left to
    `Positions`, which walks the tree again only for a file that has a problem."""

    def __init__(self) -> None:
        self.count = 0
        # The top-level entry being built: an alias shares its anchor's node, whose mark
        # points at the anchor, so this is where an alias bomb's expansion is reported.
        self.top: yaml.Node | None = None

    def build(self, node: yaml.Node, depth: int) -> Any:
        if depth == 1:
            self.top = node
        self.count += 1
        if self.count > MAX_NODES:
            raise YamlProblem(
                *_mark((self.top or node).start_mark),
                "yaml-alias-limit",
                f"the document expands to more than {MAX_NODES:,} nodes",
                "aliases (*name) that repeat large anchors multiply; write the data out",
            )
        if depth > MAX_DEPTH:
            raise YamlProblem(*_mark(node.start_mark), "yaml-too-deep", f"nesting is deeper than {MAX_DEPTH} levels")
        kind = type(node)
        if isinstance(node, yaml.ScalarNode) and kind is yaml.ScalarNode:
            if node.style == '"' and _CONTROL.search(node.value):
                # Only a double-quoted escape (`"\e[2J"`) gets one past the reader; printed by
                # `summary` or in a problem it would drive the terminal.
                char = _CONTROL.search(node.value).group()  # type: ignore[union-attr]
                raise YamlProblem(
                    *_mark(node.start_mark),
                    "invalid-value",
                    f"text holds the control character {char!r}",
                    "records hold plain text; write a tab or a line break as it is",
                )
            return node.value if node.tag == _STR_TAG else _scalar(node)
        depth += 1
        if kind is yaml.SequenceNode:
            _check_tag(node, _SEQ_TAG)
            return [self.build(child, depth) for child in node.value]
        _check_tag(node, _MAP_TAG)
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = _key(key_node)
            if key in out:
                first = next(k for k, _ in node.value if _key(k) == key)
                raise YamlProblem(
                    *_mark(key_node.start_mark),
                    "duplicate-key",
                    f"key `{key}` is already set at line {first.start_mark.line + 1}",
                    "remove one of the two; YAML would silently keep the last",
                )
            out[key] = self.build(value_node, depth)
        return out


def _key(node: yaml.Node) -> Any:
    """A mapping key: text or a whole number, anything else as the text the user wrote."""
    if type(node) is not yaml.ScalarNode:
        raise YamlProblem(*_mark(node.start_mark), "yaml-unsupported", "complex mapping key", "keys are plain words")
    if node.tag == _STR_TAG:
        return node.value
    if node.tag == _MERGE_TAG:
        raise YamlProblem(
            *_mark(node.start_mark),
            "yaml-unsupported",
            "merge keys (<<) are not supported",
            "write the keys out; merges hide where a value comes from",
        )
    key = _scalar(node)
    if not isinstance(key, str | int) or isinstance(key, bool):
        # A key named `true`, `null` or `1.5` is reported as written, not as Python's `True`.
        key = node.value
    return key


def _scalar(node: yaml.ScalarNode) -> Any:
    construct = _SCALARS.get(node.tag)
    if construct is None:
        _check_tag(node, _STR_TAG, *_SCALARS)
        return node.value
    try:
        return construct(node)
    except (ValueError, TypeError, KeyError, AttributeError, OverflowError, yaml.YAMLError) as exc:
        # An explicit tag on text that does not fit it (`!!int abc`), a date that does not
        # exist (2024-02-30), an integer with more digits than Python will convert.
        word = _SCALAR_WORDS.get(node.tag, "value")
        shown = node.value if len(node.value) <= 40 else node.value[:40] + "..."
        detail = str(exc).splitlines()[0] if isinstance(exc, ValueError) else None
        msg = f"`{shown}` is not a valid {word}"
        raise YamlProblem(*_mark(node.start_mark), "invalid-value", msg, detail) from None


def _record_positions(
    node: yaml.Node, path: Path_, keys: dict[Path_, tuple[int, int]], values: dict[Path_, tuple[int, int]]
) -> None:
    """Every key's and value's position under `node`, which `_Builder` has already accepted."""
    values.setdefault(path, _mark(node.start_mark))
    if isinstance(node, yaml.SequenceNode):
        for i, child in enumerate(node.value):
            _record_positions(child, (*path, i), keys, values)
    elif isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            loc = (*path, _key(key_node))
            keys[loc] = _mark(key_node.start_mark)
            _record_positions(value_node, loc, keys, values)
