"""Which baseline a result built from an imported run is compared with, and whether they compare.

A run result is matched with the campaign baseline's runs that have the same kind of
benchmark, the same load (configured concurrency or batch size, and request rate) and no
known difference in workload (dataset, input and output length). Several equally good
matches are averaged only when they are repeated measurements of one configuration: the same
settings, including the name the benchmark gave the run (`run_name`, `tag`, `label`). Matches
that are different configurations (a `cuda_graph` and a `no_cuda_graph` run) are never
averaged: the one named like the result's run is chosen, or else the baseline is ambiguous and
the result is shown without one until `baseline_run:` names it. A run with no match is still
shown, marked as having no baseline.

Whether a run and its baseline compare (they differ only in what the record's change
declares) is `generator.project.comparable`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from generator.model import metrics, variants
from generator.model.result import Result, Workload
from generator.project.comparable import (
    KEY_WORDS,
    LOAD_KEYS,
    NAME_KEYS,
    REPEAT_KEYS,
    WORKLOAD_KEYS,
    declared_settings,
    differences,
)
from generator.project.runs.run import BOOKKEEPING, Run

if TYPE_CHECKING:
    from generator.project.load import Project, RecordFile

# --- matching -----------------------------------------------------------------------------------


def baseline_runs(project: Project) -> list[tuple[Result, Run]]:
    """Every imported run of the campaign baseline, each repetition of a result on its own."""
    runs = project.runs
    return [(r, runs[rid]) for r in project.campaign.baseline.results for rid in r.run_ids if rid in runs]


@dataclass
class Match:
    runs: list[Run] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # A typed baseline result at the same concurrency, when no baseline run matches.
    typed: Result | None = None
    # Baseline runs that match equally well but are different configurations: none is chosen.
    ambiguous: list[Run] = field(default_factory=list)


def configuration(run: Run) -> tuple[str, tuple[tuple[str, str], ...]]:
    """What repeats of one configuration share: the benchmark and every setting but the date."""
    return run.kind, tuple(sorted((k, repr(v)) for k, v in run.settings.items() if k not in REPEAT_KEYS))


def _name(run: Run) -> tuple[Any, ...]:
    return tuple(run.settings.get(k) for k in NAME_KEYS)


def name_text(run: Run) -> str:
    """The run's name as the benchmark recorded it: "run_name cuda_graph", or "no name"."""
    parts = [f"{k} {run.settings[k]}" for k in NAME_KEYS if run.settings.get(k) is not None]
    return ", ".join(parts) or "no name"


def _choose(run: Run, best: list[Run]) -> tuple[list[Run], str] | list[Run]:
    """The repeats of one configuration to compare with and why, or the candidates when none is clear."""
    groups: dict[tuple[str, tuple[tuple[str, str], ...]], list[Run]] = {}
    for same in best:
        groups.setdefault(configuration(same), []).append(same)
    if len(groups) == 1:
        return best, "workload and load"
    named = [g for g in groups.values() if _name(g[0]) == _name(run) and any(x is not None for x in _name(run))]
    if len(named) == 1:
        return named[0], f"workload, load and name ({name_text(run)})"
    return best


