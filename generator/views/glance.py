"""What a reader sees first: a record page's header, the home page's first screen, the timeline.

Read from the analysis and the records only: every change, interval and level here is one the
analysis computed; this module picks which to show and words it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from generator.analysis.campaign import Analysis, Primary, RecordAnalysis, Regression
from generator.model import metrics, variants
from generator.model.quantity import fmt_number, fmt_percent
from generator.model.record import Change
from generator.project.load import RecordFile
from generator.views.notes import guardrails_text, own_load_text, regressions_text, unranked_text
from generator.views.paths import docs_root, relative, series_dir

# The order statuses are counted in on the home page; the rest are grouped after them.
COUNTED = ("adopted", "in-progress", "blocked", "rejected")


@dataclass(frozen=True)
class Decision:
    """A primary comparison as the header and the summary show it."""

    word: str
    change: str | None
    interval: str | None
    n: str
    metric: str
    # The load it was measured at ("concurrency 64") and the result's label.
    where: str
    result: str
    # "worse elsewhere: ..." (`regressions_text`), said beside the word wherever it is shown.
    regressions: str | None = None
    # "guardrail broken: ttft_p99 +15.1%; guardrail not shown: ..." (`guardrails_text`), or None.
    guardrails: str | None = None
    # "best of 3 variants: Holm-adjusted p = 0.078", when the word is corrected for the pick.
    correction: str | None = None
    # "at its own expected load, concurrency 256: +124.3% (...), better", when ranked at another.
    own_load: str | None = None

    @property
    def text(self) -> str:
        parts = [self.change or "no percent (baseline mean 0)"]
        if self.interval:
            parts.append(f"interval {self.interval}")
        parts.append(f"n {self.n}")
        return ", ".join(parts)


def decision(
    primary: Primary | None, vocabulary: metrics.Vocabulary = metrics.BUILTIN, found: tuple[Regression, ...] = ()
) -> Decision | None:
    if primary is None:
        return None
    c = primary.comparison
    metric = vocabulary.lookup(primary.metric)
    interval = None
    if c.ci_low_percent is not None and c.ci_high_percent is not None:
        interval = f"{fmt_percent(c.ci_low_percent)} to {fmt_percent(c.ci_high_percent)}"
        if c.interval_alpha is not None:
            interval += f" ({fmt_number(100 - 100 * c.interval_alpha)}%, Holm's step)"
    correction = None
    if primary.best_of is not None and primary.holm_p is not None:
        correction = f"best of {primary.best_of} variants: Holm-adjusted p = {primary.holm_p:.2g}"
    where = f"concurrency {primary.concurrency}" if primary.concurrency is not None else "concurrency not recorded"
    return Decision(
        word=c.decision,
        change=fmt_percent(c.change_percent) if c.change_percent is not None else None,
        interval=interval,
        n=f"{c.n} / {c.baseline_n}",
        metric=metric.label if metric else primary.metric,
        where=where,
        result=primary.label,
        regressions=regressions_text(found, vocabulary),
        guardrails=guardrails_text(primary),
        correction=correction,
        own_load=own_load_text(primary),
    )


def change_diff(change: Change | None) -> list[str]:
    """The words a change adds to or takes from the command it applies to, as shell text."""
    if change is None:
        return []
    out = [" ".join(f.tokens()) for f in change.flags]
    out += [f"without {flag}" for flag in change.remove_flags]
    out += [f"{k}={v}" for k, v in change.env.items()]
    return out


def record_header(analysis: Analysis, rec: RecordFile) -> dict[str, Any]:
    """The header table of a record page, like a PEP's: where the record stands, in one screen."""
    project = analysis.project
    r = rec.record
    ra = analysis.record(rec)
    change = variants.effective_change(r)
    by_slug = analysis.by_slug
    if change is not None and change.base_command:
        relative_to = "its own base command"
    elif r.builds_on:
        relative_to = "the stack of " + ", ".join(f"{by_slug[s].number:02d}" for s in r.builds_on if s in by_slug)
    else:
        relative_to = "the baseline"
    return {
        "decision": decision(ra.primary, project.campaign.vocabulary(), ra.regressions),
        "primary_metric": ra.primary_metric,
        "unranked": unranked_text(ra) if ra.primary is None else None,
        "reported": ra.reported,
        "diff": change_diff(change),
        "diff_base": relative_to,
        "command_missing": bool(change is not None and change.command == "not-recorded"),
        "patches": len(change.patches) if change is not None else 0,
        "open_blockers": len(ra.open_blockers),
    }


