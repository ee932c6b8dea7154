"""The models of the pages that list the campaign: home, summary, blockers and the timeline.

Python prepares what a page shows, from the analysis; the templates only lay it out. Nothing
here computes a number (see `record_page` for the series pages). A summary row, a timeline
entry and a blocker are pieces with models of their own (`SummaryRow`, `Entry`,
`BlockerEntry`), which `output.listing` renders once each and keeps under their digests.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping

from generator.analysis.campaign import Analysis
from generator.model.quantity import fmt_summarised
from generator.model.record import Blocker
from generator.project.load import RecordFile
from generator.views.evidence import baseline_evidence
from generator.views.frontier import frontier_view
from generator.views.glance import Entry, decision, entry, home_glance, newest_first, record_day
from generator.views.journal import RunEvent, run_events
from generator.views.page_models import (
    Affected,
    BlockerEntry,
    BlockersPage,
    HomePage,
    MeasuredBaseline,
    SummaryLine,
    SummaryPage,
    SummaryRow,
    TimelinePage,
)
from generator.views.paths import docs_root, record_link, relative, summary_plot_paths
from generator.views.record_page import blocker_anchor, chart_links, record_title, rule
from generator.views.results import result_view, shell_command
from generator.views.road import road_context
from generator.views.summary import blockers_text, gain_text, status_text, summary_rows, tier_text


def home_page(analysis: Analysis, charts: Mapping[str, str] | None = None) -> HomePage:
    """The home page's model."""
    project = analysis.project
    campaign = project.campaign
    root_dir = docs_root(project)
    counts = {t: sum(1 for r in project.records if r.record.tier == t) for t in (1, 2, 3)}
    # Per tier, the records placed there by themselves rather than by their sources.
    own = {
        t: [f"{r.number:02d}" for r in project.records if (r.record.tier, r.record.tier_source) == (t, "own")]
        for t in (1, 2, 3)
    }
    return HomePage(
        campaign=campaign,
        engine_version=campaign.engine.version or "not recorded",
        command=shell_command(shlex.split(campaign.baseline.command), dict(campaign.baseline.env)),
        baseline_results=[result_view(res, vocabulary=campaign.vocabulary()) for res in analysis.baseline_results],
        baseline_evidence=baseline_evidence(analysis),
        tier_counts=counts,
        tier_own=own,
        record_count=len(project.records),
        summary_link=relative(root_dir / "summary.md", root_dir),
        blockers_link=relative(root_dir / "blockers.md", root_dir),
        road=road_context(analysis, dict(charts or {})),
        glance=home_glance(analysis),
        timeline_link="timeline.md",
        frontier=frontier_view(analysis, dict(charts or {}), root_dir),
        measured_baseline=[] if analysis.baseline_results else measured_baseline(analysis),
    )


def measured_baseline(analysis: Analysis) -> list[MeasuredBaseline]:
    """The campaign baseline as each record that builds on nothing measured it in its own blocks
    (`baseline_run`, as `improvements run` links them), with each metric's figures as its page
    shows them: a campaign run by the runner has no baseline results of its own."""
    project = analysis.project
    vocabulary = project.campaign.vocabulary()
    out = []
    for ra in analysis.records:
        if ra.launch is None or ra.launch.chain:
            continue
        for r in ra.results:
            if r.result.baseline_run is None or r.no_baseline or r.not_compared is not None or not r.baseline:
                continue
            figures = []
            for name, value in r.baseline.items():
                metric = vocabulary.lookup(name)
                label = metric.label if metric else name
                unit = f" {metric.unit}" if metric and metric.unit else ""
                figures.append(f"{label} {fmt_summarised(value, r.baseline_summaries[name])}{unit}")
            c, rate = r.result.concurrency, r.result.request_rate
            out.append(
                MeasuredBaseline(
                    record=f"{ra.file.number:02d} {ra.file.record.title}",
                    link=record_link(project, ra.file, docs_root(project)),
                    load=f"concurrency {c}"
                    if c is not None
                    else f"request rate {rate} req/s"
                    if rate
                    else "load not recorded",
                    figures=figures,
                )
            )
    return out


