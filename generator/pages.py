"""What each page shows: the views of the series pages, the home page, the summary and the blockers.

Python prepares what a page shows, from the analysis; the Jinja2 templates only lay it
out. Nothing here computes a number: the deltas, gains and open blockers come from
`analysis`, the charts that exist from `plots` (passed in as `charts`, path -> alt text).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from generator import metrics
from generator.analysis import Analysis, Delta, ResolvedResult
from generator.evidence import baseline_evidence, record_evidence
from generator.model import Attempt, Blocker, Goal, Result, apply_change
from generator.numbers import fmt_number, fmt_percent, fmt_value
from generator.paths import docs_root, record_plot_path, relative, series_dir, summary_plot_paths
from generator.problems import rel
from generator.project import Project, RecordFile
from generator.summary import blockers_text, gain_text, summary_rows

_VAR_RE = re.compile(r"^\$(\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)$")


def _shell_word(token: str) -> str:
    # An environment variable stays unquoted so the shell still expands it.
    return token if _VAR_RE.match(token) else shlex.quote(token)


def shell_command(tokens: list[str], env: dict[str, str]) -> str:
    """A launch command a shell accepts, one option per line, env vars as a prefix."""
    lines: list[list[str]] = [[f"{k}={shlex.quote(v)}" for k, v in env.items()]]
    started = False
    for token in tokens:
        if token.startswith("--") and started:
            lines.append([])
        started = True
        lines[-1].append(_shell_word(token))
    return " \\\n    ".join(" ".join(line) for line in lines)


@dataclass
class MetricRow:
    name: str
    label: str
    unit: str
    higher_is_better: bool
    value: str
    baseline: str | None
    delta: Delta | None
    change: str | None


@dataclass
class ResultView:
    result: Result
    rows: list[MetricRow]
    notes: list[str]
    no_baseline: bool
    concurrency: str
    request_rate: str | None


def _change_text(d: Delta, higher_is_better: bool) -> str:
    word = "better" if d.gain_percent > 0 else ("worse" if d.gain_percent < 0 else "no change")
    text = f"{fmt_percent(d.gain_percent)} {word}" if word != "no change" else "0.0%, no change"
    if not higher_is_better and d.change_percent != 0:
        text += f" (raw {fmt_percent(d.change_percent)})"
    if d.within_noise:
        text += ", within noise"
    return text


def result_view(resolved: ResolvedResult) -> ResultView:
    # An imported run fills in the load and workload it recorded.
    result = resolved.result
    deltas = resolved.deltas
    rows: list[MetricRow] = []
    for name, value in resolved.metrics.items():
        metric = metrics.lookup(name)
        base = resolved.baseline.get(name)
        d = deltas.get(name)
        higher = metric.higher_is_better if metric else True
        rows.append(
            MetricRow(
                name=name,
                label=metric.label if metric else name,
                unit=metric.unit if metric else "",
                higher_is_better=higher,
                value=fmt_value(value),
                baseline=fmt_value(base) if base is not None else None,
                delta=d,
                change=_change_text(d, higher) if d is not None else None,
            )
        )
    rate = result.request_rate
    rate_text = None
    if rate is not None:
        rate_text = {"inf": "unlimited", "trace": "trace replay"}.get(str(rate), f"{fmt_number(float(rate))} req/s")
    return ResultView(
        result=result,
        rows=rows,
        notes=list(resolved.notes),
        no_baseline=resolved.no_baseline,
        concurrency=str(result.concurrency) if result.concurrency is not None else "not recorded",
        request_rate=rate_text,
    )


@dataclass
class BlockerView:
    anchor: str
    # The definition: the record's own blocker, or the shared one a `ref` points at.
    blocker: Blocker
    ref: str | None
    defined_in: str | None = None
    defined_link: str | None = None
    blockers_link: str = ""
    # This record's own note and attempts (a `ref` may carry both against a shared blocker).
    note: str | None = None
    attempts: list[Attempt] = field(default_factory=list)


def _blocker_anchor(rec: RecordFile, index: int, blocker: Blocker) -> str:
    # Slugs never hold "--", so an unnamed blocker's anchor cannot collide with a named one.
    return f"blocker-{blocker.id}" if blocker.id else f"blocker-{rec.slug}--{index + 1}"


def _record_title(rec: RecordFile) -> str:
    return f"{rec.number:02d}. {rec.record.title}"


def _blocker_views(analysis: Analysis, rec: RecordFile) -> list[BlockerView]:
    """A record's blockers as its page shows them: a `ref` shows the shared definition."""
    project = analysis.project
    here, root_dir = series_dir(project), docs_root(project)
    shared = analysis.blockers.shared
    blockers: list[BlockerView] = []
    for j, b in enumerate(rec.record.blockers):
        if b.ref is not None:
            defining, k, definition = shared[b.ref].record, shared[b.ref].index, shared[b.ref].blocker
            blockers.append(
                BlockerView(
                    anchor=f"blocker-{b.ref}",
                    blocker=definition,
                    ref=b.ref,
                    defined_in=_record_title(defining),
                    defined_link=f"{project.output_name(defining)}#{_blocker_anchor(defining, k, definition)}",
                    blockers_link=relative(root_dir / "blockers.md", here)
                    + f"#{_blocker_anchor(defining, k, definition)}",
                    note=b.note,
                    attempts=list(b.attempts),
                )
            )
        else:
            anchor = _blocker_anchor(rec, j, b)
            blockers.append(
                BlockerView(
                    anchor=anchor,
                    blocker=b,
                    ref=None,
                    blockers_link=relative(root_dir / "blockers.md", here) + f"#{anchor}",
                    note=b.note,
                    attempts=list(b.attempts),
                )
            )
    return blockers


