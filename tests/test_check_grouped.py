"""`check` gives a warning's cause once, with every other place of it on one line (issue 51)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import REPO, run_cli

EXAMPLE = REPO / "examples" / "h200-runner"


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "c"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("docs", "site"))
    return root


def test_warnings_of_one_cause_share_a_line_and_keep_every_position(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    every = run_cli("check", "--root", str(root), "--verbose")
    assert every.returncode == 0, every.stderr
    each = [line for line in every.stderr.splitlines() if "warning[spread-beyond-one-configuration]" in line]
    assert len(each) == 3
    grouped = run_cli("check", "--root", str(root))
    lines = grouped.stderr.splitlines()
    assert [line for line in lines if "warning[spread-beyond-one-configuration]" in line] == each[:1]
    [more] = [line for line in lines if "more like it" in line]
    places = [line.split(": warning[")[0] for line in each[1:]]
    assert places[0] == places[1]  # two metrics of one result: its place is named once, counted
    assert more == (f"  and 2 more like it (spread-beyond-one-configuration; --verbose shows each): {places[0]} (x2)")
    # The totals and the machine formats still count and list every warning.
    total = sum(": warning[" in line for line in every.stderr.splitlines())
    assert total == 4  # record 04 has a trend warning of its own, on one line either way
    assert lines[-1] == f"0 error(s), {total} warning(s)"
    assert len(json.loads(run_cli("check", "--root", str(root), "--format", "json").stdout)) == total


def test_errors_stay_one_line_per_place(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    for name in ("01-sdpa-attention.yaml", "02-static-cache.yaml"):
        path = root / "improvements" / name
        path.write_text(path.read_text().replace("tier: ", "tier: 9 #", 1))
    r = run_cli("check", "--root", str(root))
    assert r.returncode == 1
    assert len([line for line in r.stderr.splitlines() if "error[" in line]) == 2
