"""records.json: every record with what the generator computes from it, for other tools.

One document: the campaign, then each record as written (normalised by the models) with its
primary-metric evidence, its summary (rank, open blockers) and every result's comparisons (n
on each side, change, interval, p, test, decision). `samples_csv` is the other export: every
repetition as one row of a tidy table. The numbers are
the ones the pages and the summary show, from the same functions. Deterministic: sorted keys,
no timestamps, records in number order, so identical input gives identical bytes.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from generator.base import incremental, jsonsafe, jsontext
from generator.base.incremental import memo
from generator.model.reported import result_evidence
from generator.views.summary import summary_row
from generator.views.sweeps import export_data as sweep_data

if TYPE_CHECKING:
    from generator.analysis.campaign import Analysis, RecordAnalysis
    from generator.analysis.stats import Comparison
    from generator.base.incremental import BuildCache
    from generator.model.quantity import Stat
    from generator.project.load import RecordFile

FORMAT = "improvements-export"
# Raised when a key is renamed or removed; adding keys keeps the version. 2: `deltas` became
# `comparisons` (issue #12: n, interval, p, test, decision) and `summary.best_gain` became
# the record's `primary`.
VERSION = 2
SITE_NAME = "records.json"


def tool_version() -> str:
    """The installed improvements' version (from git: setuptools-scm), or "unknown" when it is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("improvements")
    except PackageNotFoundError:
        return "unknown"


def _stat(s: Stat) -> dict[str, Any]:
    return {"kind": s.kind, "mean": s.mean, "spread": s.spread, "n": s.n, "low": s.low, "high": s.high}


def _comparison(c: Comparison, value: Stat, baseline: Stat) -> dict[str, Any]:
    return {
        "value": _stat(value),
        "baseline": _stat(baseline),
        "n": c.n,
        "baseline_n": c.baseline_n,
        "mean": c.mean,
        "baseline_mean": c.baseline_mean,
        "difference": c.difference,
        "change_percent": c.change_percent,
        "ci_low_percent": c.ci_low_percent,
        "ci_high_percent": c.ci_high_percent,
        "p_value": c.p_value,
        "test": c.test,
        "scale": c.scale,
        "decision": c.decision,
        "eq_low_percent": c.eq_low_percent,
        "eq_high_percent": c.eq_high_percent,
        "reps_needed": c.reps_needed,
        "reps_target": c.reps_target,
        "reps_needed_min_effect": c.reps_needed_min_effect,
        "reps_rough": c.reps_rough,
        "basis": c.basis,
        "spread_flag": c.spread_flag,
    }


def _results(entry: RecordAnalysis, variant: int | None = None) -> list[dict[str, Any]]:
    record = entry.file.record
    results, resolved_results = (
        (record.results, entry.results)
        if variant is None
        else (record.variants[variant].results, entry.variant_results[variant])
    )
    out = []
    for result, resolved in zip(results, resolved_results, strict=True):
        comparisons = resolved.comparisons
        out.append(
            {
                "label": result.label,
                "no_baseline": resolved.no_baseline,
                "not_compared": resolved.not_compared,
                "notes": list(resolved.notes),
                # What one observation is, and whether the blocks' launches were paired: with
                # several runs per launch the comparison counts launch means.
                "unit": resolved.design.unit,
                "launch_pairs": resolved.design.launch_pairs,
                "unpaired_why": resolved.design.unpaired_why,
                "comparisons": {
                    name: (
                        None
                        if c is None
                        else _comparison(c, resolved.summaries[name], resolved.baseline_summaries[name])
                    )
                    for name, c in sorted(comparisons.items())
                },
                # "reported": evidence as the source gave it, never compared, so `comparisons` is empty.
                "evidence": result_evidence(result),
                # Where the spread of its launches comes from (analysis.noise_model), when its runs
                # name their launches; variances on the log scale.
                "noise": None if resolved.noise is None else dataclasses.asdict(resolved.noise),
            }
        )
    return out


def _primary(entry: RecordAnalysis) -> dict[str, Any]:
    """The evidence that ranks the record; `decision` is "reported" for evidence only as reported."""
    p = entry.primary
    c = p.comparison if p else None
    return {
        "metric": entry.primary_metric,
        "result": p.label if p else None,
        "change_percent": c.change_percent if c else None,
        "ci_low_percent": c.ci_low_percent if c else None,
        "ci_high_percent": c.ci_high_percent if c else None,
        "decision": c.decision if c else ("reported" if entry.reported else None),
        # "metric" (a result's comparison) or "capacity" (a load sweep's capacity under the SLO).
        "kind": p.kind if p else None,
        "concurrency": p.concurrency if p else None,
        "chosen": p.chosen if p else None,
        "group": entry.group,
        "best_of": p.best_of if p else None,
        "holm_p": p.holm_p if p else None,
        "guardrails": [
            {
                "metric": g.metric,
                "margin": g.margin,
                "change_percent": g.change_percent,
                "ci_low_percent": g.ci_low_percent,
                "ci_high_percent": g.ci_high_percent,
                "held": g.held,
                "result": g.result,
                "reported": g.reported,
                # "held", "broken", "not shown" or "not measured".
                "state": g.state,
                # Not shown: the smallest change (raw sign) this spread could have shown as broken.
                "smallest_breach_percent": g.smallest_breach,
            }
            for g in (p.guardrails if p else ())
        ],
        # Every other comparison of its headline results shown worse beyond min_effect.
        "regressions": [
            {
                "metric": g.metric,
                "result": g.label,
                "concurrency": g.concurrency,
                "change_percent": g.change_percent,
                "ci_low_percent": g.ci_low_percent,
                "ci_high_percent": g.ci_high_percent,
            }
            for g in entry.regressions
        ],
    }


