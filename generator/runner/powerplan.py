"""The plan's power before a run: the costs from the journals, a pilot's noise, the lines printed.

`analysis.plan_power` computes; this module gathers what it reads from the runner's own files
(the journals' launch durations, a pilot's outputs) and says the result in words, for the
`--dry-run` header and the start of a real run.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import replace
from pathlib import Path

from generator.analysis.noise import BLOCKS_CAP, SEQUENTIAL_CAP
from generator.analysis.plan_power import (
    Costs,
    Noise,
    PowerPlan,
    best_runs,
    fit_costs,
    measured_noise,
    plan,
    pooled_noise,
)
from generator.project.load import Project, RecordFile
from generator.runner.execute import Parse
from generator.runner.journal import JOURNAL_DIR, State, read
from generator.runner.plan import Plan

# A pilot's launches alternate between these runs per launch, block by block: the two counts tell
# a launch's fixed cost from a run's, and the launches with several runs measure the spread inside one.
PILOT_RUNS = (6, 1)
PILOT_DIR = f"{JOURNAL_DIR}/pilot"
# Added to the run's seed for its pilot's: the pilot's prompts are not the run's first blocks' again.
PILOT_SEED = 1_000_000


def launch_durations(state: State) -> list[tuple[int, float]]:
    """(measured runs, seconds from start to end) of each launch that ended well."""
    out: list[tuple[int, float]] = []
    by_key = {r.key: r for r in state.plan.runs}
    for key, end in state.done.items():
        run = by_key.get(key)
        started = end.get("started")
        if run is None or not started:
            continue
        seconds = (dt.datetime.fromisoformat(str(end["at"])) - dt.datetime.fromisoformat(str(started))).total_seconds()
        out.append((state.plan.runs_of(run), seconds))
    return out


def journal_costs(root: Path, slug: str) -> tuple[Costs | None, str]:
    """The costs fitted to this record's journals (its pilots' too), else to every journal of the campaign."""
    folders = [root / JOURNAL_DIR, root / PILOT_DIR]
    paths = sorted(p for folder in folders if folder.is_dir() for p in folder.glob("*.jsonl"))
    mine = [p for p in paths if p.name.startswith(f"{slug}-")]
    for chosen, where in ((mine, "this record's journals"), (paths, "the campaign's journals")):
        pairs: list[tuple[int, float]] = []
        for path in chosen:
            try:
                pairs += launch_durations(read(path))
            except (OSError, ValueError, KeyError, TypeError):
                continue  # not a journal this runner can read: its costs are not used
        costs = fit_costs(pairs)
        if costs is not None:
            return costs, where
    return None, "no journal yet"


def pilot_noise(root: Path, state: State, parse: Parse, metric: str) -> Noise | None:
    """The noise a pilot measured: its launches' values of `metric`, grouped by arm and load."""

    groups: dict[str, list[list[float]]] = {}
    by_key = {r.key: r for r in state.plan.runs}
    runs = 0
    for key, end in state.done.items():
        values: list[float] = []
        for out in end.get("outputs", []):
            parsed, _ = parse(root / out["path"], out["path"])
            values += [r.metrics[metric] for r in (parsed.runs if parsed is not None else []) if metric in r.metrics]
        if values:
            run = by_key[key]
            groups.setdefault(f"{run.arm}@{run.load}", []).append(values)
            runs += len(values)
    launches = sum(len(g) for g in groups.values())
    return pooled_noise(groups, f"the pilot's runs ({launches} launches, {runs} runs)")


def power_plan(
    project: Project,
    rec: RecordFile,
    draft: Plan,
    *,
    metric: str,
    alpha: float,
    min_effect: float | None,
    runs: int | None,
    noise_: Noise | None = None,
) -> PowerPlan:
    """The plan's numbers: the noise so far (or the pilot's), the journals' costs, runs per launch.

    `runs` None is `--runs auto`: m* from the noise and the costs; it raises `UsageProblem` when
    they are not known, naming `--pilot`.
    """
    from generator.base.problems import UsageProblem

    loads = [x for x in draft.loads]
    found = noise_ or measured_noise(project, rec, metric, loads[0] if len(loads) == 1 else None)
    costs, where = journal_costs(project.root, rec.slug)
    chosen = f"--runs {runs}" if runs is not None else ""
    if runs is None:
        best = best_runs(found, costs) if costs is not None and not found.assumed else None
        if best is None or costs is None:
            missing = "the spread inside a launch" if found.within_var is None or found.assumed else "a run's own cost"
            raise UsageProblem(
                f"--runs auto needs {missing} measured (noise: {found.source}; costs: {where}): "
                "add --pilot N to run N blocks first that measure them"
            )
        assert costs.launch_s is not None and costs.run_s is not None and found.icc is not None
        star = math.sqrt(costs.launch_s / costs.run_s * (found.within_var or 0) / max(found.launch_var or 0, 1e-300))
        chosen = (
            f"auto: m* = {star:.1f} from a launch's {costs.launch_s:.1f} s, a run's {costs.run_s:.2f} s "
            f"({where}) and ICC {found.icc:.2f}"
        )
        runs = best
    effects: list[tuple[float, str]] = []
    if min_effect is not None:
        effects.append((min_effect, "the campaign's min_effect"))
    expected = rec.record.expected
    gain = expected.gain if expected is not None and expected.metric == metric else None
    if gain is not None:
        low = gain if isinstance(gain, int | float) else min(abs(gain.min), abs(gain.max))
        effects.append((abs(float(low)), "the record's expected gain"))
    return plan(
        found,
        costs,
        runs_per_launch=runs,
        runs_chosen=chosen,
        blocks=draft.blocks,
        sequential=draft.sequential is not None,
        launches_per_block=len(draft.arms) * len(draft.loads),
        alpha=alpha,
        effects=effects,
        costs_source=where,
    )


