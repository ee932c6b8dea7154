"""What the outputs show of the stack: the `stack` command's text and JSON, the home page's road to the
goal (a table and a waterfall chart), and the marks on record pages.

Everything is read from `analysis.stack` (computed once in `generator.analysis.road`); nothing here
compares numbers again. The waterfall's numbers are the road's: its baseline, each step's measured
change and the goals, never typed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from generator import charts
from generator.analysis.campaign import Analysis
from generator.analysis.road import Road, RoadStep, StepChange, distance_text
from generator.base.generated import svg_header
from generator.base.incremental import BuildCache, memo
from generator.base.shell import visible
from generator.charts.svg import chart_width
from generator.model.launch import Stack, quote
from generator.model.quantity import Stat, fmt_number, fmt_percent, fmt_stat
from generator.project.load import RecordFile
from generator.views.notes import regressions_text
from generator.views.paths import ChartLink, docs_root, record_link, relative


def _label(rec: RecordFile) -> str:
    return f"{rec.number:02d}-{rec.slug}"


def _stack(analysis: Analysis) -> Stack:
    found = analysis.stack.stack
    assert found is not None, "check refuses records that build on each other in a circle (build-cycle)"
    return found


# --- the `stack` command --------------------------------------------------------------------------


def stack_script(analysis: Analysis) -> str:
    """A shell script: comments saying where each line comes from, then the command, one option a line."""
    found, records = _stack(analysis), analysis.stack.records
    baseline = analysis.project.campaign.baseline
    if records:
        head = [
            f"# The launch command in force: the campaign baseline ({baseline.label}) with "
            f"{len(records)} adopted change(s), applied in this order: {', '.join(map(_label, records))}.",
            "#",
        ]
        width = max((len(line.text) for line in found.lines if line.source is not None), default=0)
        for line in found.lines:
            if line.kind == "removed":
                head.append(f"#   {'(removed) ' + line.text:<{width + 10}}  by {line.source}")
            elif line.source is not None:
                was = f" (was: {line.replaces})" if line.replaces else ""
                head.append(f"#   {line.text:<{width + 10}}  from {line.source}{was}")
        head += [f"# Not in the command: {label}: {note}" for label, note in analysis.stack.notes]
    else:
        head = [f"# No record is adopted: the launch command in force is the campaign baseline ({baseline.label})."]
    # Comments too: a bidi override in a note would make the lines around it read otherwise.
    head = [visible(h.replace("\n", " ")) for h in head]
    # Under the command, where the eye goes after reading it: what to know before running it.
    caveats = [visible(f"# Caveat: {c}".replace("\n", " ")) for c in command_caveats(analysis)]
    return "\n".join([*head, *before_lines(analysis), found.script(), *caveats]) + "\n"


def command_lines(analysis: Analysis) -> str:
    """`stack --format command`: the `before:` steps, one a line as written, then the launch on one
    line, from the baseline's `workdir` when it has one (its paths are relative to there), so the
    lines run as printed from the campaign's folder."""
    found, workdir = _stack(analysis), analysis.project.campaign.baseline.workdir
    cd = f"cd {quote(workdir.rstrip('/') or workdir)} && " if workdir else ""
    steps = "".join(f"{line}\n" for _label, line in found.before)
    return f"{steps}{cd}{found.command}\n"


RECONSTRUCTED = "The baseline command is a reconstruction, not a recorded command"


def command_caveats(analysis: Analysis) -> list[str]:
    """What a reader must know before running the command in force, said directly under it:
    a reconstructed command, an engine version not recorded, the folder it runs from."""
    campaign = analysis.project.campaign
    base, engine = campaign.baseline, campaign.engine
    out = []
    if base.command_reconstructed:
        note = f": {' '.join(base.command_note.split())}" if base.command_note else ""
        out.append(f"{RECONSTRUCTED}{note}")
    if not engine.version:
        out.append(f"The {engine.name} version was not recorded.")
    if base.workdir:
        folder = base.workdir.rstrip("/")
        out.append(f"Run it from {folder}/ in the campaign's folder: its paths are relative to there.")
    return out


