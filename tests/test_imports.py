"""Heavy libraries stay out of the commands that do not need them.

`check` runs in pre-commit hooks and editors and `--help` must be instant, so neither may
import pandas, matplotlib, mkdocs, ruamel.yaml or jinja2. This checks which modules load (with
`python -X importtime`), not how long they take: timings live in benchmarks/.
"""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
HEAVY = ("pandas", "matplotlib", "mkdocs", "ruamel", "jinja2")


def imported_modules(*args: str, cwd: Path) -> set[str]:
    """Top-level names of every module a fresh `python -m generator ARGS` imports."""
    return {name.split(".")[0] for name in imported_names(*args, cwd=cwd)}


def imported_names(*args: str, cwd: Path) -> set[str]:
    """Full names of every module a fresh `python -m generator ARGS` imports."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "generator", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    names = set()
    for line in proc.stderr.splitlines():
        # "import time:   self [us] |   cumulative | imported package"
        if line.startswith("import time:") and line.count("|") == 2:
            name = line.rsplit("|", 1)[1].strip()
            if name and name != "imported package":
                names.add(name)
    assert any(n.startswith("generator") for n in names), "the import log is empty: was -X importtime honoured?"
    return names


@pytest.mark.slow  # fresh processes
@pytest.mark.parametrize("args", [("--help",), ("--version",), ("check", "--root", str(REPO)), ("check", "--help")])
def test_light_commands_import_no_heavy_library(args: tuple[str, ...], tmp_path: Path) -> None:
    names = imported_modules(*args, cwd=tmp_path)
    heavy = sorted(n for n in HEAVY if n in names)
    assert not heavy, f"`improvements {' '.join(args)}` imports {', '.join(heavy)}"


@pytest.mark.slow  # fresh processes
def test_top_level_help_imports_no_click(tmp_path: Path) -> None:
    # Importing click was most of what `--help` cost beyond starting Python.
    for flag in ("--help", "-h"):
        names = imported_modules(flag, cwd=tmp_path)
        assert "click" not in names, f"`improvements {flag}` imports click"


@pytest.mark.slow
def test_only_version_reads_the_installed_metadata(tmp_path: Path) -> None:
    # The version comes from the distribution's metadata (setuptools-scm wrote it from git), read
    # only when --version asks for it: --help does not pay for importlib.metadata.
    assert "importlib.metadata" not in imported_names("--help", cwd=tmp_path)
    assert "importlib.metadata" in imported_names("--version", cwd=tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "generator", "--version"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"improvements, version {version('improvements')}\n"


@pytest.mark.slow
def test_the_import_log_would_show_a_heavy_library(tmp_path: Path) -> None:
    # The parser above must see a heavy import when there is one, or the test above proves nothing.
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import jinja2"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0
    assert any(line.rstrip().endswith("| jinja2") for line in proc.stderr.splitlines())
