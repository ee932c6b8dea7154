"""A harness's own benchmark file read through campaign.yaml's `import_formats:` mapping.

The built-in formats are told from their keys; a campaign's own harness is named on the
command line (`improvements import FILE --format NAME`) and its mapping says which key of a
row is which metric (in which unit) and which setting. The file goes through the same reading
limits, redaction and run identity as the built-in formats, and any problem (a key a row does
not have, a value that is not a number) stops the whole file, with the row's line.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from generator.base.problems import Problem
from generator.model import metrics as vocabulary
from generator.model.import_format import ImportFormat, MappedMetric, ProvenanceFile
from generator.model.settings import COUNTS, LENGTHS, NUMBERS
from generator.project.runs import intake
from generator.project.runs.formats.mapped_facts import FILE_LAUNCH, MISSING, Mapping, fact_text, file_facts, lookup
from generator.project.runs.parse import ParsedFile, _json_spans, _unrecognised, read_text
from generator.project.runs.redact import redact, redact_spans, redact_text
from generator.project.runs.run import (
    BOOKKEEPING,
    Run,
    integer,
    load_run_id,
    number,
    plain_number,
    request_rate,
    started_utc,
)

if TYPE_CHECKING:
    from pathlib import Path


_COUNTS = frozenset((*LENGTHS, *COUNTS))
_NUMBERS = frozenset(NUMBERS)
# Settings a reader also needs as provenance, so `import` and `check` see another model or engine.
_PROVENANCE = ("engine", "engine_version", "model", "backend", "date")
# How a run was made, not what defines it: kept on the run apart from its settings, and never
# part of its identity (a mapping that learns to read start times keeps its runs' ids).
_HOW_MADE = ("launch", "started")


def parse_mapped(path: Path, shown: str, mapping: Mapping) -> tuple[ParsedFile | None, list[Problem]]:
    """The runs in one file of a campaign's own format, or the problems that stop its import."""
    read = read_text(path, shown)
    if isinstance(read, list):
        return None, read
    text, original_sha = read
    facts, problems = file_facts(mapping)
    if problems:
        return None, problems
    # One launch for every row, where the mapping reads it from a file beside them.
    launch = facts.pop(FILE_LAUNCH, None)
    if text.lstrip()[:1] in ("{", "["):
        parsed, problems = _from_json(path, shown, text, original_sha, mapping)
    else:
        parsed, problems = _from_csv(path, shown, text, original_sha, mapping)
    for run in parsed.runs if parsed is not None else ():
        if launch is not None and run.launch is None:
            run.launch = launch[0]
        for name, (value, key) in facts.items():
            run.provenance.setdefault(name, value)
            run.provenance_keys.setdefault(name, key)
    return parsed, problems


# --- rows ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Row:
    line: int
    col: int
    obj: Any


def _from_json(
    path: Path, shown: str, text: str, original_sha: str, mapping: Mapping
) -> tuple[ParsedFile | None, list[Problem]]:
    spans, stop = _json_spans(shown, text)
    if stop:
        return None, stop
    cleaned, notes, kept = redact_spans(text, spans)
    parsed = ParsedFile(path, shown, original_sha, kept, notes)
    rows: list[_Row] = []
    problems: list[Problem] = []
    for line, col, clean in cleaned:
        items: Any = clean
        if mapping.spec.rows is not None:
            items = lookup(clean, mapping.spec.rows)
            if not isinstance(items, list):
                problems.append(_no_rows(shown, line, col, mapping, items is MISSING))
                continue
        for item in items if isinstance(items, list) else [items]:
            rows.append(_Row(line, col, item))
    if problems:
        return None, problems
    return _runs(parsed, rows, mapping)


