"""What runs before the launch: the engine's container `image` and a change's `before:` steps.

`stack` (every format), the record page and the report print the steps before the launch line,
as written and in stack order; `check` refuses a step bash does not read as one complete line, at its position.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
from pathlib import Path

import pytest

from conftest import run_cli

CAMPAIGN = """\
name: Before test
series: beforet
model: {name: GLM-5-NVFP4}
hardware: {gpu: NVIDIA RTX PRO 6000 Blackwell Server Edition, count: 8}
engine: {name: SGLang, version: 0.5.9, image: "lmsysorg/sglang:v0.5.9-cu129"}
baseline:
  label: TP8
  command: python -m sglang.launch_server --model-path $MODEL_PATH --tp-size 8
  results:
    - label: single stream
      concurrency: 1
      metrics: {output_throughput: 100}
tiers: {1: a, 2: b, 3: c}
"""

KILL = """\
title: Kill stale GPU processes first
tier: 1
status: adopted
hypothesis: A server left from an earlier run holds GPU memory and slows the new one.
verdict: Adopted.
change:
  before:
    - "pkill -f 'sglang.launch_server' || true"
    - nvidia-smi --query-compute-apps=pid --format=csv,noheader
  flags: ["--mem-fraction-static 0.88"]
results:
  - label: single stream
    concurrency: 1
    metrics: {output_throughput: 104}
    baseline: {output_throughput: 100}
"""

SYSCTL = """\
title: More memory maps
tier: 1
status: adopted
hypothesis: The NVFP4 checkpoint maps more regions than the default limit allows.
verdict: Adopted.
builds_on: [kill-stale]
change:
  before: ["sudo sysctl -w vm.max_map_count=262144"]
  env: {SGLANG_ENABLE_JIT_DEEPGEMM: "0"}
results:
  - label: single stream
    concurrency: 1
    metrics: {output_throughput: 105}
    baseline: {output_throughput: 104}
"""

STEPS = [
    "pkill -f 'sglang.launch_server' || true",
    "nvidia-smi --query-compute-apps=pid --format=csv,noheader",
    "sudo sysctl -w vm.max_map_count=262144",
]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "improvements").mkdir(parents=True)
    (root / "results").mkdir()
    (root / "improvements" / "campaign.yaml").write_text(CAMPAIGN)
    (root / "improvements" / "01-kill-stale.yaml").write_text(KILL)
    (root / "improvements" / "02-max-map-count.yaml").write_text(SYSCTL)
    return root


def test_stack_prints_the_steps_before_the_launch_in_order(repo: Path) -> None:
    assert run_cli("check", "--root", str(repo)).returncode == 0
    command = run_cli("stack", "--root", str(repo), "--format", "command")
    assert command.returncode == 0, command.stderr
    lines = command.stdout.splitlines()
    assert lines[:3] == STEPS
    assert lines[3].startswith("SGLANG_ENABLE_JIT_DEEPGEMM=0 python -m sglang.launch_server")
    assert len(lines) == 4
    data = json.loads(run_cli("stack", "--root", str(repo), "--format", "json").stdout)
    assert data["image"] == "lmsysorg/sglang:v0.5.9-cu129"
    assert data["before"] == [
        {"command": STEPS[0], "record": "01-kill-stale"},
        {"command": STEPS[1], "record": "01-kill-stale"},
        {"command": STEPS[2], "record": "02-max-map-count"},
    ]
    script = run_cli("stack", "--root", str(repo)).stdout
    assert "# The engine runs in the container image lmsysorg/sglang:v0.5.9-cu129\n" in script
    at = [script.index(f"\n{step}\n") for step in STEPS]
    # In order, and all before the launch (the last lines: the environment, then the command).
    assert at == sorted(at) and at[-1] < script.rindex("SGLANG_ENABLE_JIT_DEEPGEMM=0")
    assert script.rstrip().endswith("--mem-fraction-static 0.88")
    assert "# before the launch, from 02-max-map-count:\nsudo sysctl" in script


def test_the_printed_lines_run_in_order_under_bash(repo: Path, tmp_path: Path) -> None:
    # Stubs for every program the lines name: each appends its argv to a log, so the order the
    # shell ran them in, and the words it passed, are what the records say.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "log"
    for name in ("pkill", "nvidia-smi", "sudo", "python"):
        stub = bin_dir / name
        stub.write_text(f'#!/bin/bash\nprintf "%s\\n" "$(basename "$0") $*" >> {shlex.quote(str(log))}\n')
        stub.chmod(stub.stat().st_mode | stat.S_IEXEC)
    printed = run_cli("stack", "--root", str(repo), "--format", "command").stdout
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "MODEL_PATH": "/models/glm-5"}
    subprocess.run(["bash", "-e", "-c", printed], env={**os.environ, **env}, check=True, timeout=60)
    assert log.read_text().splitlines() == [
        "pkill -f sglang.launch_server",
        "nvidia-smi --query-compute-apps=pid --format=csv,noheader",
        "sudo sysctl -w vm.max_map_count=262144",
        "python -m sglang.launch_server --model-path /models/glm-5 --tp-size 8 --mem-fraction-static 0.88",
    ]


def test_record_page_and_report_print_them_before_the_launch(repo: Path) -> None:
    assert run_cli("build", "--root", str(repo)).returncode == 0
    [page] = (repo / "docs" / "improvements").glob("*-02-max-map-count.md")
    text = page.read_text()
    # The page's block: what it builds on first, then its own step, then the launch.
    block = text[text.index("```bash\n") + len("```bash\n") :]
    block = block[: block.index("```")]
    shown = [line for line in block.splitlines() if not line.startswith("#")]
    assert shown[:3] == STEPS
    assert shown[3].startswith("SGLANG_ENABLE_JIT_DEEPGEMM=0 python -m sglang.launch_server")
    assert "SGLang version: 0.5.9. Container image: `lmsysorg/sglang:v0.5.9-cu129`." in text
    report = run_cli("report", "--root", str(repo))
    assert report.returncode == 0, report.stderr
    assert "In the container image `lmsysorg/sglang:v0.5.9-cu129`." in report.stdout
    stack = report.stdout[report.stdout.index("## Stack") :]
    block = stack[stack.index("```bash\n") + len("```bash\n") :]
    assert [line for line in block.splitlines() if not line.startswith("#")][:3] == STEPS


def test_a_step_the_shell_cannot_split_is_refused_where_it_is(repo: Path) -> None:
    path = repo / "improvements" / "01-kill-stale.yaml"
    path.write_text(KILL.replace("- \"pkill -f 'sglang.launch_server' || true\"", "- pkill -f 'sglang.launch_server"))
    check = run_cli("check", "--root", str(repo))
    assert check.returncode == 1
    assert (
        "improvements/01-kill-stale.yaml:8:7: error[shell-syntax]: `change.before[0]`: bash does not read it as one "
        "complete command: unexpected EOF while looking for matching `''"
    ) in check.stderr
