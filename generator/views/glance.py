"""What a reader sees first: a record page's header, the home page's first screen, the timeline.

Read from the analysis and the records only: every change, interval and level here is one the
analysis computed; this module picks which to show and words it.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass, field

from generator.analysis.campaign import Analysis, Primary, RecordAnalysis, Regression
from generator.model import metrics, variants
from generator.model.campaign import Goal
from generator.model.launch import assignment, words
from generator.model.quantity import fmt_number, fmt_percent, unreplicated_text
from generator.model.record import Change
from generator.project.load import Project, RecordFile
from generator.views.notes import guardrails_text, one_decider_text, own_load_text, regressions_text, unranked_text
from generator.views.paths import Figures, docs_root, record_link
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
    # Why an unreplicated comparison gives no direction ("3 vs 3 runs, no spread published").
    why: str | None = None
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
        if self.why:
            parts.append(self.why)
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
        # Said only for means without spread: a single shot's n already says what it is.
        why=unreplicated_text(c.n, c.baseline_n, c.spread_unknown).removeprefix("unreplicated (").removesuffix(")")
        if c.decision == "unreplicated" and c.spread_unknown and max(c.n, c.baseline_n) >= 2
        else None,
        regressions=regressions_text(found, vocabulary),
        guardrails=guardrails_text(primary),
        correction=correction,
        own_load=own_load_text(primary),
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
    # Through the one quoting (`launch.words`): a mapping's value with a space is one word.
    out = [words(f.tokens()) for f in change.flags]
    out += [f"without {flag}" for flag in change.remove_flags]
    out += [assignment(k, v) for k, v in change.env.items()]
    return out


@dataclass(frozen=True)
class VariantCell:
    """A variant's decision in the header of a record that retained none."""

    variant: str
    word: str
    change: str


@dataclass(frozen=True)
class RecordHeader:
    """The header table of a record page (`record_header`)."""

    decision: Decision | None
    primary_metric: str | None
    primary_label: str | None
    variant_decisions: list[VariantCell]
    unranked: str | None
    reported: bool
    decider: str | None
    expectations: list[str]
    standing: str | None
    diff: list[str]
    # What the diff is against: "the baseline", "the stack of 03, 05", "its own base command".
    diff_base: str
    command_missing: bool
    patches: int
    open_blockers: int
    date: str | None
    capacity: str | None


def record_header(analysis: Analysis, rec: RecordFile) -> RecordHeader:
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
    return RecordHeader(
        decision=decision(ra.primary, project.campaign.vocabulary(), ra.regressions),
        primary_metric=ra.primary_metric,
        primary_label=_label(project.campaign.vocabulary(), ra.primary_metric),
        variant_decisions=[
            VariantCell(
                variant=v.variant,
                word=v.comparison.decision,
                change=fmt_percent(v.comparison.change_percent) if v.comparison.change_percent is not None else "",
            )
            for v in ra.variant_decisions
        ],
        unranked=unranked_text(ra) if ra.primary is None else None,
        reported=ra.reported,
        decider=decider_text(ra, project.campaign.vocabulary()),
        expectations=expectation_lines(ra, project.campaign.vocabulary()),
        standing=standing_text(r.status, r.standing, r.standing_note) if r.standing or r.standing_note else None,
        diff=change_diff(change),
        diff_base=relative_to,
        command_missing=bool(change is not None and change.command == "not-recorded"),
        patches=len(change.patches) if change is not None else 0,
        open_blockers=len(ra.open_blockers),
        date=record_date(project, rec),
        capacity=f"{capacity_cell(ra.sweeps)} (SLO {slo_text(project)})"
        if ra.sweeps and project.campaign.slo
        else None,
    )


