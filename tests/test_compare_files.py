"""`improvements compare`: two benchmark files decided without a campaign, pinned against scipy."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
from scipy import stats as sps

from conftest import BENCH, REPO, run_cli

LEGACY = json.loads((BENCH / "vllm-benchmark-serving-legacy.json").read_text())
BASE = [900.1, 905.3, 898.7, 902.2, 901.0]
SLOWER = [850.2, 855.9, 848.1, 852.0, 851.5]


def bench_file(path: Path, values: list[float], *, concurrency: int = 16, minute: int = 10) -> Path:
    """A `vllm benchmark_serving.py --append-result` file: one real run's object per value."""
    lines = []
    for i, v in enumerate(values):
        run = dict(LEGACY, output_throughput=v, max_concurrency=concurrency, date=f"20260428-12{minute + i:02d}17")
        lines.append(json.dumps(run))
    path.write_text("\n".join(lines) + "\n")
    return path


def _scipy_welch_log(own: list[float], base: list[float], alpha: float = 0.05) -> tuple[float, float, float]:
    """(p, low %, high %): Welch's t on the logs, its interval exponentiated (the guide's ratio scale)."""
    t = sps.ttest_ind(np.log(own), np.log(base), equal_var=False)
    ci = t.confidence_interval(1 - alpha)
    return float(t.pvalue), 100 * math.expm1(ci.low), 100 * math.expm1(ci.high)


def test_compare_two_files_decides_without_a_campaign(tmp_path: Path) -> None:
    a, b = bench_file(tmp_path / "a.jsonl", BASE), bench_file(tmp_path / "b.jsonl", SLOWER, minute=30)
    r = run_cli("compare", str(a), str(b), "--format", "json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    [c] = out["comparisons"]
    p, low, high = _scipy_welch_log(SLOWER, BASE)
    assert c["decision"] == "worse"
    assert (c["n"], c["baseline_n"], c["test"], c["scale"]) == (5, 5, "welch", "ratio")
    assert math.isclose(c["p_value"], p, rel_tol=1e-6)
    assert math.isclose(c["interval_percent"][0], low, rel_tol=1e-6)
    assert math.isclose(c["interval_percent"][1], high, rel_tol=1e-6)
    assert math.isclose(c["mean"], float(np.mean(SLOWER)), rel_tol=1e-12)
    assert c["where"] == {"max_concurrency": 16, "request_rate": "inf"}
    # The caveat the record page gives for runs from one file with no launch recorded, sides named.
    assert any("candidate's runs all come from one file" in text for text in c["caveats"])
    assert out["metric"] == "output_throughput" and out["failed"] is False


def test_compare_text_is_the_pages_wording(tmp_path: Path) -> None:
    a, b = bench_file(tmp_path / "a.jsonl", BASE), bench_file(tmp_path / "b.jsonl", SLOWER, minute=30)
    r = run_cli("compare", str(a), str(b), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    _, low, high = _scipy_welch_log(SLOWER, BASE)
    assert f"interval {low:+.1f}% to {high:+.1f}%, n 5 / 5, Welch's t, log scale" in r.stdout
    assert "  decision   worse (p = " in r.stdout
    assert "max concurrency 16, request rate inf:" in r.stdout


def test_sets_of_files_pool_by_load_and_name_what_is_on_one_side(tmp_path: Path) -> None:
    a1 = bench_file(tmp_path / "a1.json", BASE[:3])
    a2 = bench_file(tmp_path / "a2.json", BASE[3:], minute=20)
    b1 = bench_file(tmp_path / "b1.json", BASE, minute=30)
    extra = bench_file(tmp_path / "b64.json", [1500.0, 1510.0], concurrency=64, minute=40)
    r = run_cli("compare", "-b", str(a1), "-b", str(a2), "-c", str(b1), "-c", str(extra), "--format", "json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    first, second = out["comparisons"]
    assert first["values"]["baseline"] == BASE and first["decision"] == "no-change"
    assert second["missing"] == "only in the candidate files" and second["decision"] is None


def test_fail_on_worse_exits_3_and_regression_spares_a_loss_within_min_effect(tmp_path: Path) -> None:
    a, b = bench_file(tmp_path / "a.jsonl", BASE), bench_file(tmp_path / "b.jsonl", SLOWER, minute=30)
    worse = run_cli("compare", str(a), str(b), "--fail-on", "worse")
    assert worse.returncode == 3
    assert "fail-on: output_throughput: worse at max_concurrency 16" in worse.stderr
    # A loss of about 0.8%: decided `worse` (its interval passes -1%, so not `no-change`), inside min_effect 1%.
    slight = bench_file(tmp_path / "c.jsonl", [v * 0.992 for v in reversed(BASE)], minute=40)
    shown = json.loads(run_cli("compare", str(a), str(slight), "--format", "json").stdout)["comparisons"][0]
    assert shown["decision"] == "worse" and shown["within_min_effect"] is True
    assert run_cli("compare", str(a), str(slight), "--fail-on", "worse").returncode == 3
    assert run_cli("compare", str(a), str(slight), "--fail-on", "regression").returncode == 0
    assert run_cli("compare", str(a), str(b), "--fail-on", "regression").returncode == 3
    assert run_cli("compare", str(b), str(a), "--fail-on", "worse").returncode == 0


def test_compare_usage_and_unreadable_files(tmp_path: Path) -> None:
    a = bench_file(tmp_path / "a.jsonl", BASE)
    assert run_cli("compare", str(a)).returncode == 2
    assert run_cli("compare", str(a), str(a), "-c", str(a)).returncode == 2
    assert run_cli("compare", str(a), str(a), "--metric", "no_such_metric").returncode == 2
    junk = tmp_path / "junk.json"
    junk.write_text('{"hello": 1}\n')
    r = run_cli("compare", str(a), str(junk))
    assert r.returncode == 1 and "import-unrecognised" in r.stderr


def test_another_harness_through_the_campaigns_format(tmp_path: Path) -> None:
    example = REPO / "examples" / "h200-decode"
    r = run_cli(
        "compare", "data/A.jsonl", "data/B.jsonl", "--input-format", "h200-harness", "--format", "json", cwd=example
    )
    assert r.returncode == 0, r.stderr
    first = json.loads(r.stdout)["comparisons"][0]
    assert first["where"] == {"batch_size": 1, "input_len": 512, "output_len": 128}
    base, cand = first["values"]["baseline"], first["values"]["candidate"]
    assert len(base) == len(cand) == 5
    p, low, high = _scipy_welch_log(cand, base)
    assert math.isclose(first["p_value"], p, rel_tol=1e-6)
    assert math.isclose(first["interval_percent"][0], low, rel_tol=1e-6)
    assert math.isclose(first["interval_percent"][1], high, rel_tol=1e-6)
    # Both arms ran in one launch: the page's caveat, said here too.
    assert any("Both sides ran inside one launch" in text for text in first["caveats"])
    unknown = run_cli("compare", "data/A.jsonl", "data/B.jsonl", "--input-format", "nope", cwd=example)
    assert unknown.returncode == 2 and "declares no import format `nope`" in unknown.stderr
