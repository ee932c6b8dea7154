"""Several runs of one comparison in a record: the latest plan is the headline, the others are
shown and named as unused, and prose names results by load or label, never by position (issue 46)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.analysis.campaign import analyse
from generator.analysis.figures import lookup
from generator.checks.validate import require_project

from conftest import run_cli

FIRST = "faster against speed 200, load 64 (improvements run 20261202T073711Z-243074)"
LATER = "faster against speed 200, load 64 (improvements run 20261203T101500Z-0a1b2c)"


def record(first_at_end: bool = False, quote: str = "{{ 01.c64.output_throughput.change }}") -> str:
    first = (
        f"  - label: {FIRST}\n    concurrency: 64\n"
        "    metrics: {output_throughput: [107.0, 108.5, 106.0]}\n"
        "    baseline: {output_throughput: [100.0, 100.5, 99.0]}\n"
    )
    later = (
        f"  - label: {LATER}\n    concurrency: 64\n"
        "    metrics: {output_throughput: [101.0, 99.5, 100.5, 100.0, 101.5, 99.0]}\n"
        "    baseline: {output_throughput: [100.0, 100.5, 99.0, 100.0, 100.5, 99.5]}\n"
    )
    results = later + first if first_at_end else first + later
    return (
        "title: Faster engine\ntier: 1\nstatus: in-progress\nhypothesis: More speed.\n"
        f"results:\n{results}verdict: The change is {quote}.\n"
    )


@pytest.mark.parametrize("first_at_end", [False, True])
def test_the_latest_plan_is_the_headline_wherever_it_is_listed(minimal: Path, first_at_end: bool) -> None:
    path = minimal / "improvements" / "01-faster.yaml"
    path.write_text(record(first_at_end))
    analysis = analyse(require_project(minimal))
    (entry,) = analysis.records
    assert entry.primary is not None and entry.primary.label == LATER
    assert entry.primary.chosen == "the first result, the latest of its runs"
    later = next(r for r in entry.results if r.result.label == LATER)
    assert entry.primary.comparison == later.comparisons["output_throughput"]
    # The earlier run is kept and shown, with a note naming the result read instead.
    earlier = next(r for r in entry.results if r.result.label == FIRST)
    assert any(LATER in note and "earlier run of this comparison" in note for note in earlier.notes)
    # A reference by load reads the latest; by its full label, the one named.
    by_load = lookup(analysis, "01.c64.output_throughput.change")
    c = later.comparisons["output_throughput"]
    assert c is not None and not isinstance(by_load, str) and by_load.value == c.change_percent
    old = lookup(analysis, f'01."{FIRST}".output_throughput.n')
    assert not isinstance(old, str) and old.value == 3.0
    bare = lookup(analysis, '01."faster against speed 200, load 64".output_throughput.n')
    assert not isinstance(bare, str) and bare.value == 6.0
    # `check` names the unused result at its own place, as a warning; the build goes on.
    out = run_cli("check", "--root", str(minimal))
    assert out.returncode == 0, out.stderr
    line = 6 if not first_at_end else 10
    assert f"improvements/01-faster.yaml:{line}:5: warning[rerun-unused]: result `{FIRST}`" in out.stderr
    assert run_cli("build", "--root", str(minimal)).returncode == 0
    (row,) = json.loads(run_cli("summary", "--root", str(minimal), "--format", "json").stdout)
    assert row["primary_n"] == 6


def test_results_not_made_by_a_plan_are_never_replaced(minimal: Path) -> None:
    # Two hand-written results at one load are two comparisons: a load names neither, a label does.
    text = record().replace(" (improvements run 20261202T073711Z-243074)", " (8k prompts)")
    text = text.replace(" (improvements run 20261203T101500Z-0a1b2c)", " (1k prompts)")
    path = minimal / "improvements" / "01-faster.yaml"
    path.write_text(text)
    out = run_cli("check", "--root", str(minimal))
    assert out.returncode == 1 and "rerun-unused" not in out.stderr
    assert "has 2 results at concurrency 64" in out.stderr and "name one by its label in double quotes" in out.stderr
    path.write_text(
        record(quote='{{ 01."faster against speed 200, load 64 (8k prompts)".output_throughput.n }}').replace(
            " (improvements run 20261202T073711Z-243074)", " (8k prompts)"
        )
    )
    assert run_cli("check", "--root", str(minimal)).returncode == 0


def test_a_position_is_refused_at_its_place(minimal: Path) -> None:
    path = minimal / "improvements" / "01-faster.yaml"
    path.write_text(record(quote="{{ 01.r2.output_throughput.change }}"))
    out = run_cli("check", "--root", str(minimal))
    assert out.returncode == 1
    line = record().count("\n")
    assert f"improvements/01-faster.yaml:{line}:24: error[unknown-reference]" in out.stderr
    assert "a position is not a name" in out.stderr
    assert run_cli("build", "--root", str(minimal)).returncode == 1
