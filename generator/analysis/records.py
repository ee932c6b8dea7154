"""What the analysis holds for one result and one record: frozen data, no prose.

Its own module so that `analysis.campaign` (which builds these) and `analysis.road` (which
reads them) both import it and neither imports the other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Literal, Protocol

from generator.analysis.design import Design
from generator.analysis.noise_model import Noise
from generator.analysis.quoting import Quote, record_names
from generator.analysis.ranking import Multiplicity
from generator.analysis.stats import Comparison
from generator.analysis.sweeps import Sweep
from generator.model.quantity import Stat, Value, stat
from generator.model.record import Blocker
from generator.model.result import Result
from generator.project.load import Loaded, Project, RecordFile


@dataclass(frozen=True)
class ResolvedResult:
    """A result's numbers as shown: its metrics, their baseline, each metric's delta, and notes."""

    # The result, with the load and workload its imported run recorded.
    result: Result
    metrics: Mapping[str, Value]
    baseline: Mapping[str, Value]
    # Said next to the delta: where the baseline came from, what limits the comparison.
    notes: tuple[str, ...]
    no_baseline: bool
    # Per metric, in the order of `metrics`; None where the metric cannot be compared.
    comparisons: Mapping[str, Comparison | None]
    # Per metric: (the record's samples, the baseline's), as the strip charts and the CSV show them.
    samples: Mapping[str, tuple[tuple[float, ...], tuple[float, ...]]]
    # Why this result is not compared at all (another model, backend or workload than its baseline's).
    not_compared: str | None = None
    # How its two sides were run, as far as known: blocks, trends, launches (analysis.design).
    design: Design = field(default_factory=Design)
    # Where the spread of its launches comes from, when its runs name their launches (analysis.noise_model).
    noise: Noise | None = None

    # Each metric's mean, spread and range (`quantity.stat`), as the charts draw it: summarised
    # here, once, so that a view reads numbers and never computes them.
    @cached_property
    def summaries(self) -> Mapping[str, Stat]:
        return {name: stat(value) for name, value in self.metrics.items()}

    @cached_property
    def baseline_summaries(self) -> Mapping[str, Stat]:
        return {name: stat(value) for name, value in self.baseline.items()}

    # Per metric: the means of (the record's samples, the baseline's), as the strip charts mark them.
    @cached_property
    def sample_means(self) -> Mapping[str, tuple[float, float]]:
        return {
            name: (sum(mine) / len(mine), sum(theirs) / len(theirs))
            for name, (mine, theirs) in self.samples.items()
            if mine and theirs
        }


@dataclass(frozen=True)
class Guardrail:
    """One guardrail of a win: the metric must not get worse by more than `margin` percent."""

    metric: str
    margin: float
    change_percent: float | None
    ci_low_percent: float | None  # the 1 - 2 alpha interval, raw sign (what non-inferiority reads)
    ci_high_percent: float | None
    # True: held (shown not worse beyond the margin); False: broken (shown worse beyond it); None:
    # neither shown, or not measured here (`state` says which).
    held: bool | None
    # The result it was read on (None: no result of the record measures it), and whether the
    # reading is a change the source reported (face value: it can break a guardrail, never hold it).
    result: str | None = None
    reported: bool = False
    # "held", "broken", "not shown" or "not measured" (`stats.guardrail_state`).
    state: str = "not measured"
    # Not shown: the smallest change (raw sign, percent) this spread could have shown as broken
    # (`ranking.smallest_breach`); None for a single shot or a reported change.
    smallest_breach: float | None = None


@dataclass(frozen=True)
class Regression:
    """A measured metric of a record's compared results that got worse beyond min_effect, its
    interval clear of it: named wherever the record is summarised, beside its headline."""

    metric: str
    label: str  # the result's label
    concurrency: int | None
    change_percent: float  # raw sign, as every change is kept
    ci_low_percent: float
    ci_high_percent: float


@dataclass(frozen=True)
class Primary:
    """A record's evidence on its primary metric: the one comparison that ranks it."""

    metric: str
    # The result it comes from: its index in the record's headline results, its label and load.
    index: int
    label: str
    concurrency: int | None
    comparison: Comparison
    # "metric": a result's comparison; "capacity": a load sweep's capacity under the SLO.
    kind: Literal["metric", "capacity"] = "metric"
    # Why this comparison was chosen, in words ("at the goal's load, concurrency 64").
    chosen: str = "the first result"
    guardrails: tuple[Guardrail, ...] = ()
    # Best of k: the record retained one of k candidate variants; the Holm-adjusted p across them.
    best_of: int | None = None
    holm_p: float | None = None
    # Of those k, how many had a p-value (the others enter Holm's correction as p = 1).
    best_of_tested: int | None = None
    # The record's own `expected.concurrency` when the ranking reads another load (the goal's):
    # (its result's label, the concurrency, its comparison), shown beside the primary.
    expected_load: tuple[str, int, Comparison] | None = None

    @property
    def guardrail_broken(self) -> bool:
        return any(g.held is False for g in self.guardrails)

    @property
    def broken_guardrails(self) -> tuple[Guardrail, ...]:
        return tuple(g for g in self.guardrails if g.held is False)

    @property
    def unshown_guardrails(self) -> tuple[Guardrail, ...]:
        """Guardrails measured but neither held nor broken: said beside the decision, never ranked."""
        return tuple(g for g in self.guardrails if g.state == "not shown")


