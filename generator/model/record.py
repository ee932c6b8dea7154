"""The record format as pydantic models: what users write in improvements/*.yaml and campaign.yaml.

The models say what a single file may hold. Rules that need more than one file (numbers,
slugs, references, sources) live in `load`, which also turns validation errors into
positioned problems.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
import shlex
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    field_validator,
    model_validator,
)

from generator.model.decided import DecidedBy as DecidedBy
from generator.model.decided import DecidedByMany, Headline, deciders_of
from generator.model.result import (
    Count,
    Finite,
    MetricName,
    NonEmpty,
    Range,
    Result,
    Slug,
    Strict,
    Tier,
)
from generator.model.stack import Detail as Detail
from generator.model.stack import Engine as Engine
from generator.model.stack import Hardware as Hardware
from generator.model.stack import ModelInfo as ModelInfo

Status = Literal["proposed", "in-progress", "blocked", "adopted", "rejected", "superseded"]
STATUSES: tuple[str, ...] = Status.__args__  # type: ignore[attr-defined]
BlockerStatus = Literal["open", "worked-around", "resolved"]
# "not-recorded": the attempt was made but its outcome was never written down; saying so beats
# guessing one.
Outcome = Literal["worked", "partial", "failed", "not-recorded"]


class Threshold(Strict):
    """A level a metric must reach for the record to count (acceptance length at least 5)."""

    metric: MetricName
    at_least: Finite | None = None
    at_most: Finite | None = None
    # The result it is read on; left out, every result of the record that measures the metric.
    result: NonEmpty | None = None

    @model_validator(mode="after")
    def _a_bound(self) -> Threshold:
        if self.at_least is None and self.at_most is None:
            raise ValueError("a threshold needs `at_least` or `at_most`")
        if self.at_least is not None and self.at_most is not None and self.at_least > self.at_most:
            raise ValueError(f"`at_least` ({self.at_least:g}) is above `at_most` ({self.at_most:g})")
        return self


class Expected(Strict):
    metric: MetricName
    # Percent; positive means better in the metric's own direction.
    gain: Finite | Range | None = None
    # The same in the metric's own unit ("+20-25 tok/s"), positive = better.
    gain_absolute: Finite | Range | None = None
    # Levels other metrics must reach (acceptance length at least 5), checked against the results.
    thresholds: list[Threshold] = Field(default_factory=list)
    concurrency: Count | None = None
    # This record's guardrails (metric -> margin percent), replacing the campaign's.
    guardrails: dict[MetricName, Annotated[float, Field(ge=0, le=1000, allow_inf_nan=False)]] | None = None
    note: str | None = None


@functools.lru_cache(maxsize=4096)
def split_words(text: str) -> tuple[str, ...]:
    """`shlex.split`, memoised: the campaign's command and its flags' values are split again for
    every record that changes them, and shlex is slow (a tenth of `check` at 1,000 records)."""
    return tuple(shlex.split(text))


def shell_words(value: str) -> str:
    """Text that is split into shell words (a flag's value, a command): refused here when
    `shlex` cannot split it, so that what `check` accepts, every page can print."""
    try:
        split_words(value)
    except ValueError as exc:
        raise ValueError(_unsplittable(value) or str(exc).lower()) from None
    return value


def inside_folder(value: str) -> str:
    """A folder relative to the campaign's root that stays inside it: no leading /, no `..`."""
    parts = value.replace("\\", "/").split("/")
    if value.startswith(("/", "\\")) or ".." in parts or "\n" in value:
        raise ValueError("a folder relative to the campaign's root, inside it (no leading /, no ..)")
    return value


def _unsplittable(text: str) -> str | None:
    # shlex says only "No closing quotation"; this finds which quote, by shlex's own rules
    # (a backslash escapes outside single quotes; inside double quotes it matters only
    # before a quote or a backslash, and skipping any other character is harmless).
    quote, start, i = "", 0, 0
    while i < len(text):
        c = text[i]
        if c == "\\" and quote != "'":
            if i + 1 == len(text):
                return f"ends in a lone backslash (character {i + 1}) that escapes nothing"
            i += 2
            continue
        if not quote and c in "'\"":
            quote, start = c, i
        elif c == quote:
            quote = ""
        i += 1
    if not quote:
        return None
    shown = text if len(text) <= 60 else text[max(0, start - 20) : start + 20]
    return f"the {quote} at character {start + 1} of `{shown}` is never closed; shell words need their quotes in pairs"


ShellText = Annotated[str, AfterValidator(shell_words)]


class Flag(Strict):
    """A launch flag. Written as "--flag value" or as a mapping when it needs a note.

    The two forms read `value` differently, each the way it looks: in the string form what
    follows the flag is shell words (`--cuda-graph-bs 1 2 4`, `--name 'a b'`), split by the
    shell's quoting rules; in the mapping form `value` is one argument, exactly as written, so a JSON
    value keeps its quotes (`{flag: --speculative-config, value: '{"method":"eagle3"}'}`). The
    launch command quotes it (`launch.quote`).
    """

    flag: Annotated[str, Field(pattern=r"^--?[A-Za-z0-9][A-Za-z0-9_.-]*$")]
    value: str | None = None
    note: str | None = None
    # Where the flag's meaning depends on the engine version, say how.
    versions: str | None = None
    # Written as a mapping: `value` is one literal argument (see above).
    _literal: bool = PrivateAttr(default=False)

    @model_validator(mode="wrap")
    @classmethod
    def _forms(cls, data: Any, handler: ModelWrapValidatorHandler[Flag]) -> Flag:
        if isinstance(data, str):
            parts = data.split(None, 1)
            out: dict[str, Any] = {"flag": parts[0] if parts else data}
            if len(parts) > 1:
                out["value"] = shell_words(parts[1])
            return handler(out)
        flag = handler(data)
        if isinstance(data, dict):
            flag._literal = True
        return flag

    @property
    def literal(self) -> bool:
        return self._literal

    def words(self) -> list[str]:
        """The arguments after the flag, as the engine receives them."""
        if self.value is None:
            return []
        return [self.value] if self._literal else list(split_words(self.value))

    def shell_value(self) -> str | None:
        """`value` as shell words (the string form's reading), whichever form it was written in."""
        return shlex.quote(self.value) if self._literal and self.value is not None else self.value

    def tokens(self) -> list[str]:
        return [self.flag, *self.words()]


class Patch(Strict):
    # Leave out when the files patched were not recorded; `summary` still says what changed.
    path: NonEmpty | None = None
    summary: NonEmpty
    upstream: str | None = None


def _volume_form(value: Any) -> Any:
    # "host:container[:ro]", as `docker run -v` takes it; the mapping form says the same.
    if isinstance(value, str):
        parts = value.split(":")
        if len(parts) not in (2, 3) or (len(parts) == 3 and parts[2] not in ("ro", "rw")):
            raise ValueError("a volume is `host:container` or `host:container:ro` (or a mapping)")
        return {"host": parts[0], "container": parts[1], "read_only": len(parts) == 3 and parts[2] == "ro"}
    return value


class Volume(Strict):
    """A folder (or a named volume) the container sees: `docker run -v host:container[:ro]`."""

    host: NonEmpty
    container: Annotated[str, Field(pattern=r"^/")]
    read_only: bool = False
    note: str | None = None

    def option(self) -> str:
        return f"{self.host}:{self.container}{':ro' if self.read_only else ''}"


class MountedFile(Strict):
    """A file the container reads (a config file, a heredoc written before the launch), with its
    text or, where the text is too long or private to keep, its digest."""

    # Where the container sees it.
    path: Annotated[str, Field(pattern=r"^/")]
    content: str | None = None
    digest: Annotated[str, Field(pattern=r"^sha256:[0-9a-f]{64}$")] | None = None
    note: str | None = None

    @model_validator(mode="after")
    def _text_or_digest(self) -> MountedFile:
        if self.content is None and self.digest is None:
            raise ValueError("a mounted file needs its `content` or its `digest` (sha256:...)")
        return self


class ContainerStart(Strict):
    """How the engine's container starts, where the change needs it: `docker run` options, the
    volumes and the files it mounts. Shown on the page and in the stack; `improvements run` runs
    every arm on the host and refuses a change that needs its own container start."""

    # `docker run` options as written, each one option with its value: "--shm-size 16g", "--ipc=host".
    options: list[ShellText] = Field(default_factory=list)
    volumes: list[Annotated[Volume, BeforeValidator(_volume_form)]] = Field(default_factory=list)
    files: list[MountedFile] = Field(default_factory=list)
    note: str | None = None

    @model_validator(mode="after")
    def _says_something(self) -> ContainerStart:
        if not (self.options or self.volumes or self.files):
            raise ValueError("`container` needs `options`, `volumes` or `files`")
        return self


class Change(Strict):
    # Host commands run before the launch, in order (kill stale GPU processes, a sysctl): each a
    # whole shell command line, printed as written before the launch line. bash itself reads
    # each one in `check` (`checks.shell`), not `shlex`, whose grammar is not bash's.
    before: list[NonEmpty] = Field(default_factory=list)
    # Commands run inside the engine's container before the launch (`pip install --upgrade
    # transformers`), in order: printed apart from the host's `before` steps, read by bash alike.
    inside: list[NonEmpty] = Field(default_factory=list)
    # The container image this change runs in, when not the campaign engine's (with its tag or digest).
    image: NonEmpty | None = None
    # How the container starts for this change (`docker run` options, volumes, mounted files).
    container: ContainerStart | None = None
    flags: list[Flag] = Field(default_factory=list)
    remove_flags: list[Annotated[str, Field(pattern=r"^--?[A-Za-z0-9][A-Za-z0-9_.-]*$")]] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    patches: list[Patch] = Field(default_factory=list)
    # Set when the idea cannot be expressed as flags on the campaign's baseline command.
    base_command: ShellText | None = None
    # "not-recorded" when the flags, removed flags and environment above do not fully express
    # the change on the baseline (a different base configuration, a patch, a kernel): pages
    # then print no generated launch command and say what is `missing` instead.
    command: Literal["not-recorded"] | None = None
    missing: str | None = None
    note: str | None = None

    @model_validator(mode="after")
    def _missing_says_why(self) -> Change:
        if self.command == "not-recorded" and not self.missing:
            raise ValueError("`command: not-recorded` needs `missing`: what the launch command would need")
        if self.missing and self.command != "not-recorded":
            raise ValueError("`missing` goes with `command: not-recorded`")
        if self.command == "not-recorded" and self.base_command:
            raise ValueError("`command: not-recorded` and `base_command` contradict each other; keep one")
        return self


class Attempt(Strict):
    action: NonEmpty
    outcome: Outcome
    detail: str | None = None


class Blocker(Strict):
    """A blocker, or a reference (`ref`) to one defined with an `id` in another record.

    A reference may carry its own `note` and `attempts`: records that share a blocker each
    try their own workarounds against it.
    """

    id: Slug | None = None
    ref: Slug | None = None
    title: str | None = None
    error: str | None = None
    # What was seen when there is no error to quote: a slowdown, a hang, wrong output.
    symptom: str | None = None
    cause: str | None = None
    status: BlockerStatus | None = None
    upstream: list[str] = Field(default_factory=list)
    attempts: list[Attempt] = Field(default_factory=list)
    note: str | None = None

    @model_validator(mode="after")
    def _defined_or_referenced(self) -> Blocker:
        if self.ref is not None:
            own = [k for k in ("id", "title", "error", "symptom", "cause", "status") if getattr(self, k)]
            if own or self.upstream:
                raise ValueError(
                    "a blocker with `ref` points at one defined elsewhere; "
                    f"move {', '.join(own) or 'its details'} to that definition"
                )
            return self
        missing = [k for k in ("title", "status") if getattr(self, k) is None]
        if missing:
            raise ValueError(f"a blocker needs {' and '.join(missing)} (or `ref` to a shared one)")
        return self


class Reference(Strict):
    title: NonEmpty
    url: Annotated[str, Field(pattern=r"^(https?://|/|\.{0,2}/?[A-Za-z0-9_])")]
    note: str | None = None

    @field_validator("url")
    @classmethod
    def _web_or_relative(cls, v: str) -> str:
        # The pattern lets `javascript:` through (it starts with a letter); the site would drop
        # such a link, but the author should hear about it from `check`.
        scheme = re.match(r"([A-Za-z][A-Za-z0-9+.-]*):", v)
        if scheme and scheme.group(1).lower() not in ("http", "https"):
            raise ValueError(f"a link is http(s) or relative, not `{scheme.group(1)}:`")
        return v


class Record(Strict):
    title: NonEmpty
    tier: Tier
    # Where the tier comes from, when that matters: "sources" when the record's sources place
    # it there, "own" when they do not and the placement is the record's own (pages mark it).
    # Left out, nothing is said.
    tier_source: Literal["sources", "own"] | None = None
    status: Status
    # Finer than the status: "recommended" (the configuration the campaign recommends) or
    # "latest" (the newest adopted, not yet the recommended one), both adopted; "undecided"
    # (measured, no decision yet); "historical" (adopted once, since overtaken, kept as the
    # record of what was run). `standing_note` says more ("kept for the Dev branch").
    standing: Literal["recommended", "latest", "undecided", "historical"] | None = None
    standing_note: str | None = None
    hypothesis: NonEmpty
    summary: str | None = None
    tags: list[Slug] = Field(default_factory=list)
    date: dt.date | None = None
    expected: Expected | None = None
    change: Change | None = None
    blockers: list[Blocker] = Field(default_factory=list)
    results: list[Result] = Field(default_factory=list)
    verdict: str | None = None
    # The metric whose change decided the status, when it is not the primary one (or to say so);
    # a list when several did.
    decided_by: DecidedByMany | None = None
    # The result the author leads with, when it is not the first: the record is ranked on it.
    headline: Headline | None = None
    caveats: list[str] = Field(default_factory=list)
    related: list[Slug] = Field(default_factory=list)
    superseded_by: Slug | None = None
    references: list[Reference] = Field(default_factory=list)
    # Records whose changes are already in this one's baseline: the stack applies them first.
    builds_on: list[Slug] = Field(default_factory=list)
    # Configurations tried as one unit: the arms of an A/B, or the values of a sweep.
    variants: list[Variant] = Field(default_factory=list)
    sweep: Sweep | None = None
    # Where this record's runs differ from the campaign's setup.
    setup: Setup | None = None

    @property
    def deciders(self) -> tuple[DecidedBy, ...]:
        """The record's own `decided_by`, as a tuple (one mapping or a list)."""
        return deciders_of(self.decided_by)

    @model_validator(mode="after")
    def _standing_fits_status(self) -> Record:
        if self.standing in ("recommended", "latest", "historical") and self.status != "adopted":
            raise ValueError(f"`standing: {self.standing}` is for an adopted record; this one is `{self.status}`")
        if self.standing == "undecided" and self.status in ("adopted", "rejected", "superseded"):
            raise ValueError(f"`standing: undecided` contradicts status `{self.status}`, which is a decision")
        if self.standing == "undecided" and not (self.results or any(v.results for v in self.variants)):
            raise ValueError("`standing: undecided` says the record was measured; give its results")
        return self


VariantOutcome = Literal["retained", "rejected", "superseded", "diagnostic"]


class Variant(Strict):
    """One configuration of a record: an arm of an A/B or one value of a sweep.

    Its `change` replaces the record's for this variant. A `diagnostic` variant (a run that
    measures, not a candidate) is shown but never ranked.
    """

    label: NonEmpty
    # The swept setting's value; a number when the sweep's values are numbers.
    value: Finite | NonEmpty | None = None
    outcome: VariantOutcome
    change: Change | None = None
    # Where this variant ran differently from the record (a 2-GPU isolation run, another engine):
    # its own hardware, benchmark, base command, or `command: not-recorded`.
    setup: Setup | None = None
    results: list[Result] = Field(default_factory=list)
    # Why it was retained or rejected, in the write-up's words ("the tested fractions regressed").
    reason: str | None = None
    # The metric (or metrics) whose change decided this variant's outcome, read on its own results.
    decided_by: DecidedByMany | None = None
    note: str | None = None

    @property
    def deciders(self) -> tuple[DecidedBy, ...]:
        return deciders_of(self.decided_by)


class Sweep(Strict):
    # The setting swept, as the page's chart names it: a flag, an environment variable.
    parameter: NonEmpty
    # The metric the chart plots; defaults to the first metric the retained variant measures.
    metric: MetricName | None = None
    # The result label the chart compares across variants (one workload on one axis); defaults
    # to the retained variant's first result that measures the metric.
    result: NonEmpty | None = None
    note: str | None = None


class Setup(Strict):
    """A record's (or a variant's) own setup where it is not the campaign's: a microbenchmark on
    fewer GPUs, say.

    A record's holds for every variant that states none of its own: a `base_command` replaces
    the campaign's baseline command, and `command: not-recorded` says the command was never
    recorded (pages print none).
    """

    hardware: Hardware | None = None
    # The engine, when not the campaign's (the same model served by vLLM for comparison).
    engine: Engine | None = None
    # What was run: "serving benchmark (bench_serving)", "NCCL all-reduce microbenchmark".
    benchmark: NonEmpty | None = None
    # Split into words like the other commands, so it must split (an unclosed quote was a traceback).
    base_command: Annotated[NonEmpty, AfterValidator(shell_words)] | None = None
    command: Literal["not-recorded"] | None = None
    note: str | None = None

    @model_validator(mode="after")
    def _one_command(self) -> Setup:
        if self.command == "not-recorded" and self.base_command:
            raise ValueError("`command: not-recorded` and `base_command` contradict each other; keep one")
        return self


# [0-9], not \d: Python's \d also takes Arabic-Indic and fullwidth digits, which int() reads.
FILENAME_RE = re.compile(r"^(?P<number>[0-9]{2,})-(?P<slug>[a-z0-9]+(?:-[a-z0-9]+)*)\.yaml\Z")


def apply_change(command: str, change: Change | None) -> list[str]:
    """The baseline command's tokens with a record's flags removed, replaced or appended."""
    tokens = list(split_words(change.base_command if change is not None and change.base_command else command))
    if change is None:
        return tokens
    drop = set(change.remove_flags) | {f.flag for f in change.flags}
    out: list[str] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        name = tok.split("=", 1)[0]
        if name in drop:
            i += 1
            # A flag's values run until the next option.
            while "=" not in tok and i < len(tokens) and not tokens[i].startswith("-"):
                i += 1
            continue
        out.append(tok)
        i += 1
    for flag in change.flags:
        out.extend(flag.tokens())
    return out
