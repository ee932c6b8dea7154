"""`improvements run`, from a record to linked runs: plan, journal, execute, link, decide.

The command layer calls `new_plan` (or `resume_state`), `execute` and `finish`; each step reads
and writes only through the journal and the campaign's files, so a resume after `kill -9` at any
point repeats no run and loses none.
"""

from __future__ import annotations

import datetime as dt
import platform
import secrets
import shutil
import socket
import subprocess
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from generator.base.problems import CommandError, ProblemsFound, Report, UsageProblem, rel
from generator.project.load import Project, RecordFile
from generator.project.runs.redact import redact
from generator.runner.execute import Parse
from generator.runner.journal import JOURNAL_DIR, Journal, State, journal_path
from generator.runner.plan import Plan, Sequential, draw_runs, with_slots

if TYPE_CHECKING:
    from generator.model.runconfig import RunConfig
from generator.runner.processes import stop_leftovers


def parser(project: Project, fmt: str) -> Parse:
    """How the plan's format is read: the built-in importers, or the campaign's `import_formats` mapping.

    The format is the plan's (`run.format` when it was made), so a resume reads what it wrote.
    """
    from generator.model.import_format import BUILTIN_FORMATS
    from generator.project.runs.formats.mapped import parse_mapped
    from generator.project.runs.parse import parse_file

    if fmt in BUILTIN_FORMATS:
        return parse_file
    from generator.authoring.link_runs import campaign_mapping

    mapping = campaign_mapping(project, fmt)
    return lambda path, shown: parse_mapped(path, shown, mapping)


def new_plan(
    project: Project,
    rec: RecordFile,
    *,
    blocks: int,
    seed: int,
    loads: list[int],
    max_blocks: int | None,
    runs_per_launch: int | None = None,
    pilot: tuple[int, ...] = (),
) -> Plan:
    """The plan of a run, or with `pilot` (runs per launch, cycled block by block) a pilot's.

    `runs_per_launch` replaces `run.runs_per_launch` (`--runs`); a pilot runs `blocks` blocks,
    with no sequential rule, under results/journal/pilot/, and is linked to nothing.
    """
    from generator.runner.arms import record_arms

    cfg = project.campaign.run
    if cfg is None:
        raise UsageProblem("campaign.yaml has no `run:` section: say how to benchmark an arm (docs/guide/run.md)")
    config = _config(cfg, runs_per_launch, pilot)
    arms = with_slots(record_arms(project, rec))
    chosen: list[int | None] = list(loads or cfg.loads) or [None]
    if chosen == [None] and "{load}" in cfg.bench.command:
        # Put in as nothing, `--batch {load}` would run as `--batch --seed 1`: refused instead.
        raise UsageProblem(
            "the benchmark command uses {load} and no load is given: "
            "pass --load N (repeatable), or set `run.loads` in campaign.yaml"
        )
    sequential = _sequential(project, rec, max_blocks) if not pilot else None
    planned = sequential.max_blocks if sequential is not None else blocks
    # The time sorts the plans; the random part keeps two plans started in one second apart (their
    # processes' marker too, which a resume uses to stop what a killed runner left).
    plan_id = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)
    runs = draw_runs(arms, planned, chosen, seed)
    if pilot:
        runs = [replace(r, per_launch=pilot[(r.block - 1) % len(pilot)]) for r in runs]
    where = f"{JOURNAL_DIR}/pilot" if pilot else JOURNAL_DIR
    return Plan(
        id=plan_id,
        slug=rec.slug,
        record=rel(rec.path, project.root),
        seed=seed,
        blocks=planned,
        loads=tuple(chosen),
        arms=tuple(arms),
        runs=tuple(runs),
        config=config,
        workdir=f"{where}/{rec.slug}-{plan_id}",
        sequential=sequential,
        shell=shutil.which("bash") or "/bin/sh",
        pilot=bool(pilot),
    )


def _sequential(project: Project, rec: RecordFile, max_blocks: int | None) -> Sequential | None:
    """`--until-decided --max-blocks`: the campaign's rule on the record's metric."""
    from generator.analysis.sequential import RULE

    if max_blocks is None:
        return None
    rule = project.campaign.decision
    if rule is None:
        raise UsageProblem("--until-decided needs campaign.yaml's `decision:` (its metric, alpha and min_effect)")
    metric, higher = decided_metric(project, rec)
    return Sequential(max_blocks, metric, rule.alpha, rule.min_effect, higher, RULE)