@dataclass(frozen=True)
class Decider:
    """The metric a record says decided it (`decided_by`), with the numbers it is read from."""

    metric: str
    result: str
    variant: str | None
    # The computed comparison, else the change as the source reported it (percent, raw sign).
    comparison: Comparison | None
    reported_change: float | tuple[float, float] | None
    # The change the record states, and whether the numbers bear it out (None: nothing to check).
    stated: float | None
    agrees: bool | None
    note: str | None = None
    # The variant whose own `decided_by` this is (None: the record's), and where it is written.
    owner: str | None = None
    at: tuple[str | int, ...] = ("decided_by",)


Verdict = Literal["met", "missed", "undecided"]


@dataclass(frozen=True)
class ExpectationCheck:
    """One expectation read on one result."""

    kind: Literal["gain", "gain_absolute", "threshold"]
    metric: str
    result: str
    # The expected bar: gains oriented so that + is better (low, high); a threshold's bounds.
    low: float | None
    high: float | None
    # What was seen: the point (gain oriented, or the metric's mean) and its interval, if any.
    point: float
    interval: tuple[float, float] | None
    verdict: Verdict
    # No interval: the verdict reads the point alone.
    face_value: bool


@dataclass(frozen=True)
class VariantDecision:
    """One candidate variant's comparison on the primary metric, for a record that retained none."""

    variant: str
    result: str
    comparison: Comparison


@dataclass(frozen=True)
class SharedBlocker:
    """A blocker with an `id`, where it is defined: the record and its index there."""

    record: RecordFile
    index: int
    blocker: Blocker


@dataclass(frozen=True)
class BlockerIndex:
    """Lookups across records, so pages render in linear time."""

    # Blocker id -> its definition (the first, when `check` found a duplicate).
    shared: Mapping[str, SharedBlocker]
    # Blocker id -> every (record, entry) whose blocker points at it with `ref`, in series order.
    refs: Mapping[str, tuple[tuple[RecordFile, Blocker], ...]]
    # Slug -> the records whose `superseded_by` names it.
    superseding: Mapping[str, tuple[RecordFile, ...]]


