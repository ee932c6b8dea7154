"""`import_formats:` in campaign.yaml: another harness's JSON, JSON lines or CSV read without code.

The real target is the H200 decode harness (tests/fixtures/import/h200/SOURCES.md): its
warm-ups left out by `skip:`, every timed row a run, repetitions grouped by batch size, and
each number equal to the raw file's.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from generator.model.import_format import BUILTIN_FORMATS
from generator.project.runs.formats.mapped_facts import lookup
from generator.project.runs.formats.registry import FORMATS

from conftest import FIXTURES, run_cli

H200 = FIXTURES / "import" / "h200"

MAPPING = """
import_formats:
  h200-harness:
    description: HF generate decode harness, one JSON object per generate call
    skip: {warmup: true}
    metrics:
      output_throughput: output_tok_s
      ttft_median: ttft_ms
      tpot_p99: step_ms_p99
      total_latency: {path: total_gen_s, unit: s}
    settings:
      batch_size: batch
      input_len: prompt_len
      output_len: new_tokens
"""

RECORD = """\
title: SDPA attention instead of eager
tier: 1
status: proposed
hypothesis: >-
  The decode steps are launch-bound; SDPA's fused attention issues fewer kernels per step.
"""


def timed_rows(name: str) -> list[dict]:
    rows = [json.loads(line) for line in (H200 / name).read_text().splitlines() if line.strip()]
    return [r for r in rows if not r["warmup"]]


@pytest.fixture
def h200(minimal: Path) -> Path:
    campaign = minimal / "improvements" / "campaign.yaml"
    campaign.write_text(campaign.read_text() + MAPPING)
    (minimal / "improvements" / "01-sdpa.yaml").write_text(RECORD)
    return minimal


def import_(root: Path, *args: str):
    return run_cli("import", "--root", str(root), *args)


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def stored_runs(root: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((root / "results" / "runs").glob("*.json"))]


def test_the_built_in_names_are_the_importers_formats() -> None:
    # The model refuses a campaign format named like a built-in one; both lists must agree.
    assert frozenset(FORMATS) == BUILTIN_FORMATS


def test_h200_timed_rows_import_as_runs_grouped_by_batch(h200: Path) -> None:
    out = import_(h200, str(H200 / "A.jsonl"), "--baseline", "--format", "h200-harness")
    assert out.returncode == 0, out.stderr
    assert "imported 30 run(s) from 1 file(s)" in out.stdout
    runs = stored_runs(h200)
    rows = timed_rows("A.jsonl")
    assert len(runs) == len(rows) == 30
    # Every timed row is a run, line for line, with its numbers as the file wrote them.
    by_line = {r["source"]["line"]: r for r in runs}
    lines = [i + 1 for i, line in enumerate((H200 / "A.jsonl").read_text().splitlines()) if '"warmup": false' in line]
    assert sorted(by_line) == lines
    for line, row in zip(lines, rows, strict=True):
        run = by_line[line]
        assert run["format"] == "h200-harness"
        assert run["settings"]["batch_size"] == row["batch"]
        assert run["settings"]["input_len"] == 512 and run["settings"]["output_len"] == 128
        assert run["metrics"]["output_throughput"] == {
            "key": "output_tok_s",
            "unit": "tok/s",
            "value": row["output_tok_s"],
        }
        assert run["metrics"]["tpot_p99"]["value"] == row["step_ms_p99"]
        # Seconds in the file, milliseconds in the vocabulary: converted once, and said.
        assert run["metrics"]["total_latency"]["value"] == pytest.approx(row["total_gen_s"] * 1000)
        assert run["metrics"]["total_latency"]["converted"] == "s -> ms"
        assert "warmup" not in run["unmapped"] and "rep" in run["unmapped"]
    # Repetitions grouped by batch: six results of five runs each, in the file's order.
    campaign = (h200 / "improvements" / "campaign.yaml").read_text()
    for batch in (1, 8, 32, 64, 128, 256):
        ids = [r["id"] for r in runs if r["settings"]["batch_size"] == batch]
        assert len(ids) == 5
        assert f"- label: 512/128, batch {batch}\n" in campaign
        assert all(f"- {rid}\n" in campaign for rid in ids)
    assert "run:\n\n" not in campaign
    # Importing the same file again finds the same runs and changes nothing.
    before = tree(h200)
    again = import_(h200, str(H200 / "A.jsonl"), "--baseline", "--format", "h200-harness")
    assert again.returncode == 0 and "nothing changed" in again.stdout
    assert tree(h200) == before


def test_h200_record_compares_with_the_mapped_baseline(h200: Path, tmp_path: Path) -> None:
    assert import_(h200, str(H200 / "A.jsonl"), "--baseline", "--format", "h200-harness").returncode == 0
    out = import_(h200, str(H200 / "B.jsonl"), "--record", "01", "--format", "h200-harness")
    assert out.returncode == 0, out.stderr
    assert run_cli("check", "--root", str(h200)).returncode == 0
    export = tmp_path / "records.json"
    assert run_cli("export", "--root", str(h200), "-o", str(export)).returncode == 0
    [record] = json.loads(export.read_text())["records"]
    by_label = {r["label"]: r for r in record["results"]}
    a, b = timed_rows("A.jsonl"), timed_rows("B.jsonl")
    for batch in (1, 256):
        cmp = by_label[f"512/128, batch {batch}"]["comparisons"]["output_throughput"]
        mine = [r["output_tok_s"] for r in b if r["batch"] == batch]
        theirs = [r["output_tok_s"] for r in a if r["batch"] == batch]
        assert (cmp["n"], cmp["baseline_n"]) == (5, 5)
        assert cmp["mean"] == pytest.approx(statistics.fmean(mine), rel=1e-12)
        assert cmp["baseline_mean"] == pytest.approx(statistics.fmean(theirs), rel=1e-12)
    # At batch 256 SDPA more than doubles eager's throughput (5518 -> 12380 tok/s means).
    assert by_label["512/128, batch 256"]["comparisons"]["output_throughput"]["decision"] == "better"


def test_a_missing_key_is_reported_at_its_row(h200: Path) -> None:
    rows = timed_rows("A.jsonl")[:8]
    del rows[3]["step_ms_p99"]
    del rows[5]["step_ms_p99"]
    bench = h200 / "bench.jsonl"
    bench.write_text("".join(json.dumps(r) + "\n" for r in rows))
    before = tree(h200)
    out = import_(h200, str(bench), "--record", "01", "--format", "h200-harness")
    assert out.returncode == 1
    assert (
        f"{bench}:4:1: error[import-missing-key]: the row on line 4 has no key `step_ms_p99` for metric "
        "`tpot_p99` (and 1 more row(s) like it)"
    ) in out.stderr
    assert "Traceback" not in out.stderr
    # All or nothing: no run, no raw copy, no edit.
    assert tree(h200) == before


def test_a_path_no_row_has_is_reported_where_campaign_yaml_writes_it(h200: Path) -> None:
    campaign = h200 / "improvements" / "campaign.yaml"
    text = campaign.read_text().replace("tpot_p99: step_ms_p99", "tpot_p99: stats.step_ms_p99")
    campaign.write_text(text)
    line = text.splitlines().index("      tpot_p99: stats.step_ms_p99") + 1
    out = import_(h200, str(H200 / "A.jsonl"), "--record", "01", "--format", "h200-harness")
    assert out.returncode == 1
    assert (
        f"improvements/campaign.yaml:{line}:17: error[import-missing-key]: no row of {H200 / 'A.jsonl'} has the key "
        "`stats.step_ms_p99` that import_formats `h200-harness` reads for metric `tpot_p99`"
    ) in out.stderr


def test_a_value_that_is_not_a_number_is_refused_at_its_row(h200: Path) -> None:
    rows = timed_rows("A.jsonl")[:3]
    rows[2]["output_tok_s"] = "n/a"
    bench = h200 / "bench.jsonl"
    bench.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = import_(h200, str(bench), "--record", "01", "--format", "h200-harness")
    assert out.returncode == 1
    assert (
        f'{bench}:3:1: error[invalid-value]: the row on line 3 has `output_tok_s` = "n/a" for metric '
        "`output_throughput`; expected a finite number"
    ) in out.stderr


@pytest.mark.parametrize(
    ("entry", "at", "complaint"),
    [
        (
            "      p99_ttft: ttft_ms",
            "p99_ttft",
            "error[unknown-metric]: unknown metric `p99_ttft`",
        ),
        (
            "      ttft_p90: {path: ttft_ms, unit: tok/s}",
            "tok/s",
            "error[invalid-value]: `import_formats.h200-harness.metrics.ttft_p90.unit`: `ttft_p90` is in ms; "
            "a value in `tok/s` cannot be converted to it (time converts between s, ms, µs, us, ns)",
        ),
        (
            "      ttft_p90: {path: stats..ttft, unit: s}",
            "stats..ttft",
            "error[invalid-value]: `import_formats.h200-harness.metrics.ttft_p90.path`: `stats..ttft` has an "
            "empty level",
        ),
    ],
)
def test_mapping_problems_are_positioned_in_campaign_yaml(h200: Path, entry: str, at: str, complaint: str) -> None:
    campaign = h200 / "improvements" / "campaign.yaml"
    text = campaign.read_text().replace("      ttft_median: ttft_ms\n", f"      ttft_median: ttft_ms\n{entry}\n")
    campaign.write_text(text)
    line = text.splitlines().index(entry) + 1
    out = run_cli("check", "--root", str(h200))
    assert out.returncode == 1
    # At the key, the unit or the path that is wrong, never at the format as a whole.
    assert f"improvements/campaign.yaml:{line}:{entry.index(at) + 1}: {complaint}" in out.stderr, out.stderr


def test_a_built_in_name_is_refused_and_an_undeclared_one_is_a_usage_error(h200: Path) -> None:
    campaign = h200 / "improvements" / "campaign.yaml"
    out = import_(h200, str(H200 / "A.jsonl"), "--record", "01", "--format", "myharness")
    assert out.returncode == 2
    assert "campaign.yaml declares no import format `myharness`; import_formats declared: `h200-harness`" in out.stderr
    campaign.write_text(campaign.read_text().replace("  h200-harness:", "  vllm-bench-serve:"))
    check = run_cli("check", "--root", str(h200))
    assert check.returncode == 1
    assert "`vllm-bench-serve` is a built-in format" in check.stderr


def test_csv_with_nested_units_and_secrets(h200: Path) -> None:
    campaign = h200 / "improvements" / "campaign.yaml"
    campaign.write_text(
        campaign.read_text()
        + """\
  moe-bench:
    skip: {phase: warmup}
    metrics:
      decode_throughput: tok_s
      ttft_p99: {path: ttft_p99_s, unit: s}
    settings:
      concurrency: conc
      model: model