def before_lines(analysis: Analysis) -> list[str]:
    """What runs before the launch line: the container image in force (a comment, since how it is
    started is not recorded), then the steps (`step_lines`)."""
    found = _stack(analysis)
    source, image = image_in_force(analysis)
    from_ = f" (from {source})" if source else ""
    out = [f"# The engine runs in the container image {image}{from_}".replace("\n", " ")] if image else []
    return [*out, *step_lines(found.before, found.inside, found.container)]


def image_in_force(analysis: Analysis) -> tuple[str | None, str | None]:
    """(the step that names it, the image) of the stack's last change naming its own image, else
    (None, the campaign engine's image)."""
    found = _stack(analysis)
    return found.image if found.image is not None else (None, analysis.project.campaign.engine.image)


def step_lines(
    before: Sequence[tuple[str, str]],
    inside: Sequence[tuple[str, str]],
    container: Sequence[tuple[str, str]] = (),
) -> list[str]:
    """Each (step label, command) of `before:` on the host, as written, then of `inside:` in the
    container as comments, in stack order: what `stack` prints and a record page's launch block.
    First, as comments, how the container starts (`docker run` options, volumes, mounted files)."""
    out = ["# How the container starts (docker run options; this script does not start it):"] if container else []
    for i, (label, line) in enumerate(container):
        # One heading per record: its options, volumes and files follow under it.
        out += [f"# from {label}:"] if i == 0 or container[i - 1][0] != label else []
        out.append(visible(f"#   {line}"))
    out += ["# On the host:"] if before and inside else []
    for label, line in before:
        out += [f"# before the launch, from {label}:", line]
    if inside:
        # Comments, never commands: piped to bash they would run on the host, which is exactly what
        # a step meant for the container must not do (how the container is entered is not recorded).
        out.append("# Inside the container, before the launch (run them there; this script does not):")
    for label, line in inside:
        out += [f"# in the container, from {label}:", visible(f"#   {line}")]
    return out


