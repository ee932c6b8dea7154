"""Results that name imported runs: baseline matching, computed deltas, comparability warnings."""

from __future__ import annotations

from pathlib import Path

from generator.model.record import Change, Flag
from generator.project.comparable import declared_settings, differences
from generator.project.runs.run import Run

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
    # One run a side: the change is shown, never called better.
    single = "| **unreplicated** (single shot) |"
    assert "| Decode throughput (tok/s, higher is better) " + single + " +19.8% | 112 / 93.5 (n 1 / 1) |" in batch1
    # Seconds in the file, milliseconds on the page: 0.2906 s and 0.3466 s.
    assert "| Total latency (ms, lower is better) " + single + " -16.2% | 290.6 / 346.6 (n 1 / 1) |" in batch1
    assert "- Concurrency: 1" in batch1
    assert "matched by workload and load" in batch1
    batch16 = section(text, "graphs, cuda_graph, 256/32, batch 16")
    assert "| Overall throughput (tok/s, higher is better) " + single + " -8.1% | 9078 / 9881 (n 1 / 1) |" in batch16


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
    # Shown, never compared or ranked: another model's run is not this change's evidence.
    assert "| Output token throughput (tok/s, higher is better) | not compared | not compared | 900.9 / 900.9 |" in c16
    assert "Not compared: the run differs from its baseline run in model: zai-org/GLM-5-NVFP4 here" in c16
    # No baseline run at concurrency 64: the numbers are shown, marked as having no baseline.
    c64 = section(text, "concurrency 64")
    assert (
        "| Output token throughput (tok/s, higher is better) | not compared | not compared | 2710 / no baseline |"
        in c64
    )
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


def _first_line(changes: dict[str, str]) -> str:
    line = ONE_BATCH.read_text().splitlines()[0]
    for old, new in changes.items():
        assert old in line
        line = line.replace(old, new)
    return line + "\n"


def test_different_configurations_are_not_averaged_the_same_name_is_chosen(campaign: Path, tmp_path: Path) -> None:
    # The whole real file as the baseline: cuda_graph and no_cuda_graph runs at batch 1, 8 and 16.
    ok("import", "--root", str(campaign), str(ONE_BATCH), "--baseline")
    rec = tmp_path / "graph-again.jsonl"
    rec.write_text(_first_line({'"median_decode_throughput": 112.0005440738405': '"median_decode_throughput": 120.5'}))
    ok("import", "--root", str(campaign), str(rec), "--record", "02", "--label", "again")
    out = ok("check", "--root", str(campaign))
    assert "no-baseline" not in out and "not-comparable" not in out
    ok("build", "--root", str(campaign))
    again = section(page(campaign, "mscclpp-allreduce"), "again")
    assert "(mean of n=" not in again  # no two configurations averaged into one value
    # The cuda_graph baseline run at batch 1 (112.0), not the mean with no_cuda_graph (93.5).
    # The baseline run's id links to its section on the home page (the campaign baseline's runs).
    base_id = "sglang-batch-bs1-0c527fb59c"
    linked = f"[`{base_id}`](../index.md#run-{base_id})"
    assert f"Compared with the baseline run {linked}, matched by workload, load and name" in again
    assert (
        "| Decode throughput (tok/s, higher is better) | **unreplicated** (single shot) "
        "| +7.6% | 120.5 / 112 (n 1 / 1) |" in again
    )


def test_ambiguous_baseline_is_not_averaged_and_check_warns(campaign: Path, tmp_path: Path) -> None:
    ok("import", "--root", str(campaign), str(ONE_BATCH), "--baseline")
    rec = tmp_path / "renamed.jsonl"
    rec.write_text(_first_line({'"run_name": "cuda_graph"': '"run_name": "graphs_v2"'}))
    ok("import", "--root", str(campaign), str(rec), "--record", "02", "--label", "renamed")
    r = run_cli("check", "--root", str(campaign))
    assert r.returncode == 0, r.stderr
    [warning] = [ln for ln in r.stderr.splitlines() if "warning[no-baseline]" in ln]
    assert "ambiguous baseline" in warning and "`sglang-batch-bs1-0c527fb59c` (run_name cuda_graph)" in warning
    assert "(run_name no_cuda_graph)" in warning and "baseline_run" in warning
    ok("build", "--root", str(campaign))
    renamed = section(page(campaign, "mscclpp-allreduce"), "renamed")
    assert "mean of" not in renamed
    assert "Ambiguous baseline: 2 baseline runs match" in renamed and "`baseline_run`" in renamed
    assert (
        "| Decode throughput (tok/s, higher is better) | not compared | not compared | 112 / no baseline |" in renamed
    )
    # Naming the baseline settles it: no warning left.
    record = campaign / "improvements" / "02-mscclpp-allreduce.yaml"
    text = record.read_text()
    run_line = next(ln for ln in text.splitlines() if ln.strip().startswith("run: sglang-batch-bs1-"))
    record.write_text(text.replace(run_line, run_line + "\n    baseline_run: sglang-batch-bs1-0c527fb59c"))
    assert "no-baseline" not in ok("check", "--root", str(campaign))


def test_repeated_baseline_runs_are_averaged(campaign: Path, tmp_path: Path) -> None:
    base = tmp_path / "repeats.jsonl"
    slow = '"median_decode_throughput": 112.0005440738405'
    base.write_text(
        _first_line({slow: '"median_decode_throughput": 110'}) + _first_line({slow: '"median_decode_throughput": 114'})
    )
    ok("import", "--root", str(campaign), str(base), "--baseline")
    rec = tmp_path / "rec.jsonl"
    rec.write_text(_first_line({}))
    ok("import", "--root", str(campaign), str(rec), "--record", "02", "--label", "graphs")
    ok("build", "--root", str(campaign))
    graphs = section(page(campaign, "mscclpp-allreduce"), "graphs")
    assert "Compared with the mean of 2 repeated baseline runs with the same workload and load" in graphs
    # The geometric mean of 110 and 114 is 111.98: +0.016%, the arithmetic means +0.00049%.
    assert "| +0.016% | 112 / 112 ± 2.828 (n=2) (n 1 / 2; arithmetic means +0.00049%" in graphs
