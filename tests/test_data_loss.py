"""Issue 15, data loss: a build deletes or overwrites only files it wrote, never through a link,
and a site folder is emptied only when a site marker we wrote says it is ours."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generator.base import fsio
from generator.base.generated import MARKER, header, write_outputs
from generator.site.build import SITE_MARKER

from conftest import FIXTURES, REPO, copy_campaign, run_cli

RECORD = "01-piecewise-cuda-graphs.yaml"


def _tree(root: Path) -> dict[str, bytes | str]:
    """Every file under `root` (links as their target), by relative path."""
    out: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            out[rel] = f"-> {os.readlink(path)}"
        elif path.is_file():
            out[rel] = path.read_bytes()
    return out


# The shipped records hold no measured comparison (their figures are as reported), so the copy
# gets one: with it, the build draws a record chart and the summary chart under docs/plots/.
MEASURED = """\
title: A measured change
tier: 1
status: in-progress
hypothesis: A change with a measured result, so that the build draws charts.
results:
  - label: concurrency 1024
    concurrency: 1024
    metrics: {output_throughput: 1300}
    baseline: {output_throughput: 1240}
"""


def _built(tmp_path: Path) -> Path:
    root = copy_campaign(tmp_path / "repo")
    (root / "improvements" / "90-measured-change.yaml").write_text(MEASURED, encoding="utf-8")
    res = run_cli("build", "--quiet", cwd=root)
    assert res.returncode == 0, res.stderr
    return root


def _add_to_manifest(root: Path, *entries: str) -> None:
    manifest = root / "docs" / ".improvements-manifest.json"
    data = json.loads(manifest.read_text())
    data["files"] += list(entries)
    manifest.write_text(json.dumps(data))


def _bait(path: Path) -> None:
    """Make `path` look as generated as a file can: our header as its first line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    path.write_text(f"# {MARKER} from x; do not edit\n{text}", encoding="utf-8")


def test_a_link_inside_docs_never_leads_a_build_to_delete_the_campaign(tmp_path: Path) -> None:
    # The case: a symlink inside docs/ plus manifest entries through it deleted
    # improvements/campaign.yaml, mkdocs.yml and a record. Here the victims even carry our header.
    root = _built(tmp_path)
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    for rel in ("improvements/campaign.yaml", "mkdocs.yml", f"improvements/{RECORD}", ".git/config"):
        _bait(root / rel)
    (root / "docs" / "up").symlink_to("..")
    (root / "docs" / "improvements" / "recs").symlink_to("../../improvements")
    _add_to_manifest(
        root,
        "docs/up/improvements/campaign.yaml",
        "docs/up/mkdocs.yml",
        f"docs/up/improvements/{RECORD}",
        "docs/up/.git/config",
        "docs/improvements/recs/campaign.yaml",
        f"docs/improvements/recs/{RECORD}",
    )
    before = {k: v for k, v in _tree(root).items() if not k.startswith("docs/")}
    res = run_cli("build", cwd=root)
    assert res.returncode == 0, res.stderr
    assert "removed" not in res.stdout.replace(", 0 removed", ""), res.stdout
    assert {k: v for k, v in _tree(root).items() if not k.startswith("docs/")} == before


def test_an_output_folder_that_is_a_link_is_refused_and_nothing_changes(tmp_path: Path) -> None:
    # docs/improvements linked to a folder of the user's: writing or deleting through it would
    # land among their files, so the build refuses before it writes anything.
    root = _built(tmp_path)
    series = root / "docs" / "improvements"
    for path in series.rglob("*"):
        if path.is_file():
            path.unlink()
    for path in sorted(series.rglob("*"), reverse=True):
        path.rmdir()
    series.rmdir()
    (root / "notes").mkdir()
    (root / "notes" / "glb5improvement-01-piecewise-cuda-graphs.md").write_text("my notes\n")
    series.symlink_to("../notes")
    before = _tree(root)
    res = run_cli("build", cwd=root)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    assert "error[output-conflict]" in res.stderr
    assert "`docs/improvements` is a symbolic link; generated files are never written through a link" in res.stderr
    assert _tree(root) == before


