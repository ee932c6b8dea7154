"""Computed once (issue 35): views, charts and output read the analysis and compute nothing from measurements.

lint-imports keeps numpy, scipy and statistics out of the three packages (pyproject.toml). This
test reads their source (ast, so a call inside a function or under TYPE_CHECKING counts too) for
the rest:

- no call to a function of `generator.analysis` (reading an analysis object's attributes is
  what a view does; calling the analysis would compute again, or compute what it never did),
  nor to `quantity.stat`, which summarises measured values; each exception is listed with why;
- no `math` beyond the tests of a float (`isnan`, `isfinite`), in views and output;
- no new arithmetic in views and output: each function that still does some is listed with how
  many operations and why none of them is on a measured value. A new operation fails here, and
  belongs in the analysis (or, with its reason, in the list).

Charts are exempt from the arithmetic list: turning the values they are given into pixels (scales,
ticks, positions, label widths) is layout, not measurement (docs/guide/architecture.md).
"""

from __future__ import annotations

import ast
import importlib
import inspect
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
STAGES = ("views", "charts", "output")
ARITH = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)
# Functions outside the analysis that compute from measured values all the same.
MEASURING = {("generator.model.quantity", "stat"), ("generator.model.quantity", "fmt_value")}
# A measured value is shown from its summary (`quantity.fmt_summarised` of `ResolvedResult.summaries`);
# `fmt_value` summarises it again, so only a figure the analysis never reads may go through it.
FLOAT_TESTS = {"isnan", "isfinite", "isinf", "inf"}

# (file, function called): why a stage may call it. Anything else of the analysis is read, not called.
CALLS_ALLOWED = {
    ("output/render.py", "generator.analysis.campaign.analyse"): "output runs the analysis once per build",
    ("output/render.py", "generator.analysis.figures.reference_problems"): "a build refuses broken quotes",
    (
        "output/render.py",
        "generator.analysis.quoting.template_quotes",
    ): "an override template's quotes; no number",
    ("views/page_reuse.py", "generator.analysis.reuse.watched"): "views noting reads; no number",
    ("views/prose.py", "generator.analysis.figures.lookup"): "finds a quoted figure the analysis computed",
    ("views/road.py", "generator.analysis.road.distance_text"): "the road's distance in words (analysis' numbers)",
    ("views/glance.py", "generator.analysis.road.distance_text"): "the same words on the home page",
    ("views/variants.py", "generator.model.quantity.fmt_value"): "a change as the source reported it, never compared",
}

# (file, function): (arithmetic operations in it, why none is on a measured value).
ONE_BASED = "a 1-based position or file number from an index"
ALPHA = "the campaign rule's alpha as a confidence level in words: configuration, not measured"
ARITHMETIC_ALLOWED = {
    ("views/road.py", "step_lines"): (1, "the container line before this one, by its index"),
    ("views/markdown.py", "paragraphs"): (1, "joins an indent and a line (text)"),
    ("views/markdown.py", "code"): (1, "a backtick fence one longer than the longest run inside"),
    ("views/markdown.py", "code_block"): (2, "a fence one longer than the longest inside; indent and line"),
    ("views/record_page.py", "blocker_anchor"): (1, ONE_BASED),
    ("views/record_page.py", "rule"): (5, ALPHA),
    ("views/record_page.py", "primary_text"): (2, ALPHA),
    ("views/glance.py", "decision"): (2, ALPHA),
    ("views/paths.py", "strip_path"): (1, ONE_BASED),
    ("views/paths.py", "variant_strip_path"): (2, ONE_BASED),
    ("views/plots.py", "record_series"): (1, "joins a series name and its workload (text)"),
    ("views/road.py", "stack_script"): (2, "the column of the script's comments, in characters"),
    ("views/road.py", "stack_marks"): (1, ONE_BASED),
    ("views/strips.py", "strips"): (3, ONE_BASED),
    ("views/journal.py", "looks_path"): (1, ONE_BASED),
    ("views/journal.py", "looks_charts"): (1, ONE_BASED),
    ("views/summary.py", "gain_text"): (1, "joins two lists of metric names"),
    ("views/sweeps.py", "frontier_path"): (1, ONE_BASED),
    ("views/sweeps.py", "latency_path"): (1, ONE_BASED),
    ("views/sweeps.py", "capacity_change_text"): (2, ALPHA),
}


def _files(stage: str) -> list[Path]:
    return sorted((REPO / "generator" / stage).glob("*.py"))


def _name(path: Path) -> str:
    return path.relative_to(REPO / "generator").as_posix()


