"""campaign.yaml's `run:`: how `improvements run` starts an arm and benchmarks it.

The benchmark command is a template: `{output}`, `{command}`, `{load}`, `{seed}`, `{block}`,
`{arm}` and `{runs}` are filled per run (already quoted for the shell), and any other `{name}` is
refused so a typo never reaches the shell. A `${NAME}` is the shell's own and is left alone.
`{runs}` is how many measured runs the command makes: in one-shot mode the launch's runs per
launch (the benchmark times that many calls in one process, and writes each), in server mode 1
(each benchmark command is one run against the started server).

With `ready`, the arm's launch command is a server started in its own process group and the
benchmark talks to it (server mode); without, the benchmark runs the arm itself (one-shot mode),
so its template must hold `{command}`.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import Field, field_validator, model_validator

from generator.model.result import Count, NonEmpty, Strict

PLACEHOLDERS: tuple[str, ...] = ("output", "command", "load", "seed", "block", "arm", "runs")
# `{name}` not preceded by `$`: `${MODEL}` is a shell expansion, not a placeholder.
PLACEHOLDER_RE = re.compile(r"(?<!\$)\{([A-Za-z_][A-Za-z0-9_]*)\}")

# The longest name `improvements run` makes a file name from: a record's slug (its journal is
# `<slug>-<plan id>.jsonl`, 29 bytes more) or an arm's name (a log is
# `c<load>-b<block>-<arm>.a<attempt>.<what>.log`, some 40 bytes more). A file name may have 255
# bytes on the usual file systems (ext4, XFS, btrfs, APFS); this leaves the runner room.
RUNNER_NAME_MAX = 128


def arm_name(text: str) -> str:
    """A word for file names and `{arm}`, made from a variant's label or a record's slug."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "arm"


Seconds = Annotated[float, Field(gt=0, le=7 * 24 * 3600, allow_inf_nan=False)]


class Bench(Strict):
    """The benchmark command template, and how long one run of it may take."""

    command: NonEmpty
    # A run still going after this many seconds is stopped and recorded as failed (hung).
    timeout_s: Seconds = 3600.0

    @field_validator("command")
    @classmethod
    def _known_placeholders(cls, v: str) -> str:
        names = PLACEHOLDER_RE.findall(v)
        unknown = sorted({n for n in names if n not in PLACEHOLDERS})
        if unknown:
            known = ", ".join(f"{{{n}}}" for n in PLACEHOLDERS)
            raise ValueError(f"unknown placeholder {{{unknown[0]}}}; the template takes {known}")
        if "output" not in names:
            raise ValueError("the template needs {output}: the path the benchmark writes its result to")
        return v


class Ready(Strict):
    """When a started server is ready: a URL that answers 2xx, or a line of its output matching `log`."""

    url: Annotated[str, Field(pattern=r"^https?://\S+$")] | None = None
    log: NonEmpty | None = None
    timeout_s: Seconds = 600.0

    @field_validator("log")
    @classmethod
    def _compiles(cls, v: str | None) -> str | None:
        if v is not None:
            import regex  # the engine the ready wait matches with (runner/processes.py)

            try:
                regex.compile(v)
            except regex.error as exc:
                raise ValueError(f"`log` is not a regular expression: {exc}") from None
        return v

    @model_validator(mode="after")
    def _one_way(self) -> Ready:
        if (self.url is None) == (self.log is None):
            raise ValueError("give one of `url` (answers 2xx when ready) or `log` (a pattern its output prints)")
        return self


class RunConfig(Strict):
    """`improvements run`: the benchmark, server readiness, the output's format, warm-ups."""

    bench: Bench
    # Present: server mode. Absent: one-shot mode (the benchmark runs the arm through {command}).
    ready: Ready | None = None
    # A built-in format or one of `import_formats`: how the benchmark's output is read.
    format: NonEmpty
    # Benchmark runs against each launch before the measured ones: discarded, and journalled.
    warmup: Annotated[int, Field(ge=0, le=100)] = 0
    # Measured benchmark runs per launch: sub-samples of one launch, not repetitions. Server mode
    # runs the benchmark this many times against each launch; one-shot mode puts it in `{runs}`.
    runs_per_launch: Annotated[int, Field(ge=1, le=100)] = 1
    # Seconds between SIGTERM and SIGKILL when a launch's process group is stopped.
    stop_grace_s: Seconds = 10.0
    # The loads run when `--load` is not given (concurrency or batch size).
    loads: list[Count] = Field(default_factory=list)
    # name -> a shell command whose output the journal keeps as that version (`python -c ...`).
    versions: dict[NonEmpty, NonEmpty] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _mode(self) -> RunConfig:
        names = PLACEHOLDER_RE.findall(self.bench.command)
        if self.ready is None and "command" not in names:
            raise ValueError(
                "without `ready` (one-shot mode) the benchmark runs the arm itself: put {command} in `bench.command`"
            )
        if self.ready is None and self.runs_per_launch > 1 and "runs" not in names:
            raise ValueError(
                "`runs_per_launch` above 1 needs `ready` (server mode), or `{runs}` in a one-shot "
                "`bench.command` (the benchmark makes that many measured runs in its one launch)"
            )
        return self
