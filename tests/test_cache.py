"""The build cache never changes what a build writes: after any edit, a rebuild that reuses
cached records, pages and charts writes exactly the bytes a build without a cache renders."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator.analysis.campaign import analyse
from generator.base.incremental import cache_folder
from generator.checks.validate import require_project
from generator.output import render

from conftest import run_cli


def docs(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in (root / "docs").rglob("*")
        if p.is_file() and p.suffix in (".md", ".svg", ".json", ".csv") and not p.name.startswith(".")
    }


def fresh(root: Path) -> dict[str, bytes]:
    """What a build renders with no cache at all (none is active outside `render.build`)."""
    return {k: v.encode() for k, v in render.render_files(analyse(require_project(root))).items()}


def build(root: Path) -> str:
    res = run_cli("build", "--root", str(root))
    assert res.returncode == 0, res.stderr
    return res.stdout


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert re.search(old, text, re.M), f"{old!r} not in {path.name}"
    path.write_text(re.sub(old, new, text, count=1, flags=re.M), encoding="utf-8")


def test_rebuilds_after_edits_match_an_uncached_build(campaign: Path) -> None:
    records = campaign / "improvements"
    build(campaign)
    folder = cache_folder(campaign)
    assert folder is not None and (folder / "entries.sqlite").is_file()
    # Never inside the checkout, where a commit could plant a pickle.
    assert not folder.is_relative_to(campaign.resolve())
    # A second build with nothing changed comes from the cache and writes nothing.
    assert re.search(r"\b0 written\b", build(campaign))
    steps = [
        # A record's own text: only its page (and the pages listing it) change.
        ("04-tp4-pp2.yaml", r"^title: .*$", "title: TP4 plus PP2 (renamed)"),
        # A title shown on the pages of the records that name it as related (02, 05, 06).
        ("04-tp4-pp2.yaml", r"^title: .*$", "title: TP4 + PP2, second name"),
        # A shared blocker's definition, shown on the pages of records that point at it (06, 08).
        ("07-persistent-grouped-gemm.yaml", r"^(\s+title:) .*$", r"\1 A renamed shared blocker"),
        # The campaign: every page shows the engine and baseline.
        ("campaign.yaml", r"^  name: SGLang$", "  name: SGLang (edited)"),
    ]
    for name, old, new in steps:
        edit(records / name, old, new)
        build(campaign)
        assert docs(campaign) == fresh(campaign), f"after editing {name}"


def test_a_damaged_cache_is_ignored(campaign: Path) -> None:
    build(campaign)
    folder = cache_folder(campaign)
    assert folder is not None
    (folder / "entries.sqlite").write_bytes(b"not a database")
    build(campaign)
    assert docs(campaign) == fresh(campaign)


def test_a_cache_home_inside_the_repository_is_not_used(campaign: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A pickle in the checkout would be loaded if the cache could sit there: it is never used.
    monkeypatch.setenv("XDG_CACHE_HOME", str(campaign / ".cache"))
    assert cache_folder(campaign) is None
    build(campaign)
    assert not (campaign / ".cache").exists()
    assert docs(campaign) == fresh(campaign)


def test_the_cache_and_the_manifest_digest_the_code_one_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # One digest of the code: a shipped file that is neither .py nor .j2 (a guide page) must
    # invalidate the cache exactly as it makes the manifest's inputs stale.
    from generator.base import incremental, stamp

    package = tmp_path / "generator"
    (package / "guide").mkdir(parents=True)
    (package / "a.py").write_text("x = 1\n")
    (package / "guide" / "page.md").write_text("one\n")
    monkeypatch.setattr(stamp, "_PACKAGE", package)
    stamp.code_digest.cache_clear()
    before = stamp.code_digest()
    (package / "guide" / "page.md").write_text("two\n")
    stamp.code_digest.cache_clear()
    assert stamp.code_digest() != before
    assert incremental.code_digest is stamp.code_digest
    stamp.code_digest.cache_clear()
