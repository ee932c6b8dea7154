"""Benchmark output formats: detection from the keys, and normalization to runs.

Every importer reads one JSON object (or one console block) and returns a `Run` without id
or source. The format is told from the keys alone, never from the file name: `result.jsonl`
is the default name of two different SGLang tools.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from generator.model import metrics
from generator.project.runs.run import (
    BOOKKEEPING,
    Run,
    integer,
    latency_metric,
    number,
    quantity,
    request_rate,
)

# name -> what users know it as; listed in every "unrecognised" error.
FORMATS: dict[str, str] = {
    "sglang-bench-serving": "SGLang bench_serving --output-file JSONL (2024, 2025, 2026 with server_info)",
    "sglang-bench-one-batch": "SGLang bench_one_batch result.jsonl",
    "sglang-bench-one-batch-server": "SGLang bench_one_batch_server result.jsonl",
    "vllm-benchmark-serving": "vLLM benchmarks/benchmark_serving.py --save-result JSON",
    "vllm-bench-serve": "vLLM `vllm bench serve` --save-result / --append-result JSON",
    "serving-console": 'the pasted console block "Serving Benchmark Result" (SGLang or vLLM)',
}


def known_formats() -> str:
    return "; ".join(FORMATS.values())


# --- shared serving metrics -------------------------------------------------------------------

# key in the file -> vocabulary name. The same quantity under different names is one metric;
# the table is the vocabulary's, so a record typed by hand accepts the same keys.
_SERVING_METRICS: dict[str, str] = metrics.TOOL_KEYS

# Observations that are not metrics to compare: the MEASURED mean concurrency is not the
# configured limit, and token totals depend on the number of prompts.
_MEASURED: dict[str, str] = {
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
_SETTING_KEYS = frozenset(
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


def _collect(obj: dict[str, Any], run: Run, table: dict[str, str]) -> None:
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
        if key in _MEASURED:
            q = quantity(value)
            if q is not None:
                run.measured[_MEASURED[key]] = q
            continue
        # Per-request arrays and nested dumps are not results; scalar leftovers are listed.
        if key not in _SETTING_KEYS and not isinstance(value, list | dict) and value is not None:
            run.unmapped.append(key)


def _engine_of_backend(backend: Any) -> str | None:
    """The serving engine a benchmark backend name implies, when it implies one."""
    if not isinstance(backend, str):
        return None
    name = backend.lower()
    for engine in ("sglang", "vllm", "lmdeploy", "trt"):
        if name.startswith(engine):
            return {"trt": "tensorrt-llm"}.get(engine, engine)
    return None


def _put(settings: dict[str, Any], key: str, value: Any) -> None:
    if value is not None and value != "":
        settings[key] = value


# --- SGLang bench_serving ---------------------------------------------------------------------


def _is_sglang_serving(obj: dict[str, Any]) -> bool:
    if "server_info" in obj and "output_throughput" in obj:
        return True
    has_sglang_keys = any(k in obj for k in ("random_input_len", "sharegpt_output_len", "random_range_ratio"))
    return has_sglang_keys and "output_throughput" in obj and "model_id" not in obj


def _server_args(info: Any) -> dict[str, Any]:
    if not isinstance(info, dict):
        return {}
    # Prefill/decode disaggregation reports per role; the decode side serves the tokens.
    if "tp_size" not in info and isinstance(info.get("decode"), list) and info["decode"]:
        first = info["decode"][0]
        return first if isinstance(first, dict) else {}
    return info


def sglang_serving(obj: dict[str, Any]) -> Run:
    s: dict[str, Any] = {"client": "sglang bench_serving"}
    info = _server_args(obj.get("server_info"))
    _put(s, "engine", "sglang" if info else _engine_of_backend(obj.get("backend")))
    _put(s, "engine_version", info.get("version") if isinstance(info.get("version"), str) else None)
    model = info.get("served_model_name") or info.get("model_path")
    _put(s, "model", model if isinstance(model, str) else None)
    tp, dp, pp = integer(info.get("tp_size")), integer(info.get("dp_size")), integer(info.get("pp_size"))
    ep = integer(info.get("ep_size"))
    for key, value in (("tp_size", tp), ("dp_size", dp), ("pp_size", pp), ("ep_size", ep)):
        _put(s, key, value)
    if tp is not None:
        # With DP attention the data-parallel ranks live inside the TP group; without it each
        # data-parallel replica has its own TP group.
        replicas = 1 if info.get("enable_dp_attention") else (dp or 1)
        s["gpu_count"] = tp * (pp or 1) * replicas
    dataset = obj.get("dataset_name")
    _put(s, "dataset", dataset if isinstance(dataset, str) else None)
    if isinstance(dataset, str) and dataset.startswith("random"):
        # The random lengths are only the workload when the dataset is random; sharegpt runs
        # carry the unused defaults.
        _put(s, "input_len", integer(obj.get("random_input_len")))
        _put(s, "output_len", integer(obj.get("random_output_len")))
        _put(s, "range_ratio", number(obj.get("random_range_ratio")))
    else:
        _put(s, "output_len", integer(obj.get("sharegpt_output_len")))
    _put(s, "max_concurrency", integer(obj.get("max_concurrency")))
    _put(s, "request_rate", request_rate(obj.get("request_rate")))
    _put(s, "backend", obj.get("backend") if isinstance(obj.get("backend"), str) else None)
    _put(s, "tag", obj.get("tag") if isinstance(obj.get("tag"), str) else None)
    run = Run("", "sglang-bench-serving", s, {})
    _collect(obj, run, _SERVING_METRICS)
    if run.metrics.get("accept_length") is not None and run.metrics["accept_length"] <= 0:
        del run.metrics["accept_length"]
    return run


# --- SGLang single-batch benchmarks -----------------------------------------------------------


def _is_one_batch(obj: dict[str, Any]) -> bool:
    return "batch_size" in obj and "prefill_latency" in obj


def _is_one_batch_server(obj: dict[str, Any]) -> bool:
    return "batch_size" in obj and "prefill_latency" not in obj and ("latency" in obj or "last_gen_throughput" in obj)


def _batch_settings(obj: dict[str, Any], client: str) -> dict[str, Any]:
    s: dict[str, Any] = {"client": client}
    _put(s, "input_len", integer(obj.get("input_len")))
    _put(s, "output_len", integer(obj.get("output_len")))
    _put(s, "batch_size", integer(obj.get("batch_size")))
    _put(s, "run_name", obj.get("run_name") if isinstance(obj.get("run_name"), str) else None)
    return s


def _seconds(run: Run, obj: dict[str, Any], key: str, name: str) -> None:
    v = number(obj.get(key))
    if v is not None:
        run.metrics[name] = v * 1000.0
        run.keys[name] = key
        run.conversions[name] = "s -> ms"


def _plain(run: Run, obj: dict[str, Any], key: str, name: str) -> None:
    v = number(obj.get(key))
    if v is not None:
        run.metrics[name] = v
        run.keys[name] = key


def _leftovers(obj: dict[str, Any], run: Run, used: set[str]) -> None:
    for key, value in obj.items():
        if key in used or key in _SETTING_KEYS:
            continue
        if key in _MEASURED:
            q = quantity(value)
            if q is not None:
                run.measured[_MEASURED[key]] = q
        elif value is not None and not isinstance(value, list | dict):
            run.unmapped.append(key)


def sglang_one_batch(obj: dict[str, Any]) -> Run:
    s = _batch_settings(obj, "sglang bench_one_batch")
    # bench_one_batch runs the engine in-process: the engine is SGLang by construction.
    s["engine"] = "sglang"
    run = Run("", "sglang-bench-one-batch", s, {})
    _seconds(run, obj, "prefill_latency", "prefill_latency")
    _plain(run, obj, "prefill_throughput", "prefill_throughput")
    _seconds(run, obj, "median_decode_latency", "decode_latency")
    _plain(run, obj, "median_decode_throughput", "decode_throughput")
    _seconds(run, obj, "total_latency", "total_latency")
    _plain(run, obj, "overall_throughput", "overall_throughput")
    run.notes.append("bench_one_batch writes latencies in seconds; they are converted to milliseconds.")
    _leftovers(obj, run, set(run.keys.values()))
    return run


def sglang_one_batch_server(obj: dict[str, Any]) -> Run:
    s = _batch_settings(obj, "sglang bench_one_batch_server")
    _put(s, "steady_state_window_s", number(obj.get("steady_state_window_s")))
    run = Run("", "sglang-bench-one-batch-server", s, {})
    _seconds(run, obj, "latency", "total_latency")
    _seconds(run, obj, "last_ttft", "last_ttft")
    for key in (
        "input_throughput",
        "output_throughput",
        "overall_throughput",
        "last_gen_throughput",
        "steady_state_output_throughput",
        "cache_hit_rate",
    ):
        _plain(run, obj, key, key)
    acc = number(obj.get("acc_length"))
    if acc is not None and acc > 0:  # -1 means not available
        run.metrics["accept_length"] = acc
        run.keys["accept_length"] = "acc_length"
    run.notes.append("bench_one_batch_server writes latencies in seconds; they are converted to milliseconds.")
    _leftovers(obj, run, {*run.keys.values(), "acc_length", "profile_link"})
    return run


# --- vLLM ---------------------------------------------------------------------------------------


def _is_vllm(obj: dict[str, Any]) -> bool:
    markers = ("model_id", "request_goodput:", "total_token_throughput", "endpoint_type", "burstiness")
    return any(k in obj for k in markers) and ("output_throughput" in obj or "request_throughput" in obj)


def _is_vllm_current(obj: dict[str, Any]) -> bool:
    # The current CLI added these; the legacy script wrote `request_goodput:` with a colon.
    return "request_goodput:" not in obj and any(
        k in obj for k in ("endpoint_type", "label", "failed", "request_goodput", "max_concurrent_requests")
    )


def vllm_serving(obj: dict[str, Any]) -> Run:
    current = _is_vllm_current(obj)
    fmt = "vllm-bench-serve" if current else "vllm-benchmark-serving"
    s: dict[str, Any] = {"client": "vllm bench serve" if current else "vllm benchmark_serving.py"}
    # The backend names the API the client spoke (openai, vllm, ...), which any engine may serve.
    _put(s, "engine", "vllm" if obj.get("backend") == "vllm" else None)
    _put(s, "model", obj.get("model_id") if isinstance(obj.get("model_id"), str) else None)
    _put(s, "num_prompts", integer(obj.get("num_prompts")))
    _put(s, "max_concurrency", integer(obj.get("max_concurrency")))
    _put(s, "request_rate", request_rate(obj.get("request_rate")))
    _put(s, "burstiness", number(obj.get("burstiness")))
    _put(s, "backend", obj.get("backend") if isinstance(obj.get("backend"), str) else None)
    _put(s, "label", obj.get("label") if isinstance(obj.get("label"), str) else None)
    _put(s, "date", obj.get("date") if isinstance(obj.get("date"), str) else None)
    _put(s, "dataset", obj.get("dataset_name") if isinstance(obj.get("dataset_name"), str) else None)
    run = Run("", fmt, s, {})
    _collect(obj, run, _SERVING_METRICS)
    return run


# --- detection ----------------------------------------------------------------------------------

# Most specific first: the single-batch tools have few keys and no overlap with serving ones.
IMPORTERS: list[tuple[Callable[[dict[str, Any]], bool], Callable[[dict[str, Any]], Run]]] = [
    (_is_one_batch, sglang_one_batch),
    (_is_one_batch_server, sglang_one_batch_server),
    (_is_vllm, vllm_serving),
    (_is_sglang_serving, sglang_serving),
]


def normalize_object(obj: Any) -> Run | None:
    """The run in one JSON object, or None when no importer recognises it."""
    if not isinstance(obj, dict):
        return None
    for detect, importer in IMPORTERS:
        if detect(obj):
            return importer(obj)
    return None


def usable(run: Run) -> bool:
    return any(name not in BOOKKEEPING for name in run.metrics)


# --- the console block ------------------------------------------------------------------------

CONSOLE_HEADER = re.compile(r"=+\s*Serving Benchmark Result\s*=+")
_CONSOLE_END = re.compile(r"^\s*={10,}\s*$")
_CONSOLE_LINE = re.compile(r"^\s*(?P<label>[^:]+?):\s+(?P<value>\S.*?)\s*$")
_CONSOLE_LATENCY = re.compile(
    r"^(?P<stat>Mean|Median|Std|P\d{1,2}(?:\.\d+)?)\s+(?P<family>TTFT|TPOT|ITL|E2EL|E2E Latency)\s+\(ms\)$",
    re.IGNORECASE,
)
_CONSOLE_FAMILY = {"ttft": "ttft", "tpot": "tpot", "itl": "itl", "e2el": "e2e_latency", "e2e latency": "e2e_latency"}

# label (lower case) -> ("metric" | "measured" | setting name, vocabulary or measured name)
_CONSOLE_LABELS: dict[str, tuple[str, str]] = {
    "successful requests": ("metric", "completed"),
    "failed requests": ("metric", "failed"),
    "benchmark duration (s)": ("metric", "duration"),
    "request throughput (req/s)": ("metric", "request_throughput"),
    "request goodput (req/s)": ("metric", "goodput"),
    "input token throughput (tok/s)": ("metric", "input_throughput"),
    "output token throughput (tok/s)": ("metric", "output_throughput"),
    "peak output token throughput (tok/s)": ("metric", "max_output_throughput"),
    "total token throughput (tok/s)": ("metric", "total_throughput"),
    "accept length": ("metric", "accept_length"),
    "acceptance length": ("metric", "accept_length"),
    "concurrency": ("measured", "concurrency"),
    "peak concurrent requests": ("measured", "max_concurrent_requests"),
    "total input tokens": ("measured", "total_input_tokens"),
    "total generated tokens": ("measured", "total_output_tokens"),
    "total generated tokens (retokenized)": ("measured", "total_output_tokens_retokenized"),
    "acceptance rate (%)": ("measured", "spec_decode_acceptance_rate_percent"),
    "backend": ("setting", "backend"),
    "traffic request rate": ("setting", "request_rate"),
    "request rate configured (rps)": ("setting", "request_rate"),
    "max request concurrency": ("setting", "max_concurrency"),
    "maximum request concurrency": ("setting", "max_concurrency"),
}


def _console_number(text: str) -> float | None:
    try:
        return number(float(text.rstrip("%")))
    except ValueError:
        return None


def _console_quantity(text: str) -> int | float | None:
    return int(text) if re.fullmatch(r"-?\d+", text) else _console_number(text)


def console_block(lines: list[str]) -> tuple[Run, dict[str, str]]:
    """The run in one console block (the lines between its header and closing rule).

    Returns the run and the label/value pairs read, which identify the run.
    """
    pairs: dict[str, str] = {}
    s: dict[str, Any] = {}
    run = Run("", "serving-console", s, {})
    for line in lines:
        m = _CONSOLE_LINE.match(line)
        if m is None:
            continue
        label, value = m["label"].strip(), m["value"].strip()
        pairs[label] = value
        lat = _CONSOLE_LATENCY.match(label)
        if lat is not None:
            stat = lat["stat"].lower()
            name = f"{_CONSOLE_FAMILY[lat['family'].lower()]}_{stat}"
            v = _console_number(value)
            if v is not None and latency_metric(f"{stat}_{lat['family'].lower().replace(' ', '_')}_ms") == name:
                run.metrics[name] = v
                run.keys[name] = label
            elif v is not None:
                run.unmapped.append(label)
            continue
        kind, name = _CONSOLE_LABELS.get(label.lower(), ("", ""))
        if kind == "metric":
            v = _console_number(value)
            if v is not None:
                run.metrics[name] = v
                run.keys[name] = label
        elif kind == "measured":
            q = _console_quantity(value)
            if q is not None:
                run.measured[name] = q
        elif kind == "setting":
            if name == "request_rate":
                _put(s, name, request_rate(value))
            elif name == "max_concurrency":
                v = _console_number(value)
                _put(s, name, integer(v) if v is not None else None)
            else:
                _put(s, name, value)
        else:
            run.unmapped.append(label)
    # SGLang prints its backend first; vLLM's block has no such line, and prints the request
    # rate only when it is not unlimited.
    s["client"] = "sglang bench_serving" if "backend" in s else "vllm bench serve"
    if "backend" not in s and "request_rate" not in s:
        s["request_rate"] = "inf"
    _put(s, "engine", _engine_of_backend(s.get("backend")))
    run.notes.append("Read from the console block, which rounds values to two decimals.")
    return run, pairs
