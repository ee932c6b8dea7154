"""vLLM's benchmark files: benchmarks/benchmark_serving.py and `vllm bench serve` --save-result JSON."""

from __future__ import annotations

from typing import Any

from generator.project.runs.formats.common import (
    SERVING_METRICS,
    collect,
    put,
)
from generator.project.runs.run import (
    Run,
    integer,
    number,
    request_rate,
)


def is_vllm(obj: dict[str, Any]) -> bool:
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
    put(s, "engine", "vllm" if obj.get("backend") == "vllm" else None)
    put(s, "model", obj.get("model_id") if isinstance(obj.get("model_id"), str) else None)
    put(s, "num_prompts", integer(obj.get("num_prompts")))
    put(s, "max_concurrency", integer(obj.get("max_concurrency")))
    put(s, "request_rate", request_rate(obj.get("request_rate")))
    put(s, "burstiness", number(obj.get("burstiness")))
    put(s, "backend", obj.get("backend") if isinstance(obj.get("backend"), str) else None)
    put(s, "label", obj.get("label") if isinstance(obj.get("label"), str) else None)
    put(s, "date", obj.get("date") if isinstance(obj.get("date"), str) else None)
    put(s, "dataset", obj.get("dataset_name") if isinstance(obj.get("dataset_name"), str) else None)
    run = Run("", fmt, s, {})
    collect(obj, run, SERVING_METRICS)
    return run
