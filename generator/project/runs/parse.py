"""Benchmark files to runs: split a file into objects or console blocks, redact, normalize.

A file may hold one JSON object, many appended ones (JSONL, or `--append-result` objects
joined by newlines), or one or more pasted console blocks. Every problem names the file, the
line and the formats known; a file with any problem yields no runs at all.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.base.fsio import encoded_chunks
from generator.base.problems import Problem
from generator.base.read import byte_position, text_position
from generator.project.runs import intake, provenance
from generator.project.runs.formats.common import usable
from generator.project.runs.formats.console import CONSOLE_END, CONSOLE_HEADER, console_block
from generator.project.runs.formats.registry import FORMATS, known_formats, normalize_object
from generator.project.runs.redact import KeptCopy, redact_text
from generator.project.runs.run import Run, load_run_id

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
    # Read with `once`: run id -> the other lines that hold that same run (its `source.line` is
    # the last of them), so a file that repeats a run 100 times keeps it once.
    repeats: dict[str, list[int]] = field(default_factory=dict)
    # The kept copy's digest, taken once from `stored_text` (which nothing changes after): every
    # run of the file names it, and hashing a 100 MB copy once per run made an import quadratic.
    stored_sha256: str = field(init=False)

    def __post_init__(self) -> None:
        digest = hashlib.sha256()
        for chunk in encoded_chunks(self.stored_text):
            digest.update(chunk)
        self.stored_sha256 = digest.hexdigest()

    @property
    def stored_bytes(self) -> bytes:
        return self.stored_text.encode("utf-8")


def _unrecognised(shown: str, line: int, col: int, what: str) -> Problem:
    return Problem(
        shown,
        line,
        col,
        "import-unrecognised",
        f"{what}; no importer recognises it",
        f"formats known: {known_formats()}",
    )


def read_text(path: Path, shown: str) -> tuple[str, str] | list[Problem]:
    """A benchmark file's text and the sha256 of its bytes, or why it cannot be read as text.

    Every format, built-in or a campaign's own, reads its file through here: the same size
    limit, the same refusals (not UTF-8, a NUL byte), the same digest of what was read.
    """
    data, problems = intake.read_limited(path, shown, MAX_BYTES)
    if data is None:
        return problems
    original_sha = hashlib.sha256(data).hexdigest()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return [_unrecognised(shown, *byte_position(data, exc.start), "file is not UTF-8 text")]
    if "\x00" in text:
        return [_unrecognised(shown, *text_position(text, text.index("\x00")), "file contains a NUL byte")]
    return text, original_sha


def parse_file(path: Path, shown: str, *, once: bool = False) -> tuple[ParsedFile | None, list[Problem]]:
    """The runs in one benchmark file, or the problems that stop it from being imported.

    `once` (the import): a JSON value that repeats an earlier one's run (the same id, so the same
    content) is that run again, not another: kept once, at the first one's place, as the last
    one (the one whose file an import writes), the other lines noted in `repeats`. Without it
    (the runner, which numbers the runs of one output), every value is a run of its own.
    """
    read = read_text(path, shown)
    if isinstance(read, list):
        return None, read
    text, original_sha = read
    if CONSOLE_HEADER.search(text):
        return _parse_console(path, shown, text, original_sha)
    return _parse_json(path, shown, text, original_sha, once)


# --- JSON and JSONL -----------------------------------------------------------------------------


def _json_spans(shown: str, text: str) -> tuple[list[tuple[int, int, Any]], list[Problem]]:
    """Each JSON value in `text` with its start and end offsets, or the problem that stops reading."""
    stop: list[Problem] = []
    spans = list(_json_values(shown, text, stop))
    return ([], stop) if stop else (spans, [])


def _json_values(shown: str, text: str, stop: list[Problem]) -> Iterator[tuple[int, int, Any]]:
    """Each JSON value in `text` with its start and end offsets, one at a time (a caller that
    takes each value as it comes never holds every object of a large file); the problem that
    stops reading goes into `stop`, and the values before it are then not to be used.

    Over 60 lines: one loop, with each way a value can fail to read told apart at its place."""
    # Accepts the bare Infinity that SGLang writes for request_rate; refuses a key given twice.
    decoder = json.JSONDecoder(object_pairs_hook=_one_value_per_key)
    count = 0
    pos = 0
    ws = re.compile(r"\s*")
    escapes = intake.may_hold_surrogate(text)
    while True:
        pos = ws.match(text, pos).end()  # type: ignore[union-attr]
        if pos >= len(text):
            break
        if text[pos] not in "{[":
            line, col = text_position(text, pos)
            if not count:
                stop.append(_unrecognised(shown, line, col, "file is neither JSON, JSON lines nor a console block"))
                return
            stop.append(
                Problem(
                    shown,
                    line,
                    col,
                    "import-truncated",
                    "unexpected text after the last complete JSON object",
                    "remove the stray text, or the partial object a crashed run left behind",
                )
            )
            return
        try:
            obj, end = decoder.raw_decode(text, pos)
        except RecursionError:
            stop.append(_unrecognised(shown, *text_position(text, pos), "the JSON nests deeper than Python can read"))
            return
        except _KeyTwice as exc:
            stop.append(_key_twice(shown, text, pos, exc.key))
            return
        except json.JSONDecodeError as exc:
            at_end = ws.match(text, exc.pos).end() >= len(text) or "Unterminated" in exc.msg  # type: ignore[union-attr]
            # A cut-off object is reported where the text stops, not past the final newline.
            line, col = text_position(text, min(exc.pos, len(text.rstrip())) if at_end else exc.pos)
            start_line = text_position(text, pos)[0]
            where = f"the JSON object starting on line {start_line}"
            message = f"{where} is cut off ({exc.msg})" if at_end else f"{where} is broken: {exc.msg}"
            stop.append(
                Problem(
                    shown,
                    line,
                    col,
                    "import-truncated",
                    message,
                    "a benchmark killed while writing leaves a partial last line; delete it and import again",
                )
            )
            return
        except ValueError:
            # Not a syntax error: an integer with more digits than Python converts (over 4,300).
            stop.append(_unrecognised(shown, *text_position(text, pos), "the JSON holds a number too long to read"))
            return
        lone = intake.lone_surrogate(shown, text, pos, end, obj) if escapes else None
        if lone is not None:
            stop.append(lone)
            return
        count += 1
        yield pos, end, obj
        pos = end
    if not count:
        stop.append(_unrecognised(shown, 1, 1, "file is empty"))


class _KeyTwice(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _one_value_per_key(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # JSON keeps the last of two values under one key; which one the benchmark meant is unknown.
    # Keys interned: json makes each line's keys anew, and every run keeps its metrics' keys.
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _KeyTwice(key)
        out[sys.intern(key)] = value
    return out


def _key_twice(shown: str, text: str, start: int, key: str) -> Problem:
    """The problem of a key given twice in the JSON value at `start`: at the key's second
    spelling after `start` (found as the text spells it; else where the value starts)."""
    spelled = [m.start() for m in re.finditer(re.escape(json.dumps(key, ensure_ascii=False)) + r"\s*:", text[start:])]
    at = start + spelled[1] if len(spelled) > 1 else start
    line, col = text_position(text, at)
    first = text_position(text, start)[0]
    return Problem(
        shown,
        line,
        col,
        "duplicate-key",
        f"the JSON object starting on line {first} gives the key `{key[:60]}` twice; JSON keeps only the last",
        "which value the benchmark meant is unknown; remove one",
    )


def _parse_json(
    path: Path, shown: str, text: str, original_sha: str, once: bool = False
) -> tuple[ParsedFile | None, list[Problem]]:
    # Each value is read, cleaned and made a run before the next is read: a file of 100,000
    # lines never has all its objects in memory at once, in either the raw or the clean form.
    stop: list[Problem] = []
    problems: list[Problem] = []
    runs: list[Run] = []
    # With `once`: each run id's place in `runs`, and the other lines that hold it.
    places: dict[str, int] = {}
    repeats: dict[str, list[int]] = {}
    kept = KeptCopy(text)
    for start, end, obj in _json_values(shown, text, stop):
        line, col, clean = kept.clean(start, end, obj)
        # A list of run objects (an aggregated export) is many runs from one place.
        for item in clean if isinstance(clean, list) else [clean]:
            run = normalize_object(item)
            if run is None:
                what = (
                    f"the JSON object on line {line} (keys: {', '.join(str(k)[:40] for k in list(item)[:6]) or 'none'})"
                    if isinstance(item, dict)
                    else f"the JSON value on line {line} is not an object"
                )
                problems.append(_unrecognised(shown, line, col, what))
                continue
            if not usable(run):
                problems.append(_no_metric(shown, line, col, run))
                continue
            impossible = intake.impossible(shown, line, col, run)
            if impossible is not None:
                problems.append(impossible)
                continue
            _identify(run, item, line)
            provenance.fill(run, item)
            at = places.get(run.id) if once else None
            if at is None:
                places[run.id] = len(runs)
                runs.append(run)
            else:
                repeats.setdefault(run.id, []).append(runs[at].source["line"])
                runs[at] = run
    if stop:
        return None, stop
    unrecognised = [p for p in problems if p.code == "import-unrecognised"]
    if len(unrecognised) > 1:
        # One clear error per file that is not a benchmark file, not one per line of it.
        first = unrecognised[0]
        more = f" (and {len(unrecognised) - 1} more value(s) like it)"
        problems = [p for p in problems if p.code != "import-unrecognised"]
        problems.insert(0, Problem(first.path, first.line, first.col, first.code, first.message + more, first.hint))
    if problems:
        return None, problems
    notes, stored = kept.finish()
    return ParsedFile(path, shown, original_sha, stored, notes, runs, repeats), []


def _no_metric(shown: str, line: int, col: int, run: Run) -> Problem:
    return Problem(
        shown,
        line,
        col,
        "import-no-metric",
        f"the {FORMATS[run.format]} run on line {line} has no usable metric (all missing, null or not finite)",
        "a run that failed before measuring anything has nothing to import; drop its line",
    )


def _identify(run: Run, content: Any, line: int) -> None:
    run.id = load_run_id(_PREFIX[run.format], run, run.format, content)
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
        if not CONSOLE_HEADER.search(lines[i]):
            i += 1
            continue
        start = i
        j = i + 1
        while j < len(lines) and not CONSOLE_END.match(lines[j]) and not CONSOLE_HEADER.search(lines[j]):
            j += 1
        if j >= len(lines) or CONSOLE_HEADER.search(lines[j]):
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
        run, pairs = console_block(lines[start + 1 : j])
        impossible = intake.impossible(shown, start + 1, 1, run)
        if not usable(run):
            problems.append(_no_metric(shown, start + 1, 1, run))
        elif impossible is not None:
            problems.append(impossible)
        else:
            _identify(run, pairs, start + 1)
            provenance.fill(run, None)
            parsed.runs.append(run)
        i = j + 1
    if problems:
        return None, problems
    return parsed, []
