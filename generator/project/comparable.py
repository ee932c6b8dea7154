"""Whether two runs compare: the settings that must match, and those a record's change may alter.

Comparable means: the two runs differ in nothing but what the record's change declares. A
record that changes `--tp-size` may differ from its baseline in parallel layout; one that only
adds `--enable-foo` may not differ in model, GPU count, engine version or workload.
"""

from __future__ import annotations

import shlex
from typing import Any

from generator.model.record import Change
from generator.model.settings import LAYOUT
from generator.project.runs.run import Run

# Settings that must match for a run to be compared with a baseline run at all.
LOAD_KEYS = ("max_concurrency", "batch_size", "request_rate")
WORKLOAD_KEYS = ("dataset", "input_len", "output_len", "range_ratio")
# Settings whose difference makes a comparison unfair unless the record's change explains it.
COMPARABLE_KEYS = (
    "engine",
    "engine_version",
    "model",
    *LAYOUT,
    *WORKLOAD_KEYS,
    *LOAD_KEYS,
)
# What a benchmark calls a run: runs that differ here are different configurations, not repeats.
NAME_KEYS = ("run_name", "tag", "label")
# Settings that differ between repeats of one configuration.
REPEAT_KEYS = frozenset({"date"})
KEY_WORDS = {
    "engine": "engine",
    "engine_version": "engine version",
    "model": "model",
    "gpu_count": "GPU count",
    "tp_size": "tensor parallel size",
    "dp_size": "data parallel size",
    "pp_size": "pipeline parallel size",
    "ep_size": "expert parallel size",
    "dataset": "dataset",
    "input_len": "input length",
    "output_len": "output length",
    "range_ratio": "length range ratio",
    "max_concurrency": "concurrency",
    "batch_size": "batch size",
    "request_rate": "request rate",
}

# Launch flags (SGLang and vLLM spellings) -> the settings they may change.
_FLAG_SETTINGS: dict[str, tuple[str, ...]] = {
    "--tp-size": LAYOUT,
    "--tp": LAYOUT,
    "--tensor-parallel-size": LAYOUT,
    "-tp": LAYOUT,
    "--dp-size": LAYOUT,
    "--dp": LAYOUT,
    "--data-parallel-size": LAYOUT,
    "-dp": LAYOUT,
    "--pp-size": LAYOUT,
    "--pipeline-parallel-size": LAYOUT,
    "-pp": LAYOUT,
    "--ep-size": LAYOUT,
    "--ep": LAYOUT,
    "--expert-parallel-size": LAYOUT,
    "--enable-expert-parallel": LAYOUT,
    "--enable-dp-attention": LAYOUT,
    "--nnodes": LAYOUT,
    "--model-path": ("model",),
    "--model": ("model",),
    "--served-model-name": ("model",),
}


def declared_settings(change: Change | None, baseline_command: str) -> set[str]:
    """The run settings a record's change may legitimately alter."""
    if change is None:
        return set()
    flags = {f.flag for f in change.flags} | set(change.remove_flags)
    out: set[str] = set()
    if change.base_command:
        tokens = shlex.split(change.base_command)
        base_tokens = shlex.split(baseline_command)
        flags |= {t.split("=", 1)[0] for t in tokens if t.startswith("-")}
        # A different launcher (vllm serve instead of sglang.launch_server) is a different engine.
        if _launcher(tokens) != _launcher(base_tokens):
            out |= {"engine", "engine_version"}
    if "CUDA_VISIBLE_DEVICES" in change.env:
        out |= set(LAYOUT)
    for flag in flags:
        out |= set(_FLAG_SETTINGS.get(flag, ()))
    return out


def _launcher(tokens: list[str]) -> tuple[str, ...]:
    head: list[str] = []
    for tok in tokens:
        if tok.startswith("-") and tok != "-m":
            break
        head.append(tok)
    return tuple(head)


def _fmt(value: Any) -> str:
    if value == "inf":
        return "unlimited"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def differences(run: Run, base: Run, allowed: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """What differs between two runs beyond `allowed`, as "model: A here, B in the baseline"."""
    out: list[str] = []
    for key in COMPARABLE_KEYS:
        if key in allowed:
            continue
        a, b = run.settings.get(key), base.settings.get(key)
        if a is None or b is None or a == b:
            continue
        out.append(f"{KEY_WORDS[key]}: {_fmt(a)} here, {_fmt(b)} in the baseline")
    if run.kind != base.kind:
        out.append(f"benchmark: {run.format} here, {base.format} in the baseline")
    return out
