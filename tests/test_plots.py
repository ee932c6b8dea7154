"""Charts: drawn where the data allows, deterministic bytes, readable on light and dark, with alt text."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from generator.analysis import analyse
from generator.plots import BASELINE, INK, RECORD, plot_files, plots
from generator.validate import require_project

from conftest import BENCH, REPO, run_cli

SVG = "{http://www.w3.org/2000/svg}"


def ok(*args: str) -> None:
    r = run_cli(*args)
    assert r.returncode == 0, r.stderr


@pytest.fixture
def ab_campaign(campaign: Path, tmp_path: Path) -> Path:
    """The shipped campaign plus the real bench_one_batch A/B: no_cuda_graph as baseline, cuda_graph on record 03."""
    lines = (BENCH / "sglang-bench-one-batch.jsonl").read_text().splitlines(keepends=True)
    base, rec = tmp_path / "no-graph.jsonl", tmp_path / "graph.jsonl"
    base.write_text("".join(ln for ln in lines if '"run_name": "no_cuda_graph"' in ln))
    rec.write_text("".join(ln for ln in lines if '"run_name": "cuda_graph"' in ln))
    ok("import", "--root", str(campaign), str(base), "--baseline")
    ok("import", "--root", str(campaign), str(rec), "--record", "single-batch-overlap")
    # bench_one_batch measures decode throughput, not output throughput: make it the record's
    # primary metric, the one the summary ranks and charts (issue #12).
    path = campaign / "improvements" / "03-single-batch-overlap.yaml"
    path.write_text(
        path.read_text().replace("expected:\n  metric: output_throughput", "expected:\n  metric: decode_throughput")
    )
    return campaign


def test_shipped_campaign_has_no_record_chart() -> None:
    # No record of the shipped campaign has results at several concurrencies.
    files = plot_files(analyse(require_project(REPO)))
    assert not [p for p in files if "/improvements/plots/" in p]
    assert set(files) <= {"docs/plots/summary-gains.svg", "docs/plots/summary-throughput-latency.svg"}


def test_record_chart_from_an_imported_sweep(ab_campaign: Path) -> None:
    project = require_project(ab_campaign)
    by_path = {p.path: p for p in plots(analyse(project))}
    chart = by_path["docs/improvements/plots/single-batch-overlap.svg"]
    # The alt text states the numbers: decode throughput at batch 1, 8, 16, record and baseline.
    assert "Decode throughput (tok/s) against concurrency" in chart.alt
    assert "this record 112 at 1, 864.3 at 8, 1684 at 16" in chart.alt
    assert "baseline 93.5 at 1, 699.6 at 8, 1389 at 16" in chart.alt
    assert "Decode step latency (ms)" in chart.alt
    root = ET.fromstring(chart.svg)
    assert root.find(f"{SVG}title").text == chart.alt
    assert root.get("role") == "img"
    # Both series drawn, in the record and baseline colours; text in the mid-contrast ink.
    assert RECORD in chart.svg and BASELINE in chart.svg and INK in chart.svg
    assert "summary-throughput-latency" in " ".join(by_path)
    ok("build", "--root", str(ab_campaign))
    page = next((ab_campaign / "docs" / "improvements").glob("*-single-batch-overlap.md")).read_text()
    # Embedded under Results with its alt text (this alt has no markdown characters to escape).
    assert f"## Results\n\n![{chart.alt}](plots/single-batch-overlap.svg)\n" in page
    written = ab_campaign / "docs" / "improvements" / "plots" / "single-batch-overlap.svg"
    assert written.read_text() == chart.svg
    summary = (ab_campaign / "docs" / "summary.md").read_text()
    assert "](plots/summary-throughput-latency.svg)" in summary and "](plots/summary-gains.svg)" in summary


def test_rate_sweep_is_drawn_against_request_rate(campaign: Path) -> None:
    ok("import", "--root", str(campaign), str(BENCH / "sglang-bench-serving-2024-sweep.jsonl"), "--record", "02")
    project = require_project(campaign)
    chart = {p.path: p for p in plots(analyse(project))}["docs/improvements/plots/mscclpp-allreduce.svg"]
    assert "Output token throughput (tok/s) against request rate" in chart.alt
    assert "537.4 at 1" in chart.alt
    # No baseline run matches: only this record's points, one series per workload.
    assert "baseline" not in chart.alt
    assert "this record (random 1024/1024)" in chart.svg and "this record (sharegpt)" in chart.svg


def test_svg_is_transparent_and_undated(ab_campaign: Path) -> None:
    for p in plots(analyse(require_project(ab_campaign))):
        assert "<dc:date>" not in p.svg and "Matplotlib v" not in p.svg
        assert "#ffffff" not in p.svg.lower()  # no opaque white background
        ET.fromstring(p.svg)


def test_charts_are_byte_identical_across_runs_time_zones_and_locales(ab_campaign: Path) -> None:
    code = (
        "import sys, json; from pathlib import Path; from generator.validate import require_project; "
        "from generator.analysis import analyse; "
        "from generator.plots import plot_files; "
        "sys.stdout.write(json.dumps(plot_files(analyse(require_project(Path(sys.argv[1])))), sort_keys=True))"
    )
    outputs = []
    for tz, lang in (("UTC", "C.UTF-8"), ("Asia/Kolkata", "de_DE.UTF-8"), ("America/Los_Angeles", "fr_FR.UTF-8")):
        env = {**os.environ, "TZ": tz, "LANG": lang, "LC_ALL": lang, "PYTHONHASHSEED": "random"}
        proc = subprocess.run(
            [sys.executable, "-c", code, str(ab_campaign)],
            capture_output=True,
            text=True,
            env=env,
            cwd=REPO,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        outputs.append(proc.stdout)
    assert outputs[0] == outputs[1] == outputs[2]
    assert len(outputs[0]) > 1000


def test_non_latin_title_builds_quietly(ab_campaign: Path) -> None:
    # DejaVu Sans lacks CJK glyphs; the SVG keeps text as text for the browser's fonts, so no warning.
    record = next((ab_campaign / "improvements").glob("03-*.yaml"))
    text = record.read_text()
    head, sep, rest = text.partition("\ntitle: ")
    assert sep, "the record has a top-level title"
    record.write_text(head + '\ntitle: "Repeated 测试 ✓"\n' + rest.split("\n", 1)[1])
    r = run_cli("build", "-q", "--root", str(ab_campaign))
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    svg = (ab_campaign / "docs" / "improvements" / "plots" / "single-batch-overlap.svg").read_text()
    assert "Repeated 测试 ✓" in svg
