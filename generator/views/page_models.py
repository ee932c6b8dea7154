"""What each page shows, as typed values: one frozen dataclass per page, built from the analysis.

The templates read a page's model and nothing else (its fields are the template's variables,
named as they always were, so a campaign's override templates keep working), and a page's text
is a function of its model, the templates and the code. So a record page's cache key is the
digest of its model (`views.page_keys`), never a list of what the page depends on kept by hand: whatever
the page shows is in the model, and whatever is in the model is in the key. A build takes the
key without building the model while what the model read is unchanged (`views.page_reuse`).
The pages that list the records are made of one piece per record (a summary row, a timeline
entry, a blocker), each with a model of its own keyed the same way (`output.listing`).

Quoted figures (`{{ 01.c64.output_throughput.change }}` in prose) are filled by the templates'
prose filters from the analysis; every reference in any text of the model is looked up when the
model is built and its filled text is kept in `figures`, so the key covers those numbers too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from generator.analysis.stats import Comparison
from generator.model.campaign import Campaign
from generator.model.record import Attempt, Blocker, Change, Record, Setup
from generator.model.reported import ReportedMetric
from generator.model.result import Result
from generator.views.evidence import Evidence
from generator.views.frontier import FrontierView
from generator.views.glance import Decision, Entry, Glance, RecordHeader
from generator.views.journal import ExperimentView, RunEvent
from generator.views.paths import ChartLink, Figures
from generator.views.road import RoadView, StackMark
from generator.views.sweeps import SweepView
from generator.views.variants import VariantTable


@dataclass(frozen=True)
class PageLink:
    """A link to another record's page, with the title it is shown by."""

    slug: str
    title: str
    link: str


@dataclass(frozen=True)
class VariantResult:
    variant: str
    view: ResultView


@dataclass(frozen=True)
class MetricRow:
    name: str
    label: str
    unit: str
    higher_is_better: bool
    value: str
    baseline: str | None
    comparison: Comparison | None
    # The comparison as the table shows it; None when not compared.
    change: str | None
    interval: str | None
    n: str | None
    test: str | None
    decision: str | None
    # The decision's word alone (`better`, `no-change`, ...), for the column that leads the row.
    word: str | None
    # For an inconclusive comparison: how many repetitions per side would settle it.
    would_take: str | None
    # Ten repetitions or fewer: the values themselves (and a flagged spread).
    listed: str | None = None
    # The arithmetic means' change, where it differs as printed from the point (labelled on the page).
    arithmetic: str | None = None