def summary_page(analysis: Analysis, charts: Mapping[str, str]) -> SummaryPage:
    """The summary's model: a row per record, its charts and the frontier."""
    project = analysis.project
    root_dir = docs_root(project)
    vocabulary = project.campaign.vocabulary()
    slo = bool(project.campaign.slo)
    rows: list[SummaryLine] = []
    by_slug = analysis.by_slug
    for row in summary_rows(analysis):
        rec = by_slug[row.slug]
        ra = analysis.record(rec)
        rows.append(
            SummaryLine(
                **vars(row),
                decision=decision(ra.primary, vocabulary, ra.regressions),
                date=record_day(project, rec),
                link=record_link(project, rec, root_dir),
                gain_text=gain_text(row),
                status_text=status_text(row),
                blockers_text=blockers_text(row),
                tier_text=tier_text(row),
            )
        )
    # The frontier has its own section (`frontier`), with its table.
    views = chart_links(charts, summary_plot_paths(project)[:1], root_dir)
    return SummaryPage(
        campaign=project.campaign,
        rows=rows,
        row_models=[_summary_row(line, slo) for line in rows],
        plots=views,
        frontier=frontier_view(analysis, dict(charts), root_dir),
        own_placement=any(row.tier_source == "own" for row in rows),
        ranked_metrics=list(analysis.ranked_metrics),
        ranked_loads=list(analysis.ranked_loads),
        **vars(rule(analysis)),
    )


def _summary_row(line: SummaryLine, slo: bool) -> SummaryRow:
    """What the summary's table shows of a row: its piece's model."""
    return SummaryRow(
        number=line.number,
        title=line.title,
        link=line.link,
        variants=line.variants,
        tier=line.tier,
        tier_source=line.tier_source,
        status=line.status,
        standing=line.standing,
        in_stack=line.in_stack,
        decision=line.decision,
        primary_metric=line.primary_metric,
        primary_decision=line.primary_decision,
        variant_decisions=line.variant_decisions,
        reported=line.reported,
        unranked=line.unranked,
        date=line.date,
        open_blockers=line.open_blockers,
        blockers_text=line.blockers_text,
        slo=slo,
        capacity=line.capacity_under_slo,
        variant_reasons=tuple(line.variant_reasons),
    )


def blockers_page(analysis: Analysis) -> BlockersPage:
    """Every blocker by the record that defines it, with the records it holds up."""
    project = analysis.project
    root_dir = docs_root(project)
    entries: list[BlockerEntry] = []
    for rec in project.records:
        for j, b in enumerate(rec.record.blockers):
            if b.ref is not None:
                continue
            anchor = blocker_anchor(rec, j, b)
            # The defining record and every record that points at it, each once, in series order.
            affects: list[tuple[RecordFile, Blocker]] = [(rec, b)]
            seen = {id(rec)}
            for other, ref in analysis.blockers.refs.get(b.id or "", ()):
                if id(other) not in seen:
                    seen.add(id(other))
                    affects.append((other, ref))
            affects.sort(key=lambda pair: pair[0].number)
            entries.append(
                BlockerEntry(
                    anchor=anchor,
                    blocker=b,
                    record=record_title(rec),
                    record_link=record_link(project, rec, root_dir) + f"#{anchor}",
                    affects=[
                        Affected(
                            title=record_title(o),
                            link=record_link(project, o, root_dir),
                            status=o.record.status,
                            attempts=list(entry.attempts),
                            note=entry.note if entry is not b else None,
                        )
                        for o, entry in affects
                    ],
                )
            )
    return BlockersPage(campaign=project.campaign, entries=entries)


def timeline_page(analysis: Analysis) -> TimelinePage:
    """Every record by date, and every timed moment of its runs (`journal.run_events`), newest
    first, grouped by month; the undated records after. A record's date has no time: it comes
    after its day's timed moments, as the day's start would (nothing says when in the day)."""
    project = analysis.project
    found: list[tuple[tuple[str, str, int, int], Entry | RunEvent]] = []
    for ra in newest_first(analysis):
        day = ra.file.record.date
        assert day is not None
        found.append(((day.isoformat(), "", -ra.file.number, 0), entry(analysis, ra)))
    events = run_events(analysis)
    for i, event in enumerate(events):
        found.append(((event.day, event.time, -int(event.number), -i), event))
    # Newest first; at the same time, by number, then in the journal's order.
    found.sort(key=lambda kv: kv[0], reverse=True)
    months: dict[str, list[Entry | RunEvent]] = {}
    for key, item in found:
        months.setdefault(key[0][:7], []).append(item)
    undated = [entry(analysis, ra) for ra in analysis.records if ra.file.record.date is None]
    return TimelinePage(
        campaign=project.campaign,
        months=list(months.items()),
        undated=undated,
        summary_link=relative(docs_root(project) / "summary.md", docs_root(project)),
        timed=bool(events),
    )
