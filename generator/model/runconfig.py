"""campaign.yaml's `run:`: how `improvements run` starts an arm and benchmarks it.

The benchmark command is a template: `{output}`, `{command}`, `{load}`, `{seed}`, `{block}` and
`{arm}` are filled per run (already quoted for the shell), and any other `{name}` is refused so a
typo never reaches the shell. A `${NAME}` is the shell's own and is left alone.

With `ready`, the arm's launch command is a server started in its own process group and the
benchmark talks to it (server mode); without, the benchmark runs the arm itself (one-shot mode),
so its template must hold `{command}`.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import Field, field_validator, model_validator

from generator.model.result import Count, NonEmpty, Strict

PLACEHOLDERS: tuple[str, ...] = ("output", "command", "load", "seed", "block", "arm")
# `{name}` not preceded by `$`: `${MODEL}` is a shell expansion, not a placeholder.
PLACEHOLDER_RE = re.compile(r"(?<!\$)\{([A-Za-z_][A-Za-z0-9_]*)\}")

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
    # Measured benchmark runs per launch (server mode): sub-samples of one launch, not repetitions.
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
        if self.ready is None and self.runs_per_launch > 1:
            raise ValueError("`runs_per_launch` needs `ready` (server mode): in one-shot mode each run is a launch")
        return self