def export_data(analysis: Analysis, *, versioned: bool = True) -> dict[str, Any]:
    """The export as plain JSON data.

    `versioned` names the installed improvements under `generator`. The copy `build` commits
    into docs/ leaves it out: the version comes from git, so it changes with every commit, and a
    committed file that names it would be stale in every clone. `export` and the site's
    records.json (built, never committed) carry it.
    """
    return {**_head(analysis, versioned), "records": [_record_entry(analysis, *e) for e in _placed(analysis)]}


def _head(analysis: Analysis, versioned: bool) -> dict[str, Any]:
    """The document without its records."""
    project = analysis.project
    # What computed these numbers (`version` is the format's): the same for every build from one
    # installation, so two exports from it still compare byte for byte.
    generator = {"name": "improvements", **({"version": tool_version()} if versioned else {})}
    return {
        "format": FORMAT,
        "version": VERSION,
        "generator": generator,
        "campaign": project.campaign.model_dump(mode="json"),
        # Every configuration's throughput against tokens/s per user, as the frontier chart draws it.
        "frontier": None if analysis.frontier is None else dataclasses.asdict(analysis.frontier),
    }


def _placed(analysis: Analysis) -> list[tuple[RecordFile, RecordAnalysis, int]]:
    """Each record in number order, with the summary's entry of its slug and that entry's rank."""
    ranked = {a.file.slug: (a, i) for i, a in enumerate(analysis.ranked, 1)}
    return [(rec, *ranked[rec.slug]) for rec in sorted(analysis.project.records, key=lambda r: (r.number, r.slug))]


def _record_entry(analysis: Analysis, rec: RecordFile, ranked: RecordAnalysis, rank: int) -> dict[str, Any]:
    """One record's entry: `rec` as written and analysed, with the summary row of `ranked`, its slug's."""
    project = analysis.project
    row = summary_row(analysis, ranked)
    docs = project.docs_dir.relative_to(project.root).as_posix()
    entry = analysis.record(rec)
    out: dict[str, Any] = {
        "number": rec.number,
        "slug": rec.slug,
        "file": f"improvements/{rec.path.name}",
        "page": f"{docs}/{project.output_name(rec)}",
        "record": rec.record.model_dump(mode="json"),
        "primary": _primary(entry),
        "summary": {
            "rank": rank,
            "open_blockers": row.open_blockers,
            "open_blocker_titles": list(row.open_blocker_titles),
            "tier_source": row.tier_source,
            "evidence": row.evidence,
            "reported": row.reported,
            "variants": row.variants,
        },
        "results": _results(entry),
        "sweeps": [sweep_data(s) for s in entry.sweeps],
        # Each variant's results, in the order of the record's `variants`.
        "variant_results": [_results(entry, k) for k in range(len(rec.record.variants))],
    }
    if row.capacity_under_slo is not None:
        out["summary"]["capacity_under_slo"] = row.capacity_under_slo
    return out


def dumps(analysis: Analysis, *, versioned: bool = True, build_cache: BuildCache | None = None) -> str:
    """The export as indented JSON text: `dump_bytes` decoded."""
    return dump_bytes(analysis, versioned=versioned, build_cache=build_cache).decode("utf-8")