@dataclass(frozen=True)
class ResultView:
    result: Result
    rows: list[MetricRow]
    notes: list[str]
    no_baseline: bool
    concurrency: str
    request_rate: str | None
    # Evidence as the source reported it, labelled from the metric vocabulary; never compared.
    reported: list[ReportedMetric] = field(default_factory=list)
    reported_changes: list[ReportedMetric] = field(default_factory=list)
    # The result's strip chart (path relative to the page, alt text), when it has one.
    strip: ChartLink | None = None
    # How its runs were made (views.design): start times, blocks, trends, launches; markdown.
    design: list[str] = field(default_factory=list)
    # Where its launches' spread comes from (views.noise): the table's lines and the list below it.
    noise_table: list[str] = field(default_factory=list)
    noise: list[str] = field(default_factory=list)


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class RecordPage:
    """A series page (`record.md.j2`), built by `views.record_page.record_page`."""

    campaign: Campaign
    record: Record
    number: str
    slug: str
    page_id: str
    # The record's file, relative to the repository (the page's front matter names it).
    source: str
    tier_text: str
    engine_version: str
    # The steps first, as `stack` prints them (`inside:` ones as comments): the block runs as shown.
    command: str
    image: str | None
    own_base_command: bool
    # With variants, the command is the retained variant's (`variants.effective_change`).
    launch_change: Change | None
    # Its setup, likewise: the retained variant's own, else the record's.
    launch_setup: Setup | None
    variants: VariantTable | None
    sweep_chart: list[ChartLink]
    blockers: list[BlockerView]
    results: list[ResultView]
    variant_results: list[VariantResult]
    evidence: list[Evidence]
    # The primary comparison's result first; with more than two results the others are
    # folded (details), each summary naming its decision on the primary metric.
    result_order: list[int]
    fold_results: bool
    plots: list[ChartLink]
    sweeps: list[SweepView]
    slo: str
    related: list[PageLink]
    superseded_by: PageLink | None
    superseding: list[PageLink]
    builds_on: list[PageLink]
    in_stack: StackMark | None
    header: RecordHeader
    primary_text: str | None
    alpha: str
    confidence: str
    equivalence: str
    min_effect: str
    primary_metric: str
    home_link: str
    summary_link: str
    blockers_link: str
    # Each `{{ ... }}` reference in any text above, with the text the prose filters fill in for
    # it (None where it names nothing); filled in by `keyed`.
    figures: Figures = ()
    # What "how to read" adds for this record: the decisions its results make at once, and why
    # a sequential result has no Holm correction (`record_page.reading_text`).
    reading: list[str] = field(default_factory=list)
    # Each result a runner's plan made: its plan, looks and files (`views.journal`).
    experiments: list[ExperimentView] = field(default_factory=list)
    # Files the record's prose may name that the site publishes (an earlier attempt's log), with
    # their links from the page: the prose names them as links (`markdown.linked`).
    file_links: tuple[tuple[str, str], ...] = ()
    # What the home page says under the command in force that holds for this one too (`road.command_caveats`).
    command_caveats: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Rule:
    """How comparisons are decided, as the pages state it (configuration, not measured)."""

    alpha: str
    confidence: str
    equivalence: str
    min_effect: str
    primary_metric: str


@dataclass(frozen=True)
class MeasuredBaseline:
    """The campaign baseline as a record measured it in its own blocks, for a home page whose
    baseline has no results of its own: where, at what load, and each metric's figures."""

    record: str  # "01 SDPA attention instead of eager"
    link: str
    load: str
    figures: list[str]  # "Output throughput 8749 ± 120 (n=6) tok/s"


@dataclass(frozen=True)
class HomePage:
    """The home page (`home.md.j2`), built by `views.listing_pages.home_page`."""

    campaign: Campaign
    engine_version: str
    command: str
    baseline_results: list[ResultView]
    baseline_evidence: list[Evidence]
    tier_counts: dict[int, int]
    tier_own: dict[int, list[str]]
    record_count: int
    summary_link: str
    blockers_link: str
    road: RoadView | None
    glance: Glance
    timeline_link: str
    frontier: FrontierView | None
    # Without baseline results of its own: the records' measurements of it (`measured_baseline`).
    measured_baseline: list[MeasuredBaseline] = field(default_factory=list)
    # The quoted figures of its text (see `RecordPage.figures`): the home page is one piece,
    # kept whole under the digest of this model (`output.listing`).
    figures: Figures = ()


@dataclass(frozen=True)
class Row:
    """One record's row of the summary (`views.summary`: its COLUMNS say what each field means),
    which every reporter reads: the terminal table, markdown, CSV and JSON, the summary page
    (`SummaryLine`), the report and the export."""

    number: int
    slug: str
    title: str
    tier: int
    status: str
    primary_metric: str | None
    primary_result: str | None
    primary_concurrency: int | None
    primary_change_percent: float | None
    primary_ci_low_percent: float | None
    primary_ci_high_percent: float | None
    primary_n: int | None
    primary_baseline_n: int | None
    primary_decision: str | None
    primary_test: str | None
    primary_spread_unknown: bool | None
    open_blockers: int
    open_blocker_titles: list[str]
    tier_source: str | None
    evidence: str | None
    reported: str | None
    in_stack: bool
    variants: str | None
    variant_reasons: list[str]
    primary_kind: str | None
    broken_guardrails: list[str]
    unshown_guardrails: list[str]
    best_of: int | None
    best_of_tested: int | None
    variant_decisions: str | None
    standing: str | None
    design: list[str]
    holm_p: float | None
    regressions: list[str]
    own_load: str | None
    unranked: str | None
    # Only when the campaign sets an SLO (SLO_COLUMN): each sweep's capacity under it, in words.
    capacity_under_slo: str | None


