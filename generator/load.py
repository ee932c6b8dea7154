"""YAML files to models, with the position of every key and value.

This is the fast read path: libyaml (PyYAML's C parser) composes the node tree, and we
build plain Python data from it ourselves so that every key and value keeps its line and
column, duplicate keys are caught, and aliases cannot expand without bound. ruamel.yaml's
round trip is kept for the commands that edit files (`edit`), where comments matter more
than speed.
"""

from __future__ import annotations

import difflib
import gc
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from generator import cache
from generator.model import FILENAME_RE, SLUG_RE, Campaign, Record, Result
from generator.problems import Problem, ProblemsFound, Report, rel

MAX_FILE_BYTES = 1024 * 1024
MAX_LINE_CHARS = 10_000
MAX_DEPTH = 64
# Nodes built from one file, aliases counted each time they are used. A real record has a
# few hundred; a "billion laughs" file reaches the bound after a few milliseconds.
MAX_NODES = 100_000

Path_ = tuple[str | int, ...]
_Loader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


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
        # Read at most one byte over the limit: the file may have grown since stat.
        data = f.read(MAX_FILE_BYTES + 1)
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
    return text


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
# The scalars JSON knows, plus dates. Everything else (!!binary, !!python/..., !!set, !!omap,
# local tags) is refused: the safe loader would not run code, but a record has no use for it.
_SCALAR_TAGS = tuple(_STD + t for t in ("str", "int", "float", "bool", "null", "timestamp"))
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
    PyYAML's versions consult path resolvers that nothing registers. These give the same tags
    in a fraction of the time, which is most of the gap between our parse and libyaml's.
    """

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        return None

    def ascend_resolver(self) -> None:
        return None

    def resolve(self, kind: type, value: Any, implicit: tuple[bool, bool]) -> str:
        if kind is yaml.ScalarNode:
            if implicit[0]:
                for tag, regexp in _IMPLICIT.get(value[:1], _IMPLICIT_ANY):
                    if regexp.match(value):
                        return tag
            return _STR_TAG
        return _SEQ_TAG if kind is yaml.SequenceNode else _MAP_TAG


_STR_TAG, _MERGE_TAG = _STD + "str", _STD + "merge"
# Plain scalars' implicit tags by first character, as yaml.resolver.Resolver.resolve finds them.
_IMPLICIT_ANY: tuple[tuple[str, Any], ...] = tuple(_Loader.yaml_implicit_resolvers.get(None, ()))
_IMPLICIT: dict[str, tuple[tuple[str, Any], ...]] = {
    first: (*resolvers, *_IMPLICIT_ANY)
    for first, resolvers in _Loader.yaml_implicit_resolvers.items()
    if first is not None
}
_CONSTRUCTOR = _Loader("")
# Text is taken as it is; these are the other scalars records may hold. Dates stay dates.
_SCALARS: dict[str, Any] = {
    _STD + "null": _CONSTRUCTOR.construct_yaml_null,
    _STD + "bool": _CONSTRUCTOR.construct_yaml_bool,
    _STD + "int": _CONSTRUCTOR.construct_yaml_int,
    _STD + "float": _CONSTRUCTOR.construct_yaml_float,
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
        if kind is yaml.ScalarNode:
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
    """A mapping key: text or a whole number, anything else as its text."""
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
        key = str(key)
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


# --- validation ---------------------------------------------------------------------------


def _describe(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "text"


def _fields_at(model: type[BaseModel], loc: Path_) -> list[str]:
    """The field names of the model that `loc` points into, for did-you-mean hints."""
    current: Any = model
    for part in loc:
        if isinstance(part, int) or current is None:
            continue
        info = getattr(current, "model_fields", {}).get(part)
        if info is None:
            return []
        current = _inner_model(info.annotation)
    return list(getattr(current, "model_fields", {}))


def _inner_model(annotation: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _inner_model(arg)
        if found is not None:
            return found
    return None


_TYPE_WORDS = {
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "list_type": "a list",
    "string_type": "text",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "date_type": "a date (YYYY-MM-DD)",
    "date_parsing": "a date (YYYY-MM-DD)",
    "date_from_datetime_parsing": "a date (YYYY-MM-DD)",
    "int_from_float": "a whole number",
}


_TYPE_KINDS = {*_TYPE_WORDS, "list_type", "dict_type", "model_attributes_type"}


def _clean_loc(err: Any, data: Any) -> Path_:
    """The error's location in the data: pydantic's union-member tags ("float", "list[float]")
    dropped. A missing field's own name is not in the data either, but it is the point of the
    message, so it stays."""
    along = _keys_along(data, err["loc"])
    last = len(err["loc"]) - 1
    return tuple(
        p
        for i, p in enumerate(err["loc"])
        if isinstance(p, int) or p in along or (err["type"] == "missing" and i == last)
    )


def validation_problems(
    exc: ValidationError, model: type[BaseModel], data: Any, pos: Positions, path: str
) -> list[Problem]:
    problems: list[Problem] = []
    seen: set[tuple[Path_, str]] = set()
    errors = [(err, _clean_loc(err, data)) for err in exc.errors()]
    # A value checked against a union (a number, a list of numbers or a range) gets a type error
    # from each member it is not. When one member took it and found something more specific
    # (`.nan` is not finite, a range misses `max`), the other members' type errors are noise.
    noise = {
        loc
        for err, loc in errors
        if err["type"] in _TYPE_KINDS
        and any(
            other[: len(loc)] == loc and (len(other) > len(loc) or e["type"] not in _TYPE_KINDS) for e, other in errors
        )
    }
    for err, loc in errors:
        kind = err["type"]
        if kind in _TYPE_KINDS and loc in noise:
            continue
        if kind == "extra_forbidden":
            key = loc[-1]
            line, col = pos.of(loc, key=True)
            choices = _fields_at(model, loc[:-1])
            close = difflib.get_close_matches(str(key), choices, n=1, cutoff=0.6)
            hint = (
                f"did you mean `{close[0]}`?" if close else (f"known keys: {', '.join(choices)}" if choices else None)
            )
            problems.append(Problem(path, line, col, "unknown-key", f"unknown key `{key}`", hint))
            continue
        if kind == "missing":
            line, col = pos.of(loc[:-1], key=True)
            where = f" in `{_dotted(loc[:-1])}`" if loc[:-1] else ""
            problems.append(Problem(path, line, col, "missing-field", f"required field `{loc[-1]}` is missing{where}"))
            continue
        line, col = pos.of(loc)
        value = _value_at(data, loc)
        name = _dotted(loc) or "document"
        if kind in _TYPE_WORDS or kind in ("list_type", "dict_type", "model_attributes_type"):
            want = _TYPE_WORDS.get(kind, "a mapping")
            code, msg = "wrong-type", f"`{name}` must be {want}, not {_describe(value)}"
        elif kind == "literal_error":
            expected = err.get("ctx", {}).get("expected", "")
            close = difflib.get_close_matches(
                str(value), [s.strip("'") for s in expected.replace(" or ", ", ").split(", ")], n=1
            )
            code, msg = "invalid-value", f"`{name}` is {value!r}; expected {expected}"
            if close:
                problems.append(Problem(path, line, col, code, msg, f"did you mean `{close[0]}`?"))
                continue
        elif kind == "string_pattern_mismatch":
            code, msg = "invalid-value", f"`{name}` is {value!r}, which is not of the allowed form"
            hint = "use lowercase letters, digits and hyphens" if err.get("ctx", {}).get("pattern") == SLUG_RE else None
            key = (loc, code)
            if key not in seen:
                seen.add(key)
                problems.append(Problem(path, line, col, code, msg, hint))
            continue
        elif kind == "unknown_metric":
            near = err.get("ctx", {}).get("suggestion")
            key_line, key_col = pos.of(loc, key=True)
            problems.append(
                Problem(
                    path,
                    key_line,
                    key_col,
                    "unknown-metric",
                    err["msg"],
                    f"did you mean `{near}`?" if near else "see the metric vocabulary in the docs",
                )
            )
            continue
        elif kind == "finite_number":
            code, msg = "invalid-value", f"`{name}` is {value!r}; a measurement is a finite number"
        elif kind == "value_error":
            code, msg = "invalid-value", f"`{name}`: {str(err['msg']).removeprefix('Value error, ')}"
        else:
            code, msg = "invalid-value", f"`{name}`: {err['msg']}"
        # A union reports each member's failure; one line per place is enough.
        if (loc, code) in seen:
            continue
        seen.add((loc, code))
        problems.append(Problem(path, line, col, code, msg))
    return problems


def _keys_along(data: Any, loc: tuple[Any, ...]) -> set[str]:
    keys: set[str] = set()
    current = data
    for part in loc:
        if isinstance(current, dict):
            keys.update(k for k in current if isinstance(k, str))
            current = current.get(part)
        elif isinstance(current, list) and isinstance(part, int) and 0 <= part < len(current):
            current = current[part]
        else:
            current = None
    if isinstance(current, dict):
        keys.update(k for k in current if isinstance(k, str))
    return keys


def _value_at(data: Any, loc: Path_) -> Any:
    current = data
    for part in loc:
        if isinstance(current, dict):
            current = current.get(part)
        elif isinstance(current, list) and isinstance(part, int) and part < len(current):
            current = current[part]
        else:
            return None
    return current


def _dotted(loc: Path_) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


# --- files and campaigns --------------------------------------------------------------------


@dataclass
class Loaded:
    """One file's model (None when invalid), its raw data and positions."""

    path: Path
    model: Any
    data: Any
    positions: Positions


