"""What a result rests on, as its page shows it: provenance, the raw file, the run's place, the workload.

Beside each result's numbers a page says what they were measured on (what the record states
and what the imported file states, each marked with where it comes from), links the kept raw
file with its hash, gives every imported run an anchor that other results link to, and says
the workload in the file's own terms: a random-dataset run whose `random_input_len` is 1 is
not "input 1 tokens" when the lengths were drawn from a range.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from markupsafe import Markup

from generator.analysis.campaign import Analysis, ResolvedResult
from generator.model.result import Provenance, Result
from generator.project.load import Project, RecordFile
from generator.project.runs.provenance import LABELS, mismatches
from generator.project.runs.run import Run
from generator.views.markdown import code, inline
from generator.views.paths import docs_root, relative, series_dir

# Where the site publishes the kept raw files, relative to the docs folder (see site.on_files).
RAW_SITE_DIR = "results/raw"
# A kept copy is published under its own name only with one of these suffixes; any other
# (a pasted block saved as .md or .html) gets ".txt" added, so no builder renders it as a page.
_PLAIN_SUFFIXES = (".json", ".jsonl", ".txt", ".log", ".csv")

# setting -> the file's key, per format: the workload as the file spells it.
_WORKLOAD_KEYS: dict[str, tuple[tuple[str, str], ...]] = {
    "sglang-bench-serving": (
        ("dataset", "dataset_name"),
        ("input_len", "random_input_len"),
        ("output_len", "random_output_len"),
        ("range_ratio", "random_range_ratio"),
    ),
    "sglang-bench-one-batch": (("input_len", "input_len"), ("output_len", "output_len")),
    "sglang-bench-one-batch-server": (("input_len", "input_len"), ("output_len", "output_len")),
    "vllm-benchmark-serving": (("dataset", "dataset_name"), ("num_prompts", "num_prompts")),
    "vllm-bench-serve": (("dataset", "dataset_name"), ("num_prompts", "num_prompts")),
}
# What the file measured about the requests it sent, in this order.
_MEASURED = ("total_input_tokens", "total_output_tokens", "total_output_tokens_retokenized")


def published_name(stored: str) -> str:
    """The name a kept raw file (results/raw/NAME) is published under on the site."""
    name = PurePosixPath(stored).name
    return name if name.lower().endswith(_PLAIN_SUFFIXES) else name + ".txt"


def run_anchor(run_id: str) -> str:
    return f"run-{run_id}"


@dataclass
class ProvenanceRow:
    label: str
    # Markdown, escaped: the value as a code span.
    value: Markup
    # "record", "campaign baseline" or the file's key.
    origin: str


@dataclass
class Evidence:
    anchor: str | None = None
    provenance: list[ProvenanceRow] = field(default_factory=list)
    server_args: str | None = None
    server_args_key: str | None = None
    raw_link: str | None = None
    raw_name: str | None = None
    raw_line: int | None = None
    stored_sha256: str | None = None
    original_sha256: str | None = None
    redacted: bool = False
    # Markdown, escaped: the workload in the file's own keys, or None (the record's own workload).
    workload: Markup | None = None
    baseline_run_link: str | None = None
    # The result's notes with each run id linked to where that run is shown.
    notes: list[Markup] = field(default_factory=list)
    # Where the file names another model or engine than the campaign: (the file's key, what).
    mismatches: list[tuple[str, str]] = field(default_factory=list)


def run_places(project: Project, page: PurePosixPath, rec: RecordFile | None) -> dict[str, str]:
    """Run id -> link, from a page at `page`: the runs on that page and those of the campaign baseline.

    Only these two: a page is rebuilt when its record, the campaign or the runs change, so a
    link into a third record's page could go stale.
    """
    home = relative(docs_root(project) / "index.md", page.parent)
    here_is_home = rec is None
    # A result of several repeated runs has one section, anchored at its first run: each of its
    # runs links there.
    places = {
        rid: (f"#{run_anchor(r.run_ids[0])}" if here_is_home else f"{home}#{run_anchor(r.run_ids[0])}")
        for r in project.campaign.baseline.results
        for rid in r.run_ids
    }
    if rec is not None:
        places.update({rid: f"#{run_anchor(r.run_ids[0])}" for r in rec.record.results for rid in r.run_ids})
    return places


def provenance_rows(own: Provenance | None, owner: str, run: Run | None) -> list[ProvenanceRow]:
    """Each fact once, with its origin; where the record and the file disagree, both."""
    rows: list[ProvenanceRow] = []
    stated = own.model_dump(exclude_none=True, exclude={"note"}) if own is not None else {}
    from_file = dict(run.provenance) if run is not None else {}
    from_file.pop("server_args", None)
    for name, label in LABELS.items():
        mine, theirs = stated.get(name), from_file.get(name)
        if mine is not None:
            rows.append(ProvenanceRow(label, code(str(mine)), owner))
        if theirs is not None and (mine is None or str(mine) != theirs):
            assert run is not None
            rows.append(ProvenanceRow(label, code(theirs), f"file: {run.provenance_keys.get(name, name)}"))
    # Facts an `import_formats` mapping names beyond these (`driver`, `cuda`), in its order.
    for name, theirs in from_file.items():
        if name not in LABELS:
            assert run is not None
            key = run.provenance_keys.get(name, name)
            rows.append(ProvenanceRow(name.replace("_", " "), code(theirs), f"file: {key}"))
    return rows


def _number(value: Any) -> str:
    # As JSON wrote it: 0.0 stays 0.0, 1 stays 1; no rounding, no unit the file does not give.
    return str(value)


def workload_text(run: Run) -> Markup | None:
    """The run's workload and the tokens it measured, in the file's keys, or None when the file gives neither."""
    s = run.settings
    parts: list[str] = []
    keys = list(_WORKLOAD_KEYS.get(run.format, ()))
    if run.format == "sglang-bench-serving" and not str(s.get("dataset", "")).startswith("random"):
        keys = [("dataset", "dataset_name"), ("output_len", "sharegpt_output_len")]
    for setting, key in keys:
        if s.get(setting) is not None:
            value = s[setting]
            shown = value if isinstance(value, str) else _number(value)
            parts.append(f"{code(key)} {code(shown)}")
    measured = [f"{code(k)} {code(_number(run.measured[k]))}" for k in _MEASURED if k in run.measured]
    if "completed" in run.metrics:
        measured.append(
            f"{code(run.keys.get('completed', 'completed'))} {code(_number(int(run.metrics['completed'])))}"
        )
    if not parts and not measured:
        return None
    text = "as the file states it: " + (", ".join(parts) if parts else "no workload keys")
    if measured:
        text += "; measured " + ", ".join(measured)
    return Markup(text)


def _linked_notes(notes: tuple[str, ...] | list[str], places: dict[str, str]) -> list[Markup]:
    out: list[Markup] = []
    for note in notes:
        text = str(inline(note))

        def link(m: re.Match[str]) -> str:
            target = places.get(m.group(1))
            return f"[`{m.group(1)}`]({target})" if target else m.group(0)

        out.append(Markup(re.sub(r"`([a-z0-9]+(?:-[a-z0-9]+)*)`", link, text)))
    return out


def evidence(
    analysis: Analysis,
    resolved: ResolvedResult,
    page: PurePosixPath,
    rec: RecordFile | None,
) -> Evidence:
    """What one result's numbers rest on, for the page at `page` (a path relative to the repository)."""
    project = analysis.project
    result: Result = resolved.result
    # Repetitions of one configuration share its provenance: the first run speaks for them.
    run = project.runs.get(result.run_ids[0]) if result.run_ids else None
    own = result.provenance
    owner = "record"
    if rec is None:
        owner = "campaign baseline"
        base = project.campaign.baseline.provenance
        if own is None:
            own = base
        elif base is not None:
            own = base.model_copy(update=own.model_dump(exclude_none=True))
    places = run_places(project, page, rec)
    ev = Evidence(provenance=provenance_rows(own, owner, run), notes=_linked_notes(resolved.notes, places))
    if result.baseline_run:
        ev.baseline_run_link = places.get(result.baseline_run_ids[0])
    if run is None:
        return ev
    ev.anchor = run_anchor(run.id)
    ev.mismatches = mismatches(project.campaign, run)
    ev.server_args = run.provenance.get("server_args")
    ev.server_args_key = run.provenance_keys.get("server_args")
    ev.workload = workload_text(run)
    stored = run.source.get("file")
    if isinstance(stored, str) and stored.startswith(RAW_SITE_DIR + "/"):
        ev.raw_name = PurePosixPath(stored).name
        target = docs_root(project) / RAW_SITE_DIR / published_name(stored)
        ev.raw_link = relative(target, page.parent)
        line = run.source.get("line")
        ev.raw_line = line if isinstance(line, int) else None
        ev.stored_sha256 = str(run.source.get("stored_sha256") or "") or None
        ev.original_sha256 = str(run.source.get("sha256") or "") or None
        ev.redacted = bool(run.source.get("redacted"))
    return ev


