"""Shared test helpers: the CLI as a subprocess, and throwaway copies of a campaign."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
# The shared benchmark files, kept byte-for-byte; a copy ships in tests/fixtures/bench.
BENCH = FIXTURES / "bench"


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str

    def json(self) -> object:
        return json.loads(self.stdout)


def run_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None, input: str | None = None) -> Run:
    """Run `improvements ARGS` the way a user does: a fresh process, in a folder."""
    full_env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **(env or {})}
    proc = subprocess.run(
        [sys.executable, "-m", "generator", *args],
        cwd=cwd or REPO,
        env=full_env,
        input=input,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


def copy_campaign(dest: Path, *, with_docs: bool = False) -> Path:
    """A copy of the shipped campaign (records, results and config) to change freely."""
    shutil.copytree(REPO / "improvements", dest / "improvements")
    if (REPO / "results").exists():
        shutil.copytree(REPO / "results", dest / "results")
    else:
        (dest / "results").mkdir()
    if (REPO / "mkdocs.yml").exists():
        shutil.copy(REPO / "mkdocs.yml", dest / "mkdocs.yml")
    if with_docs and (REPO / "docs").exists():
        shutil.copytree(REPO / "docs", dest / "docs")
    return dest


@pytest.fixture
def campaign(tmp_path: Path) -> Path:
    """A throwaway copy of the shipped campaign; returns its root."""
    return copy_campaign(tmp_path / "repo")


@pytest.fixture
def minimal(tmp_path: Path) -> Path:
    """A campaign with the shipped campaign.yaml and no records."""
    root = tmp_path / "mini"
    (root / "improvements").mkdir(parents=True)
    (root / "results").mkdir()
    shutil.copy(REPO / "improvements" / "campaign.yaml", root / "improvements" / "campaign.yaml")
    return root
