"""The Noise section of a record page and the export's `noise` (issue 47), from a real record file."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from generator.analysis.noise import components

from conftest import run_cli

RECORD = """\
title: A faster kernel
tier: 1
status: proposed
hypothesis: >-
  Fewer kernel launches per decode step.
results:
- label: four launches of three runs
  concurrency: 8
  metrics:
    output_throughput: [{mine}]
  baseline:
    output_throughput: [{base}]
  launch: [{launches}]
"""


def test_a_record_with_runs_per_launch_shows_its_noise(minimal: Path) -> None:
    rng = np.random.default_rng(47)
    levels = rng.normal(0, 0.1, 6)
    mine = [round(float(1000 * math.exp(level + rng.normal(0, 0.05))), 3) for level in levels for _ in range(3)]
    base = [round(float(1000 * math.exp(rng.normal(0, 0.1))), 3) for _ in range(18)]
    launches = [f"server-{i}" for i in range(6) for _ in range(3)]
    (minimal / "improvements" / "01-kernel.yaml").write_text(
        RECORD.format(mine=", ".join(map(str, mine)), base=", ".join(map(str, base)), launches=", ".join(launches))
    )
    out = run_cli("build", "--root", str(minimal))
    assert out.returncode == 0, out.stderr
    page = next((minimal / "docs").rglob("*-kernel.md")).read_text()
    expected = components([mine[i : i + 3] for i in range(0, 18, 3)])
    assert expected is not None
    assert "#### Noise" in page
    row = next(line for line in page.splitlines() if line.startswith("| Output token throughput | this record |"))
    launch_sd, within_sd = 100 * math.sqrt(expected.launch_var), 100 * math.sqrt(expected.within_var)
    assert "| 6 (18) |" in row
    assert f"{launch_sd:.1f}% / {within_sd:.1f}% (ICC {expected.icc:.2f})" in row
    assert "fewer than 8 launches" in row
    # The baseline's repetitions name no launch: no row of its own.
    assert "| Output token throughput | baseline |" not in page
    exported = json.loads(run_cli("export", "--root", str(minimal)).stdout)
    (record,) = exported["records"]
    (noise,) = record["results"][0]["noise"]["metrics"]
    (arm,) = noise["arms"]
    assert arm["components"]["launch_var"] == expected.launch_var
    assert arm["components"]["within_var_ci"] == list(expected.within_var_ci)
    assert noise["settle"] is None and noise["pairing"] is None


def test_a_record_without_launches_has_no_noise_section(minimal: Path) -> None:
    text = RECORD.format(mine="1, 2, 3", base="1, 2, 3", launches="a, b, c").replace("  launch: [a, b, c]\n", "")
    (minimal / "improvements" / "01-kernel.yaml").write_text(text)
    assert run_cli("build", "--root", str(minimal)).returncode == 0
    page = next((minimal / "docs").rglob("*-kernel.md")).read_text()
    assert "#### Noise" not in page
    exported = json.loads(run_cli("export", "--root", str(minimal)).stdout)
    assert exported["records"][0]["results"][0]["noise"] is None
