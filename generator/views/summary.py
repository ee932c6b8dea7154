"""The tier-ranked summary: one row per record, for the terminal, CSV, JSON and the site.

Ranked as the analysis ranked them (`analysis.campaign.rank_key`, docs/guide/decisions.md):
tier; open and adopted before rejected and superseded; then `better` by the low end of its
interval, not settled (single shots and `inconclusive`, by point change), `no-change`,
`worse` (a broken guardrail with them), evidence only as reported, not measured. tabulate
is imported only inside `format_rows`, so the site build and `--help` do not pay for it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from generator.base import incremental
from generator.base.incremental import memo
from generator.model import variants
from generator.model.quantity import fmt_percent, unreplicated_text
from generator.model.reported import evidence, record_text
from generator.views.notes import own_load_text, unranked_text, variant_reasons
from generator.views.page_models import Row
from generator.views.results import test_text
from generator.views.sweeps import capacity_cell

if TYPE_CHECKING:
    from generator.analysis.campaign import Analysis, RecordAnalysis
    from generator.base.incremental import BuildCache

# Columns, in order: the keys of each row and of each JSON object.
COLUMNS = (
    "number",
    "slug",
    "title",
    "tier",
    "status",
    "primary_metric",
    "primary_result",
    "primary_concurrency",
    "primary_change_percent",
    "primary_ci_low_percent",
    "primary_ci_high_percent",
    "primary_n",
    "primary_baseline_n",
    "primary_decision",
    # The test the primary comparison was made with, as the record page's Test column names it
    # ("paired t confidence sequence, log scale, on launch means"), or None.
    "primary_test",
    # True when a side of the primary comparison is a mean published without its spread.
    "primary_spread_unknown",
    "open_blockers",
    "open_blocker_titles",
    # "sources" or "own" (the records' own placement, not given by their sources), or None.
    "tier_source",
    # "measured", "reported" (only evidence as the sources gave it, never compared) or None.
    "evidence",
    # The reported evidence as written ("901, 927 tok/s output_throughput at concurrency 512").
    "reported",
    "in_stack",
    # "retained 8192; 4 of 5 rejected" for a record with variants, else None.
    "variants",
    # "metric" or "capacity" (a load sweep's capacity under the SLO), or None.
    "primary_kind",
    # The guardrails the primary comparison broke (a regression beyond the margin shown), by metric name.
    "broken_guardrails",
    # The guardrails neither held nor broken (not shown either way): said, never ranked.
    "unshown_guardrails",
    # Best of k: the retained variant was one of k candidates with a p-value (Holm's correction
    # applied), else None; and the retained one's Holm-adjusted p.
    "best_of",
    # Of those k, how many had a p-value to adjust (the others count as p = 1).
    "best_of_tested",
    # A record that retained none of its variants: each one's decision on the primary metric.
    "variant_decisions",
    # "recommended", "latest" (adopted, not the recommended), "undecided" (measured, no decision) or
    # "historical" (adopted, since overtaken), or None.
    "standing",
    # How the primary comparison's runs were made, where it weakens it (analysis.design): blocks,
    # a time trend, a single launch.
    "design",
    "holm_p",
    # Every other comparison shown worse beyond min_effect ("ttft_median +54.4% (512/128, batch 8)").
    "regressions",
    # The record's own expected load when it is ranked at another (the goal's), in words, else None.
    "own_load",
    # Without a primary comparison: why, and what was measured instead, in words; else None.
    "unranked",
    # Why each variant came out as it did ("1/3 rejected: the tested fractions regressed"), else [].
    "variant_reasons",
)
# Added after COLUMNS when the campaign sets an SLO: each sweep's capacity under it, in words.
SLO_COLUMN = "capacity_under_slo"
FORMATS = ("table", "markdown", "csv", "json")


def summary_rows(
    analysis: Analysis,
    *,
    tiers: Iterable[int] | None = None,
    statuses: Iterable[str] | None = None,
    tags: Iterable[str] | None = None,
) -> list[Row]:
    """One row per record that passes every filter given (a filter matches any of its values), ranked."""
    tier_set = set(tiers) if tiers else None
    status_set = set(statuses) if statuses else None
    tag_set = set(tags) if tags else None
    rows: list[Row] = []
    for entry in analysis.ranked:
        r = entry.file.record
        if tier_set is not None and r.tier not in tier_set:
            continue
        if status_set is not None and r.status not in status_set:
            continue
        if tag_set is not None and not tag_set & set(r.tags):
            continue
        rows.append(summary_row(analysis, entry))
    return rows


def summary_row(analysis: Analysis, entry: RecordAnalysis) -> Row:
    """The summary's row of one record: its analysis, and whether it is in the stack."""
    rec, r = entry.file, entry.file.record
    primary, blockers = entry.primary, entry.open_blockers
    c = primary.comparison if primary else None
    decision = c.decision if c else ("reported" if entry.reported else None)
    return Row(
        number=rec.number,
        slug=rec.slug,
        title=r.title,
        tier=r.tier,
        status=r.status,
        primary_metric=entry.primary_metric,
        primary_result=primary.label if primary else None,
        primary_concurrency=primary.concurrency if primary else None,
        primary_change_percent=_round(c.change_percent if c else None),
        primary_ci_low_percent=_round(c.ci_low_percent if c else None),
        primary_ci_high_percent=_round(c.ci_high_percent if c else None),
        primary_n=c.n if c else None,
        # Means published without their spread: not a single shot, and said so.
        primary_spread_unknown=c.spread_unknown if c else None,
        primary_baseline_n=c.baseline_n if c else None,
        primary_decision=decision,
        primary_test=primary_test(entry),
        open_blockers=len(blockers),
        open_blocker_titles=[b.title or "" for b in blockers],
        tier_source=r.tier_source,
        evidence=evidence(r),
        reported=record_text(r),
        in_stack=analysis.stack.has(rec.slug),
        variants=variants.variants_cell(r),
        variant_reasons=[
            f"{label} {next(v.outcome for v in r.variants if v.label == label)}: {why}"
            for label, why in variant_reasons(entry, analysis.project.campaign.vocabulary())
        ],
        primary_kind=primary.kind if primary else None,
        broken_guardrails=[g.metric for g in primary.broken_guardrails] if primary else [],
        unshown_guardrails=[g.metric for g in primary.unshown_guardrails] if primary else [],
        best_of=primary.best_of if primary else None,
        best_of_tested=primary.best_of_tested if primary else None,
        variant_decisions=variant_decisions_text(entry),
        standing=r.standing,
        design=list(primary_design(entry)),
        holm_p=primary.holm_p if primary else None,
        own_load=own_load_text(primary) if primary else None,
        unranked=None if primary or entry.reported else unranked_text(entry),
        regressions=[f"{g.metric} {fmt_percent(g.change_percent)} ({g.label})" for g in entry.regressions],
        capacity_under_slo=capacity_cell(entry.sweeps) if analysis.project.campaign.slo else None,
    )


