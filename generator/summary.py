"""The tier-ranked summary: one row per record, for the terminal, CSV, JSON and the site.

Ranked by tier, then best measured gain (largest first; a gain within noise counts as no
change; records with no measured gain after those with one), then number. pandas and
tabulate are imported only inside `format_rows`, so the site build and `--help` do not pay
for them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from generator.numbers import fmt_percent

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
)
FORMATS = ("table", "markdown", "csv", "json")


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
            }
        )
    return rows


def gain_text(row: dict[str, Any]) -> str:
    """The best gain as people read it: "+12.3% output_throughput at concurrency 64"."""
    if row["best_gain_percent"] is None:
        return "not measured"
    where = (
        f"at concurrency {row['best_gain_concurrency']}"
        if row["best_gain_concurrency"] is not None
        else "concurrency not recorded"
    )
    noise = ", within noise" if row["best_gain_within_noise"] else ""
    return f"{fmt_percent(row['best_gain_percent'])} {row['best_gain_metric']}{noise}, {where}"


def blockers_text(row: dict[str, Any]) -> str:
    if not row["open_blockers"]:
        return "none"
    return f"{row['open_blockers']}: " + "; ".join(row["open_blocker_titles"])


def format_rows(rows: list[dict[str, Any]], fmt: str) -> str:
    """The rows as a terminal table, markdown, CSV or JSON, ending with a newline."""
    from generator import jsonsafe

    if fmt == "json":
        # Plain json keeps None as null and the key order of COLUMNS, byte for byte stable.
        return jsonsafe.dumps([{k: row[k] for k in COLUMNS} for row in rows], indent=2, ensure_ascii=False) + "\n"

    import pandas as pd

    frame = pd.DataFrame([{k: row[k] for k in COLUMNS} for row in rows], columns=list(COLUMNS), dtype=object)
    if fmt == "csv":
        frame["open_blocker_titles"] = frame["open_blocker_titles"].map("; ".join)
        frame["best_gain_percent"] = frame["best_gain_percent"].map(lambda v: "" if v is None else f"{v:.1f}")
        frame["best_gain_within_noise"] = frame["best_gain_within_noise"].map(
            lambda v: "" if v is None else str(v).lower()
        )
        from generator.csvsafe import formula_safe

        # Text columns only: the numeric ones are numbers formatted here, and -2.8 stays a number.
        for column in ("slug", "title", "status", "best_gain_metric", "open_blocker_titles"):
            frame[column] = frame[column].map(lambda v: formula_safe(v) if isinstance(v, str) else v)
        return frame.to_csv(index=False, lineterminator="\n")

    from tabulate import tabulate

    shown = pd.DataFrame(
        {
            "#": frame["number"].map(lambda n: f"{n:02d}"),
            "Title": frame["title"],
            "Tier": frame["tier"],
            "Status": frame["status"],
            "Best gain": [gain_text(row) for row in rows],
            "Open blockers": [blockers_text(row) for row in rows],
        },
        dtype=object,
    )
    tablefmt = "github" if fmt == "markdown" else "simple"
    if fmt == "markdown":
        from generator.markdown import cell

        # The site's table-cell escaping: no raw HTML, links or attributes, one line, and a pipe
        # that cannot end the cell.
        shown = shown.apply(lambda col: col.map(lambda v: str(cell(v)) if isinstance(v, str) else v))
    if shown.empty and fmt == "table":
        return "no records match\n"
    # A terminal wraps the long columns so a row fits a wide window; markdown keeps one line per row.
    widths = [None, 40, None, None, 30, 50] if fmt == "table" else None
    table = tabulate(
        shown.values.tolist(),
        headers=list(shown.columns),
        tablefmt=tablefmt,
        disable_numparse=True,
        maxcolwidths=widths,
    )
    return table + "\n"
