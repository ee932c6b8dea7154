"""What the wheel is made of: every folder of the package listed, the guide mapped in, no link."""

from __future__ import annotations

import tomllib
from pathlib import Path

from conftest import REPO

SETUPTOOLS = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]


def _folders(root: Path, package: str) -> set[str]:
    return {
        ".".join([package, *path.relative_to(root).parts])
        for path in [root, *root.rglob("*")]
        if path.is_dir() and "__pycache__" not in path.parts
    }


def test_every_folder_of_the_package_is_listed() -> None:
    # `packages` is a list, not a search (the guide is mapped from docs/guide), so a new
    # subpackage left out of it would be missing from every wheel while the checkout works.
    expected = _folders(REPO / "generator", "generator") | _folders(REPO / "docs" / "guide", "generator.guide")
    assert set(SETUPTOOLS["packages"]) == expected


def test_the_guide_ships_from_docs_guide_and_the_package_holds_no_link() -> None:
    assert SETUPTOOLS["package-dir"] == {"generator.guide": "docs/guide"}
    assert not (REPO / "generator" / "guide").exists()
    # setuptools cannot copy a symbolic link into a wheel ("can't copy ...: not a regular file").
    assert [p for p in (REPO / "generator").rglob("*") if p.is_symlink()] == []
    # Every package of data ships all its files.
    for package in SETUPTOOLS["packages"]:
        if package.startswith(("generator.templates", "generator.guide.")):
            assert SETUPTOOLS["package-data"][package] == ["*"], package
    assert SETUPTOOLS["package-data"]["generator.guide"] == ["*.md"]
