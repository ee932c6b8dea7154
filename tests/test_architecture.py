"""The layout shows the stages: every module in a layer, no cycle, every module on the architecture page."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "generator"
# The CLI entry points and the package's own files: everything else lives in a stage's folder.
TOP = {"__init__", "__main__", "cli", "clidoc"}


def _modules() -> list[str]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        out.append(".".join(("generator", *parts)))
    return out


def _layers() -> list[str]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    (stages,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    return [name.strip() for layer in stages["layers"] for name in layer.split("|")]


def test_only_the_entry_points_sit_at_the_top() -> None:
    top = {p.stem for p in PACKAGE.glob("*.py")}
    assert top == TOP


def test_every_module_is_in_a_layer_of_the_contract() -> None:
    layers = _layers()
    outside = [
        m
        for m in _modules()
        if m != "generator" and not any(m == layer or m.startswith(layer + ".") for layer in layers)
    ]
    assert outside == ["generator.__init__"], outside


def test_the_click_contract_covers_every_package_below_the_site() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    (forbidden,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "forbidden"]
    layers = _layers()
    below = layers[layers.index("generator.site") + 1 :]
    assert set(forbidden["source_modules"]) == set(below)
    assert forbidden["forbidden_modules"] == ["click"]


def _only_a_docstring(path: Path) -> bool:
    body = ast.parse(path.read_text(encoding="utf-8")).body
    return len(body) == 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)


def test_the_architecture_page_lists_every_module_once() -> None:
    page = (REPO / "docs" / "guide" / "architecture.md").read_text(encoding="utf-8")
    listed = re.findall(r"^\| `([a-z_/]+\.py)` \|", page, re.M)
    # A package's __init__.py that is only its docstring is described by its bold row instead.
    files = sorted(
        p.relative_to(PACKAGE).as_posix()
        for p in PACKAGE.rglob("*.py")
        if not (p.name == "__init__.py" and _only_a_docstring(p))
    )
    assert sorted(set(listed)) == sorted(listed), "a module is listed twice"
    assert sorted(listed) == files
