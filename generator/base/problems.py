"""Problems found in a campaign, collected into one report and printed by a reporter.

Every user mistake becomes a `Problem` with a position, a stable code and, where it helps,
a hint. Commands collect all of them before deciding anything, so one run shows every
problem in every file.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

Severity = Literal["error", "warning"]

# The stable codes. The docs' error catalogue lists each with an example; a test keeps
# the two in step, so a new code must be added here and there.
CODES: dict[str, str] = {
    "file-too-large": "a YAML file is over the size limit",
    "not-utf8": "a file is not valid UTF-8 text",
    "byte-order-mark": "a file starts with a byte-order mark",
    "nul-byte": "a file contains a NUL byte",
    "line-too-long": "a line is over the length limit",
    "yaml-syntax": "the YAML cannot be parsed",
    "yaml-tab": "a tab is used for indentation",
    "yaml-too-deep": "the YAML nests deeper than the limit",
    "yaml-alias-limit": "aliases expand to more nodes than the limit (an alias bomb)",
    "yaml-unsupported": "a YAML feature the format does not allow (custom tags, complex keys)",
    "duplicate-key": "a mapping states the same key twice",
    "empty-file": "a YAML file holds no document",
    "multiple-documents": "a YAML file holds more than one document",
    "wrong-type": "a value has the wrong type (a list where a mapping belongs, ...)",
    "missing-field": "a required field is missing",
    "unknown-key": "a key the format does not know",
    "invalid-value": "a value outside the allowed set or form",
    "unknown-metric": "a metric name the vocabulary does not know",
    "metric-mismatch": "a result's baseline names metrics the result does not measure",
    "duplicate-label": "two results of one record share a label",
    "status-rule": "a status whose requirements are not met",
    "bad-filename": "a file in improvements/ that is neither campaign.yaml nor NN-slug.yaml",
    "missing-campaign": "improvements/campaign.yaml is missing",
    "duplicate-number": "two records share a number",
    "duplicate-slug": "two records share a slug",
    "unknown-slug": "related, superseded_by, builds_on or baseline_from names a slug that does not exist",
    "unknown-result": "baseline_from names a result label its record does not have",
    "build-cycle": "records build on each other, or results are each other's baseline, in a circle",
    "stack-conflict": "two adopted records set a flag or variable differently, or one removes what the other sets",
    "unknown-blocker": "a blocker reference names no blocker",
    "duplicate-blocker": "two blockers share an id",
    "missing-source": "a result's source file does not exist",
    "path-outside": "a path leaves the place it must stay in",
    "unknown-run": "a result names an imported run that does not exist",
    "evidence-mismatch": "a linked run's kept raw file is missing, not a regular file, or no longer its bytes",
    "no-baseline": "a result has no baseline to compare with",
    "not-comparable": "a result and its baseline differ in more than the record's change",
    "status-contradicts-evidence": "a record's status contradicts its primary metric's decision",
    "unknown-reference": "a number quoted in prose (`{{ record.result.metric.field }}`) names nothing",
    "other-setup": "an imported run's file names another model or engine than the campaign",
    "spread-beyond-one-configuration": "a result's repetitions span more than 2x: more than one configuration gives",
    "bad-template": "a template cannot be loaded or rendered",
    "output-conflict": "a generated file would overwrite a file the generator did not write",
    "import-unrecognised": "a benchmark file no importer recognises",
    "import-truncated": "a benchmark file with a truncated or broken line",
    "import-no-metric": "a benchmark run with no usable metric",
    "import-missing-key": "a row lacks a key that the campaign's import format reads",
    "usage": "a command was called with arguments that do not fit",
    "cut-text": "prose that a `#` comment may have cut short (an unquoted `#`)",
    "shell-syntax": (
        "shell text bash would not read as printed: a `before:` step that is not one complete line, "
        "or an operator, substitution or comment in a command (a warning when bash is missing)"
    ),
    "invisible-character": "text printed for a shell holds a control, bidi, zero-width or unusual space character",
    "not-runnable": "a change `improvements run` cannot run as the record shows it (`inside:` steps, its own `image:`)",
}


@dataclass(frozen=True)
class Problem:
    path: str
    line: int
    col: int
    code: str
    message: str
    hint: str | None = None
    severity: Severity = "error"

    def text(self) -> str:
        out = f"{self.path}:{self.line}:{self.col}: {self.severity}[{self.code}]: {self.message}"
        if self.hint:
            out += f" (hint: {self.hint})"
        return printable(out)


@dataclass
class Report:
    problems: list[Problem] = field(default_factory=list)

    def add(self, problem: Problem) -> None:
        self.problems.append(problem)

    def extend(self, problems: list[Problem]) -> None:
        self.problems.extend(problems)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def ok(self) -> bool:
        return not self.errors

    def sorted(self) -> list[Problem]:
        return sorted(self.problems, key=lambda p: (p.path, p.line, p.col, p.code, p.message))


class ProblemsFound(Exception):
    """Raised by a command when input is invalid; the CLI prints the report and exits 1."""

    def __init__(self, report: Report) -> None:
        super().__init__(f"{len(report.errors)} problem(s)")
        self.report = report


class CommandError(Exception):
    """A command cannot go on: shown as one line, exit 1. Library code raises it instead of a click
    exception (only the command layer speaks click); `generator.cli` converts it in one place.
    """


class UsageProblem(CommandError):
    """A command was called with arguments that do not fit: shown with the command's usage, exit 2."""


