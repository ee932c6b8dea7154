"""`improvements import`: every format, the numbers and units against the raw files, errors, secrets."""

from __future__ import annotations

import difflib
import hashlib
import json
import math
from pathlib import Path

import pytest

from generator.project.runs.parse import parse_file

from conftest import BENCH, FIXTURES, run_cli

SYNTHETIC = FIXTURES / "import"
SECRETS = ("sk-live-SYNTHETIC-7f3a9c1e55d2", "adm-SYNTHETIC-0b4e8d2f", "sk-console-SYNTHETIC-99aa")


def runs_of(path: Path) -> list:
    parsed, problems = parse_file(path, path.name)
    assert problems == []
    assert parsed is not None
    return parsed.runs


def raw_lines(path: Path) -> list[dict]:
    # Python's json reads the bare Infinity SGLang writes; that is the raw truth to compare with.
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def tree(root: Path) -> dict[str, bytes]:
    """Every file under `root` with its bytes, to prove that nothing changed."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def import_(root: Path, *args: str):
    return run_cli("import", "--root", str(root), *args)


def added_lines(before: str, after: str) -> list[str]:
    """The lines `after` adds to `before`; fails when any line of `before` changed or went."""
    a, b = before.splitlines(), after.splitlines()
    ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    assert all(tag in ("equal", "insert") for tag, *_ in ops), "an existing line changed"
    return [line for tag, _i1, _i2, j1, j2 in ops if tag == "insert" for line in b[j1:j2]]


# --- the public fixtures ------------------------------------------------------------------------


def test_vllm_legacy_file_numbers_and_units() -> None:
    path = BENCH / "vllm-benchmark-serving-legacy.json"
    raw = json.loads(path.read_text())
    [run] = runs_of(path)
    data = run.to_json()
    assert run.format == "vllm-benchmark-serving"
    assert data["metrics"]["ttft_p99.9"] == {"value": 437.451443815371, "unit": "ms", "key": "p99.9_ttft_ms"}
    assert data["metrics"]["e2e_latency_p99.9"]["value"] == raw["p99.9_e2el_ms"]
    assert data["metrics"]["total_throughput"] == {
        "value": raw["total_token_throughput"],
        "unit": "tok/s",
        "key": "total_token_throughput",
    }
    assert data["metrics"]["output_throughput"]["value"] == 900.8921273943398
    assert data["metrics"]["request_throughput"]["unit"] == "req/s"
    # "request_goodput:" is null in this file: no goodput, and no error either.
    assert "goodput" not in run.metrics
    assert run.settings["request_rate"] == "inf"
    assert run.settings["max_concurrency"] == 16
    assert run.concurrency == 16
    assert run.settings["model"].startswith("/models/models--MiniMaxAI--MiniMax-M2.5/")
    # Every latency key of the raw file became a metric with its statistic parsed by pattern.
    latency_keys = [k for k in raw if k.endswith("_ms")]
    assert len(latency_keys) == 24
    assert sorted(run.keys[n] for n in run.metrics if run.unit(n) == "ms") == sorted(latency_keys)


def test_sglang_2024_sweep_is_seven_runs_with_rates_and_output_throughput() -> None:
    path = BENCH / "sglang-bench-serving-2024-sweep.jsonl"
    raw = raw_lines(path)
    runs = runs_of(path)
    assert len(runs) == 7 == len(raw)
    assert [r.settings["request_rate"] for r in runs] == [1.0, 2.0, 4.0, 8.0, 16.0, 4.0, 8.0]
    for run, line in zip(runs, raw, strict=True):
        assert run.format == "sglang-bench-serving"
        assert run.metrics["output_throughput"] == line["output_throughput"]
        assert run.unit("output_throughput") == "tok/s"
        assert run.metrics["e2e_latency_mean"] == line["mean_e2e_latency_ms"]
        assert run.metrics["ttft_median"] == line["median_ttft_ms"]
        assert run.metrics["itl_median"] == line["median_itl_ms"]
        assert run.settings["dataset"] == line["dataset_name"]
        # null in the file: no configured limit, so no concurrency to match on.
        assert run.concurrency is None
    assert runs[0].settings["input_len"] == 1024 and runs[0].settings["output_len"] == 1024
    # sharegpt lines carry unused random_* defaults; they are not the workload.
    assert "input_len" not in runs[5].settings
    assert len({r.id for r in runs}) == 7


def test_bench_one_batch_latencies_are_converted_from_seconds() -> None:
    path = BENCH / "sglang-bench-one-batch.jsonl"
    raw = raw_lines(path)
    runs = runs_of(path)
    assert len(runs) == len(raw) == 9
    for run, line in zip(runs, raw, strict=True):
        assert run.format == "sglang-bench-one-batch"
        data = run.to_json()["metrics"]
        assert data["prefill_latency"]["unit"] == "ms"
        assert data["prefill_latency"]["converted"] == "s -> ms"
        assert math.isclose(data["prefill_latency"]["value"], line["prefill_latency"] * 1000)
        assert math.isclose(run.metrics["decode_latency"], line["median_decode_latency"] * 1000)
        assert math.isclose(run.metrics["total_latency"], line["total_latency"] * 1000)
        # Throughputs are tok/s already and stay as written.
        assert run.metrics["decode_throughput"] == line["median_decode_throughput"]
        assert run.metrics["overall_throughput"] == line["overall_throughput"]
        assert run.concurrency == line["batch_size"]
        assert run.settings["engine"] == "sglang"
    assert math.isclose(runs[0].metrics["prefill_latency"], 14.05533216893673)
    assert any("seconds" in n for n in runs[0].notes)


# --- the synthetic fixtures (formats without a public sample) -----------------------------------


def test_sglang_2025_bare_infinity_and_measured_concurrency() -> None:
    path = SYNTHETIC / "sglang-bench-serving-2025.jsonl"
    assert "Infinity" in path.read_text()
    first, second = runs_of(path)
    assert first.settings["request_rate"] == "inf"
    assert first.settings["max_concurrency"] == 64
    # The measured mean concurrency is kept apart from the configured limit.
    assert first.measured["concurrency"] == 61.7
    assert "total_throughput" not in first.metrics  # 2025 files do not have it
    assert first.metrics["itl_p95"] == 52.1
    assert second.settings["request_rate"] == 8.0 and second.concurrency is None


def test_sglang_2026_server_info_defines_the_run_and_secrets_are_redacted(tmp_path: Path) -> None:
    path = SYNTHETIC / "sglang-bench-serving-2026.jsonl"
    parsed, problems = parse_file(path, path.name)
    assert problems == [] and parsed is not None
    single, c64 = parsed.runs
    assert single.settings["tag"] == "single-stream"
    assert single.settings["model"] == "zai-org/GLM-5-NVFP4"
    assert single.settings["engine"] == "sglang" and single.settings["engine_version"] == "0.5.9"
    assert (single.settings["tp_size"], single.settings["gpu_count"]) == (8, 8)
    assert c64.metrics["total_throughput"] == 1868.9
    assert c64.metrics["max_output_throughput"] == 1402.0
    assert c64.measured["concurrency"] == 62.3 and c64.concurrency == 64
    assert {"line 1: server_info.api_key", "line 1: server_info.admin_api_key"} <= set(parsed.redacted)
    for secret in SECRETS[:2]:
        assert secret not in parsed.stored_text
    # The kept copy differs from the original only where secrets were.
    assert parsed.stored_sha256 != parsed.original_sha256
    assert json.loads(parsed.stored_text.splitlines()[0])["server_info"]["tp_size"] == 8


def test_bench_one_batch_server_told_apart_by_keys() -> None:
    early, late = runs_of(SYNTHETIC / "sglang-bench-one-batch-server.jsonl")
    assert early.format == late.format == "sglang-bench-one-batch-server"
    assert early.metrics["total_latency"] == pytest.approx(421.3)
    assert late.metrics["last_ttft"] == pytest.approx(537.0)
    assert late.conversions["last_ttft"] == "s -> ms"
    assert "accept_length" not in late.metrics  # acc_length -1 means not available
    assert late.metrics["steady_state_output_throughput"] == 702.15
    assert late.concurrency == 32


def test_vllm_appended_results_are_many_runs() -> None:
    runs = runs_of(SYNTHETIC / "vllm-bench-serve-appended.json")
    assert [r.format for r in runs] == ["vllm-bench-serve", "vllm-bench-serve"]
    assert [r.concurrency for r in runs] == [16, 64]
    assert runs[0].metrics["accept_length"] == 2.23  # spec_decode_acceptance_length
    assert runs[0].keys["accept_length"] == "spec_decode_acceptance_length"
    assert runs[1].metrics["total_throughput"] == 5420.88


def test_console_blocks() -> None:
    [sg] = runs_of(SYNTHETIC / "console-sglang.txt")
    assert sg.settings["backend"] == "sglang" and sg.settings["max_concurrency"] == 16
    assert sg.settings["request_rate"] == "inf"
    assert sg.metrics["output_throughput"] == 900.89
    assert sg.metrics["e2e_latency_p99"] == 18345.09
    assert sg.measured["concurrency"] == 15.96
    [vl] = runs_of(SYNTHETIC / "console-vllm.txt")
    assert vl.settings["client"] == "vllm bench serve" and vl.concurrency == 64
    assert vl.metrics["total_throughput"] == 5420.88
    assert vl.metrics["itl_p99"] == 41.06
    assert vl.metrics["accept_length"] == 2.23


# --- the command --------------------------------------------------------------------------------


def test_import_writes_runs_raw_copy_and_links_the_record(campaign: Path) -> None:
    record = campaign / "improvements" / "02-mscclpp-allreduce.yaml"
    before = record.read_text()
    sweep = BENCH / "sglang-bench-serving-2024-sweep.jsonl"
    r = import_(campaign, str(sweep), "--record", "mscclpp-allreduce")
    assert r.returncode == 0, r.stderr
    assert "imported 7 run(s)" in r.stdout
    runs = sorted((campaign / "results" / "runs").glob("*.json"))
    assert len(runs) == 7
    data = json.loads(runs[0].read_text())
    assert runs[0].read_text() == json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    digest = hashlib.sha256(sweep.read_bytes()).hexdigest()
    assert data["source"]["sha256"] == data["source"]["stored_sha256"] == digest
    assert data["source"]["redacted"] is False
    kept = campaign / data["source"]["file"]
    assert kept.read_bytes() == sweep.read_bytes()
    assert kept.name.startswith(digest[:12])
    # Only added lines differ in the record.
    added = added_lines(before, record.read_text())
    assert added[0] == "results:" and sum(line.strip().startswith("run: ") for line in added) == 7
    assert len(added) == 15
    assert run_cli("check", "--root", str(campaign)).returncode == 0


def test_reimport_is_idempotent(campaign: Path) -> None:
    sweep = str(BENCH / "vllm-benchmark-serving-legacy.json")
    assert import_(campaign, sweep, "--record", "02", "--label", "c16").returncode == 0
    first = tree(campaign)
    again = import_(campaign, sweep, "--record", "02", "--label", "c16")
    assert again.returncode == 0
    assert "already imported" in again.stdout
    assert tree(campaign) == first


def test_baseline_import_keeps_comments(campaign: Path) -> None:
    path = campaign / "improvements" / "campaign.yaml"
    before = path.read_text()
    r = import_(campaign, str(BENCH / "vllm-benchmark-serving-legacy.json"), "--baseline")
    assert r.returncode == 0, r.stderr
    inserted = added_lines(before, path.read_text())
    assert [line.strip() for line in inserted] == ["- label: concurrency 16", "run: vllm-serving-c16-15734dbeac"]


def test_secrets_never_reach_anything_written(campaign: Path) -> None:
    files = [str(SYNTHETIC / "sglang-bench-serving-2026.jsonl"), str(SYNTHETIC / "console-sglang.txt")]
    r = import_(campaign, *files, "--record", "02")
    assert r.returncode == 0, r.stderr
    assert "redacted" in r.stderr
    # Two files, but stderr is not a terminal here: no progress bar.
    assert "Reading benchmark files" not in r.stderr
    written = tree(campaign)
    for name, data in written.items():
        for secret in SECRETS:
            assert secret.encode() not in data, f"{secret} leaked into {name}"
    for secret in SECRETS:
        assert secret not in r.stdout + r.stderr
    run_files = [json.loads(d) for n, d in written.items() if n.startswith("results/runs/")]
    sources = [d["source"] for d in run_files]
    assert all(s["redacted"] for s in sources)
    assert all(s["sha256"] != s["stored_sha256"] for s in sources)
    kept = [n for n in written if n.startswith("results/raw/")]
    assert len(kept) == 2
    assert b'"api_key": "<redacted>"' in written[next(n for n in kept if n.endswith(".jsonl"))]


@pytest.mark.parametrize(
    ("content", "code", "line"),
    [
        ("this is not a benchmark file\n", "import-unrecognised", 1),
        ('{"hello": "world", "n": 3}\n', "import-unrecognised", 1),
    ],
)
def test_garbage_is_refused_and_nothing_is_written(
    campaign: Path, tmp_path: Path, content: str, code: str, line: int
) -> None:
    bad = tmp_path / "garbage.txt"
    bad.write_text(content)
    before = tree(campaign)
    r = import_(campaign, str(BENCH / "vllm-benchmark-serving-legacy.json"), str(bad), "--record", "02")
    assert r.returncode == 1
    errors = [ln for ln in r.stderr.splitlines() if "error[" in ln]
    assert len(errors) == 1, r.stderr
    assert errors[0].startswith(f"{bad}:{line}:1: error[{code}]")
    assert "SGLang bench_serving" in errors[0] and "vLLM" in errors[0]  # the formats known
    assert tree(campaign) == before


def test_truncated_line_is_refused_and_nothing_is_written(campaign: Path, tmp_path: Path) -> None:
    lines = (BENCH / "sglang-bench-serving-2024-sweep.jsonl").read_text().splitlines(keepends=True)
    cut = tmp_path / "sweep.jsonl"
    cut.write_text("".join(lines[:3]) + lines[3][:150])  # a benchmark killed mid-write
    before = tree(campaign)
    r = import_(campaign, str(cut), "--record", "02")
    assert r.returncode == 1
    errors = [ln for ln in r.stderr.splitlines() if "error[" in ln]
    assert len(errors) == 1, r.stderr
    assert errors[0].startswith(f"{cut}:4:") and "error[import-truncated]" in errors[0]
    assert "line 4" in errors[0]
    assert tree(campaign) == before


def test_run_without_metric_is_refused(campaign: Path, tmp_path: Path) -> None:
    empty = tmp_path / "failed.jsonl"
    obj = json.loads((BENCH / "vllm-benchmark-serving-legacy.json").read_text())
    for key in list(obj):
        if key.endswith(("_ms", "throughput")):
            obj[key] = None
    empty.write_text(json.dumps(obj) + "\n")
    before = tree(campaign)
    r = import_(campaign, str(empty), "--record", "02")
    assert r.returncode == 1
    assert f"{empty}:1:1: error[import-no-metric]" in r.stderr
    assert tree(campaign) == before


def test_truncated_console_block(campaign: Path, tmp_path: Path) -> None:
    text = (SYNTHETIC / "console-vllm.txt").read_text().splitlines()
    cut = tmp_path / "console.txt"
    cut.write_text("\n".join(text[:10]) + "\n")
    r = import_(campaign, str(cut), "--record", "02")
    assert r.returncode == 1
    assert f"{cut}:1:1: error[import-truncated]" in r.stderr


def test_usage_errors(campaign: Path) -> None:
    path = str(BENCH / "vllm-benchmark-serving-legacy.json")
    assert import_(campaign, path).returncode == 2
    assert import_(campaign, path, "--record", "02", "--baseline").returncode == 2
    assert import_(campaign, path, "--record", "no-such-record").returncode == 2
    assert import_(campaign, "/no/such/file.json", "--record", "02").returncode == 2


def test_help_has_an_example() -> None:
    r = run_cli("import", "--help")
    assert r.returncode == 0 and "improvements import sweep.jsonl --record" in r.stdout


def test_secret_names_are_matched_by_word() -> None:
    from generator.project.runs.redact import redact, redact_text

    data = {
        "api_key": "k1",
        "admin_api_key": "k2",
        "hf_token": "hf_x",
        "ssl_keyfile_password": 1234,
        "total_output_tokens": 163840,
        "eos_token_id": 2,
        "tokenizer_path": "zai-org/GLM-5-NVFP4",
        "enable_api_key_check": True,
        "cmd": "vllm serve m --api-key k3 --max-num-batched-tokens 8192 OPENAI_API_KEY=k4",
    }
    clean, found = redact(data)
    assert sorted(found) == ["admin_api_key", "api_key", "cmd", "hf_token", "ssl_keyfile_password"]
    assert clean["total_output_tokens"] == 163840 and clean["eos_token_id"] == 2
    assert clean["tokenizer_path"] == "zai-org/GLM-5-NVFP4" and clean["enable_api_key_check"] is True
    assert clean["cmd"] == "vllm serve m --api-key <redacted> --max-num-batched-tokens 8192 OPENAI_API_KEY=<redacted>"
    # A console section rule is not a flag.
    assert redact_text("---------------Inter-token Latency----------------") == (
        "---------------Inter-token Latency----------------",
        0,
    )


def test_credentials_in_urls_are_redacted_everywhere_written(campaign: Path, tmp_path: Path) -> None:
    from generator.project.runs.redact import redact_text

    assert redact_text("curl -s http://user:pw@host:8000/v1") == ("curl -s http://<redacted>@host:8000/v1", 1)
    # An @ in a path is not userinfo; a URL without credentials is left alone.
    assert redact_text("https://host/a@b http://host:8000") == ("https://host/a@b http://host:8000", 0)
    obj = json.loads((BENCH / "vllm-benchmark-serving-legacy.json").read_text())
    obj["base_url"] = "http://bench-user:s3cr3t-pw@gpu-node:8000"
    obj["command"] = "vllm bench serve --base-url https://admin:hunter2-pw@gpu-node:8000 --model m"
    path = tmp_path / "vllm-with-url.json"
    path.write_text(json.dumps(obj) + "\n")
    r = import_(campaign, str(path), "--record", "02")
    assert r.returncode == 0, r.stderr
    assert "redacted 2 secret value(s)" in r.stderr
    written = tree(campaign)
    assert any(n.startswith("results/raw/") for n in written)
    for name, data in written.items():
        for secret in (b"s3cr3t-pw", b"hunter2-pw", b"bench-user:"):
            assert secret not in data, f"{secret!r} leaked into {name}"
    raw = next(d for n, d in written.items() if n.startswith("results/raw/"))
    assert b"http://<redacted>@gpu-node:8000" in raw and b"https://<redacted>@gpu-node:8000" in raw


def test_import_into_results_that_open_with_a_comment_only_adds_lines(campaign: Path) -> None:
    record = campaign / "improvements" / "90-typed.yaml"
    record.write_text(
        "title: Typed result\n"
        "tier: 2\n"
        "status: proposed\n"
        "summary: A record whose results list opens with a comment.\n"
        "hypothesis: Typed numbers come first.\n"
        "results:\n"
        "  # first\n"
        "  - label: typed\n"
        "    metrics: {output_throughput: 5}\n"
        "    baseline: {output_throughput: 4}\n"
        "# trailing comment\n"
    )
    before = record.read_text()
    r = import_(campaign, str(BENCH / "vllm-benchmark-serving-legacy.json"), "--record", "90")
    assert r.returncode == 0, r.stderr
    after = record.read_text()
    assert added_lines(before, after) == ["  - label: concurrency 16", "    run: vllm-serving-c16-15734dbeac"]
    assert after.endswith("    run: vllm-serving-c16-15734dbeac\n# trailing comment\n")
    assert run_cli("check", "--root", str(campaign)).returncode == 0


def test_splice_never_inserts_below_a_line_ruamel_restyled() -> None:
    # Even with an indentation guess that does not fit the file, the edit stays valid YAML.
    import yaml

    from generator.authoring import edit

    text = "results:\n  # first\n  - label: a\n    run: x\n# end\n"
    base = "results:\n  # first\n- label: a\n  run: x\n# end\n"
    edited = "results:\n  # first\n- label: a\n  run: x\n- label: b\n  run: y\n# end\n"
    out = edit.splice(text, base, edited)
    assert yaml.safe_load(out) == {"results": [{"label": "a", "run": "x"}, {"label": "b", "run": "y"}]}
