"""Reading a benchmark file without trusting it: what `import` refuses before normalizing.

Regular files only, never read past the size limit; no lone surrogates (valid JSON, not
valid Unicode, so nothing could write them); no count a run cannot have. Each refusal is a
positioned problem, never a traceback.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import stat
from pathlib import Path
from typing import Any

from generator.base.problems import Problem
from generator.base.read import text_position
from generator.model.result import MAX_COUNT, may_be_negative, measurable
from generator.model.settings import COUNTS, LENGTHS
from generator.project.runs.formats.registry import FORMATS
from generator.project.runs.run import Run


def read_limited(path: Path, shown: str, limit: int) -> tuple[bytes | None, list[Problem]]:
    """At most limit + 1 bytes of a regular file; a device, FIFO or socket is refused unread.

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
            data = f.read(limit + 1) if size <= limit else b""
    except OSError as exc:
        return None, [Problem(shown, 1, 1, "import-unrecognised", f"cannot read file: {exc.strerror or exc}")]
    if size > limit or len(data) > limit:
        size = max(size, len(data))
        return None, [Problem(shown, 1, 1, "import-unrecognised", f"file is {size:,} bytes, over {limit:,}")]
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


def count_out_of_range(run: Run) -> tuple[str, int] | None:
    """The first count setting out of its range, with its value; None when all are in range.

    A length may be 0 (a prefill-only run), the other counts start at 1: a file that says
    otherwise describes no run that happened, and the records cannot hold it.
    """
    return next(
        (
            (key, value)
            for key in (*LENGTHS, *COUNTS)
            if isinstance(value := run.settings.get(key), int)
            and not (0 if key in LENGTHS else 1) <= value <= MAX_COUNT
        ),
        None,
    )


def impossible(shown: str, line: int, col: int, run: Run) -> Problem | None:
    """The first thing in `run` that a record typed by hand could not hold, as a problem; None
    when there is none. An imported number obeys the rules of a typed one."""
    return (
        impossible_count(shown, line, col, run)
        or _impossible_metric(shown, line, col, run)
        or _impossible_date(shown, line, col, run)
    )


def impossible_count(shown: str, line: int, col: int, run: Run) -> Problem | None:
    """A problem when a count setting is out of its range (`input_len: -5`, `num_prompts: 0`, a
    concurrency past what a record may hold, `result_model.MAX_COUNT`)."""
    found = count_out_of_range(run)
    if found is None:
        return None
    key, value = found
    least = 0 if key in LENGTHS else 1
    return Problem(
        shown,
        line,
        col,
        "invalid-value",
        f"the {FORMATS.get(run.format, run.format)} run on line {line} has {key} {_shown(value)}; "
        f"a count is {least} or more, and at most {MAX_COUNT:.0e}",
        "the file does not describe a run that happened; fix or drop its line",
    )


def _impossible_metric(shown: str, line: int, col: int, run: Run) -> Problem | None:
    # The rules of `model/result.py` that a typed value obeys: finite after the conversion to the
    # vocabulary's unit (1e308 s is no number of ms), 0 or within 1e-15..1e15 in size, and not
    # negative for a built-in metric (-5 tok/s).
    for name, value in run.metrics.items():
        key = run.keys.get(name, name)
        converted = f" ({run.conversions[name]})" if name in run.conversions else ""
        if not measurable(value):
            why = f"is {value:g}{converted}, outside the sizes a measurement may have (1e-15 to 1e15)"
        elif value < 0 and not may_be_negative(name):
            why = f"is {value:g}{converted}; a {run.unit(name)} value cannot be negative"
        else:
            continue
        return Problem(
            shown,
            line,
            col,
            "invalid-value",
            f"the {FORMATS.get(run.format, run.format)} run on line {line}: `{key}` for `{name}` {why}",
            "the same number typed in a record is refused; fix or drop the line, or check the unit",
        )
    return None


# A date as benchmark tools write one: 2026-03-05, 20260305-141500 (vLLM), 2026-03-05T14:15:00.
_DATE = re.compile(r"(\d{4})-?(\d{2})-?(\d{2})(?![0-9])")


def _impossible_date(shown: str, line: int, col: int, run: Run) -> Problem | None:
    date = run.settings.get("date")
    found = _DATE.match(date) if isinstance(date, str) else None
    if found is None:
        return None
    try:
        dt.date(*(int(part) for part in found.groups()))
    except ValueError as exc:
        return Problem(
            shown,
            line,
            col,
            "invalid-value",
            f"the {FORMATS.get(run.format, run.format)} run on line {line} has the date `{found.group(0)}`, "
            f"which no calendar has ({exc})",
            "the file does not describe a run that happened; fix the date or drop its line",
        )
    return None


def _shown(value: int) -> str:
    # A 4,000-digit count (which a chart could not place: it overflows a float) is named by size.
    return str(value) if len(str(value)) <= 20 else f"of {len(str(value)):,} digits"


# A lone surrogate (JSON allows the escape `\ud800`) is not a character and cannot be written as UTF-8.
_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def lone_surrogate(shown: str, text: str, start: int, end: int, obj: Any) -> Problem | None:
    """A problem at the first lone surrogate escape of the object at text[start:end], if it holds one."""
    if not _has_surrogate(obj):
        return None
    escapes = list(_SURROGATE_ESCAPE.finditer(text, start, end))
    at, i = start, 0
    while i < len(escapes):
        first = escapes[i]
        low_follows = i + 1 < len(escapes) and escapes[i + 1].start() == first.end()
        if first.group(0)[3] in "89abAB" and low_follows and escapes[i + 1].group(0)[3] in "cdefCDEF":
            i += 2  # a high and a low surrogate: one character outside the BMP
            continue
        at = first.start()
        break
    line, col = text_position(text, at)
    return Problem(
        shown,
        line,
        col,
        "import-unrecognised",
        "the JSON holds a lone surrogate escape (such as \\ud800): JSON allows it, Unicode text cannot",
        "remove or replace the escape; it names half of a character, so it cannot be kept",
    )


def may_hold_surrogate(text: str) -> bool:
    """Whether any JSON value of `text` may hold a lone surrogate: only an escape can write one (the
    text itself was decoded from UTF-8, which has none), so text without one needs no value walked."""
    return _SURROGATE_ESCAPE.search(text) is not None


def _has_surrogate(obj: Any) -> bool:
    if isinstance(obj, str):
        return _SURROGATE.search(obj) is not None
    if isinstance(obj, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in obj.items())
    if isinstance(obj, list):
        return any(_has_surrogate(v) for v in obj)
    return False