@dataclass
class RecordFile(Loaded):
    number: int = 0
    slug: str = ""

    @property
    def record(self) -> Record:
        return self.model


@dataclass
class Project:
    """A campaign repository: where things are, and what was loaded from it."""

    root: Path
    campaign: Campaign
    campaign_file: Loaded
    records: list[RecordFile]
    # Blocker ids declared in records that failed to load: references to them are not errors
    # of their own (the broken record already has its problems), nor evidence of a closed blocker.
    unloaded_blocker_ids: set[str] = field(default_factory=set)

    @property
    def improvements_dir(self) -> Path:
        return self.root / "improvements"

    @property
    def results_dir(self) -> Path:
        return self.root / "results"

    @property
    def docs_dir(self) -> Path:
        return self.root / self.campaign.docs_dir

    def by_slug(self) -> dict[str, RecordFile]:
        return {r.slug: r for r in self.records}

    def output_name(self, rec: RecordFile) -> str:
        return f"{self.campaign.series}-{rec.number:02d}-{rec.slug}.md"


def find_root(start: Path | None = None) -> Path | None:
    """The repository root: the nearest folder at or above `start` with improvements/campaign.yaml."""
    here = (start or Path.cwd()).resolve()
    folders = (here, *here.parents)
    for folder in folders:
        if (folder / "improvements" / "campaign.yaml").is_file():
            return folder
    # Records without their campaign.yaml: loading reports `missing-campaign` precisely.
    for folder in folders:
        if any((folder / "improvements").glob("[0-9][0-9]*-*.yaml")):
            return folder
    return None


