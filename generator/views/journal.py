"""How a comparison was run, for a result `improvements run` made: its plan, its looks, its files,
and any earlier attempt at it that left only a log.

Read from the plan's journal (`project.journals`): the blocks with the order drawn for each,
the loads and the seed; the runner's sequential looks drawn as the interval after each block
(`looks_charts`, one bar chart per result on one percent axis, the stopping look named); and
links to the journal, the launches' outputs and logs, which the site publishes beside the pages
(`published_journal_files`). Every figure is the runner's, as its journal recorded it; nothing
here computes one. A journal's look names its change in percent with the raw sign, as every
change is kept.

The page cache keys a record page on its model's reads (`views.page_reuse`), and the journal
is no table of the analysis: the looks chart's alt text, which states every look, is what
makes a changed journal rebuild the page (a plan's order is written once, before its looks).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath

from generator.analysis.campaign import Analysis, RecordAnalysis, ResolvedResult
from generator.charts.data import DECISIONS, Decision
from generator.model.quantity import fmt_number, fmt_percent
from generator.project.journals import Journal, JournalEvent, journal_of, read_journal
from generator.project.load import Project, RecordFile
from generator.views.paths import ChartFile, ChartLink, Figures, chart_file, docs_root, record_link, relative


@dataclass(frozen=True)
class BlockRow:
    number: int
    load: str
    seed: str
    order: str  # "01-sdpa-attention, then the campaign baseline"
    ran: bool


@dataclass(frozen=True)
class LookRow:
    after_block: int
    change: str
    interval: str
    call: str
    stopped: bool  # the look the runner stopped on


@dataclass(frozen=True)
class FileLink:
    name: str
    link: str


@dataclass(frozen=True)
class AttemptView:
    """An earlier attempt at a result's comparison that left only a log: the log, published with
    the site and linked, and the record's note on it (`Result.earlier_attempts`)."""

    log: FileLink
    note: str | None


@dataclass(frozen=True)
class ExperimentView:
    """One result's run, as its page shows it (`record.md.j2`, "How it was run"): a plan's
    journal and what it ran, or only the earlier attempts of a result no runner's plan made."""

    result: str
    journal: FileLink | None
    plan_id: str
    seed: str
    loads: str
    rule: str | None
    max_blocks: str | None
    stopped: str | None
    blocks: list[BlockRow]
    looks: list[LookRow]
    chart: ChartLink | None
    outputs: list[FileLink]
    logs: list[FileLink]
    attempts: list[AttemptView]


def looks_path(project: Project, rec: RecordFile, index: int) -> str:
    """The looks chart of a record's result (by its index): the interval after each block."""
    return str(PurePosixPath(project.campaign.docs_dir) / "plots" / f"{rec.slug}-result-{index + 1}-looks.svg")


def _launches(project: Project, resolved: ResolvedResult) -> list[str]:
    run = resolved.result.run
    ids = (run,) if isinstance(run, str) else run or ()
    found = (project.runs.get(i) for i in ids)
    return [r.launch for r in found if r is not None and r.launch]


def journal_for(project: Project, rec: RecordFile, resolved: ResolvedResult) -> Journal | None:
    """The journal of the plan that ran this result: the one its sequential design names, else
    the one its runs' launches name; None for a result no runner made."""
    seq = resolved.result.sequential
    path = seq.journal if seq is not None and seq.journal else None
    path = path or journal_of(project.root, rec.slug, _launches(project, resolved))
    return read_journal(project.root, path) if path else None


def _looks(journal: Journal) -> list[LookRow]:
    last = max((lk.after_block for lk in journal.looks), default=None)
    rows = []
    for lk in journal.looks:
        interval = (
            f"{fmt_percent(lk.low_percent)} to {fmt_percent(lk.high_percent)}"
            if lk.low_percent is not None and lk.high_percent is not None
            else "no finite bound yet"
        )
        change = fmt_percent(lk.change_percent) if lk.change_percent is not None else "not measured"
        stopped = journal.stopped is not None and lk.after_block == last
        rows.append(LookRow(lk.after_block, change, interval, lk.call, stopped))
    return rows