def _from_csv(
    path: Path, shown: str, text: str, original_sha: str, mapping: Mapping
) -> tuple[ParsedFile | None, list[Problem]]:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    rows: list[_Row] = []
    redacted: list[str] = []
    # (first line, last line, the row written again without its secrets), for the kept copy.
    replacements: list[tuple[int, int, str]] = []
    try:
        if not reader.fieldnames or len(reader.fieldnames) < 2:
            what = "file is neither JSON, JSON lines nor CSV with a header line"
            return None, [_unrecognised(shown, 1, 1, f"{what} (read as `{mapping.name}`)")]
        twice = _header_twice(shown, text, list(reader.fieldnames), reader.line_num)
        if twice is not None:
            return None, [twice]
        start = reader.line_num + 1
        for raw in reader:
            row = {k: _csv_value(v) for k, v in raw.items() if isinstance(k, str) and isinstance(v, str)}
            clean, found = redact(row)
            if found:
                redacted += [f"line {reader.line_num}: {p}" for p in found]
                cells = {k: ("<redacted>" if clean.get(k) != row.get(k) else v) for k, v in raw.items()}
                out = io.StringIO()
                csv.DictWriter(out, fieldnames=list(reader.fieldnames), lineterminator="").writerow(cells)
                replacements.append((start, reader.line_num, out.getvalue()))
            rows.append(_Row(start, 1, clean))
            start = reader.line_num + 1
    except csv.Error as exc:
        return None, [_unrecognised(shown, reader.line_num or 1, 1, f"the CSV cannot be read ({exc})")]
    lines = text.splitlines(keepends=True)
    for first, last, new in reversed(replacements):
        ending = lines[last - 1][len(lines[last - 1].rstrip("\r\n")) :]
        lines[first - 1 : last] = [new + ending]
    stored, n = redact_text("".join(lines))
    parsed = ParsedFile(path, shown, original_sha, stored, redacted)
    if n:
        parsed.redacted.append(f"{n} more secret value(s) in the text")
    return _runs(parsed, rows, mapping)


def _header_twice(shown: str, text: str, names: list[str], lines: int) -> Problem | None:
    """A column named twice in the header (each row would keep only the last such cell)."""
    seen: set[str] = set()
    for i, name in enumerate(names):
        if name in seen:
            # The column of the second name, counted as written when the header is on one line.
            header = text.splitlines()[0] if lines == 1 else ""
            col = len(",".join(next(csv.reader([header]), [])[:i])) + 2 if header else 1
            return Problem(
                shown,
                1,
                col,
                "duplicate-key",
                f"the CSV header names the column `{name[:60]}` twice (column {i + 1}); a row would keep only "
                "the last such cell",
                "which column the benchmark meant is unknown; rename or remove one",
            )
        seen.add(name)
    return None


def _csv_value(text: str) -> Any:
    """A CSV cell as the JSON value it stands for: empty is null, numbers (in plain ASCII decimal)
    and booleans are typed, anything else is text."""
    value = text.strip()
    if value == "":
        return None
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    found = plain_number(value)
    return value if found is None else found


# --- a row to a run ----------------------------------------------------------------------------


def _runs(parsed: ParsedFile, rows: list[_Row], mapping: Mapping) -> tuple[ParsedFile | None, list[Problem]]:
    """The runs of a mapped file's rows, or its problems (a wrong path once, not once per row)."""
    problems: list[Problem] = []
    # (path, what it is for) -> rows that lack it: a wrong path is one problem, not one per row.
    missing: dict[tuple[str, str], list[_Row]] = {}
    kept = 0
    for row in rows:
        if not isinstance(row.obj, dict):
            problems.append(
                _unrecognised(parsed.shown, row.line, row.col, f"the JSON value on line {row.line} is not an object")
            )
            continue
        if _skipped(row.obj, mapping.spec):
            continue
        kept += 1
        run, found = _run(parsed.shown, row, mapping, missing)
        problems += found
        if run is None or found:
            continue
        if not any(name not in BOOKKEEPING for name in run.metrics):
            problems.append(
                Problem(
                    parsed.shown,
                    row.line,
                    row.col,
                    "import-no-metric",
                    f"the `{mapping.name}` row on line {row.line} has no usable metric (all null)",
                    "a run that failed before measuring anything has nothing to import; drop its line, or "
                    "leave such rows out with `skip:`",
                )
            )
            continue
        impossible = intake.impossible(parsed.shown, row.line, row.col, run)
        if impossible is not None:
            problems.append(impossible)
            continue
        parsed.runs.append(run)
    problems = _missing_problems(parsed.shown, missing, kept, mapping) + problems
    if not problems and not parsed.runs:
        what = "every row is left out by `skip:`" if rows else "the file holds no rows"
        problems.append(
            Problem(
                parsed.shown,
                1,
                1,
                "import-no-metric",
                f"nothing to import as `{mapping.name}`: {what}",
                "check the file and the format's `skip:` in improvements/campaign.yaml",
            )
        )
    return (None, problems) if problems else (parsed, [])


