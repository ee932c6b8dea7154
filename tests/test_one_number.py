"""One number for one thing (issue 23): every comparison reads the same wherever it is printed.

A campaign on disk with every kind of result (repetitions, paired, single shots, summary
statistics, variants, a load sweep under an SLO, a stack, a campaign metric). For each
comparison the analysis made, its change, interval and decision must read the same on the
record page, in the summary (markdown and JSON, and the primary one in the CSV), in the export
(records.json and its CSV of samples) and in the report. The page's numbers are formatted from
the analysis once, so the test compares the printed text, not re-derived numbers.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from generator.analysis.campaign import Analysis, analyse
from generator.checks.validate import require_project
from generator.model.quantity import fmt_percent

from conftest import run_cli

# Slow: builds a campaign with every kind of result and reads every output of it.
pytestmark = pytest.mark.slow

CAMPAIGN = """\
name: Every kind of result
series: every
model: {name: Toy}
hardware: {gpu: Example GPU, count: 2}
engine: {name: ExampleServe}
baseline:
  label: TP2
  command: python -m example.serve --tp-size 2
  results:
    - label: c64
      concurrency: 64
      metrics:
        output_throughput: [1000, 1010, 990]
        ttft_p99: [200, 205, 195]
        joules_per_token: [0.8, 0.81, 0.79]
metrics:
  joules_per_token: {unit: J/token, better: lower, label: Energy per token}
goals:
  - metric: output_throughput
    concurrency: 64
    target: 1500
  - metric: joules_per_token
    concurrency: 64
    target: 0.5
slo:
  tpot_p99: 50
  ttft_p99: 2000
decision:
  primary_metric: output_throughput
  guardrails: {ttft_p99: 5}
tiers: {1: Flags., 2: Code., 3: Kernels.}
"""

RECORDS = {
    "01-repeated.yaml": """\
title: Repeated
tier: 1
status: adopted
hypothesis: H.
verdict: Adopted.
change: {flags: [--fast]}
results:
  - label: c64 repeated
    concurrency: 64
    metrics:
      output_throughput: [1100, 1120, 1090]
      ttft_p99: [198, 202, 200]
""",
    "02-paired.yaml": """\
title: Paired
tier: 1
status: in-progress
hypothesis: H.
results:
  - label: c8 paired
    concurrency: 8
    paired: true
    metrics: {output_throughput: [138.7, 156.6, 144.4, 173.4, 154.7]}
    baseline: {output_throughput: [132.0, 150.4, 139.8, 151.3, 146.5]}
""",
    "03-single.yaml": """\
title: Single
tier: 2
status: in-progress
hypothesis: H.
results:
  - label: c64 once
    concurrency: 64
    metrics: {output_throughput: 1250, ttft_p99: 260}
""",
    "04-statistics.yaml": """\
title: Statistics
tier: 2
status: in-progress
hypothesis: H.
results:
  - label: c32 from a paper
    concurrency: 32
    metrics: {output_throughput: {mean: 1080, sd: 15, n: 5}, ttft_p99: {mean: 300, n: 5}}
    baseline: {output_throughput: {mean: 1000, sd: 12, n: 5}, ttft_p99: {value: 310, about: true}}
""",
    "05-variants.yaml": """\
title: Variants
tier: 2
status: in-progress
hypothesis: H.
variants:
  - label: small
    outcome: rejected
    change: {flags: [--chunk 4096]}
    results:
      - label: c16 small
        concurrency: 16
        metrics: {output_throughput: [505, 510, 500]}
        baseline: {output_throughput: [500, 502, 498]}
  - label: large
    outcome: retained
    change: {flags: [--chunk 8192]}
    results:
      - label: c16 large
        concurrency: 16
        metrics: {output_throughput: [540, 545, 538]}
        baseline: {output_throughput: [500, 502, 498]}
""",
    "06-sweep.yaml": """\
title: Sweep
tier: 3
status: in-progress
hypothesis: H.
results:
  - label: c16
    concurrency: 16
    workload: {dataset: random, input_len: 1024, output_len: 256}
    metrics: {output_throughput: [1000, 1010, 990], tpot_p99: [30, 31, 29], ttft_p99: [500, 510, 490]}
    baseline: {output_throughput: [900, 910, 890], tpot_p99: [31, 32, 30], ttft_p99: [520, 515, 525]}
  - label: c32
    concurrency: 32
    workload: {dataset: random, input_len: 1024, output_len: 256}
    metrics: {output_throughput: [1800, 1820, 1790], tpot_p99: [40, 41, 42], ttft_p99: [900, 910, 890]}
    baseline: {output_throughput: [1500, 1510, 1490], tpot_p99: [45, 46, 44], ttft_p99: [1000, 990, 1010]}
  - label: c48
    concurrency: 48
    workload: {dataset: random, input_len: 1024, output_len: 256}
    metrics: {output_throughput: [2300, 2320, 2290], tpot_p99: [55, 57, 56], ttft_p99: [1500, 1510, 1490]}
    baseline: {output_throughput: [1800, 1810, 1790], tpot_p99: [60, 62, 61], ttft_p99: [1600, 1590, 1610]}
