"""Shared test helpers: the CLI as a subprocess, and throwaway copies of a campaign."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

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


# --- the site in a real browser ---------------------------------------------------------------

CHROMIUM = Path("/usr/bin/chromium")
# As root, headless, and with nothing that reaches for the network this machine does not have.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def serve_folder(folder: Path) -> Iterator[str]:
    """Serve `folder` over HTTP on a free local port; yields the base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """Debian's Chromium driven by Playwright; never a browser download of Playwright's own."""
    from playwright.sync_api import sync_playwright

    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        pytest.fail(f"{CHROMIUM} is missing: run `apt-get install chromium` (the browser tests use Debian's Chromium)")
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()