def _bindings(tree: ast.AST) -> dict[str, tuple[str, str | None]]:
    """Local name -> (module, attribute) for every import of the analysis or a measuring function."""
    out: dict[str, tuple[str, str | None]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                local = alias.asname or alias.name
                if node.module == "generator.analysis":
                    out[local] = (f"generator.analysis.{alias.name}", None)
                elif node.module.startswith("generator.analysis.") or (node.module, alias.name) in MEASURING:
                    out[local] = (node.module, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("generator.analysis.") and alias.asname:
                    out[alias.asname] = (alias.name, None)
    return out


def _called(node: ast.Call, bindings: dict[str, tuple[str, str | None]]) -> tuple[str, str] | None:
    func = node.func
    if isinstance(func, ast.Name) and func.id in bindings:
        module, attr = bindings[func.id]
        return None if attr is None else (module, attr)
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in bindings:
        module, attr = bindings[func.value.id]
        return (module, func.attr) if attr is None else None
    return None


def analysis_calls(path: Path) -> list[str]:
    """Every call in the file to a function (not a class) of the analysis, or to a measuring one."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bindings = _bindings(tree)
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or (target := _called(node, bindings)) is None:
            continue
        module, attr = target
        obj = getattr(importlib.import_module(module), attr)
        if inspect.isclass(obj):
            continue  # building a value to hand on is not computing one
        out.append(f"{module}.{attr}")
    return out


# Calls that give text or a sequence, by name: what `+` joins after them is no number.
TEXT_CALLS = ("str", "repr", "sorted", "list", "tuple")
TEXT_SUFFIXES = ("_text", "_header", "_matter", "_normalise")


def _is_text(side: ast.expr) -> bool:
    if isinstance(side, ast.JoinedStr | ast.List | ast.ListComp | ast.Tuple):
        return True
    if isinstance(side, ast.Constant) and isinstance(side.value, str):
        return True
    if isinstance(side, ast.IfExp):
        return _is_text(side.body) or _is_text(side.orelse)
    if isinstance(side, ast.BinOp):
        return _is_text(side.left) or _is_text(side.right)
    if isinstance(side, ast.Call):
        func = side.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        return name in TEXT_CALLS or name.startswith("fmt_") or name.endswith(TEXT_SUFFIXES)
    return False


def _is_text_or_path(node: ast.BinOp | ast.AugAssign) -> bool:
    """String building, list building and path joins: operations on no number at all."""
    sides = [node.left, node.right] if isinstance(node, ast.BinOp) else [node.target, node.value]
    if any(_is_text(side) for side in sides):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        left = node.left
        while isinstance(left, ast.BinOp) and isinstance(left.op, ast.Div):
            left = left.left  # a / b / c joins from a
        if isinstance(left, ast.Call):
            left = left.func
        name = left.id if isinstance(left, ast.Name) else left.attr if isinstance(left, ast.Attribute) else ""
        return name.endswith(("dir", "root", "here", "folder", "Path", "TEMPLATES"))
    return False


def arithmetic(path: Path) -> Counter[str]:
    """Numeric arithmetic operations per function (its dotted name; "<module>" at the top)."""
    found: Counter[str] = Counter()

    def visit(node: ast.AST, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = where
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                inner = child.name if where == "<module>" else f"{where}.{child.name}"
            if isinstance(child, ast.BinOp | ast.AugAssign) and isinstance(child.op, ARITH):
                found[inner] += 0 if _is_text_or_path(child) else 1
            visit(child, inner)

    visit(ast.parse(path.read_text(encoding="utf-8")), "<module>")
    return +found  # without the functions that only join text


def math_uses(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = [
        f"math.{node.attr}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "math"
    ]
    out += [
        f"from math import {a.name}"
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "math"
        for a in node.names
    ]
    return [use for use in out if use.removeprefix("math.") not in FLOAT_TESTS]


@pytest.mark.parametrize("stage", STAGES)
def test_no_stage_calls_the_analysis(stage: str) -> None:
    found = sorted(
        (_name(path), call)
        for path in _files(stage)
        for call in analysis_calls(path)
        if (_name(path), call) not in CALLS_ALLOWED
    )
    assert found == [], "compute it in generator.analysis and read the result instead"


def test_every_allowed_call_is_still_made() -> None:
    made = {(_name(p), call) for stage in STAGES for p in _files(stage) for call in analysis_calls(p)}
    assert sorted(set(CALLS_ALLOWED) - made) == []


@pytest.mark.parametrize("stage", ["views", "output"])
def test_views_and_output_use_no_math_beyond_float_tests(stage: str) -> None:
    assert [(_name(p), use) for p in _files(stage) for use in math_uses(p)] == []


def test_views_and_output_do_no_arithmetic_beyond_the_list() -> None:
    found = {
        (_name(p), function): count
        for stage in ("views", "output")
        for p in _files(stage)
        for function, count in arithmetic(p).items()
    }
    listed = {key: count for key, (count, _why) in ARITHMETIC_ALLOWED.items()}
    assert found == listed


# --- the checks can fail --------------------------------------------------------------------------


def test_a_call_into_the_analysis_is_found(tmp_path: Path) -> None:
    view = tmp_path / "view.py"
    view.write_text(
        "from generator.analysis import capacity as cap\n"
        "from generator.analysis.stats import compare, Comparison\n"
        "from generator.model.quantity import stat, fmt_number\n"
        "def f(c, points, slo, a, b):\n"
        "    Comparison  # a class is read, not called\n"
        "    return cap.capacity_point(c, points, slo), compare(a, b, higher_is_better=True), stat(a), fmt_number(1)\n"
    )
    assert analysis_calls(view) == [
        "generator.analysis.capacity.capacity_point",
        "generator.analysis.stats.compare",
        "generator.model.quantity.stat",
    ]


def test_arithmetic_is_counted_and_text_is_not(tmp_path: Path) -> None:
    view = tmp_path / "view.py"
    view.write_text(
        "def f(a, b, root, here):\n"
        "    text = 'x' + str(a)\n"
        "    text += f'{b}'\n"
        "    parts = [1] + [2]\n"
        "    where = root / 'index.md'\n"
        "    also = here / a\n"
        "    mean = (a + b) / 2\n"
        "    mean *= 3\n"
        "    def g():\n"
        "        return 1000 / a\n"
        "    return text, parts, where, also, mean, g\n"
    )
    assert arithmetic(view) == Counter({"f": 3, "f.g": 1})


def test_math_beyond_float_tests_is_found(tmp_path: Path) -> None:
    view = tmp_path / "view.py"
    view.write_text("import math\nfrom math import fsum\nx = math.isnan(1.0) or math.sqrt(4.0)\n")
    assert sorted(math_uses(view)) == ["from math import fsum", "math.sqrt"]