# --- the home page's first screen ---------------------------------------------------------------


def _link(analysis: Analysis, rec: RecordFile) -> str:
    project = analysis.project
    return relative(series_dir(project) / project.output_name(rec), docs_root(project))


def _entry(analysis: Analysis, ra: RecordAnalysis) -> dict[str, Any]:
    rec = ra.file
    return {
        "number": f"{rec.number:02d}",
        "title": rec.record.title,
        "status": rec.record.status,
        "tier": rec.record.tier,
        "date": rec.record.date.isoformat() if rec.record.date else None,
        "link": _link(analysis, rec),
        "decision": decision(ra.primary, analysis.project.campaign.vocabulary(), ra.regressions),
    }


def status_counts(analysis: Analysis) -> list[tuple[str, int]]:
    found: dict[str, int] = {}
    for rec in analysis.project.records:
        found[rec.record.status] = found.get(rec.record.status, 0) + 1
    shown = [(s, found.pop(s, 0)) for s in COUNTED]
    return shown + sorted(found.items())


def next_ideas(analysis: Analysis, limit: int = 5) -> list[dict[str, Any]]:
    """The proposed records in the analysis' ranked order: what to try next, tier by tier."""
    out = [_entry(analysis, ra) for ra in analysis.ranked if ra.file.record.status == "proposed"]
    return out[:limit]


def latest(analysis: Analysis, limit: int = 5) -> list[dict[str, Any]]:
    """The dated records, newest first (ties by number, so the order is stable)."""
    dated = [ra for ra in analysis.records if ra.file.record.date is not None]
    dated.sort(key=lambda ra: (-_ordinal(ra.file.record.date), ra.file.number))
    return [_entry(analysis, ra) for ra in dated[:limit]]


def _ordinal(day: dt.date | None) -> int:
    return day.toordinal() if day is not None else 0


# --- the timeline -------------------------------------------------------------------------------


def timeline_context(analysis: Analysis) -> dict[str, Any]:
    """Every record by date, newest first, grouped by month; the undated ones after."""
    project = analysis.project
    months: dict[str, list[dict[str, Any]]] = {}
    dated = sorted(
        (ra for ra in analysis.records if ra.file.record.date is not None),
        key=lambda ra: (-_ordinal(ra.file.record.date), ra.file.number),
    )
    for ra in dated:
        day = ra.file.record.date
        assert day is not None
        months.setdefault(day.strftime("%Y-%m"), []).append(_entry(analysis, ra))
    undated = [_entry(analysis, ra) for ra in analysis.records if ra.file.record.date is None]
    return {
        "campaign": project.campaign,
        "months": list(months.items()),
        "undated": undated,
        "summary_link": relative(docs_root(project) / "summary.md", docs_root(project)),
    }


def goal_rows(analysis: Analysis) -> list[dict[str, Any]]:
    """Each goal with its one current level, the analysis' (`analysis.goals`), and the distance.

    A goal on the road reads the road's level and distance, so the first screen never shows a
    second "current" beside the road's.
    """
    from generator.analysis.road import distance_text
    from generator.views.road import level_text

    campaign = analysis.project.campaign
    vocabulary = campaign.vocabulary()
    road = analysis.stack.road
    distances = {id(d.goal): d for d in road.goals} if road is not None else {}
    out = []
    for status in analysis.goals:
        g = status.goal
        metric = vocabulary.lookup(g.metric)
        unit = metric.unit if metric else ""
        distance = distances.get(id(g))
        current = None if status.current is None else ("~" if status.about else "") + level_text(status.current)
        out.append(
            {
                "goal": g,
                "label": metric.label if metric else g.metric,
                "unit": unit,
                "direction": status.direction,
                "target": fmt_number(g.target),
                "concurrency": str(g.concurrency) if g.concurrency is not None else "not recorded",
                "current": current,
                "source": status.current_from,
                "to_go": distance_text(distance, unit) if distance is not None else None,
                "reached": status.reached,
            }
        )
    return out


def home_glance(analysis: Analysis) -> dict[str, Any]:
    """The home page's first screen: goals, the command in force, counts, what is next and new."""
    stack = analysis.stack
    command = stack.stack.script() if stack.stack is not None else None
    return {
        "goals": goal_rows(analysis),
        "command": command,
        "adopted": [f"{r.number:02d}" for r in stack.records],
        "not_in_command": [f"{label}: {note}" for label, note in stack.notes],
        "counts": status_counts(analysis),
        "next": next_ideas(analysis),
        "latest": latest(analysis),
    }
