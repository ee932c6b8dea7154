"""Shared test helpers: the CLI in-process or as a subprocess, and throwaway copies of a campaign."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
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
    """Run `improvements ARGS` in this process, as the console script does (through `run`).

    In-process is some hundred times cheaper than a fresh interpreter. What only a fresh process
    shows (the locale's encodings, the time zone, PYTHON* variables, import costs) goes through
    `run_cli_process`, and so does any call whose environment sets such a variable.
    """
    if env and any(k == "TZ" or k.startswith(("LANG", "LC_", "PYTHON")) for k in env):
        return run_cli_process(*args, cwd=cwd, env=env, input=input)
    return _run_in_process(list(args), cwd or REPO, env, input)


def run_cli_process(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, input: str | None = None
) -> Run:
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


def _text(data: bytes) -> str:
    # What subprocess.run(text=True) gives: decoded, with universal newlines.
    return data.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")


def _run_in_process(args: list[str], cwd: Path, env: dict[str, str] | None, input: str | None) -> Run:
    import traceback

    import click.formatting
    from click.testing import CliRunner

    from generator.cli import run

    old_cwd, old_argv = os.getcwd(), sys.argv
    runner = CliRunner()
    with runner.isolation(input=input or "", env=env) as (out, err, _mixed):
        # Help is wrapped to the terminal's width, as in a fresh process with no terminal.
        click.formatting.FORCED_WIDTH = None
        sys.argv = ["improvements", *args]
        os.chdir(cwd)
        try:
            run()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if not isinstance(exc.code, int | None):
                sys.stderr.write(f"{exc.code}\n")
        except BaseException:
            # What the interpreter does with an uncaught exception: the traceback, exit 1.
            traceback.print_exc(file=sys.stderr)
            code = 1
        finally:
            os.chdir(old_cwd)
            sys.argv = old_argv
        sys.stdout.flush()
        sys.stderr.flush()
        return Run(code, _text(out.getvalue()), _text(err.getvalue()))


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


# Linux's file system in memory: where the tests' folders go when nothing else is asked for.
_MEMORY = Path("/dev/shm")


def pytest_configure(config: pytest.Config) -> None:
    """Every test's folders in memory (/dev/shm), where Linux has it and no other place is asked for.

    A run writes, syncs and deletes some ten thousand small files (copies of a campaign, built
    sites, pytest's folders of earlier runs), and on a slow or shared disk waiting for that is
    most of the fast set's time (on this project's 2-core machine: 67 s on disk, 24 s in memory,
    for the same CPU). Still real files, on the file system Linux keeps for them, only their
    `fsync` costs nothing. TMPDIR or --basetemp, when set, win; xdist's workers inherit TMPDIR.
    """
    if config.option.basetemp or os.environ.get("TMPDIR") or not os.access(_MEMORY, os.W_OK):
        return
    if shutil.disk_usage(_MEMORY).free < 4 * 1024**3:
        return  # a small /dev/shm (a container's 64 MB) would fill up
    if os.statvfs(_MEMORY).f_flag & os.ST_NOEXEC:
        return  # the tests run scripts they install (a virtual environment's console scripts)
    os.environ["TMPDIR"] = str(_MEMORY)
    tempfile.tempdir = None  # read TMPDIR again at the next use


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Iterator[object]:
    """Collect with pytest's cache of rewritten test modules, even under PYTHONDONTWRITEBYTECODE.

    Rewriting the asserts of every test module costs each pytest process (each xdist worker)
    about 5 s of CPU, a fifth of the fast set's; pytest keeps the result in __pycache__ (ignored
    by git), unless Python is told to write no bytecode, as this machine may do. Only while the
    test modules are imported, so no test runs with bytecode writing on.
    """
    dont_write, sys.dont_write_bytecode = sys.dont_write_bytecode, False
    try:
        return (yield)
    finally:
        sys.dont_write_bytecode = dont_write


_SLOW_MARKERS = ("slow", "browser", "mkdocs")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The slow tests first, and the tests that share a module's fixture on one worker.

    Both only change where and when a test runs, never what it does. Longest first is what keeps
    both cores busy to the end: the short tests fill in behind the long ones, where a test of
    half a minute started last would run on one core alone (a stable sort, so the order is the
    same in every xdist worker, as xdist requires). And a module-scoped fixture (a built site, a
    built wheel) is made once, not once a worker: `--dist loadgroup`
    keeps the tests of one instance of it together, under one xdist_group (.ci/run passes it).
    """
    items.sort(key=lambda item: not any(item.get_closest_marker(m) for m in _SLOW_MARKERS))
    if not config.pluginmanager.hasplugin("xdist"):
        return  # `-p no:xdist`: nothing to group, and no xdist_group marker to group with
    for item in items:
        group = _module_fixture_instance(item)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))


def _module_fixture_instance(item: pytest.Item) -> str | None:
    """Which instance of its module-scoped fixtures a test uses: its module and their parameters."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    names = sorted(n for n, defs in info.name2fixturedefs.items() if defs and defs[-1].scope == "module")
    if not names:
        return None
    callspec = getattr(item, "callspec", None)
    params = [f"{n}={callspec.params[n]}" for n in names if callspec and n in callspec.params]
    return "|".join([item.path.name, *params])


@pytest.fixture(autouse=True)
def _own_cache_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test its own user cache folder (the build cache lives there), never the real one."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache-home")))


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