@functools.lru_cache(maxsize=4096)
def rel(path: Path, root: Path) -> str:
    """A path as users see it: relative to the repository root where possible."""
    # Loading, checking and rendering each name every record several times: remembered.
    # Resolving each of a thousand records' paths costs a system call per path component, so
    # only their folder is resolved. A file that is a symlink keeps its own name: users know
    # improvements/12-x.yaml, not wherever it points.
    real = str(path.resolve()) if path.name in ("", ".", "..") else os.path.join(_real_folder(path.parent), path.name)
    base = _real_folder(root)
    if real == base:
        return "."
    prefix = base.rstrip(os.sep) + os.sep
    if real.startswith(prefix):
        return real[len(prefix) :].replace(os.sep, "/")
    return path.as_posix()


@functools.lru_cache(maxsize=256)
def _real_folder(folder: Path) -> str:
    return str(folder.resolve())


# Control characters (terminal escape sequences) and bidirectional overrides can come from a
# key, a value or a file name; printed raw they could rewrite the terminal or hide text.
# Lone surrogates stand for bytes of a file name that are not UTF-8; written raw they would
# raise UnicodeEncodeError on a strict UTF-8 terminal.
# Zero-width characters too: invisible, they make two names that look the same differ.
_UNPRINTABLE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\u2028\u2029\ufeff\ud800-\udfff]"
)


_JSON_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff]")


def printable(value: str) -> str:
    """`value` with control and bidi characters shown as escapes, so a report is one plain line."""
    return _UNPRINTABLE.sub(lambda m: m.group().encode("unicode_escape", "backslashreplace").decode("ascii"), value)


def _github_escape(value: str) -> str:
    return printable(value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _grouped(problems: list[Problem]) -> list[str]:
    """Text lines with warnings grouped by their code (their cause): the first in full, then
    every other position of the same cause on one line. Errors stay one line per place."""
    by_code: dict[str, list[Problem]] = {}
    for p in problems:
        if p.severity == "warning":
            by_code.setdefault(p.code, []).append(p)
    lines = []
    for p in problems:
        if p.severity != "warning":
            lines.append(p.text())
            continue
        same = by_code[p.code]
        if same[0] is not p:
            continue
        lines.append(p.text())
        if len(same) > 1:
            # A place with several warnings of the cause (one per metric of a result) is named once.
            places = Counter(printable(f"{q.path}:{q.line}:{q.col}") for q in same[1:])
            where = ", ".join(f"{k} (x{n})" if n > 1 else k for k, n in places.items())
            lines.append(f"  and {len(same) - 1} more like it ({p.code}; --verbose shows each): {where}")
    return lines


def format_report(report: Report, fmt: str, *, grouped: bool = False) -> str:
    """The problems as text, JSON or GitHub annotations; `grouped` text gives a warning's cause
    once with the positions of the rest (`check` without --verbose)."""
    problems = report.sorted()
    if fmt == "json":
        text = json.dumps([asdict(p) for p in problems], indent=2, ensure_ascii=False)
        # JSON escapes only C0 controls; the same data with the others escaped too.
        return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n"
    if fmt == "github":
        lines = []
        for p in problems:
            msg = p.message + (f" (hint: {p.hint})" if p.hint else "")
            # Property values also escape the separators of the annotation syntax.
            path = _github_escape(p.path).replace(":", "%3A").replace(",", "%2C")
            props = f"file={path},line={p.line},col={p.col},title={p.code}"
            lines.append(f"::{p.severity} {props}::{_github_escape(msg)}")
        return "\n".join(lines) + ("\n" if lines else "")
    lines = _grouped(problems) if grouped else [p.text() for p in problems]
    n_err, n_warn = len(report.errors), len(problems) - len(report.errors)
    if problems:
        lines.append(f"{n_err} error(s), {n_warn} warning(s)")
    return "\n".join(lines) + ("\n" if lines else "")