def record_context(analysis: Analysis, rec: RecordFile, charts: Mapping[str, str]) -> dict[str, Any]:
    """A series page's view; `charts` maps each chart drawn to its alt text."""
    project = analysis.project
    r = rec.record
    here = series_dir(project)
    root_dir = docs_root(project)
    by_slug = analysis.by_slug
    campaign = project.campaign

    def page_link(slug: str) -> dict[str, str]:
        target = by_slug[slug]
        return {"slug": slug, "title": _record_title(target), "link": project.output_name(target)}

    blockers = _blocker_views(analysis, rec)
    env = {**campaign.baseline.env, **(r.change.env if r.change else {})}
    tokens = _launch_tokens(project, rec)
    return {
        "campaign": campaign,
        "record": r,
        "number": f"{rec.number:02d}",
        "slug": rec.slug,
        "page_id": f"{campaign.series}-{rec.number:02d}",
        "source": rel(rec.path, project.root),
        "tier_text": campaign.tiers[r.tier],
        "engine_version": campaign.engine.version or "not recorded",
        "command": shell_command(tokens, env),
        "own_base_command": bool(r.change and r.change.base_command),
        "blockers": blockers,
        "results": [result_view(res) for res in analysis.record(rec).results],
        "evidence": record_evidence(analysis, rec),
        "plots": _plot_views(charts, [record_plot_path(project, rec)], here),
        "related": [page_link(s) for s in r.related if s in by_slug],
        "superseded_by": page_link(r.superseded_by) if r.superseded_by and r.superseded_by in by_slug else None,
        "superseding": [page_link(o.slug) for o in analysis.blockers.superseding.get(rec.slug, ())],
        "home_link": relative(root_dir / "index.md", here),
        "summary_link": relative(root_dir / "summary.md", here),
        "blockers_link": relative(root_dir / "blockers.md", here),
    }


def record_dependencies(analysis: Analysis, rec: RecordFile) -> list[RecordFile]:
    """The other records a record's page shows something of; keep in step with `record_context`.

    A rebuild reuses a page only while its own file, these records' files and the campaign
    file are unchanged (see `_record_page`).
    """
    index, by_slug = analysis.blockers, analysis.by_slug
    r = rec.record
    slugs = [*r.related, *([r.superseded_by] if r.superseded_by else [])]
    out = [by_slug[s] for s in slugs if s in by_slug]
    out += [index.shared[b.ref].record for b in r.blockers if b.ref and b.ref in index.shared]
    out += index.superseding.get(rec.slug, ())
    return out


def _launch_tokens(project: Project, rec: RecordFile) -> list[str]:
    return apply_change(project.campaign.baseline.command, rec.record.change)


