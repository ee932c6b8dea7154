"""The site: real strict mkdocs builds of a copy of the shipped campaign, through the plugin."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from generator.checks.validate import require_project
from generator.project.load import Project

from conftest import REPO, copy_campaign, run_cli


def mkdocs(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`mkdocs ARGS` in `root`, as a user runs it."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def strict_build(root: Path) -> subprocess.CompletedProcess[str]:
    return mkdocs(root, "build", "--strict", "--site-dir", str(root / "site"))


def page(root: Path, project: Project, number: int) -> Path:
    rec = next(r for r in project.records if r.number == number)
    rel = project.docs_dir.relative_to(root / "docs") / Path(project.output_name(rec)).with_suffix(".html")
    return root / "site" / rel


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """One strict build of a copy of the shipped campaign, shared by the read-only tests."""
    root = copy_campaign(tmp_path_factory.mktemp("site") / "repo", with_docs=True)
    return root, strict_build(root)


@pytest.mark.mkdocs
def test_strict_build_is_clean(built: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    root, proc = built
    assert proc.returncode == 0, proc.stderr
    assert "WARNING" not in proc.stderr, proc.stderr
    assert "ERROR" not in proc.stderr, proc.stderr
    assert (root / "site" / "index.html").is_file()


@pytest.mark.mkdocs
def test_a_page_per_record(built: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    root, proc = built
    assert proc.returncode == 0, proc.stderr
    project = require_project(root)
    assert project.records
    for rec in project.records:
        html = page(root, project, rec.number).read_text(encoding="utf-8")
        assert rec.record.title in html
    # The plugin publishes the export beside the pages.
    exported = json.loads((root / "site" / "records.json").read_text(encoding="utf-8"))
    assert [r["slug"] for r in exported["records"]] == [r.slug for r in project.records]


@pytest.mark.mkdocs
def test_nav_groups_the_series_by_tier(built: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    root, proc = built
    assert proc.returncode == 0, proc.stderr
    project = require_project(root)
    tiers = sorted({r.record.tier for r in project.records})
    home = (root / "site" / "index.html").read_text(encoding="utf-8")
    labels = re.findall(r">\s*(Tier [123])\s*<", home)
    # Each tier with records is one section of the top level, in tier order.
    assert labels == [f"Tier {t}" for t in tiers], labels
    for rec in project.records:
        html = page(root, project, rec.number).read_text(encoding="utf-8")
        nav = html[html.index('class="md-nav md-nav--primary"') :]
        # The record's own section is the open one, and lists the record.
        section = re.search(rf">\s*Tier {rec.record.tier}\s*<.*?</nav>", nav, re.S)
        assert section is not None
        assert f"{rec.number:02d} · {rec.record.title}" in section.group(0)


@pytest.mark.mkdocs
def test_a_large_tier_is_split_into_numbered_sections(tmp_path: Path) -> None:
    root = copy_campaign(tmp_path / "repo", with_docs=True)
    config = root / "mkdocs.yml"
    config.write_text(
        config.read_text(encoding="utf-8").replace("  - improvements\n", "  - improvements:\n      section_size: 2\n")
    )
    proc = strict_build(root)
    assert proc.returncode == 0, proc.stderr
    project = require_project(root)
    tier1 = sorted(r.number for r in project.records if r.record.tier == 1)
    assert len(tier1) > 2
    chunks = [tier1[i : i + 2] for i in range(0, len(tier1), 2)]
    labels = [f"{c[0]:02d}" if len(c) == 1 else f"{c[0]:02d}–{c[-1]:02d}" for c in chunks]
    html = page(root, project, tier1[0]).read_text(encoding="utf-8")
    nav = html[html.index('class="md-nav md-nav--primary"') :]
    # The open section's label shows twice (its toggle and its title), so compare distinct labels.
    found = [label for label in re.findall(r">\s*([0-9]{2}(?:–[0-9]{2})?)\s*<", nav) if label in labels]
    assert list(dict.fromkeys(found)) == labels


def test_a_record_listed_by_hand_keeps_its_place(campaign: Path) -> None:
    from generator.site.plugin import tier_nav

    project = require_project(campaign)
    rec = project.records[0]
    mine = f"improvements/{project.output_name(rec)}"
    config = SimpleNamespace(
        nav=[{"Home": "index.md"}, {"Summary": "summary.md"}, {"Favourite": mine}],
        docs_dir=str(campaign / "docs"),
    )
    nav = tier_nav(project, config, "summary.md", 50)  # type: ignore[arg-type]
    assert nav is not None
    assert nav[:2] == config.nav[:2] and nav[-1] == {"Favourite": mine}
    sections = [item for item in nav[2:-1] if isinstance(item, dict)]
    assert [next(iter(s)) for s in sections] == [f"Tier {t}" for t in sorted({r.record.tier for r in project.records})]
    listed = [path for s in sections for entry in next(iter(s.values())) for path in entry.values()]
    assert mine not in listed
    assert len(listed) == len(project.records) - 1
    # Running it again on its own output adds nothing.
    config.nav = nav
    assert tier_nav(project, config, "summary.md", 50) == nav  # type: ignore[arg-type]


def test_every_guide_page_is_in_the_nav() -> None:
    config = yaml.load((REPO / "mkdocs.yml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)

    def paths(items: list[object]) -> Iterator[str]:
        for item in items:
            if isinstance(item, str):
                yield item
            elif isinstance(item, dict):
                for value in item.values():
                    yield from paths(value if isinstance(value, list) else [value])

    listed = set(paths(config["nav"]))
    guide = {p.relative_to(REPO / "docs").as_posix() for p in (REPO / "docs" / "guide").glob("*.md")}
    assert guide <= listed, f"add these to the nav in mkdocs.yml: {sorted(guide - listed)}"


@pytest.mark.mkdocs
def test_the_plugin_renders_changed_records(tmp_path: Path) -> None:
    root = copy_campaign(tmp_path / "repo", with_docs=True)
    record = root / "improvements" / "01-piecewise-cuda-graphs.yaml"
    text = record.read_text(encoding="utf-8")
    record.write_text(text.replace("title: Piecewise CUDA graphs", "title: Piecewise CUDA graphs, again"))
    proc = strict_build(root)
    assert proc.returncode == 0, proc.stderr
    project = require_project(root)
    assert "Piecewise CUDA graphs, again" in page(root, project, 1).read_text(encoding="utf-8")
    markdown = project.docs_dir / project.output_name(project.records[0])
    assert "Piecewise CUDA graphs, again" in markdown.read_text(encoding="utf-8")


@pytest.mark.mkdocs
def test_an_invalid_record_fails_the_build_with_its_position(tmp_path: Path) -> None:
    root = copy_campaign(tmp_path / "repo", with_docs=True)
    record = root / "improvements" / "01-piecewise-cuda-graphs.yaml"
    record.write_text(record.read_text(encoding="utf-8").replace("tier: 1\n", "tier: 7\n"))
    before = {p: p.read_bytes() for p in (root / "docs").rglob("*") if p.is_file()}
    proc = strict_build(root)
    assert proc.returncode == 1
    assert "improvements/01-piecewise-cuda-graphs.yaml:3:7: error[invalid-value]" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    # Nothing half-rendered: the docs are as they were.
    assert {p: p.read_bytes() for p in (root / "docs").rglob("*") if p.is_file()} == before


@pytest.mark.mkdocs
def test_the_docs_build_without_the_plugin(tmp_path: Path) -> None:
    """Other MkDocs-compatible builders get the committed markdown and mkdocs.yml's static nav."""
    root = copy_campaign(tmp_path / "repo", with_docs=True)
    config = root / "mkdocs.yml"
    text = config.read_text(encoding="utf-8")
    assert "  - improvements\n" in text
    config.write_text(text.replace("  - improvements\n", ""))
    # Nothing renders during such a build: the markdown on disk is what `improvements build` wrote.
    assert run_cli("build", "--quiet", cwd=root).returncode == 0
    proc = strict_build(root)
    assert proc.returncode == 0, proc.stderr
    assert "WARNING" not in proc.stderr, proc.stderr
    project = require_project(root)
    summary = (root / "site" / "summary.html").read_text(encoding="utf-8")
    for rec in project.records:
        assert page(root, project, rec.number).is_file()
        # Without the tier sections, the summary still reaches every record.
        assert f"{Path(project.output_name(rec)).stem}.html" in summary