"""
    )
    bench = h200 / "moe.csv"
    bench.write_text(
        "phase,conc,tok_s,ttft_p99_s,model,api_key\n"
        "warmup,8,1.0,9.0,zai-org/GLM-5-NVFP4,sk-SYNTHETIC-1\n"
        "timed,8,412.5,0.231,zai-org/GLM-5-NVFP4,sk-SYNTHETIC-1\n"
        "timed,8,418.25,0.229,zai-org/GLM-5-NVFP4,sk-SYNTHETIC-1\n"
    )
    out = import_(h200, str(bench), "--record", "01", "--format", "moe-bench")
    assert out.returncode == 0, out.stderr
    assert "redacted" in out.stderr
    runs = sorted(stored_runs(h200), key=lambda r: r["source"]["line"])
    assert [r["source"]["line"] for r in runs] == [3, 4]
    assert [r["metrics"]["decode_throughput"]["value"] for r in runs] == [412.5, 418.25]
    assert [r["metrics"]["ttft_p99"]["value"] for r in runs] == [pytest.approx(231.0), pytest.approx(229.0)]
    assert all(r["settings"]["max_concurrency"] == 8 for r in runs)
    assert runs[0]["provenance"]["model"] == {"key": "model", "value": "zai-org/GLM-5-NVFP4"}
    for path in (h200 / "results").rglob("*"):
        if path.is_file():
            assert "sk-SYNTHETIC-1" not in path.read_text()
    # Two repetitions of one configuration: one result of two runs.
    record = (h200 / "improvements" / "01-sdpa.yaml").read_text()
    assert record.count("- label:") == 1 and record.count("moe-bench-c8-") == 2


def test_rows_inside_a_wrapper_object(h200: Path) -> None:
    campaign = h200 / "improvements" / "campaign.yaml"
    campaign.write_text(
        campaign.read_text()
        + """\
  wrapper:
    rows: benchmark.results
    metrics:
      output_throughput: stats.tok_s
      ttft_p99.9: {path: stats.p99.9_ttft_s, unit: s}
    settings:
      concurrency: meta.conc