def _goal_current(project: Project, goal: Goal) -> tuple[str | None, str | None]:
    """The goal's current value and where it comes from: as stated, else the baseline's."""
    if goal.current is not None:
        return fmt_value(goal.current), None
    if goal.concurrency is not None:
        for result in project.campaign.baseline.results:
            if result.concurrency == goal.concurrency and goal.metric in result.metrics:
                return fmt_value(result.metrics[goal.metric]), f"baseline result `{result.label}`"
    return None, None


def home_context(analysis: Analysis) -> dict[str, Any]:
    project = analysis.project
    campaign = project.campaign
    root_dir = docs_root(project)
    goals = []
    for g in campaign.goals:
        metric = metrics.lookup(g.metric)
        direction = g.direction or ("above" if metric is None or metric.higher_is_better else "below")
        current, current_from = _goal_current(project, g)
        goals.append(
            {
                "goal": g,
                "label": metric.label if metric else g.metric,
                "unit": metric.unit if metric else "",
                "direction": direction,
                "target": fmt_number(g.target),
                "current": current,
                "current_from": current_from,
                "concurrency": str(g.concurrency) if g.concurrency is not None else "not recorded",
            }
        )
    counts = {t: sum(1 for r in project.records if r.record.tier == t) for t in (1, 2, 3)}
    return {
        "campaign": campaign,
        "engine_version": campaign.engine.version or "not recorded",
        "command": shell_command(shlex.split(campaign.baseline.command), dict(campaign.baseline.env)),
        "baseline_results": [result_view(res) for res in analysis.baseline_results],
        "baseline_evidence": baseline_evidence(analysis),
        "goals": goals,
        "tier_counts": counts,
        "record_count": len(project.records),
        "summary_link": relative(root_dir / "summary.md", root_dir),
        "blockers_link": relative(root_dir / "blockers.md", root_dir),
    }


def summary_context(analysis: Analysis, charts: Mapping[str, str]) -> dict[str, Any]:
    project = analysis.project
    root_dir = docs_root(project)
    rows = []
    by_slug = analysis.by_slug
    for row in summary_rows(analysis):
        rec = by_slug[row["slug"]]
        rows.append(
            {
                **row,
                "link": relative(series_dir(project) / project.output_name(rec), root_dir),
                "gain_text": gain_text(row),
                "blockers_text": blockers_text(row),
            }
        )
    views = _plot_views(charts, summary_plot_paths(project), root_dir)
    return {"campaign": project.campaign, "rows": rows, "plots": views}


def _plot_views(
    charts: Mapping[str, str], paths: list[str] | tuple[str, ...], page_dir: PurePosixPath
) -> list[dict[str, str]]:
    """The charts among `paths` that the data allows, as image links relative to the page."""
    return [{"src": relative(PurePosixPath(path), page_dir), "alt": charts[path]} for path in paths if path in charts]


def blockers_context(analysis: Analysis) -> dict[str, Any]:
    project = analysis.project
    root_dir = docs_root(project)
    here = series_dir(project)
    entries = []
    for rec in project.records:
        for j, b in enumerate(rec.record.blockers):
            if b.ref is not None:
                continue
            anchor = _blocker_anchor(rec, j, b)
            # The defining record and every record that points at it, each once, in series order.
            affects: list[tuple[RecordFile, Blocker]] = [(rec, b)]
            seen = {id(rec)}
            for other, ref in analysis.blockers.refs.get(b.id or "", ()):
                if id(other) not in seen:
                    seen.add(id(other))
                    affects.append((other, ref))
            affects.sort(key=lambda pair: pair[0].number)
            entries.append(
                {
                    "anchor": anchor,
                    "blocker": b,
                    "record": _record_title(rec),
                    "record_link": relative(here / project.output_name(rec), root_dir) + f"#{anchor}",
                    "affects": [
                        {
                            "title": _record_title(o),
                            "link": relative(here / project.output_name(o), root_dir),
                            "status": o.record.status,
                            "attempts": list(entry.attempts),
                            "note": entry.note if entry is not b else None,
                        }
                        for o, entry in affects
                    ],
                }
            )
    return {"campaign": project.campaign, "entries": entries}
