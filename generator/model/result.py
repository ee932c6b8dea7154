"""The value types every model shares, and a measured result: what a record's or the
campaign's `results` hold. `model` builds the record and campaign.yaml models on these.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from generator.model import metrics

SLUG_RE = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
Slug = Annotated[str, Field(pattern=SLUG_RE)]
NonEmpty = Annotated[str, Field(min_length=1)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, coerce_numbers_to_str=True)


# The sizes a measurement may have: past LARGEST a ratio or a chart's axis overflows a float,
# below SMALLEST a difference prints as float noise. Typed values and imported ones alike.
SMALLEST = 1e-15
LARGEST = 1e15


# A measured or predicted number: NaN and infinities (`.nan`, `.inf` in YAML) are not results,
# and they break every comparison and mean computed from them; nor is anything near the float
# limit (1e308), where a mean or a difference overflows. 1e15 is beyond any throughput or latency.
# Nor is anything so near zero (5e-324) that a change relative to it overflows into an infinite
# percent: with both bounds, every difference, ratio and mean the analysis takes stays finite.
def _comparable(value: float) -> float:
    if value != 0 and abs(value) < SMALLEST:
        raise ValueError(
            f"{value:g} is too close to zero to compare with; a measurement is 0 or at least 1e-15 in size"
        )
    return value


def _not_boolean(value: Any) -> Any:
    # pydantic takes `true` for 1 in a number or a tier: a slip, never what the user meant.
    if isinstance(value, bool):
        raise PydanticCustomError("boolean_number", "a boolean is not a number")
    return value


Finite = Annotated[
    float, Field(allow_inf_nan=False, ge=-1e15, le=1e15), BeforeValidator(_not_boolean), AfterValidator(_comparable)
]
# A count (requests in flight, tokens, GPUs): bounded like a measurement, so charts and means of
# it stay within what a float holds (a 400-digit concurrency overflowed the chart's axis).
MAX_COUNT = 10**15
Count = Annotated[int, Field(ge=1, le=MAX_COUNT), BeforeValidator(_not_boolean)]
Length = Annotated[int, Field(ge=0, le=MAX_COUNT), BeforeValidator(_not_boolean)]
Tier = Annotated[Literal[1, 2, 3], BeforeValidator(_not_boolean)]


class Range(Strict):
    """A value known only as a range, such as "about 8-11 tok/s"."""

    min: Finite
    max: Finite
    # The source gives the range as approximate ("~8-11 tok/s"); pages keep the "~".
    about: bool = False

    @property
    def middle(self) -> float:
        """The one number a range stands for where one is drawn or compared: its midpoint."""
        return (self.min + self.max) / 2

    @model_validator(mode="after")
    def _ordered(self) -> Range:
        if self.min > self.max:
            raise ValueError(f"min ({self.min:g}) is greater than max ({self.max:g})")
        return self


class Statistics(Strict):
    """Repetitions known only by their summary statistics, as a paper or a dashboard gives them.

    Compared as the repetitions would be (Welch from the statistics); without `sd` there is no
    spread, so the value is shown and never called better or worse. `min` and `max` (the range
    of the n repetitions, as a write-up gives "985 (970-1000) over 3 runs") are shown and drawn
    as the runs' range; they bound the sd only loosely (between R/sqrt(2(n-1)) and
    R/2*sqrt(n/(n-1)) for a range R), too loosely to test on, so they never make a direction.
    """

    mean: Finite
    sd: Annotated[float, Field(ge=0, le=1e15, allow_inf_nan=False)] | None = None
    n: Count
    min: Finite | None = None
    max: Finite | None = None

    @model_validator(mode="after")
    def _mean_within_range(self) -> Statistics:
        if (self.min is None) != (self.max is None):
            raise ValueError("`min` and `max` go together: the range of the n repetitions")
        if self.min is not None and self.max is not None:
            if not self.min <= self.mean <= self.max:
                raise ValueError(f"the mean ({self.mean:g}) lies outside min-max ({self.min:g} to {self.max:g})")
            if self.n == 1 and self.min != self.max:
                raise ValueError("one repetition has no range: `min` and `max` need n of 2 or more")
        return self


class About(Strict):
    """One approximate number ("~2.5"): a single sample, printed with its "~"."""

    value: Finite
    about: bool = True


# A number, repeated measurements of one quantity, a range, summary statistics or an approximate number.
MetricValue = Finite | Annotated[list[Finite], Field(min_length=1)] | Range | Statistics | About


def _known_metric(name: str, info: ValidationInfo) -> str:
    # The campaign's own metrics come as validation context (see `metric_context`): the
    # vocabulary is passed along, never registered anywhere.
    units = context_units(info)
    if metrics.lookup(name) is None and name not in units:
        canonical = metrics.tool_key(name)
        if canonical is not None:
            # A benchmark tool's own key (`p99_ttft_ms`) is its vocabulary name from here on.
            return canonical
        vocabulary = metrics.Vocabulary.of({n: (u, True, n) for n, u in units.items()})
        near = vocabulary.suggest(name)
        raise PydanticCustomError("unknown_metric", "unknown metric `{name}`", {"name": name, "suggestion": near or ""})
    return name


def context_units(info: ValidationInfo) -> dict[str, str]:
    context = info.context if isinstance(info.context, dict) else {}
    units = context.get("metric_units", {})
    return units if isinstance(units, dict) else {}


def metric_context(campaign_data: Any) -> dict[str, Any]:
    """The validation context of a campaign's files: its own metric names and their units.

    Read from the raw campaign data, so records still know the campaign's metrics when
    campaign.yaml has an error elsewhere (that error is reported on its own).
    """
    defined = campaign_data.get("metrics") if isinstance(campaign_data, dict) else None
    if not isinstance(defined, dict):
        return {}
    units = {
        str(name): str(d["unit"])
        for name, d in defined.items()
        if isinstance(d, dict) and isinstance(d.get("unit"), str) and metrics.lookup(str(name)) is None
    }
    return {"metric_units": dict(sorted(units.items()))} if units else {}


def _one_name_each(value: Any) -> Any:
    # `p99_ttft_ms` and `ttft_p99` are one metric: given both, one value would silently win.
    if isinstance(value, dict):
        seen: dict[str, str] = {}
        for key in value:
            name = metrics.tool_key(key) if isinstance(key, str) and metrics.lookup(key) is None else None
            canonical = name or key
            if isinstance(canonical, str) and canonical in seen:
                raise ValueError(f"`{seen[canonical]}` and `{key}` are the same metric (`{canonical}`); give it once")
            if isinstance(canonical, str):
                seen[canonical] = str(key)
    return value


MetricName = Annotated[str, AfterValidator(_known_metric)]
Metrics = Annotated[dict[MetricName, MetricValue], BeforeValidator(_one_name_each)]


class Workload(Strict):
    dataset: str | None = None
    input_len: Length | None = None
    output_len: Length | None = None
    num_prompts: Count | None = None
    note: str | None = None


class Ratio(Strict):
    """A change stated as a ratio, as a write-up states it: "106x lower" is
    `{ratio: 106, direction: lower}`, "doubles p50" `{ratio: 2, direction: higher}`, "~2x"
    `{ratio: 2, direction: higher, about: true}`.

    Like a reported percent, one stated number: never compared, never called better or worse,
    shown as written with its percent beside it (`percent`), read by guardrails at face value.
    """

    # How many times over (or under) the baseline: 1 or more, the direction says which way.
    ratio: Annotated[float, Field(ge=1, le=1e15, allow_inf_nan=False), BeforeValidator(_not_boolean)]
    direction: Literal["higher", "lower"]
    about: bool = False

    @property
    def percent(self) -> float:
        """The change in percent, raw sign: "2x higher" is +100, "106x lower" is -99.06."""
        return (self.ratio - 1) * 100 if self.direction == "higher" else (1 / self.ratio - 1) * 100

    @property
    def text(self) -> str:
        """As written: "106x lower", "~2x higher"."""
        return f"{'~' if self.about else ''}{self.ratio:g}x {self.direction}"


# A change as the source states it: percent (signed as the source signs it), a range of
# percents, or a ratio ("106x lower").
StatedChange = Finite | Range | Ratio


def stated_percent(value: StatedChange) -> float | Range:
    """A stated change in percent (a ratio turned into its percent), raw sign."""
    return value.percent if isinstance(value, Ratio) else value


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


class BaselineFrom(Strict):
    """Another result whose numbers are this result's baseline, so none is typed twice: another
    record's, or (without `record`) the campaign baseline's result of that label, at any load."""

    # Left out: the campaign baseline's results (`baseline.results` in campaign.yaml).
    record: Slug | None = None
    # A variant's label when the result is one of that record's variants' (an arm of an A/B).
    variant: NonEmpty | None = None
    result: NonEmpty

    @model_validator(mode="after")
    def _variant_of_a_record(self) -> BaselineFrom:
        if self.variant is not None and self.record is None:
            raise ValueError("`variant` names one of a record's variants; give that `record` too")
        return self


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


class SequentialDesign(Strict):
    """How `improvements run --until-decided` made a result: its blocks were looked at after each
    one, so the comparison reads the confidence sequence valid at every look, never the fixed-n t."""

    rule: Literal["t-confidence-sequence"] = "t-confidence-sequence"
    max_blocks: Count
    blocks_run: Count
    # Why it stopped, as the journal says ("decided after block 6", "planned blocks run").
    stopped: NonEmpty | None = None
    journal: NonEmpty | None = None


class EarlierAttempt(Strict):
    """An earlier attempt at this result's comparison that left no result (its runs lost, or never
    imported): the log it left, which the site publishes (redacted) and the page links, and what
    is known of it. Nothing is computed from it."""

    # A file under the campaign's folder, such as attempts/first-run.log.
    log: NonEmpty
    note: NonEmpty | None = None


class Result(Strict):
    label: NonEmpty
    # Requests in flight (the configured limit or batch size). Leave it out when unknown.
    concurrency: Count | None = None
    # Requests per second; "inf" for unlimited, "trace" for trace replay.
    request_rate: Annotated[float, Field(gt=0)] | Literal["inf", "trace"] | None = None
    workload: Workload | None = None
    metrics: Metrics = Field(default_factory=dict)
    baseline: Metrics = Field(default_factory=dict)
    # The baseline is that record's result (its numbers, typed or imported): measured on top of it.
    baseline_from: BaselineFrom | None = None
    # Imported runs (ids under results/runs/) instead of typed numbers: one id, or a list of
    # repetitions of one configuration (each run one sample). A tuple, not a list, so the
    # value stays hashable for code that looks a single id up.
    run: Slug | Annotated[tuple[Slug, ...], Field(min_length=1)] | None = None
    # The baseline's imported run, or its repetitions in order (`improvements run` names one per
    # block, so `paired` pairs block i with block i).
    baseline_run: Slug | Annotated[tuple[Slug, ...], Field(min_length=1)] | None = None
    # The repetitions and the baseline's are matched by position (same prompts, same seed):
    # the comparison uses the paired differences, and both sides need the same n.
    paired: bool = False
    # Made by `improvements run --until-decided`: how many blocks, under which rule.
    sequential: SequentialDesign | None = None
    # Earlier attempts at the same comparison that left only a log (`EarlierAttempt`).
    earlier_attempts: list[EarlierAttempt] = Field(default_factory=list)
    source: str | None = None
    # Evidence as the source gave it, never recomputed: numbers whose roles it does not give, a
    # change in percent (signed as the source signs it), and a plain qualitative finding.
    reported: list[Reported] = Field(default_factory=list)
    reported_change: dict[MetricName, StatedChange] = Field(default_factory=dict)
    finding: str | None = None
    note: str | None = None
    provenance: Provenance | None = None
    # The launch (server or process start) its repetitions came from: one name for all of them, or
    # one per repetition. Runs of one launch are one observation, not repetitions (decisions.md).
    # An imported run that names its own launch keeps it.
    launch: NonEmpty | Annotated[tuple[NonEmpty, ...], Field(min_length=1)] | None = None
    # The unit a metric's values (in `metrics` and `baseline`) are written in, when it is not
    # the metric's own: converted once, as the file is loaded.
    units: dict[MetricName, NonEmpty] = Field(default_factory=dict)

    @field_validator("request_rate")
    @classmethod
    def _unlimited(cls, v: float | str | None) -> float | str | None:
        # `.inf` and `inf` say the same; one spelling downstream (and none that JSON refuses).
        return "inf" if isinstance(v, float) and math.isinf(v) else v

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
        if self.baseline_from is not None and (self.baseline or self.baseline_run):
            raise ValueError(
                "`baseline_from` names the baseline; it replaces `baseline` and an imported run's `baseline_run`"
            )
        if self.baseline_from is not None and not self.metrics and self.run is None:
            raise ValueError("`baseline_from` is compared with `metrics`; give the result's `metrics`")
        if isinstance(self.launch, tuple):
            counts = {len(v) for v in self.metrics.values() if isinstance(v, list)} or {1}
            if counts != {len(self.launch)} and self.run is None:
                raise ValueError(
                    f"`launch` names {len(self.launch)} launch(es), one per repetition, but the metrics have "
                    f"{' or '.join(str(c) for c in sorted(counts))} repetition(s); give one name for all, or one each"
                )
            if self.run is not None and len(self.launch) != len(self.run_ids):
                raise ValueError(
                    f"`launch` names {len(self.launch)} launch(es), one per run, but `run` names {len(self.run_ids)}"
                )
        if self.sequential is not None and not self.paired:
            raise ValueError("`sequential` reads paired blocks: it needs `paired: true`")
        ids = self.run_ids
        if len(set(ids)) != len(ids):
            raise ValueError("`run` names the same run twice; each repetition is a different run")
        return self

    @model_validator(mode="after")
    def _in_own_units(self, info: ValidationInfo) -> Result:
        if not self.units:
            return self
        own = context_units(info)
        factors: dict[str, float] = {}
        for name, unit in self.units.items():
            known = metrics.lookup(name)
            to = known.unit if known is not None else own.get(name, unit)
            factor = metrics.conversion(unit, to)
            if factor is None:
                raise ValueError(f"`{name}` is in {to}; a value in `{unit}` cannot be converted to it")
            factors[name] = factor
        update = {
            "metrics": {k: _scaled(v, factors.get(k, 1.0)) for k, v in self.metrics.items()},
            "baseline": {k: _scaled(v, factors.get(k, 1.0)) for k, v in self.baseline.items()},
        }
        return self.model_copy(update=update)

    @property
    def run_ids(self) -> tuple[str, ...]:
        """The imported runs this result is made of, in order (one per repetition)."""
        if self.run is None:
            return ()
        return (self.run,) if isinstance(self.run, str) else tuple(self.run)

    @property
    def baseline_run_ids(self) -> tuple[str, ...]:
        """The baseline's imported runs this result names, in order (one per repetition)."""
        if self.baseline_run is None:
            return ()
        return (self.baseline_run,) if isinstance(self.baseline_run, str) else tuple(self.baseline_run)

    @property
    def has_reported(self) -> bool:
        """Evidence given only as the source reported it (never compared)."""
        return bool(self.reported or self.reported_change or self.finding)


