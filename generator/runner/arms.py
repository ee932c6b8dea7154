"""The arms of a record's comparison, with their launch commands as the analysis gives them."""

from __future__ import annotations

from generator.analysis.launches import launch_below, launch_of, launch_steps
from generator.analysis.records import Launch
from generator.base.problems import Problem, ProblemsFound, Report, UsageProblem
from generator.checks.runnable import change_not_runnable
from generator.model import variants
from generator.model.record import Change
from generator.model.runconfig import arm_name
from generator.project.load import Project, RecordFile
from generator.runner.plan import Arm


def record_arms(project: Project, rec: RecordFile) -> list[Arm]:
    """The comparator first, then the record's command or each non-diagnostic variant's."""
    steps = launch_steps(project)
    record = rec.record
    below = launch_below(project, rec, steps)
    what = (
        "the stack it builds on" if record.builds_on else f"the campaign baseline ({project.campaign.baseline.label})"
    )
    arms = [_arm("baseline", what, "baseline", None, below)]
    candidates = [v for v in record.variants if v.outcome != "diagnostic"]
    # The changes the arms are made of: what it builds on, then its own (each variant's).
    used: list[tuple[RecordFile, tuple[str | int, ...], Change | None]] = [
        (r, variants.effective_change_path(r.record), variants.effective_change(r.record)) for r in below.chain
    ]
    for i, v in enumerate(record.variants):
        if v.outcome != "diagnostic":
            used.append((rec, ("variants", i, "change"), v.change) if v.change else (rec, ("change",), record.change))
    if not record.variants:
        used.append((rec, ("change",), record.change))
    _refuse_containers(project, used)
    if record.variants:
        for v in candidates:
            change = v.change if v.change is not None else record.change
            setup = v.setup if v.setup is not None else record.setup
            _recorded(change, f"variant `{v.label}`")
            arms.append(
                _arm(
                    arm_name(v.label),
                    f"variant {v.label}",
                    "arm",
                    v.label,
                    launch_of(project, rec, steps, change, setup),
                )
            )
    else:
        _recorded(record.change, f"record `{rec.slug}`")
        arms.append(
            _arm(
                arm_name(rec.slug),
                f"{rec.number:02d}-{rec.slug}",
                "arm",
                None,
                launch_of(project, rec, steps, record.change, record.setup),
            )
        )
    names = [a.name for a in arms]
    if len(set(names)) != len(names) or len(arms) < 2:
        raise UsageProblem(f"record `{rec.slug}` gives no two distinct arms to run (arms: {', '.join(names)})")
    return arms


def _refuse_containers(project: Project, used: list[tuple[RecordFile, tuple[str | int, ...], Change | None]]) -> None:
    """An arm whose change runs steps inside a container or in its own image is refused where the
    record says so: the runner would run the launch on the host and measure another launch."""
    problems: dict[Problem, None] = {}  # in order, each once (two variants may share the record's change)
    for r, at, change in used:
        if change is not None:
            problems.update(dict.fromkeys(change_not_runnable(project, r, at, change, "error")))
    if problems:
        raise ProblemsFound(Report(list(problems)))


def _recorded(change: object, what: str) -> None:
    if isinstance(change, Change) and change.command == "not-recorded":
        raise UsageProblem(f"{what} has `command: not-recorded` ({change.missing}): there is no command to run")
    if change is None:
        raise UsageProblem(f"{what} records no `change`: its command is the baseline's, nothing to compare")


def _arm(name: str, label: str, role: str, variant: str | None, launch: Launch) -> Arm:
    before = tuple(line for _label, line in launch.before)
    return Arm(name, label, role, variant, tuple(launch.tokens), tuple(launch.env.items()), before)