@dataclass(frozen=True)
class SummaryLine(Row):
    """A record's row of the summary page: its row of `improvements summary` (`Row`), with what
    the page adds."""

    # The page's own: the decision as the header words it, the date (ISO date, whether git
    # gave it), the link to the record's page, and the row's columns in words.
    decision: Decision | None
    date: tuple[str, bool] | None
    link: str
    gain_text: str
    status_text: str
    blockers_text: str
    tier_text: str


@dataclass(frozen=True)
class SummaryRow:
    """A record's row of the summary's table (`_summary_row.md.j2`): every value the row shows.

    Built with the summary's rows (`views.listing_pages.summary_page`); the row's text is kept
    in the build cache under the digest of this model (`output.listing`).
    """

    number: int
    title: str
    link: str
    variants: str | None
    tier: int
    tier_source: str | None
    status: str
    standing: str | None
    in_stack: bool
    decision: Decision | None
    primary_metric: str | None
    primary_decision: str | None
    variant_decisions: str | None
    reported: str | None
    unranked: str | None
    # (ISO date, whether git gave it), or None.
    date: tuple[str, bool] | None
    open_blockers: int
    blockers_text: str
    # The campaign sets an SLO: the table has a capacity column, and this is the row's cell.
    slo: bool
    capacity: str | None
    figures: Figures = ()
    # Why each variant came out as it did ("1/2 rejected: the tested fractions regressed").
    variant_reasons: tuple[str, ...] = ()


@dataclass(frozen=True)
class SummaryPage:
    """The summary (`summary.md.j2`), built by `views.listing_pages.summary_page`."""

    campaign: Campaign
    rows: list[SummaryLine]
    plots: list[ChartLink]
    frontier: FrontierView | None
    own_placement: bool
    ranked_metrics: list[str]
    ranked_loads: list[str]
    alpha: str
    confidence: str
    equivalence: str
    min_effect: str
    primary_metric: str
    # The same rows as pieces of their own, in the same order...
    row_models: list[SummaryRow] = field(default_factory=list)
    # ...and each one's text, as `_summary_row.md.j2` renders it (filled in by `output.listing`).
    row_lines: Sequence[str] = ()


@dataclass(frozen=True)
class Affected:
    """A record a blocker holds up, on the blockers page."""

    title: str
    link: str
    status: str
    attempts: list[Attempt]
    note: str | None


@dataclass(frozen=True)
class BlockerEntry:
    """A blocker on the blockers page: its row of the table (`_blocker_row.md.j2`) and its section
    (`_blocker_section.md.j2`), kept in the build cache under the digest of this model."""

    anchor: str
    blocker: Blocker
    record: str
    record_link: str
    affects: list[Affected]
    figures: Figures = ()


@dataclass(frozen=True)
class BlockersPage:
    """The blockers page (`blockers.md.j2`), built by `views.listing_pages.blockers_page`."""

    campaign: Campaign
    entries: list[BlockerEntry]
    # Each entry's row of the table and its section, rendered (filled in by `output.listing`).
    row_lines: Sequence[str] = ()
    sections: Sequence[str] = ()


@dataclass(frozen=True)
class TimelinePage:
    """The timeline (`timeline.md.j2`), built by `views.listing_pages.timeline_page`."""

    campaign: Campaign
    # A month's records and the timed moments of their runs (`journal.RunEvent`), newest first.
    months: list[tuple[str, list[Entry | RunEvent]]]
    undated: list[Entry]
    summary_link: str
    # Whether any run's journal timed a moment (the page then says how it reads them).
    timed: bool = False
    # Each month's entries and the undated ones, rendered (filled in by `output.listing`).
    month_lines: Sequence[tuple[str, Sequence[str]]] = ()
    undated_lines: Sequence[str] = ()


def context(model: object) -> dict[str, Any]:
    """A page model's fields as a template's variables (`record`, `results`, ...)."""
    return dict(vars(model))
