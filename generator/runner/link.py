"""The plan's finished runs into the record: one result per arm and load, paired by block.

Each arm's result lists its runs in block order and names the baseline arm's runs of the same
blocks in `baseline_run`, with `paired: true`: block i is compared with block i. A block where
either side failed is left out of both sides, and the result's note says which and why, so no
failed arm's block is dropped silently. Runs read from one launch's outputs share its `launch`
id; `started` is when the run began. The ids hash the output with the plan and the run, so
linking again (after a resume) writes the same files and the same record.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from generator.base.problems import CommandError, ProblemsFound, Report, rel
from generator.model.reruns import comparison_label, planned_label
from generator.project.load import Project
from generator.project.runs.parse import ParsedFile
from generator.project.runs.run import run_id
from generator.runner.execute import Parse
from generator.runner.journal import State
from generator.runner.plan import Plan, PlannedRun
from generator.runner.resume import sha256_of


def parsed_outputs(root: Path, state: State, parse: Parse) -> dict[str, list[ParsedFile]]:
    """Every done run's outputs read again, their runs given the plan's launch, start and ids."""
    from generator.project.runs.store import attach_sources

    plan = state.plan
    out: dict[str, list[ParsedFile]] = {}
    for run in plan.runs:
        end = state.done.get(run.key)
        if end is None:
            continue
        files: list[ParsedFile] = []
        for output in end.get("outputs", []):
            # Only what the run wrote is linked: a kept output changed since is refused (a resume runs it again).
            if sha256_of(root / output["path"]) != output.get("sha256"):
                raise CommandError(
                    f"{output['path']} is not what run {run.key} wrote (its SHA-256 differs from the journal's)"
                )
            parsed, problems = parse(root / output["path"], output["path"])
            if parsed is None or problems:
                raise ProblemsFound(Report(problems))
            for i, r in enumerate(parsed.runs):
                prefix = re.sub(r"-[0-9a-f]{10}$", "", r.id)
                r.id = run_id(prefix, r.format, [r.id, plan.id, run.key, output["path"], i])
                r.launch = f"{plan.id}/{run.key}"
                r.started = str(output.get("started") or end.get("started") or end["at"])
            attach_sources(parsed)
            files.append(parsed)
        out[run.key] = files
    return out


def _ids(files: list[ParsedFile]) -> list[str]:
    return [r.id for p in files for r in p.runs]


def result_label(plan: Plan, arm: str, load: int | None) -> str:
    return planned_label(comparison_label(plan.arm(arm).label, plan.arm(_base(plan)).label, load), plan.id)


def _base(plan: Plan) -> str:
    return next(a.name for a in plan.arms if a.role == "baseline")


def results(
    plan: Plan, state: State, runs: dict[str, list[ParsedFile]], journal: Path, root: Path
) -> list[tuple[str | None, dict[str, Any]]]:
    """(variant label or None, the result's fields) for each arm and load with a complete block."""
    base = _base(plan)
    blocks = sorted({r.block for r in plan.runs})
    made = sorted({r.block for r in plan.runs if r.key in state.done or r.key in state.failed})
    out: list[tuple[str | None, dict[str, Any]]] = []
    for arm in (a for a in plan.arms if a.role != "baseline"):
        for load in plan.loads:
            mine: list[str] = []
            theirs: list[str] = []
            dropped: list[str] = []
            for b in blocks:
                pair = [_find(plan, b, load, arm.name), _find(plan, b, load, base)]
                if not all(p.key in runs for p in pair):
                    failed = [p for p in pair if p.key in state.failed]
                    if failed:
                        why = "; ".join(f"{p.arm} failed: {state.failed[p.key].get('why')}" for p in failed)
                        dropped.append(f"block {b} ({why})")
                    continue
                a, c = _ids(runs[pair[0].key]), _ids(runs[pair[1].key])
                if len(a) != len(c):
                    dropped.append(f"block {b} ({len(a)} runs of {arm.name}, {len(c)} of {base})")
                    continue
                mine += a
                theirs += c
            if not mine:
                continue
            fields: dict[str, Any] = {
                "label": result_label(plan, arm.name, load),
                "run": mine if len(mine) > 1 else mine[0],
                "baseline_run": theirs if len(theirs) > 1 else theirs[0],
                "paired": len(mine) > 1,
            }
            if plan.sequential is not None and len(mine) > 1:
                fields["sequential"] = {
                    "rule": "t-confidence-sequence",
                    "max_blocks": plan.sequential.max_blocks,
                    "blocks_run": len(made),
                    "stopped": str((state.stopped or {}).get("reason", "not stopped")),
                    "journal": rel(journal, root),
                }
            fields["note"] = _note(plan, state, made, dropped, journal, root)
            out.append((arm.variant, fields))
    return out


def _find(plan: Plan, block: int, load: int | None, arm: str) -> PlannedRun:
    return next(r for r in plan.runs if r.block == block and r.load == load and r.arm == arm)


def _note(plan: Plan, state: State, made: list[int], dropped: list[str], journal: Path, root: Path) -> str:
    cfg = plan.settings
    parts = [
        f"Run by `improvements run` (journal {rel(journal, root)}): {len(plan.arms)} arms in randomized "
        f"complete blocks (seed {plan.seed}), paired by block."
    ]
    if cfg.runs_per_launch > 1:
        parts.append(f"{cfg.runs_per_launch} runs per launch are sub-samples of one launch, not repetitions.")
    if plan.sequential is not None:
        s = plan.sequential
        stopped = (state.stopped or {}).get("reason", "not stopped")
        parts.append(
            f"Run sequentially: {len(made)} of at most {s.max_blocks} blocks run ({stopped}); rule: {s.rule}, "
            f"alpha {s.alpha:g}, on `{s.metric}`."
        )
    else:
        parts.append(f"{len(made)} of {plan.blocks} planned blocks run.")
    if dropped:
        parts.append("Left out of both sides: " + "; ".join(dropped) + ".")
    return " ".join(parts)


def link_plan(
    project: Project, target: Path, plan: Plan, state: State, runs: dict[str, list[ParsedFile]], journal: Path
) -> tuple[str, list[str], set[str]]:
    """The record's new text with the plan's results (replacing those of an earlier link), their
    labels, and the ids of the runs they name (only those are written: a failed block's other
    half is journalled, not imported)."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    from generator.authoring.edit import Document, set_key
    from generator.authoring.link_runs import put_trailing_comment, results_at_placeholder, take_trailing_comment
    from generator.model.record import Record, Variant

    doc = Document.from_path(target)
    labels = []
    used: set[str] = set()
    created = False
    for variant, fields in results(plan, state, runs, journal, project.root):
        container: Any = doc.data
        order = list(Record.model_fields)
        if variant is not None:
            container = next(v for v in doc.data["variants"] if str(v.get("label")) == variant)
            order = list(Variant.model_fields)
        items = container.get("results")
        if items is None:
            items = CommentedSeq()
            set_key(container, "results", items, order)
            created = created or variant is None
        item = CommentedMap()
        for key, value in fields.items():
            if isinstance(value, list):
                value = CommentedSeq(value)
            elif isinstance(value, dict):
                value = CommentedMap(value)
            item[key] = value
        at = next((i for i, x in enumerate(items) if isinstance(x, dict) and x.get("label") == fields["label"]), None)
        if at is None:
            # The gap and comments below the list stay below it (as `import` keeps them).
            trailing = take_trailing_comment(items)
            items.append(item)
            put_trailing_comment(items, trailing)
        else:
            items[at] = item
        labels.append(fields["label"])
        for key in ("run", "baseline_run"):
            value = fields[key]
            used.update(value if isinstance(value, list) else [value])
    # A record's first results go where its starter's `# results:` example stood.
    return (results_at_placeholder(doc.text()) if created else doc.text()), labels, used