def _same(a: Any, b: Any) -> bool:
    # `true` is not 1 here, though Python says so: a flag and a count are different things.
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    return bool(a == b)


def _skipped(obj: dict[str, Any], spec: ImportFormat) -> bool:
    return any(_same(lookup(obj, path), value) for path, value in spec.skip.items())


def _run(
    shown: str, row: _Row, mapping: Mapping, missing: dict[tuple[str, str], list[_Row]]
) -> tuple[Run | None, list[Problem]]:
    """One row as a run: its metrics, settings and provenance, each read through the mapping.

    Over 60 lines: the three parts of the mapping are read one after another with the same
    pattern (look up, note a missing path, convert, refuse a wrong value), kept side by side.
    """
    spec = mapping.spec
    problems: list[Problem] = []
    settings: dict[str, Any] = {"client": mapping.name}
    run = Run("", mapping.name, settings, {})
    for name, target in spec.metrics.items():
        where, unit = (target.path, target.unit) if isinstance(target, MappedMetric) else (target, None)
        value = lookup(row.obj, where)
        if value is MISSING:
            missing.setdefault((where, f"metric `{name}`"), []).append(row)
            continue
        if value is None:
            continue
        v = number(value)
        if v is None:
            problems.append(_not_a(shown, row, where, value, "a finite number", f"metric `{name}`"))
            continue
        metric = mapping.vocabulary.lookup(name)
        to = metric.unit if metric is not None else (unit or "")
        factor = vocabulary.conversion(unit, to) if unit is not None else 1.0
        run.metrics[name] = v * (factor or 1.0)
        run.keys[name] = where
        if unit is not None and unit != to:
            run.conversions[name] = f"{unit} -> {to}"
    for setting, setting_at in spec.settings.items():
        if isinstance(setting_at, ProvenanceFile):
            continue
        where = setting_at
        value = lookup(row.obj, where)
        if value is MISSING:
            missing.setdefault((where, f"setting `{setting}`"), []).append(row)
            continue
        if value is None or value == "":
            continue
        if setting in _HOW_MADE:
            problem = _how_made(shown, row, run, setting, where, value)
            if problem is not None:
                problems.append(problem)
            continue
        key = "max_concurrency" if setting == "concurrency" else setting
        converted, want = _setting(key, value)
        if converted is None:
            problems.append(_not_a(shown, row, where, value, want, f"setting `{setting}`"))
            continue
        settings[key] = converted
        if key in _PROVENANCE:
            run.provenance[key], run.provenance_keys[key] = str(converted), where
    for name, fact_at in spec.provenance.items():
        if isinstance(fact_at, ProvenanceFile):
            continue
        fact = fact_text(lookup(row.obj, fact_at))
        if fact is not None:
            run.provenance[name], run.provenance_keys[name] = fact, fact_at
    used = {p.split(".")[0] for p in (*_paths(spec), *spec.skip)}
    run.unmapped = [k for k, v in row.obj.items() if k not in used and v is not None and not isinstance(v, list | dict)]
    run.notes.append(f"Read as `{mapping.name}`, a format of this campaign's own (import_formats in campaign.yaml).")
    if run.conversions:
        run.notes.append(
            "Converted to the vocabulary's units: "
            + ", ".join(f"`{run.keys[n]}` ({c})" for n, c in sorted(run.conversions.items()))
            + "."
        )
    if problems:
        return None, problems
    _identify(run, row, mapping)
    return run, []


def _how_made(shown: str, row: _Row, run: Run, setting: str, where: str, value: Any) -> Problem | None:
    """Fill the run's launch or start time from the row, or the problem with the value."""
    if setting == "launch":
        if isinstance(value, bool) or not isinstance(value, str | int):
            return _not_a(shown, row, where, value, "text or a whole number", "setting `launch`")
        run.launch = str(value)
        return None
    started = started_utc(value)
    if started is None:
        want = "a time in ISO 8601 with a UTC offset (`2026-12-01T18:44:59+00:00`) or epoch seconds"
        return _not_a(shown, row, where, value, want, "setting `started`")
    run.started = started
    return None