def variant_decisions_text(entry: RecordAnalysis) -> str | None:
    """A record that retained no variant: "mscclpp inconclusive, custom worse" (None otherwise)."""
    if not entry.variant_decisions:
        return None
    return ", ".join(f"{v.variant} {v.comparison.decision}" for v in entry.variant_decisions)


def primary_test(entry: Any) -> str | None:
    """The primary comparison's test in words, with the unit its result counted (runs or launches)."""
    primary = entry.primary
    if primary is None:
        return None
    metric = primary.kind == "metric" and primary.index < len(entry.headline)
    return test_text(primary.comparison, entry.headline[primary.index].design.unit if metric else "run")


def primary_design(entry: Any) -> tuple[str, ...]:
    """The design warnings of the result a record's primary comparison comes from."""
    primary = entry.primary
    if primary is None or primary.kind != "metric" or primary.index >= len(entry.headline):
        return ()
    return tuple(entry.headline[primary.index].design.warnings)


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 1)


def gain_text(row: Row) -> str:
    """The primary metric's evidence as people read it.

    "+6.6% output_throughput (interval +0.5% to +12.8%), n=5 vs 5, better, at concurrency 64";
    the change keeps the number's sign (a latency that fell is negative) and the decision
    word says whether that is better.
    """
    decision = row.primary_decision
    reasons = "".join(f"; {why}" for why in row.variant_reasons)
    tried = f" ({row.variants}{reasons})" if row.variants else ""
    if decision is None and row.variant_decisions:
        return f"none retained; variants compared on {row.primary_metric}: {row.variant_decisions}{tried}"
    if decision is None:
        return (row.unranked or "no primary metric") + tried
    if decision == "reported":
        # Reported evidence is never compared: its figures as written, with no computed sign.
        return f"as reported: {row.reported}" if row.reported else "reported only, not compared"
    if row.primary_kind == "capacity":
        where = "capacity under the SLO"
    elif row.primary_concurrency is not None:
        where = f"at concurrency {row.primary_concurrency}"
    else:
        where = "concurrency not recorded"
    change = row.primary_change_percent
    text = f"{fmt_percent(change)} " if change is not None else "no percent (baseline mean 0), "
    text += str(row.primary_metric)
    low, high = row.primary_ci_low_percent, row.primary_ci_high_percent
    if low is not None and high is not None:
        text += f" (interval {fmt_percent(low)} to {fmt_percent(high)})"
    word = decision
    n, baseline_n = row.primary_n, row.primary_baseline_n
    if decision == "unreplicated" and n is not None and baseline_n is not None:
        word = unreplicated_text(n, baseline_n, bool(row.primary_spread_unknown))
    if row.best_of:
        tested = row.best_of_tested
        with_p = f", {tested} with a p-value" if tested is not None and tested < row.best_of else ""
        word += f" (best of {row.best_of}{with_p}, Holm-corrected"
        word += f", adjusted p = {row.holm_p:.2g})" if row.holm_p is not None else ")"
    broken = row.broken_guardrails or []
    if broken:
        word += f", guardrail broken: {', '.join(broken)}"
    unshown = row.unshown_guardrails or []
    if unshown:
        word += f", guardrail not shown: {', '.join(unshown)}"
    for warning in row.design or []:
        word += f", {warning}"
    if row.own_load:
        where += f" ({row.own_load})"
    worse = row.regressions or []
    elsewhere = f"; worse elsewhere: {', '.join(worse)}" if worse else ""
    return f"{text}, n={row.primary_n} vs {row.primary_baseline_n}, {word}, {where}{elsewhere}{tried}"


