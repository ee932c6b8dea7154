"""Imported results go where the starter says results go, and stay one list (issue 51)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from conftest import BENCH, run_cli

LEGACY = BENCH / "vllm-benchmark-serving-legacy.json"


def _ok(*args: str, cwd: Path) -> None:
    r = run_cli(*args, cwd=cwd)
    assert r.returncode == 0, r.stderr + r.stdout


def test_imports_into_a_new_record_land_at_its_results_placeholder_as_one_list(tmp_path: Path) -> None:
    root = tmp_path / "c"
    root.mkdir()
    _ok("init", ".", cwd=root)
    _ok("new", "Larger batch", "--tier", "1", "--hypothesis", "More requests in flight.", cwd=root)
    [record] = (root / "improvements").glob("01-*.yaml")
    before = record.read_text()
    assert "# results:" in before
    at_64 = tmp_path / "c64.json"
    at_64.write_text(json.dumps({**json.loads(LEGACY.read_text()), "max_concurrency": 64}) + "\n")
    _ok("import", str(LEGACY), "--record", "01", cwd=root)
    _ok("import", str(at_64), "--record", "01", cwd=root)
    text = record.read_text()
    lines = text.splitlines()
    head = lines.index("results:")
    # Right under the starter's words about measurements, where the placeholder was.
    assert lines[head - 1].startswith("# are computed, never typed")
    block = []
    for line in lines[head + 1 :]:
        if not line.startswith(("-", " ")):
            break
        block.append(line)
    assert [line for line in block if line.startswith("- label:")] == [
        "- label: concurrency 16",
        "- label: concurrency 64",
    ]
    # The rest of the starter's commented keys follow the list, all kept.
    assert lines[head + 1 + len(block) :][:2] == ["", "# What was learned. Adopted and rejected records need one:"]
    starter = before.splitlines()
    start = next(i for i, line in enumerate(starter) if line.startswith("# results:"))
    end = next(i for i in range(start + 1, len(starter)) if not starter[i].startswith("#  "))
    kept = [line for line in starter[:start] + starter[end:] if line.startswith("#")]
    assert [line for line in lines if line.startswith("#")] == kept
    assert len(yaml.safe_load(text)["results"]) == 2
    assert run_cli("check", "--root", str(root)).returncode == 0