""",
    "07-stacked.yaml": """\
title: Stacked
tier: 1
status: adopted
hypothesis: H.
verdict: Adopted.
builds_on: [repeated]
change: {flags: [--faster]}
results:
  - label: on top
    concurrency: 64
    metrics: {output_throughput: [1200, 1190, 1215]}
    baseline_from: {record: repeated, result: c64 repeated}
""",
    "08-energy.yaml": """\
title: Energy
tier: 3
status: in-progress
hypothesis: H.
expected: {metric: joules_per_token}
results:
  - label: c64 energy
    concurrency: 64
    metrics: {joules_per_token: [0.7, 0.72, 0.69]}
""",
    # Better, but its guardrail broken and its throughput worse at another load: both named.
    "09-guarded.yaml": """\
title: Guarded
tier: 3
status: in-progress
date: 2026-12-01
hypothesis: H.
results:
  - label: c64 guarded
    concurrency: 64
    metrics: {output_throughput: [1300, 1310, 1290], ttft_p99: [230, 235, 228]}
    baseline: {output_throughput: [1000, 1010, 990], ttft_p99: [200, 204, 198]}
  - label: c16 guarded
    concurrency: 16
    metrics: {output_throughput: [400, 405, 395]}
    baseline: {output_throughput: [500, 505, 495]}
""",
    # Better, its guardrail neither held nor broken (noisy): said, not ranked with worse.
    "10-unshown.yaml": """\
title: Unshown
tier: 3
status: in-progress
hypothesis: H.
results:
  - label: c64 unshown
    concurrency: 64
    metrics: {output_throughput: [1300, 1310, 1290], ttft_p99: [190, 230, 205, 185, 215]}
    baseline: {output_throughput: [1000, 1010, 990], ttft_p99: [200, 220, 180, 210, 195]}