def tier_text(row: Row) -> str:
    """The tier, marked when the placement is the records' own rather than their sources'."""
    return f"{row.tier} (own placement)" if row.tier_source == "own" else str(row.tier)


def status_text(row: Row) -> str:
    """The status, and "in the stack" for an adopted record whose change is in the command in force."""
    status = row.status if not row.standing else f"{row.status}, {row.standing}"
    return f"{status}, in the stack" if row.in_stack else status


def blockers_text(row: Row) -> str:
    if not row.open_blockers:
        return "none"
    return f"{row.open_blockers}: " + "; ".join(row.open_blocker_titles)


def _csv(rows: list[Row], columns: Sequence[str]) -> str:
    """The rows as CSV: what pandas' `to_csv` wrote for them, through the csv module it writes with.

    Every build writes summary.csv, and importing pandas for it was a sixth of a small build;
    a test holds this to pandas' bytes. Missing values are empty, numbers as `str` gives them.
    """
    return "".join([_csv_lines([columns]), *(_csv_row(row, columns) for row in rows)])


def _csv_lines(lines: Iterable[Sequence[Any]]) -> str:
    import csv
    import io

    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(lines)
    return out.getvalue()


def _csv_row(row: Row, columns: Sequence[str]) -> str:
    """One row's line of the CSV (a writer writes each row on its own, so lines join into the table)."""
    from generator.base.csvsafe import formula_safe

    # Text columns only: the numeric ones are numbers formatted here, and -2.8 stays a number.
    slo_text = (SLO_COLUMN,) if SLO_COLUMN in columns else ()
    text = {
        "slug",
        "title",
        "status",
        "primary_metric",
        "primary_result",
        "primary_test",
        "open_blocker_titles",
        "standing",
    }
    text |= {
        "reported",
        "variants",
        "variant_reasons",
        "variant_decisions",
        "design",
        "regressions",
        "own_load",
        "unranked",
        *slo_text,
    }
    percents = {"primary_change_percent", "primary_ci_low_percent", "primary_ci_high_percent"}

    def shown(column: str, v: Any) -> Any:
        if column in (
            "open_blocker_titles",
            "broken_guardrails",
            "unshown_guardrails",
            "regressions",
            "design",
            "variant_reasons",
        ):
            v = "; ".join(v)
        elif column in ("best_of", "best_of_tested", "holm_p"):
            v = "" if v is None else str(v)
        elif column in percents:
            v = "" if v is None else f"{v:.1f}"
        elif column == "in_stack" or (column == "primary_spread_unknown" and v is not None):
            v = str(v).lower()
        if column in text and isinstance(v, str):
            v = formula_safe(v)
        return "" if v is None or (isinstance(v, float) and math.isnan(v)) else v

    return _csv_lines([[shown(c, getattr(row, c)) for c in columns]])