def load_file(path: Path, model: type[BaseModel], shown: str, report: Report) -> Loaded:
    build_cache, key = cache.active(), ""
    try:
        text = read_text(path)
        if build_cache is not None:
            # A file whose bytes were valid before is valid again: only cross-file rules can change.
            key = f"load:{cache.digest(build_cache.salt, model.__name__, text)}"
            hit = build_cache.get(key)
            if hit is not None:
                build_cache.files[path] = key
                return Loaded(path, hit[1], hit[0], Positions(text=text))
    except YamlProblem as exc:
        report.add(Problem(shown, exc.line, exc.col, exc.code, exc.message, exc.hint))
        return Loaded(path, None, None, Positions())
    except OSError as exc:
        report.add(
            Problem(
                shown,
                1,
                1,
                "not-utf8" if isinstance(exc, UnicodeError) else "yaml-syntax",
                f"cannot read file: {exc.strerror or exc}",
            )
        )
        return Loaded(path, None, None, Positions())
    loaded = load_text(path, text, model, shown, report)
    if build_cache is not None and loaded.model is not None:
        build_cache.put(key, (loaded.data, loaded.model))
        build_cache.files[path] = key
    return loaded


def load_text(path: Path, text: str, model: type[BaseModel], shown: str, report: Report) -> Loaded:
    """`text` (the contents of `path`, read or about to be written) parsed and validated as `model`.

    The commands that edit a file check the edited text through this before writing it.
    """
    try:
        data, pos = parse(text)
    except YamlProblem as exc:
        report.add(Problem(shown, exc.line, exc.col, exc.code, exc.message, exc.hint))
        return Loaded(path, None, None, Positions())
    if not isinstance(data, dict):
        line, col = pos.of(())
        report.add(
            Problem(
                shown,
                line,
                col,
                "wrong-type",
                f"the document must be a mapping, not {_describe(data)}",
                "a record starts with `title:`",
            )
        )
        return Loaded(path, None, data, pos)
    try:
        obj = model.model_validate(data)
    except ValidationError as exc:
        report.extend(validation_problems(exc, model, data, pos, shown))
        return Loaded(path, None, data, pos)
    return Loaded(path, obj, data, pos)


