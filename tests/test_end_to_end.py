"""End to end: the installed `improvements` console script in fresh processes, as a user runs it.

Most tests call the CLI in-process (conftest.run_cli), which is much cheaper; these keep the
real thing honest: the entry point, exit statuses seen by a shell, one command of each family
in the order the README lists them, and output under a C locale.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import BENCH, copy_campaign

# Slow: every test starts fresh processes.
pytestmark = pytest.mark.slow

SCRIPT = Path(sys.executable).with_name("improvements")


def _command() -> list[str]:
    # The console script pip installed; `python -m generator` where there is none (a source tree).
    return [str(SCRIPT)] if SCRIPT.is_file() else [sys.executable, "-m", "generator"]


def improvements(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*_command(), *args],
        cwd=root,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
    )


def ok(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, (proc.args, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    return proc.stdout


def test_every_command_family_in_a_fresh_process(tmp_path: Path) -> None:
    root = copy_campaign(tmp_path / "repo")
    assert ok(improvements(root, "--version")).startswith("improvements, version ")
    assert "Commands:" in ok(improvements(root, "--help"))
    ok(improvements(root, "check"))
    path = ok(improvements(root, "new", "End to end → check", "--tier", "2", "--hypothesis", "It may be faster."))
    # Printed relative to the campaign, for `$EDITOR $(improvements new ...)`.
    assert path == "improvements/11-end-to-end-check.yaml\n"
    record = root / path.strip()
    slug = record.stem.split("-", 1)[1]
    ok(improvements(root, "status", slug, "in-progress"))
    assert "status: in-progress" in record.read_text(encoding="utf-8")
    bench = tmp_path / "bench.jsonl"
    shutil.copy(BENCH / "sglang-bench-serving-2024-sweep.jsonl", bench)
    ok(improvements(root, "import", str(bench), "--record", slug))
    assert list((root / "results" / "runs").glob("*.json"))
    built = ok(improvements(root, "build"))
    assert "written" in built and (root / "docs" / "summary.md").is_file()
    rows = json.loads(ok(improvements(root, "summary", "--format", "json")))
    assert any(r.get("title") == "End to end → check" for r in rows)
    exported = json.loads(ok(improvements(root, "export")))
    assert exported
    assert json.loads(ok(improvements(root, "schema")))
    ok(improvements(root, "renumber", "--compact"))
    ok(improvements(root, "check"))


def test_exit_statuses_seen_by_the_shell(tmp_path: Path) -> None:
    root = copy_campaign(tmp_path / "repo")
    usage = improvements(root, "build", "--no-such-option")
    assert usage.returncode == 2 and "No such option" in usage.stderr and "Traceback" not in usage.stderr
    unknown = improvements(root, "no-such-command")
    assert unknown.returncode == 2 and "Traceback" not in unknown.stderr
    record = root / "improvements" / "01-piecewise-cuda-graphs.yaml"
    record.write_text(record.read_text(encoding="utf-8").replace("tier: ", "tier: seven # ", 1), encoding="utf-8")
    bad = improvements(root, "check")
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    assert "improvements/01-piecewise-cuda-graphs.yaml:" in bad.stdout + bad.stderr
    assert improvements(root, "build").returncode == 1


def test_a_c_locale_prints_utf_8(tmp_path: Path) -> None:
    # Under LC_ALL=C Python would encode output as ASCII; the CLI writes UTF-8 whatever the locale.
    root = copy_campaign(tmp_path / "repo")
    ok(improvements(root, "new", "Arrows → and 测试", "--tier", "1", "--hypothesis", "h"))
    env = {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0", "PYTHONIOENCODING": ""}
    out = subprocess.run(
        [*_command(), "summary"],
        cwd=root,
        env={**os.environ, **env, "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr.decode("utf-8", "replace")
    assert "Arrows → and 测试".encode() in out.stdout
