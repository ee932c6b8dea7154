"""How runs made elsewhere were made: launches and start times, read through `import_formats`.

Arms run one after the other carry a warning and interleaved arms do not; runs that share a
launch are one observation (the comparison is Welch's t on the launches' means, pinned to
scipy), and a side that is one launch is a single shot. Real CSV files, real imports, the CLI.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest
from scipy import stats

from generator.analysis.campaign import analyse
from generator.analysis.design import launch_means
from generator.checks.validate import require_project
from generator.project.matching import Origin
from generator.project.runs.run import started_utc

from conftest import run_cli

MAPPING = """
import_formats:
  harness:
    metrics:
      output_throughput: tok_s
    settings:
      batch_size: batch
      started: t
      launch: server
"""

RECORD = """\
title: A faster kernel
tier: 1
status: proposed
hypothesis: >-
  Fewer kernel launches per decode step.
"""

T0 = 1_764_614_400  # 2025-12-01T18:40:00Z, epoch seconds


def write_csv(path: Path, rows: list[dict[str, object]]) -> None:
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["batch", "tok_s", "t", "server"])
        writer.writeheader()
        writer.writerows(rows)


def campaign(root: Path, base: list[dict[str, object]], mine: list[dict[str, object]]) -> Path:
    path = root / "improvements" / "campaign.yaml"
    path.write_text(path.read_text() + MAPPING)
    (root / "improvements" / "01-kernel.yaml").write_text(RECORD)
    write_csv(root / "base.csv", base)
    write_csv(root / "mine.csv", mine)
    for name, where in (("base.csv", "--baseline"), ("mine.csv", "--record=kernel")):
        out = run_cli("import", "--root", str(root), str(root / name), where, "--format", "harness")
        assert out.returncode == 0, out.stderr
    return root


def rows(values: list[float], starts: list[float], servers: list[str]) -> list[dict[str, object]]:
    return [{"batch": 8, "tok_s": v, "t": t, "server": s} for v, t, s in zip(values, starts, servers, strict=True)]


BASE = [100.0, 103.0, 98.0, 101.0, 99.0, 102.0]
MINE = [104.0, 106.0, 101.0, 105.0, 103.0, 107.0]


def check(root: Path) -> str:
    out = run_cli("check", "--root", str(root), "--verbose")
    assert out.returncode == 0, out.stderr
    return out.stderr


def only_result(root: Path):
    analysis = analyse(require_project(root))
    (entry,) = analysis.records
    (res,) = entry.results
    return analysis, entry, res


def test_blocked_runs_carry_the_warning_everywhere(minimal: Path) -> None:
    # Every baseline run, then every run of the record: "all of A, then all of B".
    servers = [f"s{i}" for i in range(6)]
    root = campaign(
        minimal,
        rows(BASE, [T0 + 10 * i for i in range(6)], servers),
        rows(MINE, [T0 + 100 + 10 * i for i in range(6)], [f"m{i}" for i in range(6)]),
    )
    _analysis, _entry, res = only_result(root)
    assert res.design.blocked
    assert "design-blocked" in check(root)
    assert "run in blocks, not interleaved: drift can look like an effect" in check(root)
    summary = run_cli("summary", "--root", str(root), "--format", "json")
    (row,) = [r for r in summary.json() if r["slug"] == "kernel"]  # type: ignore[union-attr]
    assert row["design"] == ["run in blocks, not interleaved: drift can look like an effect"]
    assert run_cli("build", "--root", str(root)).returncode == 0
    page = next((root / "docs").rglob("*-kernel.md")).read_text()
    assert "**Run in blocks, not interleaved: drift can look like an effect.**" in page
    assert "one side after the other" in page


def test_interleaved_runs_do_not(minimal: Path) -> None:
    # Baseline at even ten-second marks, the record at odd ones: A B A B ...
    root = campaign(
        minimal,
        rows(BASE, [T0 + 20 * i for i in range(6)], [f"s{i}" for i in range(6)]),
        rows(MINE, [T0 + 20 * i + 10 for i in range(6)], [f"m{i}" for i in range(6)]),
    )
    _analysis, _entry, res = only_result(root)
    assert not res.design.blocked and not res.design.trend
    assert "design-" not in check(root)
    summary = run_cli("summary", "--root", str(root), "--format", "json")
    (row,) = [r for r in summary.json() if r["slug"] == "kernel"]  # type: ignore[union-attr]
    assert row["design"] == []
    assert run_cli("build", "--root", str(root)).returncode == 0
    page = next((root / "docs").rglob("*-kernel.md")).read_text()
    assert "Run in blocks" not in page and ", interleaved." in page


def test_runs_sharing_a_launch_are_one_observation_each(minimal: Path) -> None:
    # Three launches a side, two runs in each, the runs of a launch close together: pooled as six
    # independent runs a side they would read `better` (p = 0.043); as three launches they do not.
    base = [100.0, 100.5, 95.0, 95.5, 105.0, 105.5]
    mine = [106.0, 106.5, 101.0, 101.5, 111.0, 111.5]
    starts = [T0 + 20 * i for i in range(6)]
    root = campaign(
        minimal,
        rows(base, starts, ["a", "a", "b", "b", "c", "c"]),
        rows(mine, [t + 10 for t in starts], ["x", "x", "y", "y", "z", "z"]),
    )
    _analysis, _entry, res = only_result(root)
    c = res.comparisons["output_throughput"]
    assert c is not None
    assert (c.n, c.baseline_n, c.test) == (3, 3, "welch")
    assert res.design.by_launch == (3, 3)
    # Pinned: Welch's t on the logs of the launches' means, with scipy.
    base_means = [sum(base[i : i + 2]) / 2 for i in (0, 2, 4)]
    mine_means = [sum(mine[i : i + 2]) / 2 for i in (0, 2, 4)]
    logs = stats.ttest_ind([math.log(v) for v in mine_means], [math.log(v) for v in base_means], equal_var=False)
    ci = logs.confidence_interval(0.95)
    assert c.ci_low_percent == pytest.approx(math.expm1(ci.low) * 100, rel=1e-9)
    assert c.ci_high_percent == pytest.approx(math.expm1(ci.high) * 100, rel=1e-9)
    assert c.p_value == pytest.approx(logs.pvalue, rel=1e-9)
    assert c.decision == "inconclusive"
    naive = stats.ttest_ind([math.log(v) for v in mine], [math.log(v) for v in base], equal_var=False)
    assert naive.pvalue < 0.05 < c.p_value
    # The page still shows every run as a value, and says what was counted.
    assert res.samples["output_throughput"] == (tuple(mine), tuple(base))
    assert run_cli("build", "--root", str(root)).returncode == 0
    page = next((root / "docs").rglob("*-kernel.md")).read_text()
    assert "Compared on launch means: 3 launch(es) against 3" in page


def test_a_side_of_one_launch_is_a_single_shot(minimal: Path) -> None:
    # Six runs of one server launch against six of another: two observations, not twelve.
    starts = [T0 + 20 * i for i in range(6)]
    # Far apart values that six independent runs would call `better` at any alpha.
    root = campaign(
        minimal,
        rows(BASE, starts, ["a"] * 6),
        rows([v * 1.5 for v in BASE], [t + 10 for t in starts], ["x"] * 6),
    )
    _analysis, entry, res = only_result(root)
    c = res.comparisons["output_throughput"]
    assert c is not None and c.decision == "unreplicated" and (c.n, c.baseline_n) == (1, 1)
    assert res.design.single_launch == ("this record", "baseline")
    assert entry.primary is not None and entry.primary.comparison.decision == "unreplicated"
    warned = check(root)
    assert warned.count("design-one-launch") == 2
    assert "this record: one launch: a single shot" in warned
    assert run_cli("build", "--root", str(root)).returncode == 0
    page = next((root / "docs").rglob("*-kernel.md")).read_text()
    assert "**One launch: a single shot.**" in page


def test_unknown_launches_from_one_file_may_share_one(minimal: Path) -> None:
    starts = [T0 + 20 * i for i in range(6)]
    root = campaign(minimal, rows(BASE, starts, [""] * 6), rows(MINE, [t + 10 for t in starts], [""] * 6))
    _analysis, _entry, res = only_result(root)
    assert res.design.may_share == ("this record", "baseline")
    c = res.comparisons["output_throughput"]
    assert c is not None and (c.n, c.baseline_n) == (6, 6)
    assert run_cli("build", "--root", str(root)).returncode == 0
    page = next((root / "docs").rglob("*-kernel.md")).read_text()
    assert "they may share a launch" in page


def test_a_clear_trend_within_a_side_is_flagged(minimal: Path) -> None:
    # Interleaved, but the record's values rise with every run: drift, or warm-up.
    starts = [T0 + 20 * i for i in range(6)]
    rising = [100.0, 102.0, 104.0, 106.0, 108.0, 110.0]
    root = campaign(
        minimal,
        rows(BASE, starts, [f"s{i}" for i in range(6)]),
        rows(rising, [t + 10 for t in starts], [f"m{i}" for i in range(6)]),
    )
    _analysis, _entry, res = only_result(root)
    assert res.design.trend == ("this record",)
    # Pinned: Kendall's tau of a perfectly rising side of six, exact, with scipy.
    assert stats.kendalltau(starts, rising).pvalue < 0.05 / 2
    # The arms are interleaved: drift reaches both alike, and the warning says what that means.
    assert res.design.interleaved
    out = check(root)
    assert "design-trend" in out and "drift widens the interval but cannot bias the change" in out


def test_start_times_are_iso_8601_in_utc() -> None:
    assert started_utc(T0) == "2025-12-01T18:40:00+00:00"
    assert started_utc("2026-12-01T19:44:59.265+01:00") == "2026-12-01T18:44:59.265000+00:00"
    assert started_utc("2026-12-01T18:44:59Z") == "2026-12-01T18:44:59+00:00"
    # Without an offset the time could be anyone's: refused, never guessed.
    assert started_utc("2026-12-01T18:44:59") is None
    assert started_utc(True) is None and started_utc(float("nan")) is None


def test_a_time_without_an_offset_stops_the_import(minimal: Path) -> None:
    path = minimal / "improvements" / "campaign.yaml"
    path.write_text(path.read_text() + MAPPING)
    (minimal / "improvements" / "01-kernel.yaml").write_text(RECORD)
    write_csv(minimal / "a.csv", [{"batch": 8, "tok_s": 1.0, "t": "2026-12-01T18:44:59", "server": "a"}])
    out = run_cli("import", "--root", str(minimal), str(minimal / "a.csv"), "--baseline", "--format", "harness")
    assert out.returncode == 1
    assert "a.csv:2:1: error[invalid-value]" in out.stderr and "setting `started`" in out.stderr
    assert not (minimal / "results" / "runs").exists() or not list((minimal / "results" / "runs").iterdir())


def test_start_times_and_launches_do_not_change_a_runs_id(minimal: Path) -> None:
    # A mapping that learns to read them keeps the runs' ids, so records stay linked.
    path = minimal / "improvements" / "campaign.yaml"
    plain = MAPPING.replace("      started: t\n      launch: server\n", "")
    write_csv(minimal / "a.csv", rows([1.0], [T0], ["a"]))
    ids = []
    for mapping in (plain, MAPPING):
        text = (Path(__file__).parent.parent / "improvements" / "campaign.yaml").read_text()
        path.write_text(text + mapping)
        out = run_cli("import", "--root", str(minimal), str(minimal / "a.csv"), "--baseline", "--format", "harness")
        assert out.returncode == 0, out.stderr
        ids.append(sorted(p.name for p in (minimal / "results" / "runs").glob("*.json")))
    assert ids[0] == ids[1]
    stored = json.loads(next((minimal / "results" / "runs").glob("*.json")).read_text())
    assert (stored["launch"], stored["started"]) == ("a", "2025-12-01T18:40:00+00:00")


def test_provenance_from_a_file_beside_the_rows(minimal: Path) -> None:
    path = minimal / "improvements" / "campaign.yaml"
    extra = "    provenance:\n      driver: {file: data/prov.json, path: gpu.driver}\n"
    path.write_text(path.read_text() + MAPPING + extra)
    (minimal / "data").mkdir()
    (minimal / "data" / "prov.json").write_text(json.dumps({"gpu": {"driver": "580.159.04"}}))
    write_csv(minimal / "a.csv", rows([1.0], [T0], ["a"]))
    out = run_cli("import", "--root", str(minimal), str(minimal / "a.csv"), "--baseline", "--format", "harness")
    assert out.returncode == 0, out.stderr
    stored = json.loads(next((minimal / "results" / "runs").glob("*.json")).read_text())
    assert stored["provenance"]["driver"] == {"value": "580.159.04", "key": "data/prov.json: gpu.driver"}
    # A key the file does not have stops the import, at the mapping's line.
    path.write_text(path.read_text().replace("gpu.driver", "gpu.nothing"))
    out = run_cli("import", "--root", str(minimal), str(minimal / "a.csv"), "--baseline", "--format", "harness")
    assert out.returncode == 1 and "error[import-missing-key]" in out.stderr
    assert "improvements/campaign.yaml:" in out.stderr and "`gpu.nothing`" in out.stderr


def test_launch_means_keep_unknown_launches_apart() -> None:
    origins = [Origin("a"), Origin("a"), Origin(None), Origin(None), Origin("b")]
    assert launch_means([1.0, 3.0, 5.0, 7.0, 9.0], origins) == [2.0, 5.0, 7.0, 9.0]


def test_a_typed_result_says_its_launches(minimal: Path) -> None:
    # Typed repetitions of two launches a side: compared as two launch means a side.
    record = RECORD + (
        "results:\n  - label: c8\n    concurrency: 8\n"
        "    metrics: {output_throughput: [104, 105, 99, 100]}\n"
        "    baseline: {output_throughput: [100, 101, 95, 96]}\n"
        "    launch: [x, x, y, y]\n"
    )
    (minimal / "improvements" / "01-kernel.yaml").write_text(record)
    analysis = analyse(require_project(minimal))
    (res,) = analysis.records[0].results
    c = res.comparisons["output_throughput"]
    assert c is not None and (c.n, c.baseline_n) == (2, 4)
    assert res.design.by_launch == (2, 4)
    # One name per repetition, or one for all: three names for four repetitions is an error.
    (minimal / "improvements" / "01-kernel.yaml").write_text(record.replace("[x, x, y, y]", "[x, x, y]"))
    out = run_cli("check", "--root", str(minimal))
    assert out.returncode == 1 and "`launch` names 3 launch(es)" in out.stderr


def test_the_h200_example_shows_what_its_data_warrant() -> None:
    from conftest import REPO

    root = REPO / "examples" / "h200-decode"
    analysis = analyse(require_project(root))
    for entry in analysis.records:
        for res in entry.results:
            d = res.design
            # One process ran every arm, interleaved: one launch both sides share, no blocks.
            assert d.shared_launch == "call2-full" and not d.blocked and not d.single_launch
            assert d.by_launch is None and d.pair_gap_s is not None
            assert len(d.starts[0]) == len(d.starts[1]) == 5
    # Each result section shows the GPU, driver and versions the harness recorded.
    rows = [json.loads(line) for line in (root / "data" / "B.jsonl").read_text().splitlines() if line.strip()]
    first = next(r for r in rows if not r["warmup"] and r["batch"] == 1 and r["rep"] == 0)
    page = (root / "docs" / "improvements" / "h200decode-01-sdpa-attention.md").read_text()
    assert "hardware `NVIDIA H200` (file: data/provenance.json: gpu_name)" in page
    assert "driver `580.159.04` (file: data/provenance.json: driver)" in page
    assert first["utc_start"][11:19] in page
    assert "Measured on: not stated by the file" not in page


def test_one_launch_against_summary_statistics_is_a_single_shot(minimal: Path) -> None:
    # Five benchmarks of one server launch are one observation, whatever the baseline is.
    record = RECORD + (
        "results:\n  - label: c8\n    concurrency: 8\n"
        "    metrics: {output_throughput: [150, 151, 149, 150, 152]}\n"
        "    baseline: {output_throughput: {mean: 100, sd: 1, n: 5}}\n"
        "    launch: server-1\n"
    )
    (minimal / "improvements" / "01-kernel.yaml").write_text(record)
    analysis = analyse(require_project(minimal))
    (res,) = analysis.records[0].results
    c = res.comparisons["output_throughput"]
    assert c is not None and c.decision == "unreplicated" and c.n == 1
    assert res.design.single_launch == ("this record",)


def test_the_exact_trend_test_is_scipys() -> None:
    import datetime as dt
    import random

    from generator.analysis.design import trend_p

    rng = random.Random(37)
    for n in (5, 6, 9, 14, 33):
        for _ in range(20):
            values = [rng.random() for _ in range(n)]
            starts = [dt.datetime.fromtimestamp(T0 + 7 * i + rng.random(), dt.UTC) for i in range(n)]
            expected = stats.kendalltau([s.timestamp() for s in starts], values, method="exact").pvalue
            assert trend_p(values, starts) == pytest.approx(expected, rel=1e-9, abs=1e-12)