def summary_csv(analysis: Analysis, build_cache: BuildCache | None = None) -> str:
    """`format_rows(summary_rows(analysis), "csv")`, each record's line kept in `build_cache`.

    A line reads its record's analysis (whose fingerprint also covers the campaign) and whether
    the record is in the stack; a rebuild after one edit makes only the lines that changed.
    """
    columns = (*COLUMNS, SLO_COLUMN) if analysis.ranked and analysis.project.campaign.slo else COLUMNS
    lines = [_csv_lines([columns])]
    for entry in analysis.ranked:
        fingerprint = incremental.fingerprint(build_cache, "analysis", str(entry.file.path))

        def line(entry: RecordAnalysis = entry) -> str:
            return _csv_row(summary_row(analysis, entry), columns)

        if fingerprint is None:
            lines.append(line())
        else:
            lines.append(memo(build_cache, "summary-line", (fingerprint, analysis.stack.has(entry.file.slug)), line))
    return "".join(lines)


def format_rows(rows: list[Row], fmt: str) -> str:
    """The rows as a terminal table, markdown, CSV or JSON, ending with a newline."""
    from generator.base import jsonsafe

    columns = (*COLUMNS, SLO_COLUMN) if rows and rows[0].capacity_under_slo is not None else COLUMNS
    if fmt == "json":
        # Plain json keeps None as null and the key order of COLUMNS, byte for byte stable.
        cells = [{c: getattr(row, c) for c in columns} for row in rows]
        return jsonsafe.dumps(cells, indent=2, ensure_ascii=False) + "\n"

    if fmt == "csv":
        return _csv(rows, columns)

    from tabulate import tabulate

    headers = ["#", "Title", "Tier", "Status", "Primary metric", "Open blockers"]
    shown: list[list[Any]] = [
        [f"{row.number:02d}", row.title, tier_text(row), status_text(row), gain_text(row), blockers_text(row)]
        for row in rows
    ]
    if SLO_COLUMN in columns:
        headers.append("Capacity under SLO")
        for line, row in zip(shown, rows, strict=True):
            line.append(row.capacity_under_slo)
    tablefmt = "github" if fmt == "markdown" else "simple"
    if fmt == "markdown":
        from generator.views.markdown import cell

        # The site's table-cell escaping: no raw HTML, links or attributes, one line, and a pipe
        # that cannot end the cell.
        shown = [[str(cell(v)) if isinstance(v, str) else v for v in line] for line in shown]
    else:
        from generator.base.problems import printable

        # A terminal runs what it is sent: a title's control, bidi or zero-width characters are
        # shown as escapes, as file names and keys are in every report.
        shown = [[printable(v) if isinstance(v, str) else v for v in line] for line in shown]
    if not shown and fmt == "table":
        return "no records match\n"
    # A terminal wraps the long columns so a row fits a wide window; markdown keeps one line per row.
    widths = [None, 40, None, None, 30, 50] if fmt == "table" else None
    table = tabulate(
        shown,
        headers=headers,
        tablefmt=tablefmt,
        disable_numparse=True,
        maxcolwidths=widths,
    )
    return table + "\n"