def stack_json(analysis: Analysis) -> str:
    """The stack for scripts: the command, its words, the environment and each line's record."""
    found, stack = _stack(analysis), analysis.stack
    data = {
        "command": found.command,
        "tokens": list(found.tokens),
        "env": dict(found.env),
        "baseline": analysis.project.campaign.baseline.label,
        "records": [{"number": r.number, "slug": r.slug, "title": r.record.title} for r in stack.records],
        "base_command_from": found.base_from,
        "image": image_in_force(analysis)[1],
        "image_from": image_in_force(analysis)[0],
        "before": [{"command": line, "record": label} for label, line in found.before],
        "inside": [{"command": line, "record": label} for label, line in found.inside],
        "container": [{"line": line, "record": label} for label, line in found.container],
        "lines": [
            {"text": line.text, "kind": line.kind, "record": line.source, "replaces": line.replaces}
            for line in found.lines
        ],
        "not_in_command": [{"record": label, "note": note} for label, note in stack.notes],
        "workdir": analysis.project.campaign.baseline.workdir,
        "caveats": command_caveats(analysis),
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


# --- record pages ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class StackMark:
    """Where a record stands in the stack: its step (1-based) of how many, after which records."""

    place: int
    of: int
    after: list[str]


def stack_marks(analysis: Analysis) -> dict[str, StackMark]:
    """Where each record in the stack stands, by slug, in one pass over the stack."""
    records = analysis.stack.records
    labels = [_label(r) for r in records]
    marks: dict[str, StackMark] = {}
    for place, rec in enumerate(records):
        marks.setdefault(rec.slug, StackMark(place=place + 1, of=len(records), after=labels[:place]))
    return marks


# --- the road to the goal -------------------------------------------------------------------------


def road_plot_path(analysis: Analysis) -> str:
    return str(docs_root(analysis.project) / "plots" / "road-to-goal.svg")


def road_plot(analysis: Analysis, build_cache: BuildCache | None = None) -> tuple[str, str, str] | None:
    """(path, alt text, SVG with the generated marker) of the waterfall, or None without a road;
    drawn again only when what it draws changed (the key is the drawing's arguments)."""
    road = analysis.stack.road
    if road is None:
        return None
    metric = analysis.project.campaign.vocabulary().lookup(road.metric)
    unit = metric.unit if metric else ""
    label = metric.label if metric else road.metric
    steps = [
        charts.Step(s.label, s.change.delta, s.level_after, s.change.interval, s.chain_break, s.change.change)
        for s in road.steps
        if s.change is not None and s.level_after is not None
    ]
    where = f" at concurrency {road.concurrency}" if road.concurrency is not None else ""
    # A range is drawn at its midpoint; the column's label says the range itself.
    about = "~" if _about(analysis, road) else ""
    names = [
        f"{name} ({about}{fmt_stat(level)}, midpoint)" if level.kind == "range" else name
        for name, level in (
            ("baseline", road.baseline),
            ("current" if road.chained else "sum, chain broken", road.current),
        )
    ]
    path = road_plot_path(analysis)
    title = f"The road to the goal: {label}{where}"
    axis = f"{label} ({unit})" if unit else label
    goals = [charts.Goal(g.direction, g.goal.target, g.gap) for g in road.goals]
    # The current level's interval, as the goal table prints it (`level_text`).
    c = road.current
    interval = (c.low, c.high) if c.kind == "single" and c.low != c.high else None

    def draw() -> tuple[str, str, str]:
        svg = charts.waterfall(
            "road-to-goal",
            title,
            road.baseline.mean,
            steps,
            axis_label=axis,
            goals=goals,
            current_interval=interval,
            labels=(names[0], names[1]),
        )
        alt = charts.description(svg)
        # An SVG cannot start with a comment: the marker goes on the line after the XML declaration.
        text = '<?xml version="1.0" encoding="utf-8"?>\n' + svg_header() + "\n" + svg
        return path, alt, text if text.endswith("\n") else text + "\n"

    key = (chart_width(None), path, title, road.baseline.mean, steps, axis, goals, names, interval)
    return memo(build_cache, "chart", key, draw)


@dataclass(frozen=True)
class RoadStepRow:
    """A step of the home page's road: an adopted record, and its measured change when there is one."""

    label: str
    title: str
    link: str
    measured: bool
    result: str | None = None
    before: str | None = None
    after: str | None = None
    delta: str | None = None
    percent: str | None = None
    # The arithmetic means' ratio the level composes, where it differs as printed from `percent`.
    means: str | None = None
    interval: str | None = None
    decision: str | None = None
    level: str | None = None
    chain_break: str | None = None
    regressions: str | None = None


@dataclass(frozen=True)
class RoadGoal:
    """A goal on the road's metric and load, and how far the current level is from it."""

    target: str
    direction: str
    distance: str


@dataclass(frozen=True)
class RoadView:
    """The home page's road to the goal (`road_context`)."""

    metric: str
    unit: str
    concurrency: str
    baseline: str
    baseline_about: bool
    # A baseline result measured the level; else the result that gives it only as reported.
    baseline_measured: bool
    baseline_reported_in: str | None
    baseline_is_range: bool
    baseline_mid: str
    baseline_source: str
    steps: list[RoadStepRow]
    adopted: list[str]
    current: str
    chained: bool
    breaks: list[str]
    unmeasured: list[str]
    goals: list[RoadGoal]
    other_goals: list[str]
    notes: list[str]
    plot: ChartLink | None


def road_context(analysis: Analysis, charts_drawn: dict[str, str]) -> RoadView | None:
    """The home page's road: the rows of its table, where the chain breaks, the goals' distances."""
    road = analysis.stack.road
    if road is None:
        return None
    metric = analysis.project.campaign.vocabulary().lookup(road.metric)
    unit = metric.unit if metric else ""
    root_dir = docs_root(analysis.project)
    path = road_plot_path(analysis)
    rows = [_step_row(analysis, s, unit) for s in road.steps]
    breaks = [f"before {s.label}: {s.chain_break}" for s in road.steps if s.chain_break]
    unmeasured = [s.label for s in road.steps if s.change is None]
    return RoadView(
        metric=metric.label if metric else road.metric,
        unit=unit,
        concurrency=str(road.concurrency) if road.concurrency is not None else "not recorded",
        baseline=fmt_stat(road.baseline),
        baseline_about=_about(analysis, road),
        baseline_measured=road.baseline_result is not None,
        baseline_reported_in=_reported_in(analysis, road),
        baseline_is_range=road.baseline.kind == "range",
        baseline_mid=fmt_number(road.baseline.mean),
        baseline_source=road.baseline_source,
        steps=rows,
        adopted=[_label(r) for r in analysis.stack.records],
        current=level_text(road.current),
        chained=road.chained,
        breaks=breaks,
        unmeasured=unmeasured,
        goals=[
            RoadGoal(target=fmt_number(g.goal.target), direction=g.direction, distance=distance_text(g, unit))
            for g in road.goals
        ],
        other_goals=[f"{g.metric} {fmt_number(g.target)}" for g in road.other_goals],
        notes=[f"{label}: {note}" for label, note in analysis.stack.notes],
        plot=ChartLink(src=relative(PurePosixPath(path), root_dir), alt=charts_drawn[path])
        if path in charts_drawn
        else None,
    )


def level_text(level: Stat) -> str:
    """A level as printed: a computed level carries its interval ("1202 (interval 1150 to 1257)")."""
    if level.kind == "single" and level.low != level.high:
        return f"{fmt_number(level.mean)} (interval {fmt_number(level.low)} to {fmt_number(level.high)})"
    return fmt_stat(level)


def _level_value(analysis: Analysis, road: Road) -> Any:
    """The road's starting value as typed: the measuring baseline result's, else the first goal's
    stated current level (where `generator.road` takes the level from when no result measures it)."""
    if road.baseline_result is not None:
        return road.baseline_result.metrics.get(road.metric)
    goals = analysis.project.campaign.goals
    return goals[0].current if goals else None


def _about(analysis: Analysis, road: Road) -> bool:
    return bool(getattr(_level_value(analysis, road), "about", False))


def _reported_in(analysis: Analysis, road: Road) -> str | None:
    """The label of the baseline result that gives the road's level only as reported, if one does.

    The level is then the sources' figure, given without its configuration: the page never says
    the baseline measured it.
    """
    value = _level_value(analysis, road)
    if road.baseline_result is not None or value is None:
        return None
    for result in analysis.project.campaign.baseline.results:
        if road.concurrency is not None and result.concurrency != road.concurrency:
            continue
        if any(rep.metric == road.metric and rep.values == [value] for rep in result.reported):
            return result.label
    return None


def _means_text(c: StepChange) -> str | None:
    """The arithmetic means' ratio the level composes, where it differs as printed from the change."""
    if c.means_percent is None or fmt_percent(c.means_percent) == fmt_percent(c.change_percent):
        return None
    return fmt_percent(c.means_percent)


def _step_row(analysis: Analysis, step: RoadStep, unit: str) -> RoadStepRow:
    rec = step.record
    link = record_link(analysis.project, rec, docs_root(analysis.project))
    c = step.change
    if c is None:
        return RoadStepRow(label=step.label, title=rec.record.title, link=link, measured=False)
    # "inconclusive (inconclusive)" said nothing twice: the mark only where it adds to the word.
    decision = c.decision if c.weak is None or c.weak == c.decision else f"{c.decision} ({c.weak})"
    interval = f"{fmt_number(c.interval[0])} to {fmt_number(c.interval[1])} {unit}" if c.interval else None
    return RoadStepRow(
        label=step.label,
        title=rec.record.title,
        link=link,
        measured=True,
        result=c.result.label,
        before=fmt_stat(c.before),
        after=fmt_stat(c.after),
        delta=("+" if c.change > 0 else "") + fmt_number(c.change),
        percent=fmt_percent(c.change_percent),
        means=_means_text(c),
        interval=interval,
        decision=decision,
        level=fmt_number(step.level_after) if step.level_after is not None else None,
        chain_break=step.chain_break,
        regressions=regressions_text(analysis.record(rec).regressions, analysis.project.campaign.vocabulary()),
    )