def match(project: Project, result: Result, run: Run) -> Match:
    """The baseline for `run` (the first of `result`'s repetitions, which share one configuration).

    Over 60 lines: the ways a baseline is found (named runs, the record's `baseline_from`, the
    campaign baseline, a search by settings) are tried in one fixed order, which this keeps in view.
    """
    runs = project.runs
    if result.baseline_run is not None:
        missing = [rid for rid in result.baseline_run_ids if rid not in runs]
        if missing:
            return Match(notes=[f"The baseline run `{missing[0]}` does not exist."])
        named = [runs[rid] for rid in result.baseline_run_ids]
        if len(named) == 1:
            return Match(named, [f"Compared with the baseline run `{named[0].id}`, named explicitly."])
        ids = ", ".join(f"`{b.id}`" for b in named)
        return Match(named, [f"Compared with the mean of {len(named)} baseline runs named explicitly: {ids}."])
    best: list[Run] = []
    best_score = -1
    own = {run.id, *result.run_ids}
    for _res, candidate in baseline_runs(project):
        if candidate.id in own or candidate.kind != run.kind:
            continue
        if any(run.settings.get(k) != candidate.settings.get(k) for k in LOAD_KEYS):
            continue
        score = 0
        compatible = True
        for key in WORKLOAD_KEYS:
            a, b = run.settings.get(key), candidate.settings.get(key)
            if a is not None and b is not None:
                if a != b:
                    compatible = False
                    break
                score += 1
        if not compatible:
            continue
        if score > best_score:
            best, best_score = [candidate], score
        elif score == best_score and candidate.id not in {b.id for b in best}:
            best.append(candidate)
    if best:
        chosen = _choose(run, best)
        if isinstance(chosen, list):
            return Match(notes=[ambiguous_text(chosen)], ambiguous=chosen)
        best, by = chosen
        ids = ", ".join(f"`{b.id}`" for b in best)
        if len(best) == 1:
            note = f"Compared with the baseline run {ids}, matched by {by}."
        else:
            note = f"Compared with the mean of {len(best)} repeated baseline runs with the same {by}: {ids}."
        unknown = [
            KEY_WORDS[k]
            for k in WORKLOAD_KEYS[:3]
            if any((run.settings.get(k) is None) != (b.settings.get(k) is None) for b in best)
        ]
        notes = [note]
        if unknown:
            notes.append(f"Not recorded on one side, so not checked: {', '.join(unknown)}.")
        return Match(best, notes)
    if run.concurrency is not None:
        for typed_result in project.campaign.baseline.results:
            if typed_result.run is None and typed_result.concurrency == run.concurrency and typed_result.metrics:
                return Match(
                    typed=typed_result,
                    notes=[
                        f"Compared with the typed baseline result `{typed_result.label}` at the same concurrency; "
                        "its workload and settings were not recorded, so comparability is not checked."
                    ],
                )
    return Match(notes=["No baseline run has the same workload and load; this run is shown without a baseline."])


def ambiguous_text(candidates: list[Run]) -> str:
    listed = "; ".join(f"`{c.id}` ({name_text(c)})" for c in candidates)
    return (
        f"Ambiguous baseline: {len(candidates)} baseline runs match this run's workload and load but are "
        f"different configurations, so none is compared with: {listed}. "
        "Name the one to compare with in `baseline_run`."
    )


# --- what a result built from a run shows -----------------------------------------------------

_FAMILIES = ("ttft", "tpot", "itl", "e2e_latency")


def _metric_order(name: str) -> tuple[int, int, float, str]:
    fixed = list(metrics._FIXED)
    if name in fixed:
        return (0, fixed.index(name), 0.0, name)
    family, _, stat = name.rpartition("_")
    if family in _FAMILIES:
        rank = {"mean": -2.0, "median": -1.0}.get(stat)
        if rank is None:
            try:
                rank = float(stat[1:])
            except ValueError:
                rank = 1000.0
        return (1, _FAMILIES.index(family), rank, name)
    return (2, 0, 0.0, name)


def shown_metrics(run: Run) -> dict[str, float]:
    """The run's metrics a page compares: not bookkeeping (duration, counts) nor standard deviations."""
    names = [n for n in run.metrics if n not in BOOKKEEPING and not n.endswith("_std")]
    return {n: run.metrics[n] for n in sorted(names, key=_metric_order)}


