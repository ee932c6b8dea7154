"""`import_formats:` in campaign.yaml: a harness's own benchmark file read without code, each
key of a row named as a metric (in its unit), a setting or a fact of provenance."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import AfterValidator, Field, ValidationInfo, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError, ValidationError

from generator.model import metrics
from generator.model.result import MetricName, NonEmpty, Strict, context_units
from generator.model.settings import MAPPED_SETTINGS

# --- import_formats: a harness's own file read without code ----------------------------


def _dotted_path(path: str) -> str:
    # A key that holds a dot itself (`p99.9_ttft_ms`) is found whole when reading a row, so the
    # only path refused is one with an empty level, which no key could match.
    if any(part.strip() == "" for part in path.split(".")):
        raise ValueError(
            f"`{path}` has an empty level; a path is the keys of a row from the outside in, joined by "
            "`.` (`stats.ttft_p99_s`)"
        )
    return path


# A key in a row, its levels joined by dots: `stats.ttft_p99_s`.
DottedPath = Annotated[str, AfterValidator(_dotted_path)]
# The run settings a mapping may fill (`generator.model.settings.MAPPED_SETTINGS`): a Literal at
# run time, so the schema and the error list the names; plain text to the type checker, which
# cannot read a Literal from a tuple.
if TYPE_CHECKING:
    MappedSetting = str
else:
    MappedSetting = Literal[MAPPED_SETTINGS]
# The built-in formats' names (`generator.project.runs.formats.registry.FORMATS`, a test keeps them
# equal): a campaign's own format may not take one, since a run's format says who read it.
BUILTIN_FORMATS = frozenset(
    {
        "sglang-bench-serving",
        "sglang-bench-one-batch",
        "sglang-bench-one-batch-server",
        "vllm-benchmark-serving",
        "vllm-bench-serve",
        "serving-console",
    }
)


class ProvenanceFile(Strict):
    """A fact the harness wrote once for the whole measurement, in a JSON file beside the rows."""

    # Relative to the campaign folder (the one that holds improvements/).
    file: NonEmpty
    path: DottedPath


# A provenance fact's name: the ones pages know (`engine_version`, `hardware`, `date`, ...) or
# any other in snake case, shown with its underscores as spaces (`driver`, `cuda`, `torch`).
ProvenanceName = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$")]


class MappedMetric(Strict):
    """Where a metric is in a row, and the unit the file writes it in when not the metric's own."""

    path: DottedPath
    unit: NonEmpty | None = None


SkipValue = bool | int | float | str | None


class ImportFormat(Strict):
    """A benchmark file of another harness: which keys of a row are which metric and setting.

    The file is JSON (one object, a list, or objects one per line) or CSV with a header line;
    each object or CSV row is one run, or the list at `rows` inside each object is.
    """

    description: str | None = None
    rows: DottedPath | None = None
    # Rows that are not measurements (warm-ups): a row whose key holds the value is left out.
    skip: dict[DottedPath, SkipValue] = Field(default_factory=dict)
    metrics: Annotated[dict[MetricName, DottedPath | MappedMetric], Field(min_length=1)]
    # `launch` may also name a key of a JSON file beside the rows: one launch for the whole file.
    settings: dict[MappedSetting, DottedPath | ProvenanceFile] = Field(default_factory=dict)
    # Where it was measured: a fact's name -> a key of the row, or a key of a JSON file beside it.
    provenance: dict[ProvenanceName, DottedPath | ProvenanceFile] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _units_convert(self, info: ValidationInfo) -> ImportFormat:
        own = context_units(info)
        errors: list[InitErrorDetails] = []
        for name, spec in self.metrics.items():
            if not isinstance(spec, MappedMetric) or spec.unit is None:
                continue
            known = metrics.lookup(name)
            to = known.unit if known is not None else own.get(name, spec.unit)
            if metrics.conversion(spec.unit, to) is None:
                hint = f"time converts between {', '.join(metrics.TIME_UNITS)}" if to in metrics.TIME_UNITS else ""
                errors.append(
                    InitErrorDetails(
                        type=PydanticCustomError(
                            "unit_mismatch",
                            "`{name}` is in {to}; a value in `{unit}` cannot be converted to it{more}",
                            {"name": name, "to": to, "unit": spec.unit, "more": f" ({hint})" if hint else ""},
                        ),
                        loc=("metrics", name, "unit"),
                        input=spec.unit,
                    )
                )
        for setting, target in self.settings.items():
            if isinstance(target, ProvenanceFile) and setting != "launch":
                errors.append(
                    InitErrorDetails(
                        type=PydanticCustomError(
                            "row_setting",
                            "`{setting}` is read from each row: give the key, not a file",
                            {"setting": setting},
                        ),
                        loc=("settings", setting),
                        input=target.model_dump(),
                    )
                )
        if self.settings.get("concurrency") and self.settings.get("max_concurrency"):
            errors.append(
                InitErrorDetails(
                    type=PydanticCustomError(
                        "same_setting", "`concurrency` is `max_concurrency`; map one of the two", {}
                    ),
                    loc=("settings", "max_concurrency"),
                    input=self.settings["max_concurrency"],
                )
            )
        if errors:
            # Raised with their own places, so each points at its unit in campaign.yaml.
            raise ValidationError.from_exception_data("ImportFormat", errors)
        return self


def _own_format_name(name: str) -> str:
    if name in BUILTIN_FORMATS:
        raise ValueError(
            f"`{name}` is a built-in format, read from the content; give the campaign's own a name of its own"
        )
    return name


FormatName = Annotated[str, Field(pattern=r"^[a-z0-9]+(?:-[a-z0-9]+)*$"), AfterValidator(_own_format_name)]