def _minutes(seconds: float | None) -> str:
    return f", {seconds / 60:.0f} GPU-min" if seconds is not None else ""


def _blocks(n: int | None, seconds: float | None, cap: int) -> str:
    return f"{n} blocks{_minutes(seconds)}" if n is not None else f"more than {cap} blocks"


def describe(pp: PowerPlan) -> list[str]:
    """The plan's power in lines, as `--dry-run` and a real run's start print them."""
    n = pp.noise
    design = "sequential, looking after every block" if pp.sequential else "fixed"
    most = "at most " if pp.sequential else ""
    lines = [f"design: {pp.runs_per_launch} run(s) per launch ({pp.runs_chosen or 'the campaign'}), {design}"]
    if n.launch_var is not None and n.within_var is not None:
        spread = (
            f"launch-to-launch {100 * math.sqrt(n.launch_var):.1f}%, within-launch "
            f"{100 * math.sqrt(n.within_var):.1f}% (ICC {n.icc:.2f})"
            if n.icc is not None
            else "no spread"
        )
    else:
        spread = f"launch to launch {100 * math.sqrt(n.total_var or 0):.1f}% at {n.runs_measured} run(s) a launch"
    lines.append(f"noise ({'ASSUMED' if n.assumed else 'measured'}): {n.source}: {spread} (log scale)")
    if pp.sd_block is None or pp.detectable is None:
        lines.append(
            f"detectable change: unknown at {pp.runs_per_launch} run(s) per launch (the runs so far made "
            f"{n.runs_measured} a launch, one part of the spread unknown): --runs {n.runs_measured}, or --pilot N"
        )
        return lines
    other = "fixed" if pp.sequential else "sequential"
    lines.append(
        f"detects at {100 * pp.power:.0f}% power: {_pct(pp.detectable)} or more in {most}{pp.blocks} blocks "
        f"(a block's log difference spreads {100 * pp.sd_block:.1f}%; a {other} design: {_pct(pp.detectable_other)})"
    )
    if pp.block_s is not None:
        total = pp.blocks * pp.block_s / 60
        lines.append(
            f"GPU time: {pp.block_s:.0f} s a block, {total:.0f} min for {most}{pp.blocks} blocks "
            f"(launch durations in {pp.costs_source})"
        )
    else:
        lines.append(f"GPU time: unknown ({pp.costs_source})")
    for need in pp.needs:
        lines.append(
            f"to detect {need.effect:g}% ({need.why}): {_blocks(need.fixed_blocks, need.fixed_s, BLOCKS_CAP)} "
            f"fixed, {_blocks(need.sequential_blocks, need.sequential_s, SEQUENTIAL_CAP)} sequential"
        )
    flag = "--max-blocks" if pp.sequential else "--blocks"
    cap = SEQUENTIAL_CAP if pp.sequential else BLOCKS_CAP
    for short in pp.short_of:
        needed = short.sequential_blocks if pp.sequential else short.fixed_blocks
        lines.append(
            f"WARNING: {flag} {pp.blocks} cannot reach {short.effect:g}% ({short.why}) at {100 * pp.power:.0f}% "
            f"power: it needs {needed if needed is not None else 'more than ' + str(cap)} blocks"
        )
    return lines


def _pct(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "nothing"
    return f"+{value:.1f}%"


def designed(
    project: Project,
    rec: RecordFile,
    draft: Plan,
    runs: int | str | None,
    seed: int,
    loads: list[int],
    max_blocks: int | None,
    noise: Noise | None = None,
) -> tuple[list[str], Plan]:
    """The design's lines (what it detects, what min_effect needs) and the plan with its runs per launch."""
    from generator.base.problems import UsageProblem
    from generator.runner import session

    rule = project.campaign.decision
    try:
        metric, _ = session.decided_metric(project, rec)
    except UsageProblem:
        if runs == "auto":
            raise
        return ["detectable change: unknown (no metric to decide on: no `decision:` in campaign.yaml)"], draft
    given = None if runs == "auto" else int(runs) if runs is not None else draft.settings.runs_per_launch
    pp = power_plan(
        project,
        rec,
        draft,
        metric=metric,
        alpha=rule.alpha if rule else 0.05,
        min_effect=rule.min_effect if rule else None,
        runs=given,
        noise_=noise,
    )
    if runs is None:
        pp = replace(pp, runs_chosen="campaign.yaml's run.runs_per_launch")
    plan = draft
    if pp.runs_per_launch != draft.settings.runs_per_launch:
        plan = session.new_plan(
            project,
            rec,
            blocks=draft.blocks,
            seed=seed,
            loads=loads,
            max_blocks=max_blocks,
            runs_per_launch=pp.runs_per_launch,
        )
    return describe(pp), plan


def pilot_plan(project: Project, rec: RecordFile, blocks: int, seed: int, loads: list[int]) -> Plan:
    """The pilot's plan: blocks whose launches alternate their runs per launch, linked to nothing."""
    from generator.runner import session

    # Another seed than the run's: the pilot's prompts are not the run's first blocks' again.
    return session.new_plan(
        project, rec, blocks=blocks, seed=seed + PILOT_SEED, loads=loads, max_blocks=None, pilot=PILOT_RUNS
    )
