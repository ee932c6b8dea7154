"""Load sweeps and capacity under the SLO, end to end through a campaign on disk.

Every expected number is worked out by hand in the comments from the records below: the
segment where the first latency reaches its limit, the fraction t along it, and the
throughput there.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from generator.analysis.campaign import Analysis, analyse
from generator.checks.validate import require_project
from generator.model.quantity import fmt_percent

from conftest import BENCH, FIXTURES, run_cli

SLO = "slo:\n  tpot_p99: 50\n  ttft_p99: 2000\n"


def _record(title: str, rows: list[tuple[int, dict[str, object], dict[str, object]]]) -> str:
    lines = [f"title: {title}", "tier: 2", "status: in-progress", "hypothesis: Faster under load.", "results:"]
    for load, values, base in rows:
        lines += [
            f"  - label: c{load}",
            f"    concurrency: {load}",
            "    workload: {dataset: random, input_len: 1024, output_len: 256}",
            f"    metrics: {json.dumps(values)}",
            f"    baseline: {json.dumps(base)}",
        ]
    return "\n".join(lines) + "\n"


RECORDS = {
    # Record: c64 breaks tpot_p99 (60 > 50), ttft holds. On c32 -> c64, t = (50 - 40) / (60 - 40) = 0.5:
    # throughput 1800 + 0.5 * 800 = 2200 at load 32 + 0.5 * 32 = 48.
    # Baseline: c64 breaks both; tpot t = (50 - 45) / (70 - 45) = 0.2, ttft t = 500 / 900 = 0.556;
    # tpot first: 1500 + 0.2 * 500 = 1600 at load 38.4. Change (2200 - 1600) / 1600 = +37.5%.
    "05-interpolated.yaml": _record(
        "Interpolated",
        [
            (
                16,
                {"output_throughput": 1000, "tpot_p99": 30, "ttft_p99": 500, "tpot_median": 25},
                {"output_throughput": 900, "tpot_p99": 35, "ttft_p99": 600, "tpot_median": 28},
            ),
            (
                32,
                {"output_throughput": 1800, "tpot_p99": 40, "ttft_p99": 1000, "tpot_median": 32},
                {"output_throughput": 1500, "tpot_p99": 45, "ttft_p99": 1500, "tpot_median": 36},
            ),
            (
                64,
                {"output_throughput": 2600, "tpot_p99": 60, "ttft_p99": 1800, "tpot_median": 50},
                {"output_throughput": 2000, "tpot_p99": 70, "ttft_p99": 2400, "tpot_median": 55},
            ),
        ],
    ),
    # Three repetitions per load. Mean latencies 30 and 70: t = (50 - 30) / (70 - 30) = 0.5, so the
    # capacities are the midpoints of the mean throughputs: record 1500, baseline 1300.
    # Means 1500 and 1300: +15.38%; its interval is the delta method's (test_repeated_capacity_has_an_interval).
    "06-repeated.yaml": _record(
        "Repeated",
        [
            (
                16,
                {"output_throughput": [1000, 1010, 990], "tpot_p99": [30, 30, 30], "ttft_p99": [500, 500, 500]},
                {"output_throughput": [900, 910, 890], "tpot_p99": [30, 30, 30], "ttft_p99": [500, 500, 500]},
            ),
            (
                32,
                {"output_throughput": [2000, 2020, 1980], "tpot_p99": [70, 70, 70], "ttft_p99": [900, 900, 900]},
                {"output_throughput": [1700, 1720, 1680], "tpot_p99": [70, 70, 70], "ttft_p99": [900, 900, 900]},
            ),
        ],
    ),
    # The record breaks the SLO at every load (tpot 60, 80); the baseline meets it at every load
    # (tpot 30, 40), so it has only a lower bound (1600) and the change has no number.
    "07-never-meets.yaml": _record(
        "Never meets",
        [
            (
                16,
                {"output_throughput": 800, "tpot_p99": 60, "ttft_p99": 500},
                {"output_throughput": 1000, "tpot_p99": 30, "ttft_p99": 500},
            ),
            (
                32,
                {"output_throughput": 1200, "tpot_p99": 80, "ttft_p99": 900},
                {"output_throughput": 1600, "tpot_p99": 40, "ttft_p99": 900},
            ),
        ],
    ),
    # The record meets the SLO at every load: at least 2000. The baseline breaks at c32:
    # t = (50 - 40) / (60 - 40) = 0.5, 1000 + 0.5 * 600 = 1300. Change: at least (2000 - 1300) / 1300 = +53.85%.
    "08-always-meets.yaml": _record(
        "Always meets",
        [
            (
                16,
                {"output_throughput": 1200, "tpot_p99": 20, "ttft_p99": 400},
                {"output_throughput": 1000, "tpot_p99": 40, "ttft_p99": 500},
            ),
            (
                32,
                {"output_throughput": 2000, "tpot_p99": 30, "ttft_p99": 800},
                {"output_throughput": 1600, "tpot_p99": 60, "ttft_p99": 900},
            ),
        ],
    ),
}


@pytest.fixture
def sweep_campaign(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(FIXTURES / "render", root)
    campaign = root / "improvements" / "campaign.yaml"
    campaign.write_text(campaign.read_text() + SLO)
    for name, text in RECORDS.items():
        (root / "improvements" / name).write_text(text)
    return root


def _analysis(root: Path) -> Analysis:
    return analyse(require_project(root))


def _sweep(analysis: Analysis, slug: str):  # type: ignore[no-untyped-def]
    entry = next(a for a in analysis.records if a.file.slug == slug)
    assert len(entry.sweeps) == 1
    return entry.sweeps[0]


def test_interpolated_capacity_and_change(sweep_campaign: Path) -> None:
    s = _sweep(_analysis(sweep_campaign), "interpolated")
    assert s.load_kind == "concurrency" and s.loads == (16, 32, 64)
    assert s.workload == "random, input 1024 tokens, output 256 tokens"
    c, b = s.record.capacity, s.baseline.capacity
    assert c.kind == "interpolated" and c.throughput == pytest.approx(2200) and c.load == pytest.approx(48)
    assert c.limiting == ("tpot_p99",) and c.segment == (32, 64)
    assert b.kind == "interpolated" and b.throughput == pytest.approx(1600) and b.load == pytest.approx(38.4)
    assert b.limiting == ("tpot_p99",)
    assert s.change.percent == pytest.approx(37.5) and s.change.bound is None
    # One number per load: no interval.
    assert s.comparison is None
    # Frontier: 1000 / tpot_p99 tokens/s per user, the statistic the SLO limits (not the median
    # beside it), so the SLO line (1000 / 50 = 20) and the points share an axis; throughput over
    # the campaign's 2 GPUs.
    assert [(pytest.approx(p.interactivity), p.throughput_per_gpu) for p in s.record.frontier] == [
        (1000 / 30, 500),
        (1000 / 40, 900),
        (1000 / 60, 1300),
    ]
    assert {p.tpot_metric for p in s.record.frontier} == {"tpot_p99"}
    assert [p.throughput_per_gpu for p in s.baseline.frontier] == [450, 750, 1000]


def test_repeated_capacity_has_an_interval(sweep_campaign: Path) -> None:
    import math

    import numpy as np
    from scipy import stats

    s = _sweep(_analysis(sweep_campaign), "repeated")
    assert s.record.capacity.throughput == pytest.approx(1500)
    assert s.baseline.capacity.throughput == pytest.approx(1300)
    assert s.change.percent == pytest.approx(200 / 1300 * 100)
    comp = s.comparison
    assert comp.test == "delta" and comp.n == comp.baseline_n == 3
    assert comp.change_percent == pytest.approx(s.change.percent)  # one number for one thing
    # By hand: the latencies do not vary, so capacity = (mean thr at 16 + mean thr at 32) / 2 on
    # each side; the variance of its log is (var16 / 3 + var32 / 3) / 4 / C^2 (delta method), and
    # the log ratio's t interval has Welch-Satterthwaite df over the four loads (scipy's t).
    parts = [
        (0.25 * np.var(v, ddof=1) / 3 / c**2, 2.0)
        for v, c in (
            ([1000, 1010, 990], 1500),
            ([2000, 2020, 1980], 1500),
            ([900, 910, 890], 1300),
            ([1700, 1720, 1680], 1300),
        )
    ]
    var = sum(v for v, _ in parts)
    df = var**2 / sum(v * v / d for v, d in parts)
    half = stats.t.ppf(0.975, df) * math.sqrt(var)
    centre = math.log(1500 / 1300)
    assert comp.ci_low_percent == pytest.approx(math.expm1(centre - half) * 100, rel=1e-4)
    assert comp.ci_high_percent == pytest.approx(math.expm1(centre + half) * 100, rel=1e-4)
    assert comp.decision == "better"
    from generator.model.quantity import fmt_percent
    from generator.views.sweeps import capacity_change_text

    assert (capacity_change_text(s) or "").startswith(
        f"{fmt_percent(comp.change_percent)} capacity under the SLO; better"
    )


def test_capacity_reads_the_campaigns_rule(sweep_campaign: Path) -> None:
    campaign = sweep_campaign / "improvements" / "campaign.yaml"
    text = campaign.read_text()
    assert "decision:\n  primary_metric: output_throughput\n" in text
    campaign.write_text(
        text.replace(
            "decision:\n  primary_metric: output_throughput\n",
            "decision:\n  primary_metric: output_throughput\n  alpha: 0.01\n  min_effect: 20\n",
        )
    )
    comp = _sweep(_analysis(sweep_campaign), "repeated").comparison
    assert comp.alpha == 0.01 and comp.min_effect == 20
    # +15.4% is real but, at a smallest change that matters of 20%, not shown to matter.
    assert comp.decision in ("no-change", "better", "inconclusive")
    assert comp.ci_high_percent < 20 and comp.decision == "no-change"


def test_never_meets_and_always_meets_are_words(sweep_campaign: Path) -> None:
    from generator.views.sweeps import capacity_change_text, capacity_text

    analysis = _analysis(sweep_campaign)
    never = _sweep(analysis, "never-meets")
    assert never.record.capacity.kind == "breaks-all" and never.record.capacity.throughput is None
    assert never.baseline.capacity.kind == "meets-all" and never.baseline.capacity.lower_bound == 1600
    assert never.change.percent is None
    assert capacity_text(never.record.capacity, never) == "breaks the SLO at every measured load"
    assert capacity_change_text(never).startswith("no change can be given")
    always = _sweep(analysis, "always-meets")
    c = always.record.capacity
    assert c.kind == "meets-all" and c.throughput is None and c.lower_bound == 2000
    assert capacity_text(c, always) == (
        "meets the SLO at every measured load, up to c=32: at least 2000 tok/s, not measured beyond"
    )
    assert always.baseline.capacity.throughput == pytest.approx(1300)
    assert always.change.bound == "at least" and always.change.percent == pytest.approx(700 / 1300 * 100)


def test_no_slo_means_no_capacity(sweep_campaign: Path) -> None:
    campaign = sweep_campaign / "improvements" / "campaign.yaml"
    campaign.write_text(campaign.read_text().replace(SLO, ""))
    s = _sweep(_analysis(sweep_campaign), "interpolated")
    assert s.record.capacity is None and s.change is None
    assert len(s.record.frontier) == 3


def test_slo_names_latencies_only(sweep_campaign: Path) -> None:
    campaign = sweep_campaign / "improvements" / "campaign.yaml"
    text = campaign.read_text().replace(SLO, "slo:\n  output_throughput: 10\n  ttft_p99: 0\n")
    campaign.write_text(text)
    r = run_cli("check", "--root", str(sweep_campaign))
    assert r.returncode == 1
    line = text.splitlines().index("  output_throughput: 10") + 1
    assert f"improvements/campaign.yaml:{line}:22: error[invalid-value]: `slo.output_throughput`" in r.stdout + r.stderr
    assert f"improvements/campaign.yaml:{line + 1}:13: error[invalid-value]: `slo.ttft_p99`" in r.stdout + r.stderr


def test_imported_sweep_is_one_result_per_load_and_two_sweeps(sweep_campaign: Path) -> None:
    campaign = sweep_campaign / "improvements" / "campaign.yaml"
    campaign.write_text(campaign.read_text().replace(SLO, "slo:\n  ttft_median: 200\n"))
    path = BENCH / "sglang-bench-serving-2024-sweep.jsonl"
    r = run_cli("import", "--root", str(sweep_campaign), str(path), "--record", "interpolated")
    assert r.returncode == 0, r.stderr
    analysis = _analysis(sweep_campaign)
    entry = next(a for a in analysis.records if a.file.slug == "interpolated")
    imported = [res.result for res in entry.results if res.result.run is not None]
    assert [x.request_rate for x in imported] == [1.0, 2.0, 4.0, 8.0, 16.0, 4.0, 8.0]
    random, sharegpt = entry.sweeps[1:]
    assert random.load_kind == "request rate" and random.loads == (1, 2, 4, 8, 16)
    assert sharegpt.loads == (4, 8) and sharegpt.workload.startswith("sharegpt")
    raw = [json.loads(line) for line in path.read_text().splitlines()]
    # ttft_median 191.41 at 8 req/s meets 200, 614.25 at 16 breaks: t = (200 - 191.41) / (614.25 - 191.41).
    a, b = raw[3], raw[4]
    t = (200 - a["median_ttft_ms"]) / (b["median_ttft_ms"] - a["median_ttft_ms"])
    expected = a["output_throughput"] + t * (b["output_throughput"] - a["output_throughput"])
    assert random.record.capacity.kind == "interpolated"
    assert random.record.capacity.throughput == pytest.approx(expected)
    assert random.record.capacity.load == pytest.approx(8 + t * 8)
    # No baseline runs: the baseline side has no numbers, and says so.
    assert random.baseline.capacity.kind == "insufficient"
    assert sharegpt.record.capacity.kind == "meets-all"
    assert sharegpt.record.capacity.lower_bound == raw[6]["output_throughput"]


def test_record_page_has_capacity_and_frontier_svg(sweep_campaign: Path) -> None:
    r = run_cli("build", "--root", str(sweep_campaign))
    assert r.returncode == 0, r.stderr
    docs = sweep_campaign / "docs" / "improvements"
    page = (docs / "testseries-05-interpolated.md").read_text()
    assert "## Load sweeps" in page
    assert (
        "- Capacity under the SLO (tpot_p99 &lt;= 50 ms, ttft_p99 &lt;= 2000 ms): 2200 tok/s output throughput "
        "at c=48, interpolated where tpot_p99 reaches its limit between c=32 and c=64"
    ) in page
    assert "- Baseline: 1600 tok/s output throughput at c=38.4" in page
    assert "- Change: +37.5% capacity under the SLO\n" in page
    assert "](plots/interpolated-frontier.svg)" in page
    svg = (docs / "plots" / "interpolated-frontier.svg").read_text()
    assert svg.splitlines()[1] == "<!-- generated by improvements; do not edit -->"
    # Points labelled by load, per GPU (the campaign has 2), and the TPOT limit at 1000 / 50 tokens/s per user.
    # On the SLO's own statistic (tpot_p99, not the median), so the capacity sits on the SLO line.
    assert "this record: 500 at 33.33 (c=16), 900 at 25 (c=32), 1300 at 16.67 (c=64)" in svg
    assert "baseline: 450 at 28.57 (c=16)" in svg
    assert "limit SLO tpot_p99 50 ms at x = 20;" in svg
    assert "; capacity under the SLO: 1100 tok/s per GPU (2200 in all, c=48)." in svg
    repeated = (docs / "testseries-06-repeated.md").read_text()
    comp = _sweep(_analysis(sweep_campaign), "repeated").comparison
    low, high = fmt_percent(comp.ci_low_percent), fmt_percent(comp.ci_high_percent)
    assert (
        f"- Change: +15.4% capacity under the SLO; better, 95% interval {low} to {high} "
        "(n=3 vs 3; the capacity of the mean curve"
    ) in repeated
    # No median TPOT, but the SLO's own tpot_p99 (the repetitions' mean, as capacity reads it) gives interactivity.
    assert "1000 / tpot_p99, mean of the repetitions" in (docs / "plots" / "repeated-frontier.svg").read_text()
    never = (docs / "testseries-07-never-meets.md").read_text()
    assert (
        "- Capacity under the SLO (tpot_p99 &lt;= 50 ms, ttft_p99 &lt;= 2000 ms): breaks the SLO at every measured load"
        in never
    )
    assert (
        "- Baseline: meets the SLO at every measured load, up to c=32: at least 1600 tok/s, not measured beyond"
        in never
    )
    summary = (sweep_campaign / "docs" / "summary.md").read_text()
    assert "| Decision | Date | Open blockers | Capacity under SLO |" in summary
    assert "| 2200 tok/s (+37.5% vs baseline) |" in summary


def test_summary_column_in_every_format(sweep_campaign: Path) -> None:
    expected = {
        "interpolated": "2200 tok/s (+37.5% vs baseline)",
        "repeated": "1500 tok/s (+15.4% vs baseline, better)",
        "never-meets": "breaks at every load",
        "always-meets": "at least 2000 tok/s, meets at every load (at least +53.8% vs baseline)",
        "fast-flag": "no load sweep",
    }
    rows = run_cli("summary", "--root", str(sweep_campaign), "--format", "json").json()
    got = {row["slug"]: row["capacity_under_slo"] for row in rows}  # type: ignore[union-attr]
    assert {k: got[k] for k in expected} == expected
    csv_text = run_cli("summary", "--root", str(sweep_campaign), "--format", "csv").stdout
    assert csv_text.splitlines()[0].endswith(
        ",variants,primary_kind,broken_guardrails,unshown_guardrails,best_of,best_of_tested,variant_decisions,standing,design,holm_p,regressions,own_load,unranked,variant_reasons,capacity_under_slo"
    )
    assert "\n5,interpolated,Interpolated," in csv_text and ",2200 tok/s (+37.5% vs baseline)\n" in csv_text
    for fmt in ("table", "markdown"):
        out = run_cli("summary", "--root", str(sweep_campaign), "--format", fmt).stdout
        assert "Capacity under SLO" in out and "breaks at every load" in out
    # Without an SLO the column is not there.
    campaign = sweep_campaign / "improvements" / "campaign.yaml"
    campaign.write_text(campaign.read_text().replace(SLO, ""))
    rows = run_cli("summary", "--root", str(sweep_campaign), "--format", "json").json()
    assert all("capacity_under_slo" not in row for row in rows)  # type: ignore[union-attr]
    assert "Capacity under SLO" not in run_cli("summary", "--root", str(sweep_campaign)).stdout


def test_export_carries_capacity(sweep_campaign: Path) -> None:
    data = run_cli("export", "--root", str(sweep_campaign)).json()
    assert data["campaign"]["slo"] == {"tpot_p99": 50.0, "ttft_p99": 2000.0}  # type: ignore[index]
    by_slug = {r["slug"]: r for r in data["records"]}  # type: ignore[index]
    rec = by_slug["interpolated"]
    assert rec["summary"]["capacity_under_slo"] == "2200 tok/s (+37.5% vs baseline)"
    (sweep,) = rec["sweeps"]
    assert sweep["load_kind"] == "concurrency" and sweep["loads"] == [16, 32, 64]
    assert sweep["capacity"]["kind"] == "interpolated"
    assert sweep["capacity"]["throughput"] == pytest.approx(2200)
    assert sweep["capacity"]["segment"] == [32, 64] and sweep["capacity"]["limiting"] == ["tpot_p99"]
    assert sweep["baseline_capacity"]["throughput"] == pytest.approx(1600)
    assert sweep["change"]["percent"] == pytest.approx(37.5) and sweep["change"]["comparison"] is None
    assert [p["interactivity"] for p in sweep["frontier"]] == pytest.approx([1000 / 30, 25, 1000 / 60])
    comp = by_slug["repeated"]["sweeps"][0]["change"]["comparison"]
    shown = _sweep(_analysis(sweep_campaign), "repeated").comparison
    assert comp["decision"] == "better" and comp["ci_low_percent"] == shown.ci_low_percent
    assert comp["test"] == "delta"
    never = by_slug["never-meets"]["sweeps"][0]
    assert never["capacity"]["kind"] == "breaks-all" and never["capacity"]["throughput"] is None
    assert never["baseline_capacity"]["lower_bound"] == 1600 and never["change"]["percent"] is None
    assert by_slug["fast-flag"]["sweeps"] == []
