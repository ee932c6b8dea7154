"""The package's own shape: no module over 500 lines, and a function over 60 lines says why.

A long function is sometimes right (one SVG drawn top to bottom, one decision over a fixed
order of cases); the reader is then owed the reason, in its docstring or a comment at its
head, as "Over 60 lines: ..." or "Longer than most: ...".
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from conftest import REPO

PACKAGE = REPO / "generator"
MODULE_LIMIT = 500
FUNCTION_LIMIT = 60
REASON = re.compile(r"over 60 lines|longer than most", re.IGNORECASE)


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def test_no_module_over_500_lines() -> None:
    long = {str(p.relative_to(REPO)): n for p in _modules() if (n := len(p.read_text().splitlines())) > MODULE_LIMIT}
    assert not long, f"modules over {MODULE_LIMIT} lines: {long}"


def test_a_function_over_60_lines_says_why() -> None:
    unexplained = []
    for path in _modules():
        text = path.read_text()
        lines = text.splitlines()
        for node in ast.walk(ast.parse(text)):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            assert node.end_lineno is not None
            size = node.end_lineno - node.lineno + 1
            if size <= FUNCTION_LIMIT:
                continue
            # The reason sits in the docstring or in a comment among the first lines of the body.
            head = ast.get_docstring(node) or ""
            first = node.body[0].lineno if node.body else node.lineno
            head += "\n".join(lines[node.lineno - 1 : first + 8])
            if not REASON.search(head):
                unexplained.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name} ({size} lines)")
    assert not unexplained, "functions over 60 lines that do not say why:\n" + "\n".join(unexplained)