def looks_charts(analysis: Analysis) -> list[ChartFile]:
    """The looks chart of every result whose journal recorded sequential looks, in series order."""
    from generator.charts import Bar, bar_chart

    project = analysis.project
    vocabulary = project.campaign.vocabulary()
    out = []
    for ra in analysis.records:
        for i, resolved in enumerate(ra.results):
            journal = journal_for(project, ra.file, resolved)
            if journal is None or not journal.looks:
                continue
            metric = vocabulary.lookup(journal.metric) if journal.metric else None
            name = metric.label if metric else journal.metric or "the primary metric"
            bars = []
            for row, lk in zip(_looks(journal), journal.looks, strict=True):
                if lk.change_percent is None:
                    continue
                bounds = (
                    (lk.low_percent, lk.high_percent)
                    if lk.low_percent is not None and lk.high_percent is not None
                    else None
                )
                label = f"after block {lk.after_block}" + ("" if bounds else " (no bound yet)")
                flag = f"stopped: {journal.stopped}" if row.stopped and journal.stopped else None
                bars.append(Bar(label, lk.change_percent, bounds, decision=_call(lk.call), flag=flag))
            if not bars:
                continue
            title = f"{ra.file.record.title}: {name}, the confidence sequence after each block"
            svg = bar_chart(
                f"looks-{ra.file.slug}-{i + 1}",
                title,
                bars,
                axis_label=f"change in {name} (%), interval valid at every look",
                keep=len(bars),
                given_order=True,
            )
            out.append(chart_file(looks_path(project, ra.file, i), svg))
    return out


def _call(call: str) -> Decision | None:
    for known in DECISIONS:
        if call == known:
            return known
    return None


def _link(project: Project, path: str, page_dir: PurePosixPath) -> FileLink:
    return FileLink(PurePosixPath(path).name, relative(docs_root(project) / path, page_dir))


def experiments(
    analysis: Analysis, ra: RecordAnalysis, charts: Mapping[str, str] | None, page_dir: PurePosixPath
) -> list[ExperimentView]:
    """Each result of the record that a runner's plan made, with its plan, looks and files."""
    project = analysis.project
    out = []
    for i, resolved in enumerate(ra.results):
        journal = journal_for(project, ra.file, resolved)
        attempts = [
            AttemptView(_link(project, a.log, page_dir), a.note)
            for a in resolved.result.earlier_attempts
            if _inside(a.log)
        ]
        if journal is None:
            if attempts:
                out.append(_attempts_only(resolved.result.label, attempts))
            continue
        path = looks_path(project, ra.file, i)
        chart = None
        if charts is not None and path in charts:
            chart = ChartLink(relative(PurePosixPath(path), page_dir), charts[path])
        out.append(
            ExperimentView(
                result=resolved.result.label,
                journal=_link(project, journal.path, page_dir),
                plan_id=journal.plan_id,
                seed=str(journal.seed) if journal.seed is not None else "not recorded",
                loads=", ".join(fmt_number(x) for x in journal.loads) or "not recorded",
                rule=journal.rule,
                max_blocks=str(journal.max_blocks) if journal.max_blocks is not None else None,
                stopped=journal.stopped,
                blocks=[
                    BlockRow(
                        b.number,
                        fmt_number(b.load),
                        str(b.seed) if b.seed is not None else "",
                        ", then ".join(journal.arms.get(a, a) for a in b.order),
                        b.ran,
                    )
                    for b in journal.blocks
                ],
                looks=_looks(journal),
                chart=chart,
                outputs=[_link(project, p, page_dir) for p in journal.outputs],
                logs=[_link(project, p, page_dir) for p in journal.logs],
                attempts=attempts,
            )
        )
    return out


def _attempts_only(label: str, attempts: list[AttemptView]) -> ExperimentView:
    return ExperimentView(label, None, "", "", "", None, None, None, [], [], None, [], [], attempts)


def _inside(path: str) -> bool:
    """A path relative to the campaign's folder that stays in it (`check` refuses any other)."""
    rel = PurePosixPath(path)
    return not rel.is_absolute() and ".." not in rel.parts


