"""Results that name imported runs: baseline matching, computed deltas, comparability warnings."""

from __future__ import annotations

from pathlib import Path

from generator.model import Change, Flag
from generator.results.matching import declared_settings, differences
from generator.results.run import Run

from conftest import BENCH, FIXTURES, run_cli

ONE_BATCH = BENCH / "sglang-bench-one-batch.jsonl"


def split_one_batch(tmp_path: Path) -> tuple[Path, Path]:
    """The real bench_one_batch file's A/B: no_cuda_graph (baseline) and cuda_graph lines, byte for byte."""
    lines = ONE_BATCH.read_text().splitlines(keepends=True)
    base, rec = tmp_path / "no-graph.jsonl", tmp_path / "graph.jsonl"
    base.write_text("".join(ln for ln in lines if '"run_name": "no_cuda_graph"' in ln))
    rec.write_text("".join(ln for ln in lines if '"run_name": "cuda_graph"' in ln))
    return base, rec


def ok(*args: str) -> str:
    r = run_cli(*args)
    assert r.returncode == 0, r.stderr
    return r.stdout + r.stderr


def page(root: Path, slug: str) -> str:
    [path] = (root / "docs" / "improvements").glob(f"*-{slug}.md")
    return path.read_text()


def section(text: str, heading: str) -> str:
    start = text.index(f"### {heading}")
    end = text.find("\n### ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def test_record_from_imported_runs_renders_computed_deltas(campaign: Path, tmp_path: Path) -> None:
    base, rec = split_one_batch(tmp_path)
    ok("import", "--root", str(campaign), str(base), "--baseline")
    ok("import", "--root", str(campaign), str(rec), "--record", "single-batch-overlap", "--label", "graphs")
    out = ok("check", "--root", str(campaign))
    assert "not-comparable" not in out
    ok("build", "--root", str(campaign))
    text = page(campaign, "single-batch-overlap")
    batch1 = section(text, "graphs, cuda_graph, 256/32, batch 1")
    # 112.0005 / 93.4972 - 1 = +19.79 %: computed from the two runs, never typed.
    assert "| Decode throughput (median) (tok/s, higher is better) | 93.5 | 112 | +19.8% better |" in batch1
    # Seconds in the file, milliseconds on the page: 0.2906 s and 0.3466 s.
    assert "| Total latency (ms, lower is better) | 346.6 | 290.6 | +16.2% better (raw -16.2%) |" in batch1
    assert "- Concurrency: 1" in batch1
    assert "matched by workload and load" in batch1
    batch16 = section(text, "graphs, cuda_graph, 256/32, batch 16")
    assert "| Overall throughput (tok/s, higher is better) | 9881 | 9078 | -8.1% worse |" in batch16


def test_not_comparable_is_a_warning_at_the_result_and_said_on_the_page(campaign: Path) -> None:
    # Baseline: the real vLLM file (MiniMax-M2.5, concurrency 16). Record: runs of another model.
    ok("import", "--root", str(campaign), str(BENCH / "vllm-benchmark-serving-legacy.json"), "--baseline")
    appended = FIXTURES / "import" / "vllm-bench-serve-appended.json"
    ok("import", "--root", str(campaign), str(appended), "--record", "mscclpp-allreduce")
    r = run_cli("check", "--root", str(campaign))
    assert r.returncode == 0, r.stderr  # a warning, not an error
    record = campaign / "improvements" / "02-mscclpp-allreduce.yaml"
    lines = record.read_text().splitlines()
    where = lines.index("  - label: concurrency 16") + 1
    warning = [ln for ln in r.stderr.splitlines() if "not-comparable" in ln]
    assert len(warning) == 1, r.stderr
    assert warning[0].startswith(f"improvements/02-mscclpp-allreduce.yaml:{where}:")
    assert "warning[not-comparable]" in warning[0] and "model: zai-org/GLM-5-NVFP4 here" in warning[0]
    ok("build", "--root", str(campaign))
    text = page(campaign, "mscclpp-allreduce")
    c16 = section(text, "concurrency 16")
    assert "Not comparable with its baseline beyond the declared change: model:" in c16
    assert "| Output token throughput (tok/s, higher is better) | 900.9 | 900.9 |" in c16
    # No baseline run at concurrency 64: the numbers are shown, marked as having no baseline.
    c64 = section(text, "concurrency 64")
    assert "| Output token throughput (tok/s, higher is better) | no baseline | 2710 | not compared |" in c64
    assert "This result has no baseline to compare with." in c64


def test_unknown_run_is_an_error_with_position(campaign: Path) -> None:
    record = campaign / "improvements" / "02-mscclpp-allreduce.yaml"
    text = record.read_text()
    record.write_text(text + "results:\n  - label: imported\n    run: sglang-serving-rr4-0000000000\n")
    r = run_cli("check", "--root", str(campaign))
    assert r.returncode == 1
    line = len(text.splitlines()) + 3
    assert (
        f"improvements/02-mscclpp-allreduce.yaml:{line}:10: error[unknown-run]: "
        "no imported run has id `sglang-serving-rr4-0000000000`"
    ) in r.stderr


def test_baseline_run_named_explicitly(campaign: Path, tmp_path: Path) -> None:
    base, rec = split_one_batch(tmp_path)
    ok("import", "--root", str(campaign), str(base), "--baseline")
    ok("import", "--root", str(campaign), str(rec), "--record", "03")
    record = campaign / "improvements" / "03-single-batch-overlap.yaml"
    # Compare batch 1 with the baseline's batch 8 on purpose: the explicit name wins, and check says
    # the two differ in batch size.
    text = record.read_text().replace(
        "    run: sglang-batch-bs1-0c527fb59c\n",
        "    run: sglang-batch-bs1-0c527fb59c\n    baseline_run: sglang-batch-bs8-a5a4475b9e\n",
    )
    record.write_text(text)
    r = run_cli("check", "--root", str(campaign))
    assert r.returncode == 0, r.stderr
    assert "warning[not-comparable]" in r.stderr and "batch size: 1 here, 8 in the baseline" in r.stderr
    ok("build", "--root", str(campaign))
    assert "named explicitly" in page(campaign, "single-batch-overlap")


def _run(**settings: object) -> Run:
    return Run("x", "sglang-bench-serving", dict(settings), {"output_throughput": 1.0})


def test_declared_change_excuses_what_it_changes() -> None:
    base = _run(model="m", tp_size=8, gpu_count=8, max_concurrency=16)
    tp4 = _run(model="m", tp_size=4, pp_size=2, gpu_count=8, max_concurrency=16)
    other_model = _run(model="n", tp_size=8, gpu_count=8, max_concurrency=16)
    command = "python -m sglang.launch_server --model-path $MODEL_PATH --tp-size 8"
    tp4_pp2 = Change(flags=[Flag(flag="--tp-size", value="4"), Flag(flag="--pp-size", value="2")])
    layout = declared_settings(tp4_pp2, command)
    assert differences(tp4, base, layout) == []
    assert differences(tp4, base) == ["tensor parallel size: 4 here, 8 in the baseline"]
    flag_only = declared_settings(Change(flags=[Flag(flag="--enable-foo")]), command)
    assert differences(other_model, base, flag_only) == ["model: n here, m in the baseline"]
    vllm = declared_settings(Change(base_command="vllm serve $MODEL_PATH --tensor-parallel-size 8"), command)
    assert {"engine", "engine_version"} <= vllm


def test_a_run_result_may_not_also_type_numbers(campaign: Path) -> None:
    ok("import", "--root", str(campaign), str(BENCH / "vllm-benchmark-serving-legacy.json"), "--record", "02")
    record = campaign / "improvements" / "02-mscclpp-allreduce.yaml"
    text = record.read_text()
    record.write_text(
        text.replace(
            "    run: vllm-serving-c16-15734dbeac\n",
            "    run: vllm-serving-c16-15734dbeac\n    metrics:\n      output_throughput: 901\n",
        )
    )
    r = run_cli("check", "--root", str(campaign))
    assert r.returncode == 1
    assert (
        "error[invalid-value]: result `concurrency 16` names run `vllm-serving-c16-15734dbeac` and also types"
        in r.stderr
    )