def as_result(result: Result, run: Run) -> Result:
    """`result` with the load and workload its run recorded, for pages and summaries."""
    s = run.settings
    update: dict[str, Any] = {}
    if result.concurrency is None and run.concurrency is not None and run.concurrency >= 1:
        update["concurrency"] = run.concurrency
    if result.request_rate is None and s.get("request_rate") is not None:
        update["request_rate"] = s["request_rate"]
    if result.workload is None and any(s.get(k) is not None for k in ("dataset", "input_len", "output_len")):
        update["workload"] = Workload(
            dataset=s.get("dataset"),
            input_len=s.get("input_len"),
            output_len=s.get("output_len"),
            num_prompts=s.get("num_prompts") if isinstance(s.get("num_prompts"), int) else None,
        )
    return result.model_copy(update=update) if update else result


def resolve_values(
    project: Project, result: Result, record: RecordFile | None = None, *, with_baseline: bool = True
) -> tuple[Result, dict[str, Any], dict[str, Any], list[str], tuple[Origin, ...]] | None:
    """(result with its run's settings, metrics, baseline metrics, notes, where the baseline's
    repetitions came from) for a run result, or None.

    None when the result names no run; a missing run gives empty numbers and a note (`check`
    reports it as an error). Over 60 lines: the record's runs, then its baseline (from another
    record, a matched run or a typed baseline), then the notes, in the order the page shows
    them; each step reads what the one before found.
    """
    if result.run is None:
        return None
    repeats: list[Run] = []
    for rid in result.run_ids:
        found_run = project.runs.get(rid)
        if found_run is None:
            why = project.broken_runs.get(rid, f"the imported run `{rid}` does not exist under results/runs/")
            return result, {}, {}, [why], ()
        repeats.append(found_run)
    run = repeats[0]
    if record is None:
        record = owner(project, result)
    # Repetitions are samples: a metric of several runs is the list of their values, in order.
    values: dict[str, Any] = {}
    for name, first in shown_metrics(run).items():
        points = [r.metrics[name] for r in repeats if name in r.metrics]
        values[name] = first if len(points) == 1 else points
    notes: list[str] = []
    base_origins: tuple[Origin, ...] = ()
    if len(repeats) > 1:
        notes.append(f"{len(repeats)} repeated runs of one configuration, each one sample.")
    if not with_baseline:
        return as_result(result, run), values, {}, notes, ()
    if result.baseline_from is not None:
        # A step measured on top of another record: that record's result is the baseline, its
        # repetitions in their order (so a paired comparison pairs repetition i with i).
        theirs, note = _baseline_from(project, result, keys=values)
        return as_result(result, run), values, theirs, [*notes, note], _from_origins(project, result)
    found = match(project, result, run)
    notes += found.notes
    base: dict[str, Any] = {}
    if found.runs:
        for name in values:
            points = [b.metrics[name] for b in found.runs if name in b.metrics]
            if points:
                base[name] = points[0] if len(points) == 1 else points
        if record is not None:
            allowed = declared_settings(variants.change_for(record.record, result), project.campaign.baseline.command)
            diffs = sorted({d for r in repeats for b in found.runs for d in differences(r, b, allowed)})
            if diffs:
                notes.append("Not comparable with its baseline beyond the declared change: " + "; ".join(diffs) + ".")
        owner_result = next((r for r, b in baseline_runs(project) if b.id == found.runs[0].id), None)
        base_origins = origins(owner_result, found.runs)
    elif found.typed is not None:
        base = {k: v for k, v in found.typed.metrics.items() if k in values}
        base_origins = typed_origins(found.typed)
    if values and base:
        missing = [k for k in values if k not in base]
        if missing and len(missing) < len(values):
            notes.append(f"No baseline for {', '.join(f'`{k}`' for k in missing)}.")
    for note in (n for r in repeats for n in r.notes):
        if note not in notes:
            notes.append(note)
    return as_result(result, run), values, base, notes, base_origins


def owner(project: Project, result: Result) -> RecordFile | None:
    """The record that holds `result` (None for the campaign baseline's results)."""
    for rec in project.records:
        if any(r is result for r in variants.all_results(rec.record)):
            return rec
    return None


# --- the numbers of any result ------------------------------------------------------------------


