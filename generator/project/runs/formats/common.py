"""What the serving formats share: the metric keys, the settings they read, and the helpers that fill a `Run`."""

from __future__ import annotations

from typing import Any

from generator.model import metrics
from generator.project.runs.run import (
    BOOKKEEPING,
    Run,
    latency_metric,
    number,
    quantity,
)

# key in the file -> vocabulary name. The same quantity under different names is one metric;
# the table is the vocabulary's, so a record typed by hand accepts the same keys.
SERVING_METRICS: dict[str, str] = metrics.TOOL_KEYS


# Observations that are not metrics to compare: the MEASURED mean concurrency is not the
# configured limit, and token totals depend on the number of prompts.
MEASURED: dict[str, str] = {
    "concurrency": "concurrency",
    "total_input_tokens": "total_input_tokens",
    "total_input": "total_input_tokens",
    "total_input_text_tokens": "total_input_text_tokens",
    "total_input_vision_tokens": "total_input_vision_tokens",
    "total_output_tokens": "total_output_tokens",
    "total_output": "total_output_tokens",
    "total_output_tokens_retokenized": "total_output_tokens_retokenized",
    "max_concurrent_requests": "max_concurrent_requests",
    "spec_decode_acceptance_rate": "spec_decode_acceptance_rate_percent",
    "spec_decode_num_drafts": "spec_decode_num_drafts",
    "spec_decode_draft_tokens": "spec_decode_draft_tokens",
    "spec_decode_accepted_tokens": "spec_decode_accepted_tokens",
    "num_early_stopped": "num_early_stopped",
}


# Settings keys consumed by the importers, so they are not listed as unmapped.
SETTING_KEYS = frozenset(
    {
        "tag",
        "backend",
        "endpoint_type",
        "label",
        "dataset_name",
        "request_rate",
        "max_concurrency",
        "sharegpt_output_len",
        "random_input_len",
        "random_output_len",
        "random_range_ratio",
        "server_info",
        "date",
        "model_id",
        "tokenizer_id",
        "num_prompts",
        "burstiness",
        "best_of",
        "run_name",
        "batch_size",
        "input_len",
        "output_len",
        "steady_state_window_s",
        "cache_report",
        "ramp_up_strategy",
        "ramp_up_start_rps",
        "ramp_up_end_rps",
    }
)


def collect(obj: dict[str, Any], run: Run, table: dict[str, str]) -> None:
    for key, value in obj.items():
        if key in table:
            v = number(value)
            if v is not None and table[key] not in run.metrics:
                run.metrics[table[key]] = v
                run.keys[table[key]] = key
            continue
        name = latency_metric(key)
        if name is not None:
            v = number(value)
            if v is not None:
                run.metrics[name] = v
                run.keys[name] = key
            continue
        if key in MEASURED:
            q = quantity(value)
            if q is not None:
                run.measured[MEASURED[key]] = q
            continue
        # Per-request arrays and nested dumps are not results; scalar leftovers are listed.
        if key not in SETTING_KEYS and not isinstance(value, list | dict) and value is not None:
            run.unmapped.append(key)


def engine_of_backend(backend: Any) -> str | None:
    """The serving engine a benchmark backend name implies, when it implies one."""
    if not isinstance(backend, str):
        return None
    name = backend.lower()
    for engine in ("sglang", "vllm", "lmdeploy", "trt"):
        if name.startswith(engine):
            return {"trt": "tensorrt-llm"}.get(engine, engine)
    return None


def put(settings: dict[str, Any], key: str, value: Any) -> None:
    if value is not None and value != "":
        settings[key] = value


def seconds(run: Run, obj: dict[str, Any], key: str, name: str) -> None:
    v = number(obj.get(key))
    if v is not None:
        run.metrics[name] = v * 1000.0
        run.keys[name] = key
        run.conversions[name] = "s -> ms"


def plain(run: Run, obj: dict[str, Any], key: str, name: str) -> None:
    v = number(obj.get(key))
    if v is not None:
        run.metrics[name] = v
        run.keys[name] = key


def leftovers(obj: dict[str, Any], run: Run, used: set[str]) -> None:
    for key, value in obj.items():
        if key in used or key in SETTING_KEYS:
            continue
        if key in MEASURED:
            q = quantity(value)
            if q is not None:
                run.measured[MEASURED[key]] = q
        elif value is not None and not isinstance(value, list | dict):
            run.unmapped.append(key)


def usable(run: Run) -> bool:
    return any(name not in BOOKKEEPING for name in run.metrics)