def decider_text(ra: RecordAnalysis, vocabulary: metrics.Vocabulary) -> str | None:
    """The metric (or metrics) the record says decided it, as its numbers give them: "TTFT (P99)
    in result `124K`: +37.6% (interval ...), worse; stated +38%"; several joined by "; and "."""
    own = [d for d in ra.deciders if d.owner is None]
    return "; and ".join(one_decider_text(d, vocabulary) for d in own) or None


_KIND = {"gain": "expected gain", "gain_absolute": "expected gain in the metric's unit", "threshold": "threshold"}


def expectation_lines(ra: RecordAnalysis, vocabulary: metrics.Vocabulary) -> list[str]:
    """Each expectation read on a result, in words: what was expected, what was seen, and the verdict."""
    out = []
    for e in ra.expectations:
        metric = vocabulary.lookup(e.metric)
        unit = "%" if e.kind == "gain" else f" {metric.unit}" if metric else ""
        if e.kind == "threshold":
            bars = [f"at least {fmt_number(e.low)}" if e.low is not None else ""]
            bars += [f"at most {fmt_number(e.high)}" if e.high is not None else ""]
            bar = " and ".join(b for b in bars if b)
            seen = f"mean {fmt_number(e.point)}"
        else:
            low, high = e.low if e.low is not None else 0.0, e.high if e.high is not None else 0.0
            bar = f"{low:+g}{unit}" if low == high else f"{low:+g} to {high:+g}{unit}"
            sign = "+" if e.point > 0 else ""
            seen = (
                fmt_percent(e.point) if e.kind == "gain" else f"{sign}{fmt_number(e.point)}{unit}"
            ) + " (+ = better)"
        if e.interval is not None:
            ends = [fmt_percent(x) if e.kind == "gain" else fmt_number(x) for x in e.interval]
            seen += f", interval {ends[0]} to {ends[1]}"
        verdict = e.verdict + (" at face value (no interval)" if e.face_value else "")
        label = metric.label if metric else e.metric
        out.append(f"{_KIND[e.kind]}, {label} {bar}, in result {e.result}: {seen}: {verdict}")
    return out


def standing_text(status: str, standing: str | None, note: str | None) -> str:
    """The status with its standing: "adopted, recommended (kept for the Dev branch)"."""
    words = {
        "recommended": "recommended",
        "latest": "latest, not the recommended",
        "undecided": "measured, undecided",
        "historical": "historical, since overtaken",
    }
    text = status if standing is None else f"{status}, {words[standing]}"
    return f"{text} ({note})" if note else text


def _label(vocabulary: metrics.Vocabulary, name: str | None) -> str | None:
    metric = vocabulary.lookup(name) if name is not None else None
    return metric.label if metric is not None else name


# --- the home page's first screen ---------------------------------------------------------------


def _link(analysis: Analysis, rec: RecordFile) -> str:
    project = analysis.project
    return record_link(project, rec, docs_root(project))


@dataclass(frozen=True)
class Entry:
    """A record in a list of the home page's first screen or the timeline; on the timeline a
    piece of its own (`_timeline_row.md.j2`, or `_timeline_undated.md.j2`)."""

    number: str
    title: str
    status: str
    tier: int
    # The tier is the records' own placement, not their sources': marked wherever it is shown.
    own_tier: bool
    date: str | None
    link: str
    decision: Decision | None
    # Its quoted figures, filled by `page_keys.keyed` when it is a piece of the timeline.
    figures: Figures = ()


@dataclass(frozen=True)
class StandingEntry(Entry):
    """A record with a standing (recommended, latest, measured but undecided), and its note."""

    standing: str | None = None
    note: str | None = None


def entry(analysis: Analysis, ra: RecordAnalysis) -> Entry:
    rec = ra.file
    return Entry(
        number=f"{rec.number:02d}",
        title=rec.record.title,
        status=rec.record.status,
        tier=rec.record.tier,
        own_tier=rec.record.tier_source == "own",
        date=record_date(analysis.project, rec),
        link=_link(analysis, rec),
        decision=decision(ra.primary, analysis.project.campaign.vocabulary(), ra.regressions),
    )


