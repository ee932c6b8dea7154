"""The plan of `improvements run`: the arms, the randomized complete blocks, every command as it runs.

Arms: the command the record is compared against (the campaign baseline, or the stack of what
the record builds on) and the record's own command, or, for a record with variants, each variant
that is not `diagnostic`. Their commands come from the analysis (`launch_of`, `launch_below`)
and are quoted by `model.launch`, the one quoting of everything `stack` and the pages print.

Design: each block runs every arm once at each load, the arms in an order drawn from the plan's
seed (a Fisher-Yates shuffle over a `random.Random(seed)`, written into the plan so a resume
reads it and never draws again). The benchmark's `{seed}` is the plan's seed plus the block
number: the same for every arm of a block, so the arms of a block see the same prompts.
"""

from __future__ import annotations

import random
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from generator.model.launch import assignment, env_prefix, quote, words
from generator.model.runconfig import PLACEHOLDER_RE, RunConfig

JOURNAL_DIR = "results/journal"


@dataclass(frozen=True)
class Arm:
    name: str  # a word for file names and `{arm}`: "baseline", the record's slug, a variant's label
    label: str  # as the record names it
    role: str  # "baseline" (what the others are compared with) or "arm"
    variant: str | None
    tokens: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    before: tuple[str, ...] = ()

    @property
    def launch_line(self) -> str:
        """The launch as one shell line (server mode starts exactly this): assignments, then the words."""
        return " ".join(
            [*env_prefix(n for n, _ in self.env), *(assignment(n, v) for n, v in self.env), words(self.tokens)]
        )

    @property
    def command_words(self) -> str:
        """`{command}`: the launch as words one program can run, the environment through env(1)."""
        if not self.env:
            return words(self.tokens)
        return " ".join(["env", *(assignment(n, v) for n, v in self.env), words(self.tokens)])


@dataclass(frozen=True)
class PlannedRun:
    index: int  # 1-based, in the order run
    block: int
    load: int | None
    arm: str
    seed: int
    # Measured runs of this launch when not the plan's `runs_per_launch` (a pilot varies them).
    per_launch: int | None = None

    @property
    def key(self) -> str:
        load = f"c{self.load}-" if self.load is not None else ""
        return f"{load}b{self.block:02d}-{self.arm}"


@dataclass(frozen=True)
class Sequential:
    max_blocks: int
    metric: str
    alpha: float
    min_effect: float
    higher_is_better: bool
    rule: str


@dataclass(frozen=True)
class Plan:
    id: str
    slug: str
    record: str  # the record's file, relative to the campaign root
    seed: int
    blocks: int  # planned (with `sequential`, the most that may run)
    loads: tuple[int | None, ...]
    arms: tuple[Arm, ...]
    runs: tuple[PlannedRun, ...]
    config: dict[str, Any]  # campaign.yaml's `run:` as it was when planned
    workdir: str  # relative to the campaign root: outputs, logs
    sequential: Sequential | None = None
    shell: str = "bash"
    label_prefix: str = field(default="run")
    # A pilot's plan (`--pilot N`): measures the noise and the costs, linked to nothing.
    pilot: bool = False

    @property
    def settings(self) -> RunConfig:
        return RunConfig.model_validate(self.config)

    def arm(self, name: str) -> Arm:
        return next(a for a in self.arms if a.name == name)

    def runs_of(self, run: PlannedRun) -> int:
        """The measured runs of this run's launch."""
        return run.per_launch if run.per_launch is not None else self.settings.runs_per_launch

    def bench_calls(self, run: PlannedRun) -> int:
        """Benchmark commands per launch: each a run in server mode; one making `{runs}` runs in one-shot mode."""
        return self.runs_of(run) if self.settings.ready is not None else 1

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Plan:
        arms = tuple(
            Arm(**{**a, "tokens": tuple(a["tokens"]), "env": tuple(map(tuple, a["env"])), "before": tuple(a["before"])})
            for a in data["arms"]
        )
        seq = data.get("sequential")
        return cls(
            **{
                **data,
                "loads": tuple(data["loads"]),
                "arms": arms,
                "runs": tuple(PlannedRun(**r) for r in data["runs"]),
                "sequential": Sequential(**seq) if seq else None,
            }
        )

    # --- paths and commands ---------------------------------------------------------------

    def output_tmp(self, run: PlannedRun, attempt: int, warmup: int | None = None, sub: int = 1) -> str:
        """Where the benchmark writes: a temporary path, moved into `out/` only on success.

        Without the plan's id, so `--dry-run` prints the very words a run of the same plan uses.
        """
        extra = f".w{warmup}" if warmup is not None else (f".r{sub}" if sub > 1 else "")
        return f"{self.tmpdir}/{run.key}{extra}.a{attempt}.json"

    @property
    def tmpdir(self) -> str:
        return f"{JOURNAL_DIR}/tmp/{self.slug}"

    def output_final(self, run: PlannedRun, sub: int = 1) -> str:
        extra = f".r{sub}" if sub > 1 else ""
        return f"{self.workdir}/out/{run.key}{extra}.json"

    def log_path(self, run: PlannedRun, attempt: int, what: str) -> str:
        return f"{self.workdir}/logs/{run.key}.a{attempt}.{what}.log"

    def bench_line(self, run: PlannedRun, output: str) -> str:
        """The benchmark command of one run, every placeholder filled and quoted."""
        arm = self.arm(run.arm)
        values = {
            "output": quote(output),
            "command": arm.command_words,
            "load": str(run.load) if run.load is not None else "",
            "seed": str(run.seed),
            "block": str(run.block),
            "arm": quote(arm.name),
            "runs": str(self.runs_of(run)) if self.settings.ready is None else "1",
        }
        return PLACEHOLDER_RE.sub(lambda m: values[m.group(1)], self.settings.bench.command)


