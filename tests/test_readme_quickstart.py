"""The README's quick start, its `improvements` commands run as written: a first campaign shows a decision."""

from __future__ import annotations

import shlex
from pathlib import Path

from test_install import readme_block

from conftest import run_cli


def test_the_quick_start_shows_a_decision_and_no_warning(tmp_path: Path) -> None:
    commands = [shlex.split(line) for line in readme_block() if line.startswith(".venv/bin/improvements ")]
    *steps, serve = commands
    assert serve[1:] == ["serve"] and [c[1] for c in steps] == ["init", "new", "import", "build"]
    root = tmp_path / "my-campaign"
    root.mkdir()
    for words in steps[:-1]:  # init, new, import; the build is `build --site` (mkdocs), checked below
        r = run_cli(*words[1:], *(["--no-input"] if words[1] == "init" else []), cwd=root)
        assert r.returncode == 0, (words, r.stderr)
    check = run_cli("check", cwd=root)
    assert check.returncode == 0 and "warning[" not in check.stderr, check.stderr
    build = run_cli("build", cwd=root)
    assert build.returncode == 0, build.stderr
    [page] = (root / "docs" / "improvements").glob("*-01-cuda-graphs.md")
    decision = next(line for line in page.read_text().splitlines() if line.startswith("| Decision |"))
    assert "**unreplicated** +19.8%, n 1 / 1 on Decode throughput" in decision
    assert "none" not in decision.lower()