def _config(cfg: RunConfig, runs_per_launch: int | None, pilot: tuple[int, ...]) -> dict[str, Any]:
    """`run:` as the plan keeps it, with `--runs`; each runs per launch asked for checked against it."""
    from pydantic import ValidationError

    config = cfg.model_dump(mode="json")
    for m in {runs_per_launch, *pilot} - {None}:
        try:
            cfg.model_validate({**config, "runs_per_launch": m})
        except ValidationError as exc:
            why = exc.errors()[0]["msg"].removeprefix("Value error, ")
            raise UsageProblem(f"{m} runs per launch: {why}") from None
    if runs_per_launch is not None:
        config["runs_per_launch"] = runs_per_launch
    return config


def decided_metric(project: Project, rec: RecordFile) -> tuple[str, bool]:
    """The metric a run of `rec` is decided on (its expected metric, else the rule's), and whether higher is better."""
    from generator.model import metrics

    rule = project.campaign.decision
    expected = rec.record.expected
    metric = (expected.metric if expected and expected.metric else None) or (rule.primary_metric if rule else None)
    if metric is None:
        raise UsageProblem(
            "no metric to decide on: give the record an `expected.metric` or campaign.yaml a `decision:`"
        )
    known = project.campaign.vocabulary().lookup(metric) or metrics.lookup(metric)
    if known is None:
        raise UsageProblem(f"`{metric}` is not a metric of the vocabulary: its better direction is unknown")
    return metric, known.higher_is_better


NVIDIA_FIELDS = "index,name,uuid,driver_version,vbios_version,memory.total,clocks.max.sm,clocks.max.mem,power.limit"


def provenance(project: Project, plan: Plan) -> dict[str, Any]:
    """Where the plan runs: host, platform, the campaign's git commit, the GPUs, the versions asked
    for, and the SHA-256 of what it runs (the harness) and of the records it was planned from."""
    from importlib.metadata import PackageNotFoundError, version

    root = project.root
    out: dict[str, Any] = {
        "host": socket.gethostname(),
        "platform": platform.platform(),
        "python": platform.python_version(),
    }
    try:
        out["improvements"] = version("improvements")
    except PackageNotFoundError:
        out["improvements"] = "unknown"
    # What the runner adds to every process's environment (the arms' own is in their commands):
    # of one length for every arm, as the paths are (plan.py says why).
    out["environment_set"] = {
        "IMPROVEMENTS_RUN": "<plan id>/<run, the arm by its slot>/<attempt>: finds what a killed runner left"
    }
    out["git_commit"] = _output(["git", "-C", str(root), "rev-parse", "HEAD"])
    status = _output(["git", "-C", str(root), "status", "--porcelain"])
    out["git_dirty"] = bool(status) if status is not None else None
    # A commit says little when the tree is dirty or the harness is not committed: the bytes do.
    out["harness_sha256"] = harness_digests(root, plan)
    records = [project.campaign_file.path, *(r.path for r in project.records)]
    out["records_sha256"] = {rel(p, root): _sha256(p) for p in sorted(records)}
    if shutil.which("nvidia-smi"):
        # An older driver refuses a field it does not know: then the fields every driver has.
        for fields in (NVIDIA_FIELDS, "index,name,uuid,driver_version,memory.total"):
            found = _output(["nvidia-smi", f"--query-gpu={fields}", "--format=csv"])
            if found is not None:
                out["nvidia_smi"] = found
                break
    cfg = project.campaign.run
    for name, command in cfg.versions.items() if cfg is not None else ():
        out.setdefault("versions", {})[name] = _output([shutil.which("bash") or "/bin/sh", "-c", command], cwd=root)
    return out


def harness_digests(root: Path, plan: Plan) -> dict[str, str]:
    """The SHA-256 of every file under the campaign that the benchmark, a launch or a `before:` step names.

    A word names a file when it is one (`harness/decode.py`), or when its part after `=` is
    (`--config=serve.yaml`), relative to the campaign root where the commands run. Words are
    split as POSIX shells split them (shlex); a line it cannot split is split at blanks, which
    still finds plain paths. Files outside the root (the interpreter, the engine) are the
    versions' and the environment's to record.
    """
    import shlex

    lines = [plan.settings.bench.command]
    for arm in plan.arms:
        lines += [*arm.before, arm.launch_line]
    top = root.resolve()
    found: dict[str, str] = {}
    for line in lines:
        try:
            words = shlex.split(line)
        except ValueError:
            words = line.split()
        for word in words:
            for candidate in {word, word.partition("=")[2]} - {""}:
                path = Path(candidate) if Path(candidate).is_absolute() else root / candidate
                try:
                    resolved = path.resolve()
                    inside = resolved.is_relative_to(top) and resolved.is_file()
                except (OSError, ValueError):  # ValueError: a NUL in the word, no path at all
                    continue
                if inside:
                    found[resolved.relative_to(top).as_posix()] = _sha256(resolved)
    return dict(sorted(found.items()))


