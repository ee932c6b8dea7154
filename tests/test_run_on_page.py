"""The experiment on the page (issue 49): a record `improvements run` made shows its plan, the
order drawn for each block, the sequential looks as a chart and a table, and links to the
journal, outputs and logs, which the site publishes."""

from __future__ import annotations

import json
import shutil
from functools import cache
from pathlib import Path

import pytest

from generator.analysis.campaign import Analysis, analyse
from generator.checks.validate import require_project
from generator.output.render import render_files
from generator.project.journals import read_journal
from generator.views.journal import published_journal_files

from conftest import REPO

# Slow: renders a shipped campaign whole.
pytestmark = pytest.mark.slow

RUNNER = REPO / "examples" / "h200-runner"
JOURNAL = "results/journal/sdpa-attention-20261202T073711Z-243074.jsonl"


@cache
def analysis() -> Analysis:
    return analyse(require_project(RUNNER))


@cache
def files() -> dict[str, str]:
    return render_files(analysis())


def test_record_01_shows_its_plan_block_by_block() -> None:
    page = files()["docs/improvements/h200run-01-sdpa-attention.md"]
    section = page[page.index("## How it was run") : page.index("## Caveats")]
    assert "plan `20261202T073711Z-243074`" in section and "seed 11" in section
    # The journal's order, block by block: block 1 launched SDPA first, block 2 eager first.
    assert "| 1 | 256 | 12 | 01-sdpa-attention, then the campaign baseline" in section
    assert (
        "| 2 | 256 | 13 | the campaign baseline (eager attention, DynamicCache), then 01-sdpa-attention | yes |"
        in section
    )
    assert (
        "| 7 | 256 | 18 | 01-sdpa-attention, then the campaign baseline (eager attention, DynamicCache) | no: stopped"
        in section
    )
    # The six looks, the last the one it stopped on, the same interval the results give.
    assert "| 5 | +58.2% | -13.3% to +188.6% | inconclusive |" in section
    assert "| 6 | +61.5% | +15.4% to +126.1% | better (stopped here) |" in section
    assert f"[`{Path(JOURNAL).name}`](../{JOURNAL})" in section
    assert "](../results/journal/sdpa-attention-20261202T073711Z-243074/logs/c256-b01-baseline.a1.bench.log)" in section
    assert "](plots/sdpa-attention-result-1-looks.svg)" in section


def test_the_looks_chart_narrows_to_the_stopping_point() -> None:
    svg = files()["docs/improvements/plots/sdpa-attention-result-1-looks.svg"]
    assert svg.count("after block") >= 6
    assert "after block 6: +61.5% (interval +15.4% to +126.1%), better, stopped: decided after block 6" in svg
    assert "after block 4 (no bound yet): +56.7%" in svg


def test_the_site_publishes_every_file_the_pages_link() -> None:
    published = published_journal_files(analysis())
    assert JOURNAL in published
    assert published[JOURNAL] == (RUNNER / JOURNAL).read_bytes()
    for journal in ("null-control-20261202T073338Z-58b228", "static-cache-20261202T093349Z-054277"):
        assert f"results/journal/{journal}.jsonl" in published
        assert f"results/journal/{journal}/out/c64-b01-baseline.json" in published
        assert f"results/journal/{journal}/logs/c64-b01-baseline.a1.bench.log" in published
    # Each link on the pages names a published file.
    for name, text in files().items():
        if name.startswith("docs/improvements/") and name.endswith(".md"):
            for target in published:
                if target in text:
                    assert f"](../{target})" in text


def test_a_journal_that_is_not_the_runners_reads_as_none(tmp_path: Path) -> None:
    folder = tmp_path / "results" / "journal"
    folder.mkdir(parents=True)
    (folder / "x-1.jsonl").write_text("not json\n")
    (folder / "y-1.jsonl").write_text(json.dumps({"event": "look"}) + "\n")
    shutil.copy(RUNNER / JOURNAL, folder / "z-1.jsonl")
    assert read_journal(tmp_path, "results/journal/x-1.jsonl") is None
    assert read_journal(tmp_path, "results/journal/y-1.jsonl") is None
    assert read_journal(tmp_path, "results/journal/missing.jsonl") is None
    assert read_journal(tmp_path, "results/journal/../../etc/passwd") is None
    assert read_journal(tmp_path, "elsewhere/z-1.jsonl") is None
    found = read_journal(tmp_path, "results/journal/z-1.jsonl")
    assert found is not None and found.seed == 11 and [b.ran for b in found.blocks] == [True] * 6 + [False] * 2
