"""`improvements run --format json --fail-on worse`: a CI job gates on a real run of the test engine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_runner import make_campaign

from conftest import run_cli

pytestmark = pytest.mark.slow


def test_run_fail_on_worse_exits_3_on_a_slower_arm_and_prints_json(tmp_path: Path) -> None:
    # A tenth of the baseline's speed: `worse` however busy the machine is.
    root = make_campaign(tmp_path / "c", server=False, speed="--speed 20")
    done = run_cli(
        "run", "faster", "--root", str(root), "--blocks", "4", "--seed", "3", "--format", "json", "--fail-on", "worse"
    )
    assert done.returncode == 3, done.stderr + done.stdout
    out = json.loads(done.stdout)
    assert out["record"] == "faster" and out["fail_on"] == "worse" and out["failed"] is True
    [result] = out["results"]
    assert result["metric"] == "output_throughput" and result["decision"] == "worse" and result["fails"] is True
    assert (result["n"], result["baseline_n"], result["test"]) == (4, 4, "paired")
    assert result["interval_percent"][1] < 0
    assert "fail-on: " in done.stderr and "output_throughput worse" in done.stderr


def test_run_passes_the_gate_on_a_faster_arm(tmp_path: Path) -> None:
    root = make_campaign(tmp_path / "c", server=False, speed="--speed 2000")
    done = run_cli("run", "faster", "--root", str(root), "--blocks", "4", "--seed", "3", "--fail-on", "regression")
    assert done.returncode == 0, done.stderr + done.stdout
    assert ": better (p = " in done.stdout


def test_run_links_a_new_records_results_where_its_starter_says(tmp_path: Path) -> None:
    root = make_campaign(tmp_path / "c", server=False, speed="--speed 2000")
    (root / "improvements" / "01-faster.yaml").unlink()
    made = run_cli("new", "Faster engine", "--tier", "1", "--hypothesis", "More speed.", "--root", str(root))
    assert made.returncode == 0, made.stderr
    record = root / "improvements" / "01-faster-engine.yaml"
    text = record.read_text()
    record.write_text(
        text.replace("hypothesis: More speed.\n", "hypothesis: More speed.\nchange:\n  flags: ['--speed 2000']\n")
    )
    done = run_cli("run", "faster-engine", "--root", str(root), "--blocks", "2", "--seed", "3")
    assert done.returncode == 0, done.stderr + done.stdout
    lines = record.read_text().splitlines()
    head = lines.index("results:")
    assert lines[head - 1].startswith("# are computed, never typed")
    assert not any(line.startswith("# results:") for line in lines)
    assert lines[-1].startswith("#")  # the starter's last commented key is still last
