"""How a comparison was run, for a result `improvements run` made: its plan, its looks, its files.

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
from generator.project.journals import Journal, journal_of, read_journal
from generator.project.load import Project, RecordFile
from generator.views.paths import ChartFile, ChartLink, chart_file, docs_root, relative


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
class ExperimentView:
    """One result's run, as its page shows it (`record.md.j2`, "How it was run")."""

    result: str
    journal: FileLink
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
        if journal is None:
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
            )
        )
    return out


def published_journal_files(analysis: Analysis) -> dict[str, bytes]:
    """The journals the pages link and the files their plans kept (outputs, logs), by their path
    relative to the campaign's root, which the site serves relative to the docs folder. What
    `improvements run` keeps it has already redacted (the runner keeps no secret), as an
    import's raw copy is; a file behind a link is never read (`read_regular`)."""
    from generator.base.fsio import read_regular

    project = analysis.project
    out: dict[str, bytes] = {}
    for ra in analysis.records:
        for resolved in ra.results:
            journal = journal_for(project, ra.file, resolved)
            if journal is None:
                continue
            for path in (journal.path, *journal.outputs, *journal.logs):
                if path not in out and (data := read_regular(project.root, path)) is not None:
                    out[path] = data
    return dict(sorted(out.items()))
