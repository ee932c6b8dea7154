"""The plan of `improvements run`: the arms, the randomized complete blocks, every command as it runs.

Arms: the command the record is compared against (the campaign baseline, or the stack of what
the record builds on) and the record's own command, or, for a record with variants, each variant
that is not `diagnostic`. Their commands come from the analysis (`launch_of`, `launch_below`)
and are quoted by `model.launch`, the one quoting of everything `stack` and the pages print.

Design: each block runs every arm once at each load, the arms in an order drawn from the plan's
seed (a Fisher-Yates shuffle over a `random.Random(seed)`, written into the plan so a resume
reads it and never draws again). The benchmark's `{seed}` is the plan's seed plus the block
number: the same for every arm of a block, so the arms of a block see the same prompts.

Arms equal but for the change: every name the runner itself puts into a process (the marker in
its environment, its output and log paths, `{arm}`) carries the arm's slot, a neutral id of one
width for every arm (`a0` the baseline, `a1`, ...), never its name. Environment size alone moves
run time by several percent (stack alignment; Mytkowicz et al., ASPLOS 2009), so arms whose
names differ in length would differ in more than the change.

A plan carries `format_version`; one written before it (format 1: paths by arm name) is read as
its own slots being the arm names, so its journal resumes and links under the same keys.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field
from typing import Any

from generator.model.launch import assignment, env_prefix, quote, words
from generator.model.runconfig import PLACEHOLDER_RE, RunConfig
from generator.project.journals import JOURNAL_DIR

# The plan's (and with it the journal's) format: 2 added the arms' slots. Raise it whenever a
# journal written by this version could not be read as it is by an older one.
PLAN_FORMAT = 2


class FormatError(ValueError):
    """A journal written by a newer (or unknown) version of the tool: refused, never guessed at."""


@dataclass(frozen=True)
class Arm:
    name: str  # a word for file names and `{arm}`: "baseline", the record's slug, a variant's label
    label: str  # as the record names it
    role: str  # "baseline" (what the others are compared with) or "arm"
    variant: str | None
    tokens: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    before: tuple[str, ...] = ()
    slot: str = ""  # the neutral id in every name the runner makes for it (`a0`, `a1`): see above

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
    arm: str  # the arm's name
    seed: int
    slot: str  # the arm's slot: in the key, so in the marker, the paths and `{arm}`
    # Measured runs of this launch when not the plan's `runs_per_launch` (a pilot varies them).
    per_launch: int | None = None

    @property
    def key(self) -> str:
        load = f"c{self.load}-" if self.load is not None else ""
        return f"{load}b{self.block:02d}-{self.slot}"


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
    format_version: int = PLAN_FORMAT
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
        """The plan as written; one of an older format migrated, one of a newer refused (FormatError)."""
        version = data.get("format_version", 1)
        if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= PLAN_FORMAT:
            raise FormatError(
                f"its plan has format_version {version!r}, and this improvements reads formats 1 to {PLAN_FORMAT}: "
                "it was written by a newer improvements (upgrade to read it) or it is not a journal of ours"
            )
        arms = [
            {**a, "tokens": tuple(a["tokens"]), "env": tuple(map(tuple, a["env"])), "before": tuple(a["before"])}
            for a in data["arms"]
        ]
        runs = [dict(r) for r in data["runs"]]
        if version == 1:
            # Format 1 named its paths and markers by the arm's name: that name is its slot, so the
            # keys its journal holds (`c2-b01-baseline`) are the keys it is resumed and linked by.
            for a in arms:
                a["slot"] = a["name"]
            for r in runs:
                r["slot"] = r["arm"]
        seq = data.get("sequential")
        return cls(
            **{
                **data,
                "loads": tuple(data["loads"]),
                "arms": tuple(Arm(**a) for a in arms),
                "runs": tuple(PlannedRun(**r) for r in runs),
                "sequential": Sequential(**seq) if seq else None,
                "format_version": PLAN_FORMAT,
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
            "arm": quote(arm.slot),
            "runs": str(self.runs_of(run)) if self.settings.ready is None else "1",
        }
        return PLACEHOLDER_RE.sub(lambda m: values[m.group(1)], self.settings.bench.command)


def with_slots(arms: list[Arm]) -> list[Arm]:
    """Each arm its slot, in order (the baseline arm first: `a0`), all of one width."""
    from dataclasses import replace

    width = len(str(len(arms) - 1))
    return [replace(a, slot=f"a{i:0{width}d}") for i, a in enumerate(arms)]


def draw_runs(
    arms: list[Arm], blocks: int, loads: list[int | None], seed: int, first_block: int = 1
) -> list[PlannedRun]:
    """Every run of `blocks` randomized complete blocks: each block every arm once per load."""
    assert all(a.slot for a in arms), "arms are given their slots (with_slots) before the runs are drawn"
    rng = random.Random(seed)
    out: list[PlannedRun] = []
    for block in range(first_block, first_block + blocks):
        for load in loads:
            order = list(arms)
            # Fisher-Yates on rng.random(), whose output Python keeps stable across versions
            # (random.shuffle's is not promised); the plan records the order all the same.
            for i in range(len(order) - 1, 0, -1):
                j = int(rng.random() * (i + 1))
                order[i], order[j] = order[j], order[i]
            for arm in order:
                out.append(PlannedRun(len(out) + 1, block, load, arm.name, seed + block, arm.slot))
    return out
