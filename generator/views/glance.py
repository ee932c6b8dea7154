"""What a reader sees first: a record page's header, the home page's first screen, the timeline.

Read from the analysis and the records only: every change, interval and level here is one the
analysis computed; this module picks which to show and words it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from generator.analysis.campaign import Analysis, Primary, RecordAnalysis
from generator.model import metrics, variants
from generator.model.quantity import fmt_number, fmt_percent
from generator.model.record import Change
from generator.project.load import Project, RecordFile
from generator.views.paths import docs_root, relative, series_dir
from generator.views.sweeps import capacity_cell, slo_text

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

    @property
    def text(self) -> str:
        parts = [self.change or "no percent (baseline mean 0)"]
        if self.interval:
            parts.append(f"interval {self.interval}")
        parts.append(f"n {self.n}")
        return ", ".join(parts)


def decision(primary: Primary | None, vocabulary: metrics.Vocabulary = metrics.BUILTIN) -> Decision | None:
    if primary is None:
        return None
    c = primary.comparison
    metric = vocabulary.lookup(primary.metric)
    interval = None
    if c.ci_low_percent is not None and c.ci_high_percent is not None:
        interval = f"{fmt_percent(c.ci_low_percent)} to {fmt_percent(c.ci_high_percent)}"
    where = f"concurrency {primary.concurrency}" if primary.concurrency is not None else "concurrency not recorded"
    return Decision(
        word=c.decision,
        change=fmt_percent(c.change_percent) if c.change_percent is not None else None,
        interval=interval,
        n=f"{c.n} / {c.baseline_n}",
        metric=metric.label if metric else primary.metric,
        where=where,
        result=primary.label,
    )


def record_day(project: Project, rec: RecordFile) -> tuple[str, bool] | None:
    """(ISO date, whether git gave it): the record's own `date:`, else the day git first
    committed it, else None (outside git, the pages say nothing rather than guess)."""
    if rec.record.date is not None:
        return rec.record.date.isoformat(), False
    committed = project.committed_dates.get(rec.path.resolve())
    return (committed.isoformat(), True) if committed is not None else None


def record_date(project: Project, rec: RecordFile) -> str | None:
    day = record_day(project, rec)
    if day is None:
        return None
    return f"{day[0]} (first committed)" if day[1] else day[0]


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
        "decision": decision(ra.primary, project.campaign.vocabulary()),
        "primary_metric": ra.primary_metric,
        "reported": ra.reported,
        "diff": change_diff(change),
        "diff_base": relative_to,
        "command_missing": bool(change is not None and change.command == "not-recorded"),
        "patches": len(change.patches) if change is not None else 0,
        "open_blockers": len(ra.open_blockers),
        "date": record_date(project, rec),
        "capacity": f"{capacity_cell(ra.sweeps)} (SLO {slo_text(project)})"
        if ra.sweeps and project.campaign.slo
        else None,
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
        "date": record_date(analysis.project, rec),
        "link": _link(analysis, rec),
        "decision": decision(ra.primary, analysis.project.campaign.vocabulary()),
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
    from generator.views.road import command_caveats

    stack = analysis.stack
    command = stack.stack.script() if stack.stack is not None else None
    return {
        "goals": goal_rows(analysis),
        "command": command,
        "adopted": [f"{r.number:02d}" for r in stack.records],
        "not_in_command": [f"{label}: {note}" for label, note in stack.notes],
        "caveats": command_caveats(analysis),
        # No record has a measured primary comparison: the page says so, and where to see one.
        "no_measured": bool(analysis.records) and all(ra.primary is None for ra in analysis.records),
        "counts": status_counts(analysis),
        "next": next_ideas(analysis),
        "latest": latest(analysis),
    }