""",
}


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("every") / "repo"
    (root / "improvements").mkdir(parents=True)
    (root / "improvements" / "campaign.yaml").write_text(CAMPAIGN)
    for name, text in RECORDS.items():
        (root / "improvements" / name).write_text(text)
    r = run_cli("check", "--root", str(root))
    assert r.returncode == 0, r.stdout + r.stderr
    r = run_cli("build", "-q", "--root", str(root))
    assert r.returncode == 0, r.stderr
    return root


@pytest.fixture(scope="module")
def analysis(campaign: Path) -> Analysis:
    return analyse(require_project(campaign))


def _interval(c: object) -> str | None:
    low, high = getattr(c, "ci_low_percent", None), getattr(c, "ci_high_percent", None)
    return None if low is None or high is None else f"{fmt_percent(low)} to {fmt_percent(high)}"


def test_every_kind_of_result_is_there(analysis: Analysis) -> None:
    kinds = {
        (a.file.slug, name): c.decision
        for a in analysis.records
        for r in (*a.results, *(x for rs in a.variant_results for x in rs))
        for name, c in r.comparisons.items()
        if c is not None
    }
    assert kinds[("paired", "output_throughput")] == "better"
    assert kinds[("single", "output_throughput")] == "unreplicated"
    assert kinds[("statistics", "output_throughput")] == "better"
    assert kinds[("statistics", "ttft_p99")] == "unreplicated"  # a mean without a spread
    assert kinds[("energy", "joules_per_token")] == "better"
    sweep = analysis.record(analysis.by_slug["sweep"])
    assert sweep.primary is not None and sweep.primary.kind == "capacity"
    assert [r.slug for r in analysis.stack.records] == ["repeated", "stacked"]
    variants = analysis.record(analysis.by_slug["variants"]).primary
    assert variants is not None and variants.best_of == 2


def test_each_comparison_reads_the_same_on_the_page_and_in_the_report(campaign: Path, analysis: Analysis) -> None:
    docs = campaign / "docs" / "improvements"
    report = run_cli("report", "--root", str(campaign)).stdout
    checked = 0
    for a in analysis.records:
        rec = a.file
        page = (docs / analysis.project.output_name(rec)).read_text()
        for r in a.results:
            for name, c in r.comparisons.items():
                if c is None or c.change_percent is None:
                    continue
                change, interval = fmt_percent(c.change_percent), _interval(c) or "none"
                # The page's row: decision, change (interval), the values and n on each side.
                row = next(line for line in page.splitlines() if line.startswith("| ") and f"| {change}" in line)
                if interval != "none":
                    assert f"| {change} ({interval})" in row, (rec.slug, name, row)
                assert f"(n {c.n} / {c.baseline_n}" in row, (rec.slug, name, row)
                assert c.decision in row, (rec.slug, name, row)
                # The report: (change, interval ..., n ..., decision).
                said = f"({change}" + (f", interval {interval}" if interval != "none" else "")
                assert said in report, (rec.slug, name)
                checked += 1
    assert checked >= 10


def test_each_primary_reads_the_same_in_summary_export_and_csv(campaign: Path, analysis: Analysis) -> None:
    summary_json = {
        r["slug"]: r for r in json.loads(run_cli("summary", "--root", str(campaign), "--format", "json").stdout)
    }
    summary_md = run_cli("summary", "--root", str(campaign), "--format", "markdown").stdout
    summary_csv = {
        r["slug"]: r
        for r in csv.DictReader(io.StringIO(run_cli("summary", "--root", str(campaign), "--format", "csv").stdout))
    }
    export = {r["slug"]: r for r in json.loads(run_cli("export", "--root", str(campaign)).stdout)["records"]}
    site_summary = (campaign / "docs" / "summary.md").read_text()
    report = run_cli("report", "--root", str(campaign)).stdout
    for a in analysis.records:
        slug, p = a.file.slug, a.primary
        assert p is not None, slug
        c = p.comparison
        row, primary = summary_json[slug], export[slug]["primary"]
        assert row["primary_decision"] == primary["decision"] == c.decision
        assert primary["change_percent"] == c.change_percent and primary["ci_low_percent"] == c.ci_low_percent
        assert row["primary_change_percent"] == round(c.change_percent, 1)
        assert summary_csv[slug]["primary_change_percent"] == f"{c.change_percent:.1f}"
        assert summary_csv[slug]["primary_decision"] == c.decision
        text = fmt_percent(round(c.change_percent, 1))
        interval = None
        if c.ci_low_percent is not None and c.ci_high_percent is not None:
            interval = (
                f"interval {fmt_percent(round(c.ci_low_percent, 1))} to {fmt_percent(round(c.ci_high_percent, 1))}"
            )
        for where in (summary_md, site_summary, report):
            line = next(ln for ln in where.splitlines() if f"{a.file.record.title}" in ln and "|" in ln)
            assert text in line and c.decision in line, (slug, line)
            assert interval is None or interval in line, (slug, line)
        # The export's result-level comparison is the primary's, number for number.
        if p.kind == "metric":
            exported = export[slug]["results"][p.index]["comparisons"][p.metric] if not a.file.record.variants else None
            if exported is not None:
                assert exported["change_percent"] == c.change_percent
                assert exported["decision"] == c.decision
        else:
            (sweep,) = export[slug]["sweeps"]
            assert sweep["change"]["comparison"]["ci_low_percent"] == c.ci_low_percent
            assert sweep["change"]["percent"] == pytest.approx(c.change_percent, rel=1e-12)


def test_the_csv_export_holds_the_samples_the_comparisons_used(campaign: Path, analysis: Analysis) -> None:
    rows = list(csv.DictReader(io.StringIO(run_cli("export", "--root", str(campaign), "--format", "csv").stdout)))
    got: dict[tuple[str, str, str, str], list[float]] = {}
    for r in rows:
        got.setdefault((r["record"], r["result"], r["side"], r["metric"]), []).append(float(r["value"]))
    for a in analysis.records:
        for res in a.results:
            for name, (mine, theirs) in res.samples.items():
                if isinstance(res.metrics[name], list | int | float):
                    assert got[(a.file.slug, res.result.label, "record", name)] == list(mine)
                if isinstance(res.baseline.get(name), list | int | float):
                    assert got[(a.file.slug, res.result.label, "baseline", name)] == list(theirs)


def test_one_current_and_goal_directions(campaign: Path, analysis: Analysis) -> None:
    home = (campaign / "docs" / "index.md").read_text()
    energy = next(g for g in analysis.goals if g.goal.metric == "joules_per_token")
    # A campaign metric where lower is better: "below", and not reached at 0.8 J/token.
    assert energy.direction == "below" and energy.reached is None
    assert "Energy per token below 0.5 J/token" in home
    road = analysis.stack.road
    assert road is not None and road.level is not None
    throughput = next(g for g in analysis.goals if g.goal.metric == "output_throughput")
    assert throughput.current == road.current and throughput.on_road
    # The stacked record's step is composed as a ratio on the level before it.
    steps = [s for s in road.steps if s.change is not None]
    assert len(steps) == 2 and all(s.chain_break is None for s in steps)
    assert road.current.mean == pytest.approx(1000 * (1103.33 / 1000) * (1201.67 / 1103.33), rel=1e-3)
    assert road.level.has_interval


def _outputs(campaign: Path) -> dict[str, object]:
    return {
        "summary_json": {
            r["slug"]: r for r in json.loads(run_cli("summary", "--root", str(campaign), "--format", "json").stdout)
        },
        "summary_md": run_cli("summary", "--root", str(campaign), "--format", "markdown").stdout,
        "export": {r["slug"]: r for r in json.loads(run_cli("export", "--root", str(campaign)).stdout)["records"]},
        "site_summary": (campaign / "docs" / "summary.md").read_text(),
        "report": run_cli("report", "--root", str(campaign)).stdout,
        "home": (campaign / "docs" / "index.md").read_text(),
    }


def _line(text: str, title: str) -> str:
    return next(ln for ln in text.splitlines() if title in ln and "|" in ln)


def test_guardrail_states_read_the_same_everywhere(campaign: Path, analysis: Analysis) -> None:
    out = _outputs(campaign)
    seen = set()
    for a in analysis.records:
        p = a.primary
        if p is None or not p.guardrails:
            continue
        slug, title = a.file.slug, a.file.record.title
        page = (campaign / "docs" / "improvements" / analysis.project.output_name(a.file)).read_text()
        header = next(ln for ln in page.splitlines() if ln.startswith("| Decision |"))
        exported = {g["metric"]: g["state"] for g in out["export"][slug]["primary"]["guardrails"]}  # type: ignore[index]
        row = out["summary_json"][slug]  # type: ignore[index]
        for g in p.guardrails:
            seen.add(g.state)
            assert exported[g.metric] == g.state
            assert (g.metric in row["broken_guardrails"]) == (g.state == "broken")
            assert (g.metric in row["unshown_guardrails"]) == (g.state == "not shown")
            said = f"guardrail {g.state}: {g.metric}"
            for where in (header, _line(out["site_summary"], title), _line(out["summary_md"], title)):  # type: ignore[arg-type]
                assert (said in where) == (g.state in ("broken", "not shown")), (slug, where)
            assert (said in _line(out["report"], title)) == (g.state in ("broken", "not shown"))  # type: ignore[arg-type]
        assert a.group == ("worse" if p.guardrail_broken else a.group)
    assert {"broken", "not shown", "held"} <= seen


def test_regression_notes_read_the_same_everywhere(campaign: Path, analysis: Analysis) -> None:
    out = _outputs(campaign)
    found = 0
    for a in analysis.records:
        if not a.regressions:
            continue
        slug, title = a.file.slug, a.file.record.title
        page = (campaign / "docs" / "improvements" / analysis.project.output_name(a.file)).read_text()
        header = next(ln for ln in page.splitlines() if ln.startswith("| Decision |"))
        exported = out["export"][slug]["primary"]["regressions"]  # type: ignore[index]
        assert [(r["metric"], r["result"]) for r in exported] == [(g.metric, g.label) for g in a.regressions]
        row = out["summary_json"][slug]  # type: ignore[index]
        for g in a.regressions:
            said = f"{fmt_percent(g.change_percent)} ({g.label})"
            assert f"{g.metric} {said}" in row["regressions"]
            for where in (
                header,
                _line(out["site_summary"], title),  # type: ignore[arg-type]
                _line(out["summary_md"], title),  # type: ignore[arg-type]
                _line(out["report"], title),  # type: ignore[arg-type]
            ):
                assert "worse elsewhere" in where and said in where, (slug, where)
            if a.file.record.date is not None:  # the home page's latest entries carry it too
                assert said in out["home"]  # type: ignore[operator]
            found += 1
    assert found >= 2


def test_capacity_cells_read_the_same_everywhere(campaign: Path, analysis: Analysis) -> None:
    from generator.views.sweeps import capacity_cell

    out = _outputs(campaign)
    checked = 0
    for a in analysis.records:
        if not a.sweeps:
            continue
        slug, title = a.file.slug, a.file.record.title
        cell = capacity_cell(a.sweeps)
        assert out["summary_json"][slug]["capacity_under_slo"] == cell  # type: ignore[index]
        for where in (out["site_summary"], out["summary_md"], out["report"]):
            assert cell in _line(where, title), (slug, cell)  # type: ignore[arg-type]
        (s,) = a.sweeps
        exported = out["export"][slug]["sweeps"][0]  # type: ignore[index]
        if s.change_percent is None:
            assert exported["change"] is None or exported["change"]["percent"] is None
            continue
        assert exported["change"]["percent"] == pytest.approx(s.change_percent, rel=1e-12)
        page = (campaign / "docs" / "improvements" / analysis.project.output_name(a.file)).read_text()
        assert f"{fmt_percent(s.change_percent)} capacity under the SLO" in page
        checked += 1
    assert checked >= 1
