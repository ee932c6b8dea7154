"""The one registry of built-in formats: their names, and which importer reads a JSON object.

Every importer reads one JSON object (or one console block) and returns a `Run` without id
or source. The format is told from the keys alone, never from the file name: `result.jsonl`
is the default name of two different SGLang tools.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from generator.project.runs.formats.sglang import (
    is_one_batch,
    is_one_batch_server,
    is_sglang_serving,
    sglang_one_batch,
    sglang_one_batch_server,
    sglang_serving,
)
from generator.project.runs.formats.vllm import is_vllm, vllm_serving
from generator.project.runs.run import (
    Run,
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


# Most specific first: the single-batch tools have few keys and no overlap with serving ones.
IMPORTERS: list[tuple[Callable[[dict[str, Any]], bool], Callable[[dict[str, Any]], Run]]] = [
    (is_one_batch, sglang_one_batch),
    (is_one_batch_server, sglang_one_batch_server),
    (is_vllm, vllm_serving),
    (is_sglang_serving, sglang_serving),
]


def normalize_object(obj: Any) -> Run | None:
    """The run in one JSON object, or None when no importer recognises it."""
    if not isinstance(obj, dict):
        return None
    for detect, importer in IMPORTERS:
        if detect(obj):
            return importer(obj)
    return None
