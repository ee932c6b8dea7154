"""The tier-ranked summary: one row per record, for the terminal, CSV, JSON and the site.

Ranked by tier, then best measured gain (largest first; a gain within noise counts as no
change; records with no measured gain after those with one), then number. pandas and
tabulate are imported only inside `format_rows`, so the site build and `--help` do not pay
for them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from generator import variants
from generator.numbers import fmt_percent
from generator.reported import evidence, record_text
from generator.sweeps import summary_text

if TYPE_CHECKING:
    from generator.analysis import Analysis

# Columns, in order: the keys of each row and of each JSON object.
COLUMNS = (
    "number",
    "slug",
    "title",
    "tier",
    "status",
    "best_gain_percent",
    "best_gain_metric",
    "best_gain_concurrency",
    "best_gain_within_noise",
    "open_blockers",
    "open_blocker_titles",
    # "sources" or "own" (the records' own placement, not given by their sources), or None.
    "tier_source",
    # "measured", "reported" (only evidence as the sources gave it, never compared) or None.
    "evidence",
    # The reported evidence as written ("901, 927 tok/s output_throughput at concurrency 512").
    "reported",
    "in_stack",
    "variants",
)
FORMATS = ("table", "markdown", "csv", "json")
# Added after COLUMNS when the campaign sets an SLO: each sweep's capacity under it, in words.
SLO_COLUMN = "capacity_under_slo"


def summary_rows(
    analysis: Analysis,
    *,
    tiers: Iterable[int] | None = None,
    statuses: Iterable[str] | None = None,
    tags: Iterable[str] | None = None,
) -> list[dict[str, Any]]:
    """One row per record that passes every filter given (a filter matches any of its values), ranked."""
    tier_set = set(tiers) if tiers else None
    status_set = set(statuses) if statuses else None
    tag_set = set(tags) if tags else None
    rows: list[dict[str, Any]] = []
    for entry in analysis.ranked:
        rec, r = entry.file, entry.file.record
        if tier_set is not None and r.tier not in tier_set:
            continue
        if status_set is not None and r.status not in status_set:
            continue
        if tag_set is not None and not tag_set & set(r.tags):
            continue
        best, blockers = entry.best_gain, entry.open_blockers
        rows.append(
            {
                "number": rec.number,
                "slug": rec.slug,
                "title": r.title,
                "tier": r.tier,
                "status": r.status,
                "best_gain_percent": round(best.percent, 1) if best else None,
                "best_gain_metric": best.metric if best else None,
                "best_gain_concurrency": best.concurrency if best else None,
                "best_gain_within_noise": best.within_noise if best else None,
                "open_blockers": len(blockers),
                "open_blocker_titles": [b.title or "" for b in blockers],
                "tier_source": r.tier_source,
                "evidence": evidence(r),
                "reported": record_text(r),
                "in_stack": analysis.stack.has(rec.slug),
                # "retained 8192; 4 of 5 rejected" for a record with variants, else None.
                "variants": variants.summary_text(r),
            }
        )
        if analysis.project.campaign.slo:
            rows[-1][SLO_COLUMN] = summary_text(entry.sweeps)
    return rows


def gain_text(row: dict[str, Any]) -> str:
    """The best gain as people read it: "+12.3% output_throughput at concurrency 64"."""
    if row["best_gain_percent"] is None:
        # Reported evidence is never a gain: its figures as written, with no computed sign.
        if row.get("reported"):
            return f"as reported: {row['reported']}"
        return f"not measured ({row['variants']})" if row.get("variants") else "not measured"
    where = (
        f"at concurrency {row['best_gain_concurrency']}"
        if row["best_gain_concurrency"] is not None
        else "concurrency not recorded"
    )
    noise = ", within noise" if row["best_gain_within_noise"] else ""
    tried = f" ({row['variants']})" if row.get("variants") else ""
    return f"{fmt_percent(row['best_gain_percent'])} {row['best_gain_metric']}{noise}, {where}{tried}"


def tier_text(row: dict[str, Any]) -> str:
    """The tier, marked when the placement is the records' own rather than their sources'."""
    return f"{row['tier']} (own placement)" if row.get("tier_source") == "own" else str(row["tier"])


def status_text(row: dict[str, Any]) -> str:
    """The status, and "in the stack" for an adopted record whose change is in the command in force."""
    return f"{row['status']}, in the stack" if row["in_stack"] else row["status"]


def blockers_text(row: dict[str, Any]) -> str:
    if not row["open_blockers"]:
        return "none"
    return f"{row['open_blockers']}: " + "; ".join(row["open_blocker_titles"])


def format_rows(rows: list[dict[str, Any]], fmt: str) -> str:
    """The rows as a terminal table, markdown, CSV or JSON, ending with a newline."""
    import json

    columns = (*COLUMNS, SLO_COLUMN) if rows and SLO_COLUMN in rows[0] else COLUMNS
    if fmt == "json":
        # Plain json keeps None as null and the key order of COLUMNS, byte for byte stable.
        return json.dumps([{k: row[k] for k in columns} for row in rows], indent=2, ensure_ascii=False) + "\n"

    import pandas as pd

    frame = pd.DataFrame([{k: row[k] for k in columns} for row in rows], columns=list(columns), dtype=object)
    if fmt == "csv":
        frame["open_blocker_titles"] = frame["open_blocker_titles"].map("; ".join)
        frame["best_gain_percent"] = frame["best_gain_percent"].map(lambda v: "" if v is None else f"{v:.1f}")
        frame["best_gain_within_noise"] = frame["best_gain_within_noise"].map(
            lambda v: "" if v is None else str(v).lower()
        )
        frame["in_stack"] = frame["in_stack"].map(lambda v: str(v).lower())
        from generator.csvsafe import formula_safe

        # Text columns only: the numeric ones are numbers formatted here, and -2.8 stays a number.
        slo_text = (SLO_COLUMN,) if SLO_COLUMN in columns else ()
        for column in (
            "slug",
            "title",
            "status",
            "best_gain_metric",
            "open_blocker_titles",
            "reported",
            "variants",
            *slo_text,
        ):
            frame[column] = frame[column].map(lambda v: formula_safe(v) if isinstance(v, str) else v)
        return frame.to_csv(index=False, lineterminator="\n")

    from tabulate import tabulate

    shown = pd.DataFrame(
        {
            "#": frame["number"].map(lambda n: f"{n:02d}"),
            "Title": frame["title"],
            "Tier": [tier_text(row) for row in rows],
            "Status": [status_text(row) for row in rows],
            "Best gain": [gain_text(row) for row in rows],
            "Open blockers": [blockers_text(row) for row in rows],
        },
        dtype=object,
    )
    if SLO_COLUMN in columns:
        shown["Capacity under SLO"] = frame[SLO_COLUMN]
    tablefmt = "github" if fmt == "markdown" else "simple"
    if fmt == "markdown":
        from generator.markdown import cell

        # The site's table-cell escaping: no raw HTML, links or attributes, one line, and a pipe
        # that cannot end the cell.
        shown = shown.apply(lambda col: col.map(lambda v: str(cell(v)) if isinstance(v, str) else v))
    if shown.empty and fmt == "table":
        return "no records match\n"
    # A terminal wraps the long columns so a row fits a wide window; markdown keeps one line per row.
    widths = [None, 40, None, None, 30, 50, 40][: len(shown.columns)] if fmt == "table" else None
    table = tabulate(
        shown.values.tolist(),
        headers=list(shown.columns),
        tablefmt=tablefmt,
        disable_numparse=True,
        maxcolwidths=widths,
    )
    return table + "\n"