@dataclass(frozen=True)
class Numbers:
    """A result's numbers as shown: its metrics, what they compare with, and why."""

    # The result, with the load and workload its imported run recorded.
    result: Result
    metrics: dict[str, Any]
    baseline: dict[str, Any]
    # Said next to the delta: where the baseline came from, what limits the comparison.
    notes: tuple[str, ...] = ()
    no_baseline: bool = False
    # Where each repetition came from (launch, start, file), by position: own side, baseline side.
    origins: tuple[Origin, ...] = ()
    baseline_origins: tuple[Origin, ...] = ()


def result_numbers(project: Project, result: Result, record: RecordFile | None = None) -> Numbers:
    """The numbers of one result and of its baseline.

    A result without its own baseline is compared with the campaign baseline result at the
    same concurrency, when there is one, so the baseline's numbers are written once.
    """
    if result.run is not None:
        # An imported run: its numbers, and the baseline run matched by workload and load.
        resolved = resolve_values(project, result, record)
        assert resolved is not None
        shown, run_values, run_base, run_notes, run_base_origins = resolved
        own = origins(result, [project.runs[rid] for rid in result.run_ids if rid in project.runs])
        return Numbers(shown, run_values, run_base, tuple(run_notes), not run_base, own, run_base_origins)
    values: dict[str, Any] = dict(result.metrics)
    notes: list[str] = []
    base: dict[str, Any] = dict(result.baseline)
    base_origins: tuple[Origin, ...] = ()
    if result.baseline_from is not None:
        base, note = _baseline_from(project, result)
        notes.append(note)
        base_origins = _from_origins(project, result)
    own_setup = record is not None and any(
        v.setup is not None and any(r is result for r in v.results) for v in record.record.variants
    )
    if own_setup and not base:
        # A variant run on a setup of its own (a 2-GPU isolation run) is not the campaign
        # baseline's setup: that baseline is no baseline for it.
        notes.append("No baseline: this variant ran on a setup of its own, not the campaign baseline's.")
    # A result of reported figures alone has nothing to compare: no baseline is looked for (one
    # of another workload was named as "not compared" six times over, issue 51).
    if not base and values and result.concurrency is not None and not own_setup:
        skipped: list[str] = []
        for candidate in project.campaign.baseline.results:
            if candidate.concurrency != result.concurrency:
                continue
            # Same load but another workload measures another thing: never the baseline.
            if _workload_differs(candidate, result):
                skipped.append(candidate.label)
                continue
            shared = {k: v for k, v in candidate.metrics.items() if k in values}
            if shared:
                base = shared
                base_origins = typed_origins(candidate)
                notes.append(f"Compared with the campaign baseline result `{candidate.label}` at the same concurrency.")
                break
        if not base and skipped:
            names = ", ".join(f"`{label}`" for label in skipped)
            notes.append(
                f"Not compared: the campaign baseline result {names} at this concurrency ran another workload."
            )
    if values and base:
        missing = [k for k in values if k not in base]
        if missing:
            notes.append(f"No baseline for {', '.join(f'`{k}`' for k in missing)}.")
    return Numbers(result, values, base, tuple(notes), not base, typed_origins(result), base_origins)


# --- where repetitions came from ------------------------------------------------------------------


@dataclass(frozen=True)
class Origin:
    """Where one repetition came from, as far as known: its launch, its start time (ISO 8601,
    UTC) and the kept file it was read from. The analysis reads them for the design warnings."""

    launch: str | None = None
    started: str | None = None
    file: str | None = None


def _stated_launch(result: Result | None, index: int) -> str | None:
    stated = result.launch if result is not None else None
    if isinstance(stated, str):
        return stated
    return stated[index] if stated is not None and index < len(stated) else None


def origins(result: Result | None, runs: list[Run]) -> tuple[Origin, ...]:
    """Each run's origin: the launch the run names, else the one its result states."""
    out: list[Origin] = []
    for i, run in enumerate(runs):
        stored = run.source.get("file")
        launch = run.launch if run.launch is not None else _stated_launch(result, i)
        out.append(Origin(launch, run.started, stored if isinstance(stored, str) else None))
    return tuple(out)


