"""The build's fast path: nothing to do is decided from bytes, before any heavy import, and never wrongly."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generator.base import stamp

from conftest import REPO, run_cli

HEAVY = ("pydantic", "jinja2", "generator.charts", "generator.output.render", "yaml")


def _built(campaign: Path) -> Path:
    r = run_cli("build", "-q", "--root", str(campaign))
    assert r.returncode == 0, r.stderr
    return campaign


@pytest.mark.slow
def test_an_unchanged_campaign_is_up_to_date_without_heavy_imports(campaign: Path) -> None:
    _built(campaign)
    files = json.loads((campaign / "docs" / stamp.MANIFEST_NAME).read_text())["files"]
    assert stamp.up_to_date(campaign)[0] == len(files)
    code = (
        "import sys; from generator.cli import run; sys.argv = ['improvements', 'build', '--root', sys.argv[1]]\n"
        "try:\n    run()\nexcept SystemExit:\n    pass\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(campaign)], capture_output=True, text=True, cwd=REPO)
    assert out.stdout.splitlines() == [f"{len(files)} file(s): 0 written, {len(files)} unchanged, 0 removed", "[]"]


def test_any_change_of_an_input_or_an_output_means_a_full_build(campaign: Path) -> None:
    _built(campaign)
    record = next((campaign / "improvements").glob("01-*.yaml"))
    record.write_text(record.read_text() + "# a comment\n")
    assert stamp.up_to_date(campaign)[0] is None
    _built(campaign)
    assert stamp.up_to_date(campaign)[0] is not None
    page = next((campaign / "docs" / "improvements").glob("*.md"))
    text = page.read_text()
    page.write_text(text + "hand edit\n")
    assert stamp.up_to_date(campaign)[0] is None
    _built(campaign)
    assert page.read_text() == text
    page.unlink()
    page.symlink_to(campaign / "docs" / "index.md")
    assert stamp.up_to_date(campaign)[0] is None


def test_a_fresh_copy_with_current_outputs_writes_nothing(campaign: Path, tmp_path: Path) -> None:
    # Another checkout: new mtimes, another path, so another (empty) user cache.
    _built(campaign)
    clone = tmp_path / "clone"
    shutil.copytree(campaign, clone)
    for path in clone.rglob("*"):
        path.touch()
    r = run_cli("build", "--root", str(clone))
    assert r.returncode == 0, r.stderr
    assert " 0 written" in r.stdout


def test_an_output_changed_in_place_is_seen_though_its_size_and_mtime_are_kept(campaign: Path) -> None:
    # The build keeps its outputs' signature in the user's cache folder so that the next one
    # need not read them back; an edit that keeps a page's size and modification time still
    # changes its change time, so the outputs are read, found changed, and rebuilt.
    import os

    from generator.base.incremental import cache_folder

    _built(campaign)
    folder = cache_folder(campaign)
    assert folder is not None and (folder / stamp.SEEN_NAME).is_file()
    assert stamp.up_to_date(campaign)[0] is not None
    page = next((campaign / "docs" / "improvements").glob("*.md"))
    text, st = page.read_bytes(), page.stat()
    # A letter of the body, past the `do not edit` header that makes the page ours to rewrite.
    at = text.index(b"e", text.index(b"do not edit") + len(b"do not edit") + 20)
    edited = text[:at] + b"E" + text[at + 1 :]
    assert edited != text and len(edited) == len(text)
    page.write_bytes(edited)
    os.utime(page, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert stamp.up_to_date(campaign)[0] is None
    _built(campaign)
    assert page.read_bytes() == text


@pytest.mark.parametrize("library", ["numpy", "scipy"])
def test_a_numpy_or_scipy_release_changes_the_code_digest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, library: str
) -> None:
    # numpy draws the seeded simulations and scipy the intervals: another release of either may
    # change a page's numbers, so every cached page and manifest must be built again.
    site = tmp_path / "site-packages"
    (site / f"{library}-1.0.0.dist-info").mkdir(parents=True)
    monkeypatch.syspath_prepend(str(site))
    stamp.code_digest.cache_clear()
    before = stamp.code_digest()
    (site / f"{library}-1.0.0.dist-info").rename(site / f"{library}-2.0.0.dist-info")
    stamp.code_digest.cache_clear()
    try:
        assert f"{library}-2.0.0" in stamp._versions()
        assert stamp.code_digest() != before
    finally:
        monkeypatch.undo()
        stamp.code_digest.cache_clear()