def arm_name(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "arm"


def draw_runs(
    arms: list[Arm], blocks: int, loads: list[int | None], seed: int, first_block: int = 1
) -> list[PlannedRun]:
    """Every run of `blocks` randomized complete blocks: each block every arm once per load."""
    rng = random.Random(seed)
    out: list[PlannedRun] = []
    for block in range(first_block, first_block + blocks):
        for load in loads:
            order = [a.name for a in arms]
            # Fisher-Yates on rng.random(), whose output Python keeps stable across versions
            # (random.shuffle's is not promised); the plan records the order all the same.
            for i in range(len(order) - 1, 0, -1):
                j = int(rng.random() * (i + 1))
                order[i], order[j] = order[j], order[i]
            for name in order:
                out.append(PlannedRun(len(out) + 1, block, load, name, seed + block))
    return out


def dry_run_text(plan: Plan, root: Path, design: list[str] | tuple[str, ...] = ()) -> str:
    """The plan and every command exactly as it runs: each run's lines run as printed under bash.

    `design`: what the design can detect (`runner.powerplan`), printed as comments at the top.
    """
    cfg = plan.settings
    mode = "server" if cfg.ready is not None else "one-shot"
    lines = [
        f"# improvements run {plan.slug}: plan {plan.id}, {len(plan.arms)} arms, {plan.blocks} block(s), "
        f"loads {', '.join(str(x) for x in plan.loads if x is not None) or 'as the benchmark sets'}, seed {plan.seed}",
        f"# {mode} mode; outputs read as `{cfg.format}`; commands run by {plan.shell} in {root}",
        *(f"# {line}" for line in design),
        f"mkdir -p {quote(plan.tmpdir)}",
    ]
    if plan.sequential is not None:
        s = plan.sequential
        lines.append(f"# sequential: stops once `{s.metric}` is decided, at most {s.max_blocks} blocks ({s.rule})")
    for arm in plan.arms:
        lines.append(f"# arm {arm.name} ({arm.role}): {arm.label}")
    for run in plan.runs:
        arm = plan.arm(run.arm)
        lines.append("")
        lines.append(f"# run {run.index} of {len(plan.runs)}: block {run.block}, arm {arm.name}, load {run.load}")
        lines += list(arm.before)
        if cfg.ready is not None:
            ready = f"url {cfg.ready.url}" if cfg.ready.url else f"log matching {cfg.ready.log}"
            lines.append(f"# started in its own process group; ready when {ready} (within {cfg.ready.timeout_s:g} s)")
            lines.append(arm.launch_line)
            for w in range(1, cfg.warmup + 1):
                lines.append(f"# warm-up {w}, discarded")
                lines.append(plan.bench_line(run, plan.output_tmp(run, 1, warmup=w)))
            for sub in range(1, plan.bench_calls(run) + 1):
                lines.append(plan.bench_line(run, plan.output_tmp(run, 1, sub=sub)))
            lines.append(f"# then SIGTERM to the process group, SIGKILL after {cfg.stop_grace_s:g} s")
        else:
            for w in range(1, cfg.warmup + 1):
                lines.append(f"# warm-up {w}, discarded")
                lines.append(plan.bench_line(run, plan.output_tmp(run, 1, warmup=w)))
            lines.append(plan.bench_line(run, plan.output_tmp(run, 1)))
    return "\n".join(lines) + "\n"