def dump_bytes(analysis: Analysis, *, versioned: bool = True, build_cache: BuildCache | None = None) -> bytes:
    """The export as indented JSON in UTF-8: the bytes of one `json.dumps(indent=2, sort_keys=True)` of it.

    JSON has no NaN or Infinity: such a number (a campaign detail written `.nan`) is written as
    "nan", "inf" or "-inf", and `non_finite` lists where, so a reader knows it is not text.

    Each record's entry is encoded on its own and the document is put together around them, as
    `json` would lay them out (a test compares the two). Python writes indented JSON with its
    pure-Python encoder, which was most of a rebuild after one change at 1,000 records: with a
    `build_cache`, an entry's text is kept under the entry's own `repr` (its data, types and
    all), so a rebuild encodes only the records whose entries changed.

    Bytes, each entry encoded as it is made: as one str, a document with a single non-ASCII
    character takes two to four bytes for every character (tens of megabytes at 3,000 records).
    """
    head, places = jsonsafe.finite(_head(analysis, versioned))
    entries: list[bytes] = []
    for i, (rec, ranked, rank) in enumerate(_placed(analysis)):
        make = functools.partial(_entry_text, analysis, rec, ranked, rank)
        # An entry reads its record's analysis and file, its slug's summary row (that record's
        # analysis, and whether it is in the stack: the one thing of other records), its rank, and
        # the campaign (in the fingerprint): cached under those, it is neither made nor encoded.
        mine = incremental.fingerprint(build_cache, "analysis", str(rec.path))
        theirs = incremental.fingerprint(build_cache, "analysis", str(ranked.file.path))
        if mine is None or theirs is None:
            text, found = make()
        else:
            parts = (mine, theirs, rank, analysis.stack.has(ranked.file.slug))
            text, found = memo(build_cache, "export-entry", parts, make)
        entries.append(text.encode("utf-8"))
        places += [f"records[{i}].{place}" for place in found]
    if places:
        head["non_finite"] = sorted(places)
    # The members at the document's first level, in `sort_keys` order; a value's own lines
    # indented one level (a JSON string never holds a raw newline, so every newline is layout).
    # One join of the pieces: the document is tens of megabytes at 3,000 records.
    pieces: list[bytes] = [b"{"]
    for n, key in enumerate(sorted([*head, "records"])):
        pieces += [b",\n  " if n else b"\n  ", json.dumps(key, ensure_ascii=False).encode("utf-8"), b": "]
        if key != "records":
            pieces.append(jsontext.dumps(head[key], "  ").encode("utf-8"))
        elif entries:
            pieces.append(b"[\n    ")
            for i, entry_text in enumerate(entries):
                pieces += [b",\n    ", entry_text] if i else [entry_text]
            pieces.append(b"\n  ]")
        else:
            pieces.append(b"[]")
    pieces.append(b"\n}\n")
    return b"".join(pieces)


def _entry_text(analysis: Analysis, rec: RecordFile, ranked: RecordAnalysis, rank: int) -> tuple[str, list[str]]:
    return _entry(_record_entry(analysis, rec, ranked, rank))


def _entry(entry: dict[str, Any]) -> tuple[str, list[str]]:
    """One record's entry as it stands in the document's list (two levels in), and its non-finite places."""
    try:
        # No non-finite number (the encoder refuses one): nothing to walk the entry for.
        return jsontext.dumps(entry, "    "), []
    except ValueError:
        pass
    clean, places = jsonsafe.finite(entry)
    return jsontext.dumps(clean, "    "), places


# The tidy table of samples: one row per repetition, for a notebook.
# `variant` last, so the columns before it keep their places; empty for a record's own result.
SAMPLE_COLUMNS = ("record", "result", "side", "metric", "repetition", "value", "concurrency", "variant")


def samples_csv(analysis: Analysis) -> str:
    """Every sample of every compared metric of every record's result, both sides, as CSV.

    A range is not a sample (it has no repetitions), nor is a figure given only as reported:
    neither appears.
    """
    return sample_table_csv(sample_rows(analysis))


def sample_rows(analysis: Analysis) -> list[tuple[Any, ...]]:
    """The rows of `samples_csv`, one per repetition, in SAMPLE_COLUMNS' order."""
    from generator.base.csvsafe import formula_safe

    rows: list[tuple[Any, ...]] = []
    for entry in analysis.records:
        # A variant's results are samples like the record's own, each row naming its variant.
        held = [("", r) for r in entry.results] + [
            (v.label, r)
            for v, results in zip(entry.file.record.variants, entry.variant_results, strict=True)
            for r in results
        ]
        for variant, resolved in held:
            res = resolved.result
            for name, value in resolved.metrics.items():
                mine, theirs = resolved.samples[name]
                sides = [("record", value, mine), ("baseline", resolved.baseline.get(name), theirs)]
                for side, v, found in sides:
                    # A range has no samples; summary statistics are not samples either.
                    if v is None or not isinstance(v, int | float | list):
                        continue
                    for k, x in enumerate(found, 1):
                        row = (entry.file.slug, formula_safe(res.label), side, name, k, x, res.concurrency)
                        rows.append((*row, formula_safe(variant)))
    return rows


def sample_table_csv(rows: list[tuple[Any, ...]]) -> str:
    """`rows` as CSV, the bytes pandas' `to_csv` wrote for them before the csv module did (a test
    holds the two together): a value column holding any fraction writes every value as a float
    (`5.0`), a missing concurrency is empty."""
    import csv
    import io

    floats = any(isinstance(row[5], float) for row in rows)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(SAMPLE_COLUMNS)
    for row in rows:
        value = repr(float(row[5])) if floats else row[5]
        concurrency = "" if row[6] is None else int(row[6])
        writer.writerow((*row[:5], value, concurrency, row[7]))
    return out.getvalue()


def write_site_export(analysis: Analysis, site_dir: Path) -> Path:
    """Publish the export at the site root as records.json (called by the mkdocs plugin after a build)."""
    from generator.base.fsio import atomic_write

    site_dir.mkdir(parents=True, exist_ok=True)
    path = site_dir / SITE_NAME
    atomic_write(path, dump_bytes(analysis))
    return path