def _scaled(value: Any, factor: float) -> Any:
    """`value` in another unit, in every shape a metric's value takes. Not bounded here:
    `checks/values.py` compares the converted value with the one written, and says where it left
    the sizes a measurement may have (1e15 s is 1e18 ms)."""
    if factor == 1.0:
        return value
    if isinstance(value, Range):
        return value.model_copy(update={"min": value.min * factor, "max": value.max * factor})
    if isinstance(value, Statistics):
        sd = None if value.sd is None else value.sd * factor
        # The range of the repetitions too: a mean in ms beside a range left in s read "11686
        # (mean of n=3, range 11.01-12.97)" (issue 51).
        low = None if value.min is None else value.min * factor
        high = None if value.max is None else value.max * factor
        return value.model_copy(update={"mean": value.mean * factor, "sd": sd, "min": low, "max": high})
    if isinstance(value, About):
        return value.model_copy(update={"value": value.value * factor})
    if isinstance(value, list):
        return [v * factor for v in value]
    return value * factor


def may_be_negative(name: str) -> bool:
    """Whether metric `name` may hold a negative value: a campaign's own metric may be signed; no
    built-in throughput, latency or count is negative (typed and imported values alike)."""
    return metrics.lookup(name) is None


def measurable(value: float) -> bool:
    """Whether a number is one a record may hold: finite, and 0 or within SMALLEST..LARGEST in size."""
    try:
        v = float(value)
    except OverflowError:  # an integer of hundreds of digits
        return False
    return math.isfinite(v) and (v == 0 or SMALLEST <= abs(v) <= LARGEST)