@pytest.mark.mkdocs
def test_build_site_command(tmp_path: Path) -> None:
    root = copy_campaign(tmp_path / "repo", with_docs=True)
    proc = run_cli("build", "--site", cwd=root)
    assert proc.returncode == 0, proc.stderr
    index = root / "site" / "index.html"
    assert index.is_file()
    assert str(index) in proc.stdout
    other = tmp_path / "elsewhere"
    proc = run_cli("build", "--site", "--site-dir", str(other), cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert (other / "summary.html").is_file()


@pytest.mark.mkdocs
def test_site_dir_never_replaces_a_folder_that_is_not_a_site(tmp_path: Path) -> None:
    # mkdocs empties its site folder first: pointed at the records, it would delete them.
    root = copy_campaign(tmp_path / "repo", with_docs=True)
    before = {p: p.read_bytes() for p in (root / "improvements").iterdir()}
    docs_before = sorted(p.relative_to(root) for p in (root / "docs").rglob("*"))
    for target in ("improvements", "results", ".", ".."):
        proc = run_cli("build", "--site", "--site-dir", target, cwd=root)
        assert proc.returncode == 2, (target, proc.stderr)
        assert "Traceback" not in proc.stderr
    assert {p: p.read_bytes() for p in (root / "improvements").iterdir()} == before
    assert sorted(p.relative_to(root) for p in (root / "docs").rglob("*")) == docs_before
    # A folder an earlier build wrote may be built into again.
    assert run_cli("build", "--site", "--site-dir", "out", cwd=root).returncode == 0
    assert run_cli("build", "--site", "--site-dir", "out", cwd=root).returncode == 0


def test_build_site_without_mkdocs_yml_says_so(tmp_path: Path) -> None:
    root = copy_campaign(tmp_path / "repo", with_docs=True)
    (root / "mkdocs.yml").unlink()
    proc = run_cli("build", "--site", cwd=root)
    assert proc.returncode == 1
    assert "no mkdocs.yml" in proc.stderr
    assert "Traceback" not in proc.stderr


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def fetch(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.read().decode("utf-8")
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return None


def wait_for(predicate: object, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.3)
    return False


@contextlib.contextmanager
def serving(root: Path, port: int) -> Iterator[subprocess.Popen[str]]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "generator", "serve", "--dev-addr", f"127.0.0.1:{port}"],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.mark.mkdocs
def test_serve_reloads_when_a_record_changes(tmp_path: Path) -> None:
    root = copy_campaign(tmp_path / "repo", with_docs=True)
    project = require_project(root)
    rec = project.records[0]
    port = free_port()
    series = project.docs_dir.relative_to(root / "docs").as_posix()
    url = f"http://127.0.0.1:{port}/{series}/{Path(project.output_name(rec)).stem}.html"
    with serving(root, port) as proc:
        ok = wait_for(lambda: (fetch(url) or "").find(rec.record.title) >= 0 or proc.poll() is not None, 60)
        assert ok and proc.poll() is None, proc.stdout.read() if proc.stdout else ""
        rec.path.write_text(
            rec.path.read_text(encoding="utf-8").replace(f"title: {rec.record.title}", "title: Retitled while serving")
        )
        assert wait_for(lambda: "Retitled while serving" in (fetch(url) or ""), 60), "serve did not re-render"


def test_serve_stops_on_invalid_records_with_their_positions(tmp_path: Path) -> None:
    root = copy_campaign(tmp_path / "repo", with_docs=True)
    record = root / "improvements" / "01-piecewise-cuda-graphs.yaml"
    record.write_text(record.read_text(encoding="utf-8").replace("tier: 1\n", "tier: 7\n"))
    proc = run_cli("serve", "--dev-addr", f"127.0.0.1:{free_port()}", cwd=root)
    assert proc.returncode == 1
    assert "improvements/01-piecewise-cuda-graphs.yaml:3:7: error[invalid-value]" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_serve_rejects_a_bad_address() -> None:
    proc = run_cli("serve", "--dev-addr", "localhost")
    assert proc.returncode == 2
    assert "HOST:PORT" in proc.stderr


def _status(port: int, path: str) -> int | None:
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        conn.request("GET", path)
        status = conn.getresponse().status
        conn.close()
        return status
    except OSError:
        return None


@pytest.mark.mkdocs
def test_serve_answers_a_malformed_path_with_400(tmp_path: Path) -> None:
    # `GET /%00` was a 500, with a traceback in the log (a NUL reached `open`).
    root = copy_campaign(tmp_path / "repo", with_docs=True)
    port = free_port()
    with serving(root, port) as proc:
        assert wait_for(lambda: _status(port, "/") is not None or proc.poll() is not None, 60)
        assert proc.poll() is None
        assert _status(port, "/%00") == 400
        assert _status(port, "/a%01b.html") == 400
        assert _status(port, "/no-such-page.html") == 404
    log = proc.stdout.read() if proc.stdout else ""
    assert "Traceback" not in log and "Serving on" in log
