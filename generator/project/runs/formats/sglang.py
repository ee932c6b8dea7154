"""SGLang's benchmark files: bench_serving JSON lines, bench_one_batch and bench_one_batch_server result.jsonl."""

from __future__ import annotations

from typing import Any

from generator.project.runs.formats.common import (
    SERVING_METRICS,
    collect,
    engine_of_backend,
    leftovers,
    plain,
    put,
    seconds,
)
from generator.project.runs.run import (
    Run,
    integer,
    number,
    request_rate,
)


def is_sglang_serving(obj: dict[str, Any]) -> bool:
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
    put(s, "engine", "sglang" if info else engine_of_backend(obj.get("backend")))
    put(s, "engine_version", info.get("version") if isinstance(info.get("version"), str) else None)
    model = info.get("served_model_name") or info.get("model_path")
    put(s, "model", model if isinstance(model, str) else None)
    tp, dp, pp = integer(info.get("tp_size")), integer(info.get("dp_size")), integer(info.get("pp_size"))
    ep = integer(info.get("ep_size"))
    for key, value in (("tp_size", tp), ("dp_size", dp), ("pp_size", pp), ("ep_size", ep)):
        put(s, key, value)
    if tp is not None:
        # With DP attention the data-parallel ranks live inside the TP group; without it each
        # data-parallel replica has its own TP group.
        replicas = 1 if info.get("enable_dp_attention") else (dp or 1)
        s["gpu_count"] = tp * (pp or 1) * replicas
    dataset = obj.get("dataset_name")
    put(s, "dataset", dataset if isinstance(dataset, str) else None)
    if isinstance(dataset, str) and dataset.startswith("random"):
        # The random lengths are only the workload when the dataset is random; sharegpt runs
        # carry the unused defaults.
        put(s, "input_len", integer(obj.get("random_input_len")))
        put(s, "output_len", integer(obj.get("random_output_len")))
        put(s, "range_ratio", number(obj.get("random_range_ratio")))
    else:
        put(s, "output_len", integer(obj.get("sharegpt_output_len")))
    put(s, "max_concurrency", integer(obj.get("max_concurrency")))
    put(s, "request_rate", request_rate(obj.get("request_rate")))
    put(s, "backend", obj.get("backend") if isinstance(obj.get("backend"), str) else None)
    put(s, "tag", obj.get("tag") if isinstance(obj.get("tag"), str) else None)
    run = Run("", "sglang-bench-serving", s, {})
    collect(obj, run, SERVING_METRICS)
    if run.metrics.get("accept_length") is not None and run.metrics["accept_length"] <= 0:
        del run.metrics["accept_length"]
    return run


def is_one_batch(obj: dict[str, Any]) -> bool:
    return "batch_size" in obj and "prefill_latency" in obj


def is_one_batch_server(obj: dict[str, Any]) -> bool:
    return "batch_size" in obj and "prefill_latency" not in obj and ("latency" in obj or "last_gen_throughput" in obj)


def _batch_settings(obj: dict[str, Any], client: str) -> dict[str, Any]:
    s: dict[str, Any] = {"client": client}
    put(s, "input_len", integer(obj.get("input_len")))
    put(s, "output_len", integer(obj.get("output_len")))
    put(s, "batch_size", integer(obj.get("batch_size")))
    put(s, "run_name", obj.get("run_name") if isinstance(obj.get("run_name"), str) else None)
    return s


def sglang_one_batch(obj: dict[str, Any]) -> Run:
    s = _batch_settings(obj, "sglang bench_one_batch")
    # bench_one_batch runs the engine in-process: the engine is SGLang by construction.
    s["engine"] = "sglang"
    run = Run("", "sglang-bench-one-batch", s, {})
    seconds(run, obj, "prefill_latency", "prefill_latency")
    plain(run, obj, "prefill_throughput", "prefill_throughput")
    seconds(run, obj, "median_decode_latency", "decode_latency")
    plain(run, obj, "median_decode_throughput", "decode_throughput")
    seconds(run, obj, "total_latency", "total_latency")
    plain(run, obj, "overall_throughput", "overall_throughput")
    run.notes.append("bench_one_batch writes latencies in seconds; they are converted to milliseconds.")
    leftovers(obj, run, set(run.keys.values()))
    return run


def sglang_one_batch_server(obj: dict[str, Any]) -> Run:
    s = _batch_settings(obj, "sglang bench_one_batch_server")
    put(s, "steady_state_window_s", number(obj.get("steady_state_window_s")))
    run = Run("", "sglang-bench-one-batch-server", s, {})
    seconds(run, obj, "latency", "total_latency")
    seconds(run, obj, "last_ttft", "last_ttft")
    for key in (
        "input_throughput",
        "output_throughput",
        "overall_throughput",
        "last_gen_throughput",
        "steady_state_output_throughput",
        "cache_hit_rate",
    ):
        plain(run, obj, key, key)
    acc = number(obj.get("acc_length"))
    if acc is not None and acc > 0:  # -1 means not available
        run.metrics["accept_length"] = acc
        run.keys["accept_length"] = "acc_length"
    run.notes.append("bench_one_batch_server writes latencies in seconds; they are converted to milliseconds.")
    leftovers(obj, run, {*run.keys.values(), "acc_length", "profile_link"})
    return run