def typed_origins(result: Result) -> tuple[Origin, ...]:
    """A typed result's repetitions: only the launch(es) it states are known."""
    if result.launch is None:
        return ()
    if isinstance(result.launch, str):
        n = max((len(v) if isinstance(v, list) else 1 for v in result.metrics.values()), default=1)
        return tuple(Origin(result.launch) for _ in range(n))
    return tuple(Origin(name) for name in result.launch)


def _from_origins(project: Project, result: Result) -> tuple[Origin, ...]:
    """The origins of the result `baseline_from` names (empty when it does not exist)."""
    ref = result.baseline_from
    if ref is None:
        return ()
    if ref.record is None:
        found = next((r for r in project.campaign.baseline.results if r.label == ref.result), None)
    else:
        target = project.slug_index.get(ref.record)
        found = variants.find_result(target.record, ref.variant, ref.result) if target else None
    if found is None:
        return ()
    if found.run is None:
        return typed_origins(found)
    return origins(found, [project.runs[rid] for rid in found.run_ids if rid in project.runs])


def _workload_differs(a: Result, b: Result) -> bool:
    """Both record a workload, and dataset, input or output length differ where both give one."""
    if a.workload is None or b.workload is None:
        return False
    pairs = [(a.workload.dataset, b.workload.dataset), (a.workload.input_len, b.workload.input_len)]
    pairs.append((a.workload.output_len, b.workload.output_len))
    return any(x is not None and y is not None and x != y for x, y in pairs)


def _baseline_from(
    project: Project, result: Result, keys: Mapping[str, Any] | None = None
) -> tuple[dict[str, Any], str]:
    """The numbers of the result `baseline_from` names, restricted to this result's metrics, and a note.

    Only the named result's own measurements are needed, never its baseline, so nothing is
    followed further: a chain of any length costs one step per link, and a circle (which
    `check` reports as `build-cycle`) cannot loop.
    """
    ref = result.baseline_from
    assert ref is not None
    if ref.record is None:
        return _campaign_baseline_from(project, result, ref.result, keys)
    target = project.slug_index.get(ref.record)
    found = variants.find_result(target.record, ref.variant, ref.result) if target else None
    whose = f"variant `{ref.variant}`'s result" if ref.variant is not None else "result"
    if target is None or found is None or found is result:
        return {}, f"The baseline, {whose} `{ref.result}` of record `{ref.record}`, does not exist."
    theirs = _measured(project, found, target)
    base = {k: v for k, v in theirs.items() if k in (result.metrics if keys is None else keys)}
    note = f"Measured on top of {target.number:02d}-{target.slug}: compared with its {whose} `{found.label}`."
    return base, note


def _campaign_baseline_from(
    project: Project, result: Result, label: str, keys: Mapping[str, Any] | None
) -> tuple[dict[str, Any], str]:
    """The campaign baseline's result `label` as this result's baseline, named rather than matched by load."""
    found = next((r for r in project.campaign.baseline.results if r.label == label), None)
    if found is None:
        return {}, f"The baseline, the campaign baseline's result `{label}`, does not exist."
    theirs = _measured(project, found, None)
    base = {k: v for k, v in theirs.items() if k in (result.metrics if keys is None else keys)}
    return base, f"Compared with the campaign baseline result `{found.label}`, named by `baseline_from`."


def _measured(project: Project, result: Result, record: RecordFile | None) -> dict[str, Any]:
    """A result's own numbers (what `result_numbers(...).metrics` holds), without looking at its baseline."""
    if result.run is not None:
        # Its own runs only: a baseline_from of its own is not followed (no chain, no circle).
        resolved = resolve_values(project, result, record, with_baseline=False)
        assert resolved is not None
        return resolved[1]
    return dict(result.metrics)
