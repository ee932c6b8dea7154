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


def test_a_journals_times_are_cut_to_the_minute_and_never_made_up(tmp_path: Path) -> None:
    folder = tmp_path / "results" / "journal"
    folder.mkdir(parents=True)
    rows = [json.loads(line) for line in (RUNNER / JOURNAL).read_text().splitlines() if line.strip()]
    plan = rows[0]
    plan["at"] = "2026-12-02T07:41:59.999+02:00"  # another zone: shown in UTC, cut, not rounded
    rows.append({"event": "interrupted", "at": "2026-12-02T08:00:00", "signal": "SIGTERM"})  # no zone
    rows.append({"event": "resumed", "at": "not a time"})  # does not read: left out
    (folder / "z-1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    found = read_journal(tmp_path, "results/journal/z-1.jsonl")
    assert found is not None
    shown = [(e.kind, e.day, e.at.strftime("%H:%M") if e.at else None, e.detail) for e in found.events]
    assert shown == [
        ("started", "2026-12-02", "05:41", None),
        ("stopped", "2026-12-02", "07:41", "decided after block 6"),
        ("interrupted", "2026-12-02", None, "SIGTERM"),
    ]


def test_the_timeline_shows_each_run_at_its_minute() -> None:
    page = files()["docs/timeline.md"]
    rows = [line for line in page.splitlines() if line.startswith("| 2026-12-02")]
    stopped = next(i for i, r in enumerate(rows) if r.startswith("| 2026-12-02 07:41 UTC | 01 |"))
    assert rows[stopped].endswith("| run stopped | decided after block 6; the last look called sdpa-attention better |")
    started = next(i for i, r in enumerate(rows) if r.startswith("| 2026-12-02 07:37 UTC | 01 |"))
    assert "| run started | plan `20261202T073711Z-243074` |" in rows[started]
    # Newest first: 03's run stopped at 07:37:10, before 01's started at 07:37:19.
    assert rows.index(next(r for r in rows if r.startswith("| 2026-12-02 07:37 UTC | 03 |"))) == started + 1
    # The records' dates have no time: each after its day's runs.
    record = next(i for i, r in enumerate(rows) if r.startswith("| 2026-12-02 | 01 |"))
    assert record > max(i for i, r in enumerate(rows) if " UTC |" in r)


def test_an_earlier_attempts_log_is_published_redacted_and_linked(tmp_path: Path) -> None:
    log = "attempts/first-attempt-sdpa-run.log"
    published = published_journal_files(analysis())
    assert published[log] == (RUNNER / log).read_bytes()  # nothing in it to redact
    page = files()["docs/improvements/h200run-01-sdpa-attention.md"]
    section = page[page.index("## How it was run") : page.index("## Caveats")]
    assert f"[`first-attempt-sdpa-run.log`](../{log})" in section
    caveats = page[page.index("## Caveats") :]
    assert f"only its console log is kept ([attempts/first-attempt-sdpa-run.log](../{log}))" in caveats
    # A log that holds a secret is published without it, as an import's raw copy is.
    root = tmp_path / "runner"
    shutil.copytree(RUNNER, root, ignore=shutil.ignore_patterns("site", "docs"))
    with (root / log).open("a") as f:
        f.write("python3 serve.py --api-key sk-live-123 --port 30000\n")
    found = published_journal_files(analyse(require_project(root)))[log].decode()
    assert "sk-live-123" not in found and "--api-key <redacted> --port 30000" in found
