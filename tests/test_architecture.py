"""The layout shows the stages: every module in a layer, no cycle, every module on the architecture page."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import grimp
import pytest

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
    contracts = config["tool"]["importlinter"]["contracts"]
    (forbidden,) = [c for c in contracts if c["type"] == "forbidden" and "click" in c["forbidden_modules"]]
    layers = _layers()
    below = layers[layers.index("generator.site") + 1 :]
    assert set(forbidden["source_modules"]) == set(below)
    assert forbidden["forbidden_modules"] == ["click"]


def _cycles(graph: grimp.ImportGraph, package: str) -> list[list[str]]:
    """Strongly connected components of more than one module (iterative Tarjan)."""
    nodes = sorted(m for m in graph.modules if m.split(".")[0] == package)
    imports = graph.find_modules_directly_imported_by
    edges = {m: sorted(i for i in imports(m) if i.split(".")[0] == package) for m in nodes}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    for root in nodes:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = len(index)
                stack.append(v)
                on.add(v)
            if i < len(edges[v]):
                work.append((v, i + 1))
                w = edges[v][i]
                if w not in index:
                    work.append((w, 0))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return out


def test_no_import_cycle_between_modules() -> None:
    # grimp sees imports inside functions and under TYPE_CHECKING, as lint-imports does.
    assert _cycles(grimp.build_graph("generator"), "generator") == []


def test_the_cycle_finder_finds_a_cycle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "cyc"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from cyc import b\n")
    (pkg / "b.py").write_text("from cyc import a\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert _cycles(grimp.build_graph("cyc"), "cyc") == [["cyc.a", "cyc.b"]]
    (pkg / "b.py").write_text("import typing\n")
    assert _cycles(grimp.build_graph("cyc"), "cyc") == []


def test_commands_do_not_import_each_other() -> None:
    graph = grimp.build_graph("generator")
    for module in sorted(m for m in graph.modules if m.startswith("generator.commands.")):
        others = sorted(
            i for i in graph.find_modules_directly_imported_by(module) if i.startswith("generator.commands")
        )
        assert others == [], module


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


_MEMOS = {"cache", "lru_cache", "cached_property"}


def _memo_sites() -> list[tuple[str, str]]:
    """(module, function) for every function the package memoises with functools."""
    sites = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef):
                for deco in node.decorator_list:
                    target = deco.func if isinstance(deco, ast.Call) else deco
                    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
                    if name in _MEMOS:
                        sites.append((path.relative_to(PACKAGE).as_posix(), node.name))
    return sorted(sites)


def test_the_architecture_page_names_every_memo() -> None:
    # A memo is state kept between calls; the page says where each is and why it earns its keep.
    page = (REPO / "docs" / "guide" / "architecture.md").read_text(encoding="utf-8")
    rows = [line for line in page.splitlines() if line.startswith("| `") and "` `" in line]
    sites = _memo_sites()
    assert len(sites) >= 10, sites
    missing = [s for s in sites if not any(f"`{s[0]}`" in r and f"`{s[1]}`" in r for r in rows)]
    assert not missing, f"memos the architecture page does not list: {missing}"