def _sha256(path: Path) -> str:
    import hashlib

    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        return f"unreadable: {exc.strerror or exc}"


def _output(argv: list[str], cwd: Path | None = None) -> str | None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=cwd, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def start_journal(project: Project, plan: Plan) -> Journal:
    path = journal_path(project.root, plan.slug, plan.id)
    if plan.pilot:
        path = path.parent / "pilot" / path.name
    if path.exists():
        raise CommandError(f"{rel(path, project.root)} exists already; run again for a plan of its own")
    journal = Journal(path)
    # Provenance holds what commands printed (`versions:`): redacted as `import` redacts a file.
    journal.append("plan", plan=plan.to_json(), provenance=redact(provenance(project, plan))[0])
    return journal


def resume_state(
    project: Project, rec: RecordFile, plan_id: str | None = None, say: Callable[[str], None] | None = None
) -> tuple[State, Journal]:
    """The plan `--resume` goes on with (see `runner.resume`), its leftovers stopped, its outputs verified."""
    from generator.runner.execute import redact_logs
    from generator.runner.resume import check_plan, discard_changed, pick, unended

    path, state = pick(project.root, rec.slug, plan_id)
    check_plan(project.root, rec.slug, rec.path, path, state.plan)
    journal = Journal(path)
    stopped = stop_leftovers(state.plan.id, state.plan.settings.stop_grace_s)
    # What the killed runner's processes wrote to their logs, now they are stopped.
    runs = {r.key: r for r in state.plan.runs}
    for key, attempt in unended(state):
        if key in runs:
            redact_logs(project.root, state.plan, runs[key], attempt)
    # Where the rest runs: a resume may be on another machine than the plan's first runs.
    journal.append(
        "resumed",
        stopped_leftover_groups=stopped,
        done=sorted(state.done),
        provenance=redact(provenance(project, state.plan))[0],
    )
    for d in discard_changed(project.root, state, journal):
        if say is not None:
            kept = f"; kept as {d.moved_to}" if d.moved_to else ""
            say(f"run {d.run} is run again: its output {d.path} {d.why}{kept}")
    state.stopped = None
    state.linked = False
    return state, journal


def check_edit(project: Project, target: Path, text: str, runs: list[Any]) -> None:
    from dataclasses import replace

    from generator.authoring.link_runs import check_linked

    pending = replace(project, runs={**project.runs, **{r.id: r for r in runs}})
    problems = [p for p in check_linked(pending, target, text, baseline=False) if p.severity == "error"]
    if problems:
        raise ProblemsFound(Report(problems))


def refuse_restart(project: Project, rec: RecordFile, loads: tuple[int, ...]) -> None:
    """Refuse a new sequence of a comparison whose earlier sequence ended undecided: its
    guarantee holds for one sequence, and starting another because the first did not settle
    spends alpha again (docs/guide/run.md, "A new sequence")."""
    from generator.base.problems import UsageProblem
    from generator.model import reruns
    from generator.runner.arms import record_arms

    cfg = project.campaign.run
    every = [*rec.record.results, *(r for v in rec.record.variants for r in v.results)]
    chosen: list[int | None] = [*(loads or (cfg.loads if cfg is not None else ()))] or [None]
    arms = record_arms(project, rec)
    base = next((a.label for a in arms if a.role == "baseline"), "")
    for arm in (a for a in arms if a.role != "baseline"):
        for load in chosen:
            found = reruns.earlier_sequences(every, reruns.comparison_label(arm.label, base, load))
            if found:
                seq = found[-1].sequential
                assert seq is not None
                raise UsageProblem(
                    f"`{found[-1].label}` ran a sequence that ended undecided ({seq.stopped or 'not stopped'}, "
                    f"{seq.blocks_run} of at most {seq.max_blocks} blocks): a new sequence of the same comparison "
                    "spends alpha again. Pass --new-sequence to start one all the same (the page then names "
                    "both and what the guarantee covers), or plan a fixed design with --blocks"
                )
