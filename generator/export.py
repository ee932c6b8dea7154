"""records.json: every record with what the generator computes from it, for other tools.

One document: the campaign, then each record as written (normalised by the models) with its
computed summary (rank, best gain, open blockers) and every result's deltas. The numbers are
the ones the pages and the summary show, from the same functions. Deterministic: sorted keys,
no timestamps, records in number order, so identical input gives identical bytes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from generator.reported import result_evidence
from generator.summary import SLO_COLUMN, summary_rows
from generator.sweeps import export_data as sweep_data

if TYPE_CHECKING:
    from generator.analysis import Analysis, Delta, RecordAnalysis
    from generator.numbers import Stat

FORMAT = "improvements-export"
# Raised when a key is renamed or removed; adding keys keeps the version.
VERSION = 1
SITE_NAME = "records.json"


def _stat(s: Stat) -> dict[str, Any]:
    return {"kind": s.kind, "mean": s.mean, "spread": s.spread, "n": s.n, "low": s.low, "high": s.high}


def _delta(d: Delta) -> dict[str, Any]:
    return {
        "value": _stat(d.value),
        "baseline": _stat(d.baseline),
        "difference": d.difference,
        "change_percent": d.change_percent,
        "gain_percent": d.gain_percent,
        "within_noise": d.within_noise,
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
        deltas = resolved.deltas
        out.append(
            {
                "label": result.label,
                "no_baseline": resolved.no_baseline,
                "notes": list(resolved.notes),
                "deltas": {name: (None if d is None else _delta(d)) for name, d in sorted(deltas.items())},
                # "reported": evidence as the source gave it, never compared, so `deltas` is empty.
                "evidence": result_evidence(result),
            }
        )
    return out


def export_data(analysis: Analysis) -> dict[str, Any]:
    """The export as plain JSON data."""
    project = analysis.project
    rows = summary_rows(analysis)
    rank = {row["slug"]: i for i, row in enumerate(rows, 1)}
    by_slug = {row["slug"]: row for row in rows}
    docs = project.docs_dir.relative_to(project.root).as_posix()
    records: list[dict[str, Any]] = []
    for rec in sorted(project.records, key=lambda r: (r.number, r.slug)):
        row = by_slug[rec.slug]
        best = None
        if row["best_gain_percent"] is not None:
            best = {
                "percent": row["best_gain_percent"],
                "metric": row["best_gain_metric"],
                "concurrency": row["best_gain_concurrency"],
                "within_noise": row["best_gain_within_noise"],
            }
        records.append(
            {
                "number": rec.number,
                "slug": rec.slug,
                "file": f"improvements/{rec.path.name}",
                "page": f"{docs}/{project.output_name(rec)}",
                "record": rec.record.model_dump(mode="json"),
                "summary": {
                    "rank": rank[rec.slug],
                    "best_gain": best,
                    "open_blockers": row["open_blockers"],
                    "open_blocker_titles": list(row["open_blocker_titles"]),
                    "tier_source": row["tier_source"],
                    "evidence": row["evidence"],
                    "reported": row["reported"],
                    "variants": row["variants"],
                },
                "results": _results(analysis.record(rec)),
                "sweeps": [sweep_data(s) for s in analysis.record(rec).sweeps],
                # Each variant's results, in the order of the record's `variants`.
                "variant_results": [_results(analysis.record(rec), k) for k in range(len(rec.record.variants))],
            }
        )
        if SLO_COLUMN in row:
            summary: dict[str, Any] = records[-1]["summary"]
            summary["capacity_under_slo"] = row[SLO_COLUMN]
    return {
        "format": FORMAT,
        "version": VERSION,
        "campaign": project.campaign.model_dump(mode="json"),
        "records": records,
    }


def dumps(analysis: Analysis) -> str:
    return json.dumps(export_data(analysis), indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


def write_site_export(analysis: Analysis, site_dir: Path) -> Path:
    """Publish the export at the site root as records.json (called by the mkdocs plugin after a build)."""
    from generator.fsio import atomic_write

    site_dir.mkdir(parents=True, exist_ok=True)
    path = site_dir / SITE_NAME
    atomic_write(path, dumps(analysis))
    return path