"""
    )
    bench = h200 / "wrapped.json"
    results = [
        {"meta": {"conc": 4}, "stats": {"tok_s": 101.5, "p99.9_ttft_s": 0.5}},
        {"meta": {"conc": 16}, "stats": {"tok_s": 350.0, "p99.9_ttft_s": 0.75}},
    ]
    bench.write_text(json.dumps({"benchmark": {"name": "x", "results": results}}, indent=2))
    out = import_(h200, str(bench), "--record", "01", "--format", "wrapper")
    assert out.returncode == 0, out.stderr
    runs = sorted(stored_runs(h200), key=lambda r: r["settings"]["max_concurrency"])
    assert [r["metrics"]["output_throughput"]["value"] for r in runs] == [101.5, 350.0]
    assert [r["metrics"]["ttft_p99.9"]["value"] for r in runs] == [500.0, 750.0]
    assert runs[0]["metrics"]["ttft_p99.9"]["key"] == "stats.p99.9_ttft_s"


def test_resolve_reads_nested_keys_dotted_keys_and_list_items() -> None:
    row = {"a": {"b.c": {"d": 1}}, "p99.9_ttft_ms": 2, "l": [{"x": 3}]}
    assert lookup(row, "a.b.c.d") == 1
    assert lookup(row, "p99.9_ttft_ms") == 2
    assert lookup(row, "l.0.x") == 3
    assert lookup(row, "l.1.x") is not None and lookup(row, "l.1.x") is lookup(row, "nope")


def test_skip_does_not_take_true_for_one(h200: Path) -> None:
    # A row whose `warmup` is 1 (a count, not the flag) stays: `true` is not 1 here.
    rows = [json.loads(line) for line in (H200 / "A.jsonl").read_text().splitlines()][:2]
    assert rows[0]["warmup"] is True and rows[1]["warmup"] is True
    rows[0]["warmup"] = 1
    bench = h200 / "bench.jsonl"
    bench.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = import_(h200, str(bench), "--record", "01", "--format", "h200-harness")
    assert out.returncode == 0, out.stderr
    assert "imported 1 run(s)" in out.stdout
    [run] = stored_runs(h200)
    assert run["source"]["line"] == 1


def test_the_gap_after_the_baseline_results_stays_after_the_last_repetition(tmp_path: Path) -> None:
    # This campaign's last baseline result ends in a plain value followed by a blank line.
    root = tmp_path / "repo"
    (root / "improvements").mkdir(parents=True)
    (root / "results").mkdir()
    campaign = (
        (FIXTURES / "errors" / "campaign.yaml")
        .read_text()
        .replace("  moe-bench:", MAPPING.split("\n", 2)[2] + "  moe-bench:")
    )
    (root / "improvements" / "campaign.yaml").write_text(campaign)
    assert campaign.count("import_formats:") == 1
    out = import_(root, str(H200 / "A.jsonl"), "--baseline", "--format", "h200-harness")
    assert out.returncode == 0, out.stderr
    text = (root / "improvements" / "campaign.yaml").read_text()
    runs = stored_runs(root)
    last = max((r for r in runs if r["settings"]["batch_size"] == 256), key=lambda r: r["source"]["line"])
    assert "run:\n\n" not in text
    assert f"        - {last['id']}\n\ngoals:" in text