def _paths(spec: ImportFormat) -> list[str]:
    out = [t.path if isinstance(t, MappedMetric) else t for t in spec.metrics.values()]
    rows = [t for t in spec.provenance.values() if isinstance(t, str)]
    return out + [t for t in spec.settings.values() if isinstance(t, str)] + rows


def _setting(key: str, value: Any) -> tuple[Any, str]:
    """A setting's value as the built-in importers store it, or None, and what it had to be."""
    if key in _COUNTS:
        return integer(value), "a whole number"
    if key in _NUMBERS:
        return number(value), "a finite number"
    if key == "request_rate":
        return request_rate(value), "a number of requests per second, `inf` or `trace`"
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None, "text"
    if isinstance(value, float) and not math.isfinite(value):
        return None, "text"
    return str(value), "text"


def _identify(run: Run, row: _Row, mapping: Mapping) -> None:
    # The mapping is part of what the run is: the same row read through another mapping is another run.
    # How the run was made (its launch, start time, provenance) is not what it is.
    spec = mapping.spec.model_dump(mode="json", exclude={"provenance"})
    spec["settings"] = {k: v for k, v in spec["settings"].items() if k not in _HOW_MADE}
    run.id = load_run_id(mapping.name, run, mapping.name, [spec, row.obj])
    run.source["line"] = row.line


# --- problems -----------------------------------------------------------------------------------


def _not_a(shown: str, row: _Row, where: str, value: Any, want: str, what: str) -> Problem:
    text = json.dumps(value, ensure_ascii=False)
    text = text if len(text) <= 40 else text[:40] + "..."
    return Problem(
        shown,
        row.line,
        row.col,
        "invalid-value",
        f"the row on line {row.line} has `{where}` = {text} for {what}; expected {want}",
        "fix the row, or leave rows that are not measurements out with `skip:` in improvements/campaign.yaml",
    )


def _missing_problems(
    shown: str, missing: dict[tuple[str, str], list[_Row]], kept: int, mapping: Mapping
) -> list[Problem]:
    out: list[Problem] = []
    for (where, what), rows in missing.items():
        if len(rows) == kept:
            # No row has it: the path is wrong, so the problem is where the path is written.
            loc = _loc_of(mapping.spec, where, what)
            line, col = mapping.where(*loc)
            out.append(
                Problem(
                    mapping.campaign_shown,
                    line,
                    col,
                    "import-missing-key",
                    f"no row of {shown} has the key `{where}` that import_formats `{mapping.name}` reads for {what}",
                    "write the key as the file spells it, levels joined by `.` (`stats.ttft_p99_s`)",
                )
            )
            continue
        first = rows[0]
        more = f" (and {len(rows) - 1} more row(s) like it)" if len(rows) > 1 else ""
        out.append(
            Problem(
                shown,
                first.line,
                first.col,
                "import-missing-key",
                f"the row on line {first.line} has no key `{where}` for {what}{more}",
                f"every row read as `{mapping.name}` needs it; leave rows that are not measurements out "
                "with `skip:` in improvements/campaign.yaml",
            )
        )
    return out


def _loc_of(spec: ImportFormat, where: str, what: str) -> tuple[str | int, ...]:
    for name, target in spec.metrics.items():
        if what == f"metric `{name}`":
            return ("metrics", name, "path") if isinstance(target, MappedMetric) else ("metrics", name)
    for setting in spec.settings:
        if what == f"setting `{setting}`":
            return ("settings", setting)
    return ()


def _no_rows(shown: str, line: int, col: int, mapping: Mapping, absent: bool) -> Problem:
    rows = mapping.spec.rows
    what = "has no key" if absent else "does not hold a list at"
    return Problem(
        shown,
        line,
        col,
        "import-missing-key",
        f"the JSON object on line {line} {what} `{rows}`, where import_formats `{mapping.name}` reads its rows",
        "`rows:` is the key of the list of runs inside each object; leave it out when each object is a run",
    )
