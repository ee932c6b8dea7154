"""The JSON Schema of records and campaign.yaml, generated from the models.

The schema is for editors (completion and inline errors through the yaml-language-server
line at the top of each record) and for other tools; `improvements check` stays the judge,
since some rules (metric vocabulary details, status rules, cross-file references) are more
than a JSON Schema can say. The committed copies under schema/ are regenerated with
`improvements schema --which record --output schema/record.schema.json` (and the same for
campaign); a test fails when they are stale.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

DIALECT = "https://json-schema.org/draft/2020-12/schema"
WHICH = ("record", "campaign")
TITLES = {
    "record": "An improvement record (improvements/NN-slug.yaml)",
    "campaign": "The campaign (improvements/campaign.yaml)",
}


def metric_name_pattern(own: Iterable[str] = ()) -> str:
    """A regex for the metric vocabulary's names, so editors flag an unknown metric early.

    `own` adds a campaign's own metric names (`metrics:` in campaign.yaml).
    """
    import re

    from generator.model import metrics

    fixed = "|".join(re.escape(n) for n in sorted(metrics._FIXED))  # the fixed names are the vocabulary's data
    latency = metrics._LATENCY_RE.pattern.removeprefix("^").removesuffix("$")
    custom = "".join(f"|{re.escape(n)}" for n in sorted(own))
    # The benchmark tools' own keys are accepted too (`p99_ttft_ms` is `ttft_p99`).
    tools = "".join(f"|{re.escape(n)}" for n in sorted(set(metrics.TOOL_KEYS) - set(metrics._FIXED)))
    tool_latency = metrics.LATENCY_KEY.pattern.removeprefix("^").removesuffix("$")
    return f"^(?:{fixed}|{latency}{tools}|{tool_latency}{custom})$"


def _generator(own: Iterable[str] = ()) -> type:
    from pydantic.json_schema import GenerateJsonSchema

    from generator.model import result as result_model

    pattern = metric_name_pattern(own)

    class Generate(GenerateJsonSchema):
        def function_after_schema(self, schema: Any) -> Any:
            inner = super().function_after_schema(schema)
            if schema["function"].get("function") is result_model._known_metric:
                return {**inner, "pattern": pattern}
            return inner

    return Generate


def _allow_flag_strings(defs: dict[str, Any]) -> None:
    """A flag may be written as "--flag value" (the model parses the string before validating)."""
    flag = defs.get("Flag")
    if flag is None:
        return
    pattern = flag["properties"]["flag"]["pattern"].removesuffix("$") + r"(?:\s.*)?$"
    text = {"type": "string", "pattern": pattern, "description": 'A flag and its value as one string: "--flag value".'}
    mapping = {k: v for k, v in flag.items() if k != "title"}
    defs["Flag"] = {"anyOf": [text, mapping], "title": flag.get("title", "Flag")}


def _metric_keys(node: Any, pattern: str) -> None:
    """pydantic writes pattern-named keys as patternProperties, which lets any other key through;
    say instead that every key must be a known metric."""
    if isinstance(node, dict):
        props = node.get("patternProperties")
        if isinstance(props, dict) and list(props) == [pattern]:
            del node["patternProperties"]
            node["propertyNames"] = {"pattern": pattern}
            node["additionalProperties"] = props[pattern]
        for value in node.values():
            _metric_keys(value, pattern)
    elif isinstance(node, list):
        for value in node:
            _metric_keys(value, pattern)


def _numbers_as_text(node: Any) -> None:
    """Text fields accept numbers too, as the models do (a version `0.5` is text `0.5`)."""
    if isinstance(node, dict):
        if node.get("type") == "string" and not ({"enum", "const", "format", "pattern"} & node.keys()):
            node["type"] = ["string", "number"]
        for value in node.values():
            _numbers_as_text(value)
    elif isinstance(node, list):
        for value in node:
            _numbers_as_text(value)


def schema(which: str, own_metrics: Iterable[str] = ()) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a record or of campaign.yaml.

    `own_metrics` are a campaign's own metric names, which its records may use; without
    them the schema knows the built-in vocabulary only.
    """
    from generator.model.campaign import Campaign
    from generator.model.record import Record

    model = Record if which == "record" else Campaign
    out: dict[str, Any] = model.model_json_schema(mode="validation", schema_generator=_generator(own_metrics))
    _allow_flag_strings(out.get("$defs", {}))
    _metric_keys(out, metric_name_pattern(own_metrics))
    _numbers_as_text(out)
    return {"$schema": DIALECT, **out, "title": TITLES[which]}


def schema_text(which: str | None, own_metrics: Iterable[str] = ()) -> str:
    """The schema as JSON text; both schemas keyed by name when `which` is None."""
    data = schema(which, own_metrics) if which else {name: schema(name, own_metrics) for name in WHICH}
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
