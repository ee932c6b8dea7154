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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

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


def commit_all(root: Path, when: str, message: str, *, committed: str | None = None) -> None:
    """`git add -A` and a commit in `root`, dated `when` (committed `committed`, or the same)."""
    env = {
        **os.environ,
        "GIT_AUTHOR_DATE": when,
        "GIT_COMMITTER_DATE": committed or when,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    for args in (["add", "-A"], ["commit", "-q", "--no-gpg-sign", "-m", message]):
        subprocess.run(["git", "-C", str(root), *args], check=True, env=env, capture_output=True)


def git_campaign(dest: Path, *, with_docs: bool = False) -> Path:
    """The shipped campaign in a git repository of its own: added on 2024-03-05, edited on 2025-01-02."""
    root = copy_campaign(dest, with_docs=with_docs)
    subprocess.run(["git", "init", "-q", str(root)], check=True, capture_output=True)
    commit_all(root, "2024-03-05T10:00:00+00:00", "add")
    record = next((root / "improvements").glob("03-*.yaml"))
    record.write_text(record.read_text() + "\n")
    commit_all(root, "2025-01-02T10:00:00+00:00", "edit")
    return root


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
    A site that several browser modules share (`built_site`) is one group across them all.
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
    callspec = getattr(item, "callspec", None)
    if "built_site" in info.names_closure and callspec and "site" in callspec.params:
        # A site shared by several modules (built_site): its tests together, whatever the module.
        return f"site={callspec.params['site']}"
    names = sorted(n for n, defs in info.name2fixturedefs.items() if defs and defs[-1].scope == "module")
    if not names:
        return None
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


# --- one build of each site, shared by every browser module ------------------------------------


@dataclass(frozen=True)
class BuiltSite:
    """A site built with `improvements build --site` and served; read by the tests, never changed."""

    name: str
    root: Path
    url: str


def _glm5(dest: Path) -> Path:
    # In a git repository of its own, as the shipped campaign is: its undated records take the
    # day of their first commit.
    return git_campaign(dest, with_docs=True)


def _glm5_imported(dest: Path) -> Path:
    # The shipped campaign with imported runs: one into record 02, two into the baseline.
    root = copy_campaign(dest, with_docs=True)
    for args in (
        (str(FIXTURES / "provenance" / "deepseek-h200-decode.jsonl"), "--record", "02"),
        (str(FIXTURES / "import" / "sglang-bench-serving-2026.jsonl"), "--baseline"),
    ):
        res = run_cli("import", "--root", str(root), *args)
        assert res.returncode == 0, res.stderr
    return root


def _example(name: str) -> Callable[[Path], Path]:
    def copy(dest: Path) -> Path:
        shutil.copytree(REPO / "examples" / name, dest, ignore=shutil.ignore_patterns("site"))
        return dest

    return copy


# The sites the browser modules read, by the name their `site` fixture is parametrized with.
SITES = {
    "glm5": _glm5,
    "glm5-imported": _glm5_imported,
    "h200-decode": _example("h200-decode"),
    "h200-runner": _example("h200-runner"),
}


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], BuiltSite]]:
    """`built_site(name)`: the site of SITES[name], built once a test run and served on a free port.

    Building a site with mkdocs is most of a browser module's cost, and four modules read the
    same sites: each is built at its first use and kept, read-only, to the end of the session.
    Under xdist each site's tests are one xdist_group (pytest_collection_modifyitems), so one
    worker builds it, once.
    """
    built: dict[str, BuiltSite] = {}
    with contextlib.ExitStack() as servers:

        def get(name: str) -> BuiltSite:
            if name not in built:
                root = SITES[name](tmp_path_factory.mktemp(f"site-{name}") / name)
                res = run_cli("build", "--site", "--quiet", cwd=root)
                assert res.returncode == 0, res.stderr
                built[name] = BuiltSite(name, root, servers.enter_context(serve_folder(root / "site")))
            return built[name]

        yield get


# A page at each size in the light scheme for what is laid out (colours do not move a box), and a
# desktop's in the dark scheme too where a test checks colours: no style of the site or of its
# charts changes a colour by the screen's width, only by the scheme.
SIZES = {"phone": (390, 844), "desktop": (1280, 860)}
LAYOUT_VIEWS = [("phone", "light"), ("desktop", "light")]
COLOUR_VIEWS = [*LAYOUT_VIEWS, ("desktop", "dark")]


@contextlib.contextmanager
def open_page(browser: Browser, size: str, scheme: str, timeout_ms: int = 30_000) -> Iterator[Page]:
    """A fresh browser context and page at SIZES[size] in the colour scheme `scheme`."""
    width, height = SIZES[size]
    context = browser.new_context(viewport={"width": width, "height": height}, color_scheme=scheme)  # type: ignore[arg-type]
    context.set_default_timeout(timeout_ms)
    try:
        yield context.new_page()
    finally:
        context.close()
