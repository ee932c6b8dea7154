"""The record format as pydantic models: what users write in improvements/*.yaml.

The models say what a single file may hold. Rules that need more than one file (numbers,
slugs, references, sources) live in `load`, which also turns validation errors into
positioned problems.
"""

from __future__ import annotations

import datetime as dt
import re
import shlex
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from generator import metrics

Status = Literal["proposed", "in-progress", "blocked", "adopted", "rejected", "superseded"]
STATUSES: tuple[str, ...] = Status.__args__  # type: ignore[attr-defined]
BlockerStatus = Literal["open", "worked-around", "resolved"]
# "not-recorded": the attempt was made but its outcome was never written down; saying so beats
# guessing one.
Outcome = Literal["worked", "partial", "failed", "not-recorded"]

SLUG_RE = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
Slug = Annotated[str, Field(pattern=SLUG_RE)]
NonEmpty = Annotated[str, Field(min_length=1)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, coerce_numbers_to_str=True)


# A measured or predicted number: NaN and infinities (`.nan`, `.inf` in YAML) are not results,
# and they break every comparison and mean computed from them; nor is anything near the float
# limit (1e308), where a mean or a difference overflows. 1e15 is beyond any throughput or latency.
Finite = Annotated[float, Field(allow_inf_nan=False, ge=-1e15, le=1e15)]


class Range(Strict):
    """A value known only as a range, such as "about 8-11 tok/s"."""

    min: Finite
    max: Finite
    # The source gives the range as approximate ("~8-11 tok/s"); pages keep the "~".
    about: bool = False

    @model_validator(mode="after")
    def _ordered(self) -> Range:
        if self.min > self.max:
            raise ValueError(f"min ({self.min:g}) is greater than max ({self.max:g})")
        return self


# A number, repeated measurements of one quantity, or a range.
MetricValue = Finite | Annotated[list[Finite], Field(min_length=1)] | Range


def _known_metric(name: str) -> str:
    if metrics.lookup(name) is None:
        near = metrics.suggest(name)
        raise PydanticCustomError("unknown_metric", "unknown metric `{name}`", {"name": name, "suggestion": near or ""})
    return name


MetricName = Annotated[str, AfterValidator(_known_metric)]
Metrics = dict[MetricName, MetricValue]


class Workload(Strict):
    dataset: str | None = None
    input_len: int | None = Field(default=None, ge=0)
    output_len: int | None = Field(default=None, ge=0)
    num_prompts: int | None = Field(default=None, ge=1)
    note: str | None = None


class Reported(Strict):
    """Numbers given as the source reported them, when it does not say which run each comes from.

    They are shown as written, in the source's order, and never compared with each other: no
    change, sign or rank is computed from them, and they never count as a measured gain.
    """

    metric: MetricName
    values: Annotated[list[Finite | Range], Field(min_length=1)]
    # The source's own words for the numbers, verbatim.
    quote: str | None = None
    # What is known (and not) about each number: which run, which setting.
    note: str | None = None


class Provenance(Strict):
    """What a number was measured on, as far as the source says: left out, pages say "not recorded".

    An imported run adds what its file states (engine, version, model, tokenizer, client
    backend, server arguments); these fields hold what a benchmark file never says.
    """

    engine_version: str | None = None
    # The engine's source revision (a git commit or tag), when built from source.
    engine_commit: str | None = None
    # The container image, with its tag or digest (lmsysorg/sglang:v0.5.9-cu129).
    image: str | None = None
    date: dt.date | None = None
    # The machine, when it is not the campaign's (another GPU count, a different host).
    hardware: str | None = None
    note: str | None = None


class Result(Strict):
    label: NonEmpty
    # Requests in flight (the configured limit or batch size). Leave it out when unknown.
    concurrency: int | None = Field(default=None, ge=1)
    # Requests per second; "inf" for unlimited, "trace" for trace replay.
    request_rate: float | Literal["inf", "trace"] | None = None
    workload: Workload | None = None
    metrics: Metrics = Field(default_factory=dict)
    baseline: Metrics = Field(default_factory=dict)
    # Imported runs (ids under results/runs/) instead of typed numbers.
    run: Slug | None = None
    baseline_run: Slug | None = None
    source: str | None = None
    # Evidence as the source gave it, never recomputed: numbers whose roles it does not give, a
    # change in percent (signed as the source signs it), and a plain qualitative finding.
    reported: list[Reported] = Field(default_factory=list)
    reported_change: dict[MetricName, Finite | Range] = Field(default_factory=dict)
    finding: str | None = None
    note: str | None = None
    provenance: Provenance | None = None

    @model_validator(mode="after")
    def _has_numbers(self) -> Result:
        reported = bool(self.reported or self.reported_change or self.finding)
        if not self.metrics and self.run is None and not reported:
            raise ValueError(
                "a result needs `metrics`, an imported `run`, or evidence as reported "
                "(`reported`, `reported_change`, `finding`)"
            )
        if self.baseline and not self.metrics and self.run is None:
            raise ValueError("`baseline` is compared with `metrics`; without `metrics`, give the numbers as `reported`")
        return self