def test_a_listed_file_without_the_marker_is_kept(tmp_path: Path) -> None:
    # The manifest alone is not enough: a listed file that no longer carries our marker (a page
    # the user took over, a chart they replaced) is left where it is, and said so.
    root = _built(tmp_path)
    notes = root / "docs" / "notes.md"
    notes.write_text("my notes\n")
    chart = root / "docs" / "plots" / "mine.svg"
    chart.parent.mkdir(exist_ok=True)  # the shipped campaign has no chart of its own
    chart.write_text('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"/>\n')
    _add_to_manifest(root, "docs/notes.md", "docs/plots/mine.svg")
    res = run_cli("build", cwd=root)
    assert res.returncode == 0, res.stderr
    assert notes.read_text() == "my notes\n" and chart.is_file()
    assert "left docs/notes.md: it no longer carries the generated header" in res.stdout
    assert "left docs/plots/mine.svg: it no longer carries the generated header" in res.stdout


def test_a_stale_chart_we_wrote_is_still_removed(tmp_path: Path) -> None:
    root = _built(tmp_path)
    old = root / "docs" / "plots" / "old.svg"
    old.parent.mkdir(exist_ok=True)  # the shipped campaign has no chart of its own
    old.write_text(f'<?xml version="1.0"?>\n<!-- {MARKER}; do not edit -->\n<svg/>\n')
    _add_to_manifest(root, "docs/plots/old.svg")
    res = run_cli("build", cwd=root)
    assert res.returncode == 0, res.stderr
    assert "removed docs/plots/old.svg" in res.stdout
    assert not old.exists()


def test_every_chart_carries_the_marker(tmp_path: Path) -> None:
    # The render fixture has a record chart and a summary chart; the shipped campaign none.
    root = tmp_path / "render"
    shutil.copytree(FIXTURES / "render", root)
    res = run_cli("build", "--quiet", cwd=root)
    assert res.returncode == 0, res.stderr
    charts = list((root / "docs").rglob("*.svg"))
    assert charts
    for chart in charts:
        assert chart.read_text().splitlines()[1] == f"<!-- {MARKER}; do not edit -->", chart


# --- the site folder ------------------------------------------------------------------------


def _user_folder(folder: Path) -> dict[str, bytes | str]:
    (folder / "sub").mkdir(parents=True)
    (folder / "index.html").write_text("<p>my own page</p>\n")
    (folder / "notes.md").write_text("my notes\n")
    (folder / "sub" / "more.txt").write_text("more\n")
    return _tree(folder)


def test_site_dir_that_only_looks_like_a_site_is_not_emptied(tmp_path: Path) -> None:
    # The case: index.html beside the user's notes and sub-folders.
    root = copy_campaign(tmp_path / "repo", with_docs=True)
    target = tmp_path / "mine"
    before = _user_folder(target)
    res = run_cli("build", "--site", "--site-dir", str(target), cwd=root)
    assert res.returncode == 2, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    expected = f"--site-dir {target} is not empty and holds no site improvements built (no {SITE_MARKER} file)"
    assert expected in res.stderr
    assert _tree(target) == before


def test_site_marker_that_is_a_link_does_not_count(tmp_path: Path) -> None:
    root = copy_campaign(tmp_path / "repo", with_docs=True)
    target = tmp_path / "mine"
    _user_folder(target)
    real = tmp_path / "marker"
    real.write_text("generated by improvements; do not edit\n")
    (target / SITE_MARKER).symlink_to(real)
    before = _tree(target)
    res = run_cli("build", "--site", "--site-dir", str(target), cwd=root)
    assert res.returncode == 2, res.stdout + res.stderr
    assert _tree(target) == before