def file_links(analysis: Analysis, rec: RecordFile, page_dir: PurePosixPath) -> tuple[tuple[str, str], ...]:
    """Each earlier attempt's log the record's results name, with its link from the page: where
    the record's prose names the path, the page links it (`markdown.linked`)."""
    project = analysis.project
    found = {
        a.log: _link(project, a.log, page_dir).link
        for result in rec.record.results
        for a in result.earlier_attempts
        if _inside(a.log)
    }
    return tuple(sorted(found.items()))


def published_journal_files(analysis: Analysis) -> dict[str, bytes]:
    """The journals the pages link and the files their plans kept (outputs, logs), and every
    earlier attempt's log, by their path relative to the campaign's root, which the site serves
    relative to the docs folder. What `improvements run` keeps it has already redacted (the
    runner keeps no secret); an attempt's log, which anything may have written, is redacted
    here as an import's raw copy is (`redact_text`). A file behind a link is never read
    (`read_regular`)."""
    from generator.base.fsio import read_regular
    from generator.project.runs.redact import redact_text

    project = analysis.project
    out: dict[str, bytes] = {}
    for ra in analysis.records:
        for resolved in ra.results:
            for attempt in resolved.result.earlier_attempts:
                if attempt.log in out or not _inside(attempt.log):
                    continue
                if (data := read_regular(project.root, attempt.log)) is not None:
                    # Bytes that are not UTF-8 pass through unchanged (surrogateescape).
                    text = redact_text(data.decode("utf-8", "surrogateescape"))[0]
                    out[attempt.log] = text.encode("utf-8", "surrogateescape")
            journal = journal_for(project, ra.file, resolved)
            if journal is None:
                continue
            for path in (journal.path, *journal.outputs, *journal.logs):
                if path not in out and (data := read_regular(project.root, path)) is not None:
                    out[path] = data
    return dict(sorted(out.items()))


@dataclass(frozen=True)
class RunEvent:
    """A timed moment of a record's run on the timeline, a piece of its own
    (`_timeline_event.md.j2`): when the journal says it happened and what happened."""

    # "2026-12-02 07:41 UTC", to the minute the journal gives (never rounded up); the date alone
    # when the journal named no zone.
    when: str
    day: str  # YYYY-MM-DD: its month on the timeline, and its place there
    # Its time in full ("07:41:12.410710", "" for the date alone): the order of its day's moments.
    time: str
    number: str
    title: str
    link: str
    what: str  # "run started", "run stopped"...
    detail: str  # "decided after block 6; last look: better"
    figures: Figures = ()


_WHAT = {"started": "run started", "interrupted": "run interrupted", "resumed": "run resumed", "stopped": "run stopped"}


def _detail(journal: Journal, event: JournalEvent) -> str:
    if event.kind == "started":
        return f"plan `{journal.plan_id}`" if journal.plan_id else ""
    if event.kind == "interrupted":
        return f"by {event.detail}" if event.detail else ""
    if event.kind != "stopped":
        return ""
    last = max((lk.after_block for lk in journal.looks), default=None)
    calls = ", ".join(f"{lk.arm} {lk.call}" for lk in journal.looks if lk.after_block == last)
    said = event.detail or ""
    if not calls:
        return said
    return f"{said}; the last look called {calls}" if said else f"the last look called {calls}"


def run_events(analysis: Analysis) -> list[RunEvent]:
    """The timed moments of every plan that made a record's result, as its journal recorded
    them (started, interrupted, resumed, stopped), each journal once, in series order."""
    project = analysis.project
    out: list[RunEvent] = []
    seen: set[str] = set()
    for ra in analysis.records:
        rec = ra.file
        for resolved in ra.results:
            journal = journal_for(project, rec, resolved)
            if journal is None or journal.path in seen:
                continue
            seen.add(journal.path)
            for event in journal.events:
                # Cut to the minute, never rounded: 07:41:59 happened at 07:41, not 07:42.
                minute = event.at.strftime("%H:%M") if event.at is not None else ""
                out.append(
                    RunEvent(
                        when=f"{event.day} {minute} UTC" if minute else event.day,
                        day=event.day,
                        time=event.at.strftime("%H:%M:%S.%f") if event.at is not None else "",
                        number=f"{rec.number:02d}",
                        title=rec.record.title,
                        link=record_link(project, rec, docs_root(project)),
                        what=_WHAT.get(event.kind, event.kind),
                        detail=_detail(journal, event),
                    )
                )
    return out
