"""The pasted console block "Serving Benchmark Result" that SGLang and vLLM both print."""

from __future__ import annotations

import re
from typing import Any

from generator.project.runs.formats.common import (
    engine_of_backend,
    put,
)
from generator.project.runs.run import (
    Run,
    integer,
    latency_metric,
    number,
    plain_number,
    quantity,
    request_rate,
)

CONSOLE_HEADER = re.compile(r"=+\s*Serving Benchmark Result\s*=+")


CONSOLE_END = re.compile(r"^\s*={10,}\s*$")


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
    return number(plain_number(text.rstrip("%")))


def _console_quantity(text: str) -> int | float | None:
    return quantity(plain_number(text))


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
                put(s, name, request_rate(value))
            elif name == "max_concurrency":
                v = _console_number(value)
                put(s, name, integer(v) if v is not None else None)
            else:
                put(s, name, value)
        else:
            run.unmapped.append(label)
    # SGLang prints its backend first; vLLM's block has no such line, and prints the request
    # rate only when it is not unlimited.
    s["client"] = "sglang bench_serving" if "backend" in s else "vllm bench serve"
    if "backend" not in s and "request_rate" not in s:
        s["request_rate"] = "inf"
    put(s, "engine", engine_of_backend(s.get("backend")))
    run.notes.append("Read from the console block, which rounds values to two decimals.")
    return run, pairs