@dataclass(frozen=True)
class Launch:
    """A record's launch command as its page prints it: what it builds on applied first."""

    tokens: tuple[str, ...]
    env: Mapping[str, str]
    # The records it builds on, transitively, in stack order (empty when it builds on none).
    chain: tuple[RecordFile, ...] = ()
    # Host commands run before the launch (`before:`), of what it builds on first, as written,
    # each with the label of the step that lists it (as `Stack.before`).
    before: tuple[tuple[str, str], ...] = ()
    # Commands run inside the container (`inside:`), likewise; the image in force when a change
    # names its own (None: the campaign engine's).
    inside: tuple[tuple[str, str], ...] = ()
    image: str | None = None
    # How the container starts (`Change.container`, `launch.container_lines`), likewise.
    container: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class RecordAnalysis:
    file: RecordFile
    results: tuple[ResolvedResult, ...]
    # Shared ones resolved to their definitions, each once.
    open_blockers: tuple[Blocker, ...]
    # The record's own `expected.metric`, else the campaign's `decision.primary_metric`.
    primary_metric: str | None
    primary: Primary | None
    # No measured primary evidence, but evidence as the source reported it (never compared).
    reported: bool
    # Its load sweeps, with capacity under the campaign's SLO and the frontier (generator.analysis.sweeps).
    sweeps: tuple[Sweep, ...] = ()
    # Each variant's results, in the order of the record's `variants`.
    variant_results: tuple[tuple[ResolvedResult, ...], ...] = ()
    # The results its rank and the road read: the retained variant's when it has variants.
    headline: tuple[ResolvedResult, ...] = ()
    launch: Launch | None = None
    # The ranking group within the tier (`stats.GROUPS`, "reported" or "not measured").
    group: str = "not measured"
    # No variant retained: each candidate's decision on the primary metric (never ranked).
    variant_decisions: tuple[VariantDecision, ...] = ()
    # Every `decided_by` (the record's own, then its variants'), read on their numbers.
    deciders: tuple[Decider, ...] = ()
    # Each variant's guardrails, read on its own results (in the order of `variants`).
    variant_guardrails: tuple[tuple[Guardrail, ...], ...] = ()
    # Its `expected` gain and thresholds read on its results (`analysis.expect`).
    expectations: tuple[ExpectationCheck, ...] = ()
    # Regressions beyond min_effect among its headline results' other comparisons (issue #36).
    regressions: tuple[Regression, ...] = ()
    # Without a primary comparison: "no baseline" when the primary metric was measured but has
    # nothing to compare with, else None (not measured).
    unranked_why: str | None = None
    # Without a primary comparison: what was compared instead (metric, result label, comparison),
    # the first comparison of its headline results, so a measured record never reads "not measured".
    measured_instead: tuple[str, str, Comparison] | None = None
    # The figures its prose quotes (`analysis.quoting`): noted here so that the pages and `check`
    # do not walk every record's data again.
    quotes: tuple[Quote, ...] = ()
    # How many metrics one of its results decides at once, stated on its page (`ranking.multiplicity`).
    multiplicity: Multiplicity | None = None

    @property
    def decider(self) -> Decider | None:
        """The record's own first `decided_by`, read on its numbers; None without one."""
        return next((d for d in self.deciders if d.owner is None), None)

    def placed_results(self) -> list[tuple[tuple[str | int, ...], ResolvedResult]]:
        """Every resolved result with its place in the record file (its own, then its variants'),
        for the warnings that `check` reports at a result."""
        placed: list[tuple[tuple[str | int, ...], ResolvedResult]] = [
            (("results", i), r) for i, r in enumerate(self.results)
        ]
        placed += [
            (("variants", k, "results", i), r) for k, rs in enumerate(self.variant_results) for i, r in enumerate(rs)
        ]
        return placed


def open_blockers(rec: RecordFile, shared: Mapping[str, SharedBlocker]) -> tuple[Blocker, ...]:
    """The record's open blockers, a shared one resolved to its definition and counted once."""
    out: list[Blocker] = []
    seen: set[int] = set()
    for b in rec.record.blockers:
        definition = shared[b.ref].blocker if b.ref and b.ref in shared else b
        if definition.status == "open" and id(definition) not in seen:
            seen.add(id(definition))
            out.append(definition)
    return tuple(out)


def blocker_index(project: Project) -> BlockerIndex:
    """The shared blockers by id, the references to each, and the records superseding each slug."""
    shared: dict[str, SharedBlocker] = {}
    refs: dict[str, list[tuple[RecordFile, Blocker]]] = {}
    superseding: dict[str, list[RecordFile]] = {}
    for rec in project.records:
        for j, b in enumerate(rec.record.blockers):
            if b.id and b.id not in shared:
                shared[b.id] = SharedBlocker(rec, j, b)
            if b.ref:
                refs.setdefault(b.ref, []).append((rec, b))
        if rec.record.superseded_by:
            superseding.setdefault(rec.record.superseded_by, []).append(rec)
    return BlockerIndex(
        shared,
        {k: tuple(v) for k, v in refs.items()},
        {k: tuple(v) for k, v in superseding.items()},
    )


class Analysed(Protocol):
    """What the rules `check` reads from the analysis, and quoted figures, read of it: the whole
    `campaign.Analysis` of a build, or `asked.Asked`, the analysis of only the records they read."""

    @property
    def project(self) -> Project: ...

    # The records analysed, in series order.
    @property
    def records(self) -> tuple[RecordAnalysis, ...]: ...

    @property
    def baseline_results(self) -> tuple[ResolvedResult, ...]: ...

    @property
    def by_name(self) -> Mapping[str, tuple[RecordAnalysis, ...]]: ...

    def by_path(self, path: Path) -> RecordAnalysis | None: ...

    # The figures a file's prose quotes (`quoting.quotes_in`), noted once.
    def quotes_of(self, loaded: Loaded) -> tuple[Quote, ...]: ...


def index_by_name(records: tuple[RecordAnalysis, ...]) -> dict[str, tuple[RecordAnalysis, ...]]:
    """The records by each of their names (`record_names`), in series order."""
    out: dict[str, list[RecordAnalysis]] = {}
    for a in records:
        for name in record_names(a.file):
            out.setdefault(name, []).append(a)
    return {k: tuple(v) for k, v in out.items()}
