"""campaign.yaml as pydantic models: what a campaign says once for all its records.

The model, hardware and engine (`stack`), the baseline it is measured against, its goals, its
own metrics and its decision rule. A record's own format is in `record`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    Field,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError, ValidationError

from generator.model import metrics
from generator.model.import_format import BUILTIN_FORMATS, FormatName, ImportFormat
from generator.model.metrics import Vocabulary
from generator.model.record import Reference, inside_folder, shell_words
from generator.model.result import (
    Count,
    Finite,
    MetricName,
    MetricValue,
    NonEmpty,
    Provenance,
    Result,
    Strict,
    Tier,
)
from generator.model.runconfig import RunConfig
from generator.model.stack import Engine, Hardware, ModelInfo


class Baseline(Strict):
    label: NonEmpty
    command: Annotated[NonEmpty, AfterValidator(shell_words)]
    # True when the command was not recorded as run but written out from what the sources say
    # (pages label it a reconstruction); `command_note` says what it rests on.
    command_reconstructed: bool = False
    command_note: str | None = None
    # The folder the command runs from, relative to the campaign's root (`data`); pages and
    # `stack` say it under the command. A relative path that stays inside the campaign.
    workdir: Annotated[NonEmpty, AfterValidator(inside_folder)] | None = None
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
    concurrency: Count | None = None
    # Any value shape: a number, repetitions, a range, statistics or an approximate number (~100).
    current: MetricValue | None = None
    note: str | None = None


def _latency_metric(name: str) -> str:
    metric = metrics.lookup(name)
    if metric is not None and not metrics.is_latency(metric):
        raise ValueError(
            f"`{name}` is not a latency; an SLO limits latencies in ms where lower is better "
            "(such as ttft_p99, tpot_p99, itl_p99, e2e_latency_p99)"
        )
    return name


# A latency limit of the SLO: a known latency metric (ms, lower is better) and a positive limit in ms.
SloMetric = Annotated[MetricName, AfterValidator(_latency_metric)]
SloLimit = Annotated[float, Field(allow_inf_nan=False, gt=0, le=1e15)]


class MetricDefinition(Strict):
    """A metric of the campaign's own, beside the built-in vocabulary."""

    unit: NonEmpty
    better: Literal["higher", "lower"]
    label: NonEmpty
    note: str | None = None


def _new_metric_name(name: str) -> str:
    if metrics.lookup(name) is not None:
        raise ValueError(f"`{name}` is a built-in metric already; give the campaign's own a name of its own")
    if metrics.tool_key(name) is not None:
        raise ValueError(
            f"`{name}` is how benchmark tools write `{metrics.tool_key(name)}`; "
            "give the campaign's own a name of its own"
        )
    return name


CustomMetricName = Annotated[str, Field(pattern=metrics.NAME_RE), AfterValidator(_new_metric_name)]


class DecisionRule(Strict):
    """How a comparison becomes a decision (docs/guide/decisions.md)."""

    # The metric that ranks records and says "better"; a record may name its own in `expected.metric`.
    primary_metric: MetricName
    # The false-alarm rate accepted: `better`/`worse` read the (1 - alpha) interval, `no-change`
    # the (1 - 2 alpha) one (TOST at alpha), so alpha stays below one half.
    alpha: Annotated[float, Field(gt=0, lt=0.5)] = 0.05
    # Percent: the smallest change that matters.
    min_effect: Annotated[float, Field(ge=0, le=1000, allow_inf_nan=False)] = 1.0
    # Metric -> margin in percent: a win must not make this metric worse by more than the margin
    # (non-inferiority, read from the 1 - 2 alpha interval).
    guardrails: dict[MetricName, Annotated[float, Field(ge=0, le=1000, allow_inf_nan=False)]] = Field(
        default_factory=dict
    )


class Campaign(Strict):
    name: NonEmpty
    series: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]*$")]
    description: str | None = None
    model: ModelInfo
    hardware: Hardware
    engine: Engine
    baseline: Baseline
    goals: list[Goal] = Field(default_factory=list)
    decision: DecisionRule | None = None
    tiers: dict[Tier, NonEmpty]
    context: list[str] = Field(default_factory=list)
    references: list[Reference] = Field(default_factory=list)
    # Where the generated series goes, relative to the repository root.
    docs_dir: str = "docs/improvements"
    # Latency limits (ms) that capacity under the SLO is measured against: metric -> limit.
    slo: dict[SloMetric, SloLimit] = Field(default_factory=dict)
    # Metrics of the campaign's own: name -> unit, which direction is better, label.
    metrics: dict[CustomMetricName, MetricDefinition] = Field(default_factory=dict)
    # Other harnesses' files read by `improvements import FILE --format NAME`: name -> mapping.
    import_formats: dict[FormatName, ImportFormat] = Field(default_factory=dict)
    # How `improvements run` starts and benchmarks a record's arms.
    run: RunConfig | None = None

    def vocabulary(self) -> Vocabulary:
        """The built-in metrics and this campaign's own."""
        return Vocabulary.of({n: (d.unit, d.better == "higher", d.label) for n, d in self.metrics.items()})

    @field_validator("tiers")
    @classmethod
    def _all_tiers(cls, v: dict[int, str]) -> dict[int, str]:
        missing = sorted({1, 2, 3} - set(v))
        if missing:
            raise ValueError(f"tiers must describe tiers 1, 2 and 3 (missing {missing})")
        return v

    @model_validator(mode="after")
    def _run_format(self) -> Campaign:
        if self.run is not None and self.run.format not in BUILTIN_FORMATS | set(self.import_formats):
            known = ", ".join(sorted(BUILTIN_FORMATS | set(self.import_formats)))
            raise ValidationError.from_exception_data(
                "Campaign",
                [
                    InitErrorDetails(
                        type=PydanticCustomError(
                            "unknown_format",
                            "`{name}` is neither a built-in format nor one of `import_formats`: {known}",
                            {"name": self.run.format, "known": known},
                        ),
                        loc=("run", "format"),
                        input=self.run.format,
                    )
                ],
            )
        return self
