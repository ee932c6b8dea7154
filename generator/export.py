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

from generator import jsonsafe
from generator.summary import summary_rows

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


def _results(entry: RecordAnalysis) -> list[dict[str, Any]]:
    out = []
    for result, resolved in zip(entry.file.record.results, entry.results, strict=True):
        deltas = resolved.deltas
        out.append(
            {
                "label": result.label,
                "no_baseline": resolved.no_baseline,
                "notes": list(resolved.notes),
                "deltas": {name: (None if d is None else _delta(d)) for name, d in sorted(deltas.items())},
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
    records = []
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
                },
                "results": _results(analysis.record(rec)),
            }
        )
    return {
        "format": FORMAT,
        "version": VERSION,
        "campaign": project.campaign.model_dump(mode="json"),
        "records": records,
    }


def dumps(analysis: Analysis) -> str:
    # JSON has no NaN or Infinity: such a number (a campaign detail written `.nan`) is written
    # as "nan", "inf" or "-inf", and `non_finite` lists where, so a reader knows it is not text.
    data, places = jsonsafe.finite(export_data(analysis))
    if places:
        data["non_finite"] = sorted(places)
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


def write_site_export(analysis: Analysis, site_dir: Path) -> Path:
    """Publish the export at the site root as records.json (called by the mkdocs plugin after a build)."""
    from generator.edit import atomic_write

    site_dir.mkdir(parents=True, exist_ok=True)
    path = site_dir / SITE_NAME
    atomic_write(path, dumps(analysis))
    return path
