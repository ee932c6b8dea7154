"""Benchmark files to runs: split a file into objects or console blocks, redact, normalize.

A file may hold one JSON object, many appended ones (JSONL, or `--append-result` objects
joined by newlines), or one or more pasted console blocks. Every problem names the file, the
line and the formats known; a file with any problem yields no runs at all.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.load import byte_position, text_position
from generator.problems import Problem
from generator.results import formats
from generator.results.redact import redact, redact_text
from generator.results.run import Run, rate_slug, run_id

# Per-request arrays make real files large; far beyond this is not a benchmark summary.
MAX_BYTES = 256 * 1024 * 1024

_PREFIX = {
    "sglang-bench-serving": "sglang-serving",
    "sglang-bench-one-batch": "sglang-batch",
    "sglang-bench-one-batch-server": "sglang-batch-server",
    "vllm-benchmark-serving": "vllm-serving",
    "vllm-bench-serve": "vllm-serve",
    "serving-console": "console",
}


@dataclass
class ParsedFile:
    """One input file: its runs, and the bytes to keep as evidence (redacted where needed)."""

    path: Path
    shown: str
    original_sha256: str
    stored_text: str
    redacted: list[str] = field(default_factory=list)
    runs: list[Run] = field(default_factory=list)

    @property
    def stored_bytes(self) -> bytes:
        return self.stored_text.encode("utf-8")

    @property
    def stored_sha256(self) -> str:
        return hashlib.sha256(self.stored_bytes).hexdigest()


def _unrecognised(shown: str, line: int, col: int, what: str) -> Problem:
    return Problem(
        shown,
        line,
        col,
        "import-unrecognised",
        f"{what}; no importer recognises it",
        f"formats known: {formats.known_formats()}",
    )


def _read(path: Path, shown: str) -> tuple[bytes | None, list[Problem]]:
    """At most MAX_BYTES + 1 bytes of a regular file; a device, FIFO or socket is refused unread.

    `/dev/zero` never ends and a FIFO blocks an open until a writer comes, so the type is
    checked before opening, the open does not wait (O_NONBLOCK), the type is checked again on
    what was opened, and the read stops just past the limit.
    """
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None, [_not_regular(shown, os.stat(path).st_mode)]
        with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as f:
            info = os.fstat(f.fileno())
            if not stat.S_ISREG(info.st_mode):
                return None, [_not_regular(shown, info.st_mode)]
            size = info.st_size
            data = f.read(MAX_BYTES + 1) if size <= MAX_BYTES else b""
    except OSError as exc:
        return None, [Problem(shown, 1, 1, "import-unrecognised", f"cannot read file: {exc.strerror or exc}")]
    if size > MAX_BYTES or len(data) > MAX_BYTES:
        size = max(size, len(data))
        return None, [Problem(shown, 1, 1, "import-unrecognised", f"file is {size:,} bytes, over {MAX_BYTES:,}")]
    return data, []


def _not_regular(shown: str, mode: int) -> Problem:
    kind = (
        "a FIFO (named pipe)"
        if stat.S_ISFIFO(mode)
        else "a device"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "not a regular file"
    )
    return Problem(
        shown,
        1,
        1,
        "import-unrecognised",
        f"{kind} is not a benchmark file; only regular files are read",
        "save the benchmark output to a file first, then import that file",
    )


def parse_file(path: Path, shown: str) -> tuple[ParsedFile | None, list[Problem]]:
    """The runs in one benchmark file, or the problems that stop it from being imported."""
    data, problems = _read(path, shown)
    if data is None:
        return None, problems
    original_sha = hashlib.sha256(data).hexdigest()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return None, [_unrecognised(shown, *byte_position(data, exc.start), "file is not UTF-8 text")]
    if "\x00" in text:
        return None, [_unrecognised(shown, *text_position(text, text.index("\x00")), "file contains a NUL byte")]
    if formats.CONSOLE_HEADER.search(text):
        return _parse_console(path, shown, text, original_sha)
    return _parse_json(path, shown, text, original_sha)


# --- JSON and JSONL -----------------------------------------------------------------------------


def _parse_json(path: Path, shown: str, text: str, original_sha: str) -> tuple[ParsedFile | None, list[Problem]]:
    decoder = json.JSONDecoder()  # accepts the bare Infinity that SGLang writes for request_rate
    spans: list[tuple[int, int, Any]] = []
    pos = 0
    ws = re.compile(r"\s*")
    while True:
        pos = ws.match(text, pos).end()  # type: ignore[union-attr]
        if pos >= len(text):
            break
        if text[pos] not in "{[":
            line, col = text_position(text, pos)
            if not spans:
                return None, [_unrecognised(shown, line, col, "file is neither JSON, JSON lines nor a console block")]
            return None, [
                Problem(
                    shown,
                    line,
                    col,
                    "import-truncated",
                    "unexpected text after the last complete JSON object",
                    "remove the stray text, or the partial object a crashed run left behind",
                )
            ]
        try:
            obj, end = decoder.raw_decode(text, pos)
        except RecursionError:
            return None, [_unrecognised(shown, *text_position(text, pos), "the JSON nests deeper than Python can read")]
        except json.JSONDecodeError as exc:
            at_end = ws.match(text, exc.pos).end() >= len(text) or "Unterminated" in exc.msg  # type: ignore[union-attr]
            # A cut-off object is reported where the text stops, not past the final newline.
            line, col = text_position(text, min(exc.pos, len(text.rstrip())) if at_end else exc.pos)
            start_line = text_position(text, pos)[0]
            where = f"the JSON object starting on line {start_line}"
            message = f"{where} is cut off ({exc.msg})" if at_end else f"{where} is broken: {exc.msg}"
            return None, [
                Problem(
                    shown,
                    line,
                    col,
                    "import-truncated",
                    message,
                    "a benchmark killed while writing leaves a partial last line; delete it and import again",
                )
            ]
        except ValueError:
            # Not a syntax error: an integer with more digits than Python converts (over 4,300).
            return None, [_unrecognised(shown, *text_position(text, pos), "the JSON holds a number too long to read")]
        lone = _lone_surrogate(text, pos, end, obj)
        if lone is not None:
            line, col = text_position(text, lone)
            return None, [
                Problem(
                    shown,
                    line,
                    col,
                    "import-unrecognised",
                    "the JSON holds a lone surrogate escape (such as \\ud800): JSON allows it, Unicode text cannot",
                    "remove or replace the escape; it names half of a character, so it cannot be kept",
                )
            ]
        spans.append((pos, end, obj))
        pos = end
    if not spans:
        return None, [_unrecognised(shown, 1, 1, "file is empty")]

    problems: list[Problem] = []
    parsed = ParsedFile(path, shown, original_sha, text)
    replacements: list[tuple[int, int, str]] = []
    for start, end, obj in spans:
        line, col = text_position(text, start)
        clean, found = redact(obj)
        if found:
            # Only an object that held a secret is re-written in the kept copy; the rest stays byte for byte.
            replacements.append((start, end, json.dumps(clean, ensure_ascii=False)))
            parsed.redacted += [f"line {line}: {p}" for p in found]
        # A list of run objects (an aggregated export) is many runs from one place.
        for item in clean if isinstance(clean, list) else [clean]:
            run = formats.normalize_object(item)
            if run is None:
                what = (
                    f"the JSON object on line {line} (keys: {', '.join(str(k)[:40] for k in list(item)[:6]) or 'none'})"
                    if isinstance(item, dict)
                    else f"the JSON value on line {line} is not an object"
                )
                problems.append(_unrecognised(shown, line, col, what))
                continue
            if not formats.usable(run):
                problems.append(_no_metric(shown, line, col, run))
                continue
            if formats.impossible_setting(run) is not None:
                problems.append(_impossible(shown, line, col, run))
                continue
            _identify(run, item, line)
            parsed.runs.append(run)
    unrecognised = [p for p in problems if p.code == "import-unrecognised"]
    if len(unrecognised) > 1:
        # One clear error per file that is not a benchmark file, not one per line of it.
        first = unrecognised[0]
        more = f" (and {len(unrecognised) - 1} more value(s) like it)"
        problems = [p for p in problems if p.code != "import-unrecognised"]
        problems.insert(0, Problem(first.path, first.line, first.col, first.code, first.message + more, first.hint))
    if problems:
        return None, problems
    # The kept copy is read once more as text, so what the object walk cannot see (a key given
    # twice, where JSON keeps only the last) is caught by the same rules.
    parsed.stored_text, n = redact_text(_apply(text, replacements))
    if n:
        parsed.redacted.append(f"{n} more secret value(s) in the text")
    return parsed, []


def _apply(text: str, replacements: list[tuple[int, int, str]]) -> str:
    out: list[str] = []
    pos = 0
    for start, end, new in replacements:
        out.append(text[pos:start])
        out.append(new)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _no_metric(shown: str, line: int, col: int, run: Run) -> Problem:
    return Problem(
        shown,
        line,
        col,
        "import-no-metric",
        f"the {formats.FORMATS[run.format]} run on line {line} has no usable metric (all missing, null or not finite)",
        "a run that failed before measuring anything has nothing to import; drop its line",
    )


def _impossible(shown: str, line: int, col: int, run: Run) -> Problem:
    key, value = formats.impossible_setting(run) or ("", 0)
    least = 0 if key in ("input_len", "output_len") else 1
    return Problem(
        shown,
        line,
        col,
        "invalid-value",
        f"the {formats.FORMATS[run.format]} run on line {line} has {key} {value}; a count is {least} or more",
        "the file does not describe a run that happened; fix or drop its line",
    )


# A lone surrogate (JSON allows the escape `\ud800`) is not a character and cannot be written as UTF-8.
_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _lone_surrogate(text: str, start: int, end: int, obj: Any) -> int | None:
    """Where the first lone surrogate escape of the object at text[start:end] is, or None if it has none."""
    if not _has_surrogate(obj):
        return None
    escapes = list(_SURROGATE_ESCAPE.finditer(text, start, end))
    i = 0
    while i < len(escapes):
        first = escapes[i]
        low_follows = i + 1 < len(escapes) and escapes[i + 1].start() == first.end()
        if first.group(0)[3] in "89abAB" and low_follows and escapes[i + 1].group(0)[3] in "cdefCDEF":
            i += 2  # a high and a low surrogate: one character outside the BMP
            continue
        return first.start()
    return start


def _has_surrogate(obj: Any) -> bool:
    if isinstance(obj, str):
        return _SURROGATE.search(obj) is not None
    if isinstance(obj, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in obj.items())
    if isinstance(obj, list):
        return any(_has_surrogate(v) for v in obj)
    return False


# A part of a run id longer than this (a 400-digit concurrency) would make a file name the
# file system refuses; the id's hash tells runs apart without it.
_MAX_ID_PART = 24


def _identify(run: Run, content: Any, line: int) -> None:
    parts = [_PREFIX[run.format]]
    if run.settings.get("batch_size") is not None:
        parts.append(f"bs{run.settings['batch_size']}")
    elif run.settings.get("max_concurrency") is not None:
        parts.append(f"c{run.settings['max_concurrency']}")
    else:
        parts.append(rate_slug(run.request_rate))
    run.id = run_id("-".join(p for p in parts if p and len(p) <= _MAX_ID_PART), run.format, content)
    run.source["line"] = line


# --- console blocks -----------------------------------------------------------------------------


def _parse_console(path: Path, shown: str, text: str, original_sha: str) -> tuple[ParsedFile | None, list[Problem]]:
    stored, n = redact_text(text)
    parsed = ParsedFile(path, shown, original_sha, stored)
    if n:
        old, new = text.splitlines(), stored.splitlines()
        changed = [i + 1 for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b]
        if len(old) == len(new) and changed:
            parsed.redacted += [f"line {i}: secret value(s) in the text" for i in changed]
        else:
            parsed.redacted.append(f"{n} secret value(s) in the text")
    lines = stored.splitlines()
    problems: list[Problem] = []
    i = 0
    while i < len(lines):
        if not formats.CONSOLE_HEADER.search(lines[i]):
            i += 1
            continue
        start = i
        j = i + 1
        while (
            j < len(lines) and not formats._CONSOLE_END.match(lines[j]) and not formats.CONSOLE_HEADER.search(lines[j])
        ):
            j += 1
        if j >= len(lines) or formats.CONSOLE_HEADER.search(lines[j]):
            problems.append(
                Problem(
                    shown,
                    start + 1,
                    1,
                    "import-truncated",
                    f"the console block starting on line {start + 1} has no closing line of `=` signs",
                    "paste the whole block, down to the closing ===== line, so no value is lost",
                )
            )
            i = j
            continue
        run, pairs = formats.console_block(lines[start + 1 : j])
        if not formats.usable(run):
            problems.append(_no_metric(shown, start + 1, 1, run))
        else:
            _identify(run, pairs, start + 1)
            parsed.runs.append(run)
        i = j + 1
    if problems:
        return None, problems
    return parsed, []