def record_evidence(analysis: Analysis, rec: RecordFile) -> list[Evidence]:
    page = series_dir(analysis.project) / analysis.project.output_name(rec)
    return [evidence(analysis, res, page, rec) for res in analysis.record(rec).results]


def baseline_evidence(analysis: Analysis) -> list[Evidence]:
    page = docs_root(analysis.project) / "index.md"
    return [evidence(analysis, res, page, None) for res in analysis.baseline_results]


def published_raw_files(project: Project) -> dict[str, bytes]:
    """The kept raw files the site publishes: site path (under the docs folder) -> bytes.

    Only a file an imported run names, read without following a link, and only while its
    bytes still hash to the `stored_sha256` the run recorded: that is the copy the importer
    wrote, with secrets already redacted. Anything else under results/raw/ (a file put there
    by hand, an edited copy) is never published.
    """
    import hashlib

    from generator.base.fsio import read_regular

    out: dict[str, bytes] = {}
    for run in project.runs.values():
        stored, digest = run.source.get("file"), run.source.get("stored_sha256")
        if not isinstance(stored, str) or not isinstance(digest, str) or not stored.startswith(RAW_SITE_DIR + "/"):
            continue
        name = published_name(stored)
        site_path = f"{RAW_SITE_DIR}/{name}"
        if site_path in out or "/" in PurePosixPath(stored).relative_to(RAW_SITE_DIR).as_posix():
            continue
        data = read_regular(project.root, stored)
        if data is not None and hashlib.sha256(data).hexdigest() == digest:
            out[site_path] = data
    return dict(sorted(out.items()))