def record_files(improvements: Path) -> tuple[list[tuple[Path, int, str]], list[Path]]:
    """Record files sorted by number then slug, and the files that do not belong."""
    good: list[tuple[Path, int, str]] = []
    bad: list[Path] = []
    for entry in sorted(os.scandir(improvements), key=lambda e: e.name):
        if entry.name.startswith(".") or entry.name == "campaign.yaml":
            continue
        m = FILENAME_RE.match(entry.name)
        if m is None or not entry.is_file():
            bad.append(Path(entry.path))
            continue
        good.append((Path(entry.path), int(m["number"]), m["slug"]))
    good.sort(key=lambda t: (t[1], t[2]))
    return good, bad


def load_project(root: Path, report: Report) -> Project | None:
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
        return _load_project(root, report)
    finally:
        if was_enabled:
            gc.enable()


def _load_project(root: Path, report: Report) -> Project | None:
    improvements = root / "improvements"
    campaign_path = improvements / "campaign.yaml"
    if not campaign_path.is_file():
        report.add(
            Problem(
                rel(campaign_path, root),
                1,
                1,
                "missing-campaign",
                "improvements/campaign.yaml is missing",
                "a campaign needs one campaign.yaml beside its records",
            )
        )
        return None
    campaign_file = load_file(campaign_path, Campaign, rel(campaign_path, root), report)
    files, strays = record_files(improvements)
    for stray in strays:
        if FILENAME_RE.match(stray.name):
            message = f"`{stray.name}` has a record's name but is not a regular file (a folder or a broken link?)"
            hint = "a record is a plain YAML file"
        else:
            message = f"`{stray.name}` is neither campaign.yaml nor a record named NN-slug.yaml"
            hint = "name records like 12-my-idea.yaml (two or more digits, lowercase slug)"
        report.add(Problem(rel(stray, root), 1, 1, "bad-filename", message, hint))
    records: list[RecordFile] = []
    unloaded_ids: set[str] = set()
    for path, number, slug in files:
        loaded = load_file(path, Record, rel(path, root), report)
        if loaded.model is not None:
            records.append(RecordFile(loaded.path, loaded.model, loaded.data, loaded.positions, number, slug))
        elif isinstance(loaded.data, dict) and isinstance(loaded.data.get("blockers"), list):
            unloaded_ids |= {
                b["id"] for b in loaded.data["blockers"] if isinstance(b, dict) and isinstance(b.get("id"), str)
            }
    if campaign_file.model is None:
        return None
    project = Project(root, campaign_file.model, campaign_file, records, unloaded_ids)
    report.extend(cross_check(project, files))
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
    if "\x00" in source:
        # A quoted "\0" reaches here; the OS would refuse the path with a ValueError.
        return Problem(shown, line, col, "invalid-value", "source contains a NUL character")
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