class Expected(Strict):
    metric: MetricName
    # Percent; positive means better in the metric's own direction.
    gain: Finite | Range | None = None
    concurrency: int | None = Field(default=None, ge=1)
    note: str | None = None


class Flag(Strict):
    """A launch flag. Written as "--flag value" or as a mapping when it needs a note."""

    flag: Annotated[str, Field(pattern=r"^--?[A-Za-z0-9][A-Za-z0-9_.-]*$")]
    value: str | None = None
    note: str | None = None
    # Where the flag's meaning depends on the engine version, say how.
    versions: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, data: Any) -> Any:
        if isinstance(data, str):
            parts = data.split(None, 1)
            if not parts:
                return {"flag": data}
            out: dict[str, Any] = {"flag": parts[0]}
            if len(parts) > 1:
                out["value"] = parts[1]
            return out
        return data

    def tokens(self) -> list[str]:
        return [self.flag] if self.value is None else [self.flag, *shlex.split(self.value)]


class Patch(Strict):
    # Leave out when the files patched were not recorded; `summary` still says what changed.
    path: NonEmpty | None = None
    summary: NonEmpty
    upstream: str | None = None


class Change(Strict):
    flags: list[Flag] = Field(default_factory=list)
    remove_flags: list[Annotated[str, Field(pattern=r"^--?[A-Za-z0-9][A-Za-z0-9_.-]*$")]] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    patches: list[Patch] = Field(default_factory=list)
    # Set when the idea cannot be expressed as flags on the campaign's baseline command.
    base_command: str | None = None
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
    tier: Literal[1, 2, 3]
    # Where the tier comes from, when that matters: "sources" when the record's sources place
    # it there, "own" when they do not and the placement is the record's own (pages mark it).
    # Left out, nothing is said.
    tier_source: Literal["sources", "own"] | None = None
    status: Status
    hypothesis: NonEmpty
    summary: str | None = None
    tags: list[Slug] = Field(default_factory=list)
    date: dt.date | None = None
    expected: Expected | None = None
    change: Change | None = None
    blockers: list[Blocker] = Field(default_factory=list)
    results: list[Result] = Field(default_factory=list)
    verdict: str | None = None
    caveats: list[str] = Field(default_factory=list)
    related: list[Slug] = Field(default_factory=list)
    superseded_by: Slug | None = None
    references: list[Reference] = Field(default_factory=list)


# --- campaign.yaml ---------------------------------------------------------------------

Detail = str | int | float | bool


class ModelInfo(Strict):
    name: NonEmpty
    parameters: str | None = None
    architecture: str | None = None
    details: dict[str, Detail] = Field(default_factory=dict)


class Hardware(Strict):
    gpu: NonEmpty
    # Leave out when the source does not say how many GPUs: pages then say "not recorded".
    count: int | None = Field(default=None, ge=1)
    architecture: str | None = None
    interconnect: str | None = None
    details: dict[str, Detail] = Field(default_factory=dict)


class Engine(Strict):
    name: NonEmpty
    # Leave out when not recorded: pages then say so instead of guessing.
    version: str | None = None
    note: str | None = None


class Baseline(Strict):
    label: NonEmpty
    command: NonEmpty
    # True when the command was not recorded as run but written out from what the sources say
    # (pages label it a reconstruction); `command_note` says what it rests on.
    command_reconstructed: bool = False
    command_note: str | None = None
    env: dict[str, str] = Field(default_factory=dict)
    results: list[Result] = Field(default_factory=list)
    note: str | None = None
    # What the baseline was measured on; each baseline result may add its own.
    provenance: Provenance | None = None


class Goal(Strict):
    metric: MetricName
    target: Finite
    # "above" for throughputs, "below" for latencies; defaults from the metric's direction.
    direction: Literal["above", "below"] | None = None
    concurrency: int | None = Field(default=None, ge=1)
    current: Finite | Range | None = None
    note: str | None = None


class Campaign(Strict):
    name: NonEmpty
    series: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]*$")]
    description: str | None = None
    model: ModelInfo
    hardware: Hardware
    engine: Engine
    baseline: Baseline
    goals: list[Goal] = Field(default_factory=list)
    tiers: dict[Literal[1, 2, 3], NonEmpty]
    context: list[str] = Field(default_factory=list)
    references: list[Reference] = Field(default_factory=list)
    # Where the generated series goes, relative to the repository root.
    docs_dir: str = "docs/improvements"

    @field_validator("tiers")
    @classmethod
    def _all_tiers(cls, v: dict[int, str]) -> dict[int, str]:
        missing = sorted({1, 2, 3} - set(v))
        if missing:
            raise ValueError(f"tiers must describe tiers 1, 2 and 3 (missing {missing})")
        return v


FILENAME_RE = re.compile(r"^(?P<number>\d{2,})-(?P<slug>[a-z0-9]+(?:-[a-z0-9]+)*)\.yaml$")


def apply_change(command: str, change: Change | None) -> list[str]:
    """The baseline command's tokens with a record's flags removed, replaced or appended."""
    tokens = shlex.split(change.base_command) if change is not None and change.base_command else shlex.split(command)
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
