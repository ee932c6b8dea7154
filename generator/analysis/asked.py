"""What `check` asks of the analysis: only the records its rules read, and the warnings read there.

`check`'s warnings from the analysis (`verdicts`, `design_warnings`, `figures`) read a
record's analysis only when the record can give them something: analysing every record
compares every result, which was most of `check`'s time on a large campaign whose records are
single shots. A record is analysed when any of these holds (`asks`), found from the record and
its numbers as matched (`project.matching`), never from a comparison:

- prose quotes it by a name it bears (`figures`: the quote reads its results' comparisons);
- it says what decided it (`decided_by`: the decider warning reads that comparison);
- a value of its results, or of their baselines, holds repetitions (a list of two or more, or
  summary statistics): only then can a comparison decide (`better`, `worse`, `no-change`; a
  single shot is `unreplicated`, which contradicts no status and holds or breaks no guardrail
  on its own), can repetitions spread, or can a design (blocks, trends, launches) be read;
- it is adopted and a result gives a change as reported (a reported change beyond a guardrail's
  margin breaks it without any comparison);
- a result's baseline was skipped (`SKIPPED`: the comparison-not-made warning);
- the campaign sets an SLO and the record has two results or more (a load sweep, whose
  capacity may be read on too coarse a grid).

Everything else about a record is read from its file by the rules themselves (`remove_flags`).
The warnings are the same, in the same order, as the rules give on the whole analysis
(`tests/test_check_asked.py`); a quote naming a record left out raises rather than read as
naming nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from generator.analysis.design_warnings import design_problems
from generator.analysis.figures import reference_problems
from generator.analysis.quoting import Quote, file_quotes, record_names, template_quotes
from generator.analysis.verdicts import (
    SKIPPED,
    decider_problems,
    evidence_problems,
    removed_flag_problems,
    status_problems,
)
from generator.base.problems import Problem
from generator.model import variants
from generator.model.result import Statistics
from generator.project.load import Loaded, Project, RecordFile
from generator.project.matching import result_numbers

if TYPE_CHECKING:
    # The analysis' own modules are imported where a record is analysed: a campaign of single
    # shots has `check` analyse nothing, and importing them was a tenth of its time.
    from generator.analysis.records import Analysed, RecordAnalysis, ResolvedResult


class NotAsked(RuntimeError):
    """A rule read a record that `asks` left out of the analysis: `asks` must say it reads it."""


def analysis_warnings(analysis: Analysed) -> list[Problem]:
    """`check`'s warnings read from the analysis, in the order it reports them."""
    return [
        *reference_problems(analysis),
        *status_problems(analysis),
        *decider_problems(analysis),
        *removed_flag_problems(analysis),
        *evidence_problems(analysis),
        *design_problems(analysis),
    ]


def asks(project: Project, rec: RecordFile, quoted: frozenset[str]) -> bool:
    """Whether a rule of `check` may read this record's analysis (see the module's list).

    `quoted`: the names every quote of the campaign starts with (`record.result.metric.field`).
    """
    record = rec.record
    if record.decided_by is not None or any(name in quoted for name in record_names(rec)):
        return True
    every = variants.all_results(record)
    if project.campaign.slo and len(every) >= 2:
        return True
    adopted = record.status == "adopted"
    for result in every:
        found = result_numbers(project, result, rec)
        if adopted and found.result.reported_change:
            return True
        if any(note.startswith(SKIPPED) for note in found.notes):
            return True
        if any(_repeated(v) for v in found.metrics.values()) or any(_repeated(v) for v in found.baseline.values()):
            return True
    return False


def _repeated(value: object) -> bool:
    """A value of repetitions: a list of two or more, or summary statistics (of n runs)."""
    return isinstance(value, Statistics) or (isinstance(value, list) and len(value) >= 2)


def analyse_asked(project: Project) -> Asked:
    """The analysis of the records `asks` names, and nothing else."""
    files: list[Loaded] = [project.campaign_file, *project.records]
    quotes = {loaded.path: file_quotes(loaded) for loaded in files}
    quoted = frozenset(inside.split(".", 1)[0].strip() for found in quotes.values() for _at, _as, inside in found)
    # What an override template quotes in its own text is checked too (`figures.reference_problems`).
    quoted |= {quote.inside.split(".", 1)[0].strip() for quote in template_quotes(project.root)}
    wanted = [rec for rec in project.records if asks(project, rec, quoted)]
    analysed: tuple[RecordAnalysis, ...] = ()
    if wanted:
        from generator.analysis.campaign import record_analysis, rule
        from generator.analysis.records import blocker_index

        decision, shared = rule(project), blocker_index(project).shared
        analysed = tuple(record_analysis(project, rec, shared, decision, None) for rec in wanted)
    kept = {rec.path for rec in wanted}
    skipped = frozenset(name for rec in project.records if rec.path not in kept for name in record_names(rec))
    return Asked(project, analysed, skipped, {a.file.path: a for a in analysed}, quotes)


@dataclass(frozen=True)
class Asked:
    """The analysis of some of a project's records (`Analysed`): what `check`'s rules read."""

    project: Project
    # In series order, like `project.records`.
    records: tuple[RecordAnalysis, ...]
    # The names of the records left out (`record_names`): a quote naming one raises `NotAsked`.
    skipped: frozenset[str]
    _by_path: Mapping[Path, RecordAnalysis] = field(default_factory=dict, repr=False)
    # Every file's quotes, by path (`quoting.quotes_in`), read once for `asks` and the quotes' rule.
    _quotes: Mapping[Path, tuple[Quote, ...]] = field(default_factory=dict, repr=False)

    def by_path(self, path: Path) -> RecordAnalysis | None:
        return self._by_path.get(path)

    def quotes_of(self, loaded: Loaded) -> tuple[Quote, ...]:
        found = self._quotes.get(loaded.path)
        return found if found is not None else file_quotes(loaded)

    @cached_property
    def by_name(self) -> Mapping[str, tuple[RecordAnalysis, ...]]:
        from generator.analysis.records import index_by_name

        return _Named(index_by_name(self.records), self.skipped)

    @cached_property
    def baseline_results(self) -> tuple[ResolvedResult, ...]:
        """The campaign baseline's own results, resolved when a quote names `baseline`."""
        from generator.analysis.campaign import resolve, rule

        decision = rule(self.project)
        return tuple(resolve(self.project, r, None, decision) for r in self.project.campaign.baseline.results)


class _Named(Mapping[str, "tuple[RecordAnalysis, ...]"]):
    """The analysed records by name; a name of a record left out raises instead of naming nothing."""

    def __init__(self, found: dict[str, tuple[RecordAnalysis, ...]], skipped: frozenset[str]) -> None:
        self._found, self._skipped = found, skipped

    def __getitem__(self, name: str) -> tuple[RecordAnalysis, ...]:
        if name in self._skipped:
            raise NotAsked(f"a rule read record `{name}`, which `asks` left out of the analysis")
        return self._found[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._found)

    def __len__(self) -> int:
        return len(self._found)