def cross_check(project: Project, files: list[tuple[Path, int, str]]) -> list[Problem]:
    """Rules across files: numbers, slugs, references, sources, status rules and metrics."""
    problems: list[Problem] = []
    root = project.root
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

    cf = project.campaign_file
    cshown = rel(cf.path, root)
    problems += _results_problems(project.campaign.baseline.results, ("baseline", "results"), cf.positions, cshown)
    docs_problem = _docs_dir_problem(project.campaign.docs_dir, root)
    if docs_problem is not None:
        line, col = cf.positions.of(("docs_dir",))
        problems.append(
            Problem(cshown, line, col, "path-outside", docs_problem, "give a folder such as docs/improvements")
        )

    blocker_ids: dict[str, str] = {}
    for rec in project.records:
        for j, blocker in enumerate(rec.record.blockers):
            if blocker.id is None:
                continue
            shown = rel(rec.path, root)
            if blocker.id in blocker_ids:
                line, col = rec.positions.of(("blockers", j, "id"))
                problems.append(
                    Problem(
                        shown,
                        line,
                        col,
                        "duplicate-blocker",
                        f"blocker id `{blocker.id}` is also defined in {blocker_ids[blocker.id]}",
                        "define a shared blocker once and point at it with `ref`",
                    )
                )
            blocker_ids.setdefault(blocker.id, rec.path.name)

    shared = _shared_blockers(project)
    for rec in project.records:
        r, pos, shown = rec.record, rec.positions, rel(rec.path, root)
        for i, slug in enumerate(r.related):
            if slug not in by_slug:
                problems.append(_unknown_slug(shown, pos, ("related", i), slug, by_slug))
            elif slug == rec.slug:
                line, col = pos.of(("related", i))
                problems.append(Problem(shown, line, col, "unknown-slug", "a record cannot be related to itself"))
        if r.superseded_by is not None and r.superseded_by not in by_slug:
            problems.append(_unknown_slug(shown, pos, ("superseded_by",), r.superseded_by, by_slug))
        elif r.superseded_by is not None and (cycle := _supersession_cycle(project, rec.slug)):
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
                p = _source_problem(result.source, root, ("results", i, "source"), pos, shown)
                if p is not None:
                    problems.append(p)
        problems += status_problems(rec, shown, project, shared)
    # Imported runs: references that resolve, and results comparable with their baseline.
    from generator.results.matching import problems as run_problems

    problems += run_problems(project)
    return problems


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


def _supersession_cycle(project: Project, start: str) -> list[str]:
    """The chain of superseded_by from `start` when it comes back to `start`, else empty."""
    nxt = {rec.slug: rec.record.superseded_by for rec in project.records}
    chain, slug = [start], nxt.get(start)
    while slug is not None and slug not in chain:
        chain.append(slug)
        slug = nxt.get(slug)
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


def status_problems(
    rec: RecordFile, shown: str, project: Project | None = None, shared: dict[str, str] | None = None
) -> list[Problem]:
    """The status rules: what each status needs before a record may claim it.

    `shared` is `_shared_blockers(project)`, passed in by callers that check many records.
    """
    r, pos = rec.record, rec.positions
    out: list[Problem] = []
    if r.status in ("adopted", "rejected"):
        missing = []
        if not r.verdict:
            missing.append("a `verdict`")
        if not r.results:
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
        if shared is None:
            shared = _shared_blockers(project) if project is not None else {}
        unknown = project.unloaded_blocker_ids if project is not None else set()
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


def require_project(root: Path) -> Project:
    """Load a campaign for a command that writes: any error stops it before anything is written."""
    report = Report()
    project = load_project(root, report)
    if project is None or not report.ok:
        raise ProblemsFound(report)
    return project