def standings(analysis: Analysis) -> list[StandingEntry]:
    """The records with a standing (recommended, latest, measured but undecided), in series order."""
    return [
        StandingEntry(**vars(entry(analysis, ra)), standing=ra.file.record.standing, note=ra.file.record.standing_note)
        for ra in analysis.records
        if ra.file.record.standing is not None
    ]


def status_counts(analysis: Analysis) -> list[tuple[str, int]]:
    found: Counter[str] = Counter(rec.record.status for rec in analysis.project.records)
    shown = [(s, found.pop(s, 0)) for s in COUNTED]
    return shown + sorted(found.items())


def next_ideas(analysis: Analysis, limit: int = 5) -> list[Entry]:
    """The proposed records in the analysis' ranked order: what to try next, tier by tier."""
    out = [entry(analysis, ra) for ra in analysis.ranked if ra.file.record.status == "proposed"]
    return out[:limit]


def latest(analysis: Analysis, limit: int = 5) -> list[Entry]:
    """The dated records, newest first (ties by number, so the order is stable)."""
    return [entry(analysis, ra) for ra in newest_first(analysis)[:limit]]


def newest_first(analysis: Analysis) -> list[RecordAnalysis]:
    """The records that give a date (`date:`), newest first, ties by number."""
    dated = [ra for ra in analysis.records if ra.file.record.date is not None]
    dated.sort(key=lambda ra: (-_ordinal(ra.file.record.date), ra.file.number))
    return dated


def _ordinal(day: dt.date | None) -> int:
    return day.toordinal() if day is not None else 0


@dataclass(frozen=True)
class GoalRow:
    """A goal on the home page's first screen, with its one current level and the distance to it."""

    goal: Goal
    label: str
    unit: str
    direction: str
    target: str
    concurrency: str
    current: str | None
    # Where the current level comes from, in words.
    source: str | None
    to_go: str | None
    reached: bool | None


def goal_rows(analysis: Analysis) -> list[GoalRow]:
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
            GoalRow(
                goal=g,
                label=metric.label if metric else g.metric,
                unit=unit,
                direction=status.direction,
                target=fmt_number(g.target),
                concurrency=str(g.concurrency) if g.concurrency is not None else "not recorded",
                current=current,
                source=status.current_from,
                to_go=distance_text(distance, unit) if distance is not None else None,
                reached=status.reached,
            )
        )
    return out


@dataclass(frozen=True)
class Glance:
    """The home page's first screen (`home_glance`)."""

    goals: list[GoalRow]
    # The launch command in force, as `stack` prints it; None while adopted records form a circle.
    command: str | None
    adopted: list[str]
    not_in_command: list[str]
    caveats: list[str]
    # No record has a measured primary comparison: the page says so, and where to see one.
    no_measured: bool
    counts: list[tuple[str, int]]
    standings: list[StandingEntry]
    next: list[Entry]
    latest: list[Entry]
    # Every record with a primary comparison, in series order: its decision in the first screen.
    decisions: list[Entry] = field(default_factory=list)


def home_glance(analysis: Analysis) -> Glance:
    """The home page's first screen: goals, the command in force, counts, what is next and new."""
    from generator.views.road import command_caveats

    stack = analysis.stack
    command = stack.stack.script() if stack.stack is not None else None
    return Glance(
        goals=goal_rows(analysis),
        command=command,
        adopted=[f"{r.number:02d}" for r in stack.records],
        not_in_command=[f"{label}: {note}" for label, note in stack.notes],
        caveats=command_caveats(analysis),
        no_measured=bool(analysis.records) and all(ra.primary is None for ra in analysis.records),
        counts=status_counts(analysis),
        standings=standings(analysis),
        next=next_ideas(analysis),
        latest=latest(analysis),
        decisions=[entry(analysis, ra) for ra in analysis.records if ra.primary is not None],
    )