def test_mkdocs_site_dir_is_held_to_the_same_rule(tmp_path: Path) -> None:
    # Without --site-dir, mkdocs.yml's site_dir is emptied just the same; refused before the
    # build writes anything (no docs/ appears).
    root = copy_campaign(tmp_path / "repo")
    before = _user_folder(root / "site")
    res = run_cli("build", "--site", cwd=root)
    assert res.returncode == 2, res.stdout + res.stderr
    assert "(mkdocs.yml) is not empty and holds no site improvements built" in res.stderr
    assert _tree(root / "site") == before
    assert not (root / "docs").exists()


@pytest.mark.mkdocs
def test_a_site_we_built_carries_the_marker_and_is_rebuilt(tmp_path: Path) -> None:
    root = copy_campaign(tmp_path / "repo", with_docs=True)
    target = tmp_path / "out"
    assert run_cli("build", "--site", "--quiet", "--site-dir", str(target), cwd=root).returncode == 0
    assert (target / SITE_MARKER).read_text().startswith("generated by improvements; do not edit\n")
    (target / "stale.html").write_text("old page\n")
    res = run_cli("build", "--site", "--quiet", "--site-dir", str(target), cwd=root)
    assert res.returncode == 0, res.stderr
    assert not (target / "stale.html").exists() and (target / "index.html").is_file()


# --- the file-system module ------------------------------------------------------------------


def test_atomic_write_keeps_the_mode_and_leaves_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_text("old")
    path.chmod(0o640)
    fsio.atomic_write(path, "new\r\nline")
    assert path.read_bytes() == b"new\r\nline"
    assert path.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]


def test_create_exclusive_never_overwrites(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    assert fsio.create_exclusive(path, "first")
    assert not fsio.create_exclusive(path, "second")
    assert path.read_text() == "first"
    (tmp_path / "link").symlink_to(tmp_path / "nowhere")
    assert not fsio.create_exclusive(tmp_path / "link", "x")
    assert not (tmp_path / "nowhere").exists()


@pytest.mark.slow
def test_the_lock_excludes_another_process(tmp_path: Path) -> None:
    lock = tmp_path / fsio.LOCK_NAME
    probe = (
        "import sys; from pathlib import Path; from filelock import Timeout; from generator.base import fsio\n"
        "try:\n    with fsio.lock(Path(sys.argv[1]), timeout=0.2): print('got it')\n"
        "except Timeout: print('held')\n"
    )
    with fsio.lock(lock):
        held = subprocess.run([sys.executable, "-c", probe, str(lock)], capture_output=True, text=True, cwd=REPO)
    free = subprocess.run([sys.executable, "-c", probe, str(lock)], capture_output=True, text=True, cwd=REPO)
    assert (held.stdout, free.stdout) == ("held\n", "got it\n"), held.stderr + free.stderr


def test_reads_and_deletes_follow_no_link(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "f.md").write_text("ours")
    (tmp_path / "link").symlink_to("real")
    (tmp_path / "real" / "l.md").symlink_to("f.md")
    assert fsio.link_in_path(tmp_path, "link/f.md") == "link"
    assert fsio.link_in_path(tmp_path, "real/f.md") is None
    assert fsio.read_regular(tmp_path, "real/f.md") == b"ours"
    assert fsio.read_regular(tmp_path, "link/f.md") is None
    assert fsio.read_regular(tmp_path, "real/l.md") is None
    assert not fsio.unlink_regular(tmp_path, "link/f.md", b"ours")
    assert not fsio.unlink_regular(tmp_path, "real/l.md", b"ours")
    # Changed since it was checked: kept.
    assert not fsio.unlink_regular(tmp_path, "real/f.md", b"other")
    assert (tmp_path / "real" / "f.md").exists()
    assert fsio.unlink_regular(tmp_path, "real/f.md", b"ours")
    assert not (tmp_path / "real" / "f.md").exists()


def test_a_fifo_where_an_output_was_does_not_hang(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    os.mkfifo(tmp_path / "docs" / "a.md")
    (tmp_path / "docs" / ".improvements-manifest.json").write_text(json.dumps({"files": ["docs/a.md"]}))
    result = write_outputs(tmp_path, {"docs/b.md": header("b") + "\n"}, ["docs"])
    assert result.removed == [] and (tmp_path / "docs" / "a.md").exists()
