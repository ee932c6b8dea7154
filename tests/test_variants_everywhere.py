"""Variants as first-class results: `baseline_from` naming a variant's result, variant tables
that keep each result's label, note, interval and decision, a sweep chart over one result
label, a variant's own setup, and the CSV export's variant column.

The campaign is shaped like the GLM-5 write-ups: a three-arm transport A/B measured at two
prompt lengths (59K and 124K tokens, five repetitions each), a drafter measured on top of the
promoted arm, and a 2-GPU isolation run whose command was not recorded.
"""

from __future__ import annotations

import csv
import io
import json
import statistics
from pathlib import Path

import pytest

from generator.analysis.campaign import analyse
from generator.checks.validate import require_project
from generator.model.quantity import fmt_percent
from generator.views.variants import sweep_chart, variant_table

from conftest import run_cli

ARMS = """\
title: All-reduce transport for long prompts
tier: 1
status: adopted
hypothesis: >-
  Without NVLink every all-reduce crosses PCIe; a custom one-shot all-reduce spends less of
  each decode step waiting than NCCL's ring.
verdict: The custom all-reduce is kept.
sweep:
  parameter: --all-reduce-backend
  result: 59K prompt
variants:
  - label: nccl
    value: nccl
    outcome: rejected
    change: {flags: ["--all-reduce-backend nccl"]}
    results:
      - label: 59K prompt
        concurrency: 1
        metrics: {output_throughput: [41.2, 40.8, 41.5, 41.0, 40.9]}
        baseline: {output_throughput: [40.1, 40.4, 39.9, 40.2, 40.0]}
      - label: 124K prompt
        concurrency: 1
        metrics: {output_throughput: [30.2, 30.5, 29.9, 30.1, 30.4]}
        baseline: {output_throughput: [30.0, 30.3, 29.8, 30.2, 30.1]}
  - label: custom
    value: custom
    outcome: retained
    change: {flags: ["--all-reduce-backend custom"]}
    results:
      - label: 59K prompt
        concurrency: 1
        metrics: {output_throughput: [52.3, 51.8, 52.9, 52.1, 52.6]}
        baseline: {output_throughput: [40.1, 40.4, 39.9, 40.2, 40.0]}
        note: Content-matched prompts, the same five on each side.
      - label: 124K prompt
        concurrency: 1
        metrics: {output_throughput: [33.8, 34.1, 33.5, 34.0, 33.9]}
        baseline: {output_throughput: [30.0, 30.3, 29.8, 30.2, 30.1]}
  - label: mscclpp
    value: mscclpp
    outcome: rejected
    change: {flags: ["--all-reduce-backend mscclpp"]}
    results:
      - label: 59K prompt
        concurrency: 1
        metrics: {output_throughput: [39.7, 40.1, 39.5, 39.9, 40.0]}
        baseline: {output_throughput: [40.1, 40.4, 39.9, 40.2, 40.0]}
  - label: 2-GPU isolation
    outcome: diagnostic
    setup:
      hardware: {gpu: NVIDIA RTX PRO 6000 Blackwell Server Edition, count: 2}
      benchmark: all-reduce microbenchmark
      command: not-recorded
    results:
      - label: 59K prompt
        concurrency: 1
        metrics: {output_throughput: [60.1, 60.4]}
"""

DRAFTER = """\
title: EAGLE-3 drafter on the custom all-reduce
tier: 2
status: rejected
hypothesis: A draft model accepts enough tokens per step to pay for its own forward passes.
verdict: Rejected; the accepted length does not pay for the drafter.
results:
  - label: 59K prompt on custom
    concurrency: 1
    metrics: {output_throughput: [49.0, 48.7, 49.5, 49.1, 48.8]}
    baseline_from: {record: allreduce-arms, variant: custom, result: 59K prompt}
"""

CUSTOM_59K = [52.3, 51.8, 52.9, 52.1, 52.6]


@pytest.fixture
def repo(minimal: Path) -> Path:
    (minimal / "improvements" / "01-allreduce-arms.yaml").write_text(ARMS)
    (minimal / "improvements" / "02-drafter.yaml").write_text(DRAFTER)
    return minimal


def test_baseline_from_names_a_variants_result(repo: Path, tmp_path: Path) -> None:
    check = run_cli("check", "--root", str(repo))
    assert check.returncode == 0, check.stderr
    out = tmp_path / "records.json"
    assert run_cli("export", "--root", str(repo), "-o", str(out)).returncode == 0
    drafter = next(r for r in json.loads(out.read_text())["records"] if r["slug"] == "drafter")
    [result] = drafter["results"]
    c = result["comparisons"]["output_throughput"]
    # The promoted arm's five numbers are the baseline, typed once, in the other record.
    assert c["baseline_n"] == 5
    assert c["baseline_mean"] == pytest.approx(statistics.fmean(CUSTOM_59K), rel=1e-12)
    assert c["mean"] == pytest.approx(statistics.fmean([49.0, 48.7, 49.5, 49.1, 48.8]), rel=1e-12)
    assert c["decision"] == "worse"
    assert run_cli("build", "--root", str(repo)).returncode == 0
    [page] = (repo / "docs" / "improvements").glob("*-02-drafter.md")
    assert "compared with its variant `custom`'s result `59K prompt`" in page.read_text()


@pytest.mark.parametrize(
    ("ref", "at", "complaint"),
    [
        (
            "{record: allreduce-arms, variant: costum, result: 59K prompt}",
            "costum",
            "error[unknown-result]: record `allreduce-arms` has no variant labelled `costum` "
            "(hint: did you mean `custom`?)",
        ),
        (
            "{record: allreduce-arms, variant: mscclpp, result: 124K prompt}",
            "124K prompt",
            "error[unknown-result]: variant `mscclpp` of record `allreduce-arms` has no result labelled `124K prompt`",
        ),
    ],
)
def test_an_unknown_variant_or_result_is_reported_where_it_is_named(
    repo: Path, ref: str, at: str, complaint: str
) -> None:
    line = "    baseline_from: {record: allreduce-arms, variant: custom, result: 59K prompt}"
    path = repo / "improvements" / "02-drafter.yaml"
    new = f"    baseline_from: {ref}"
    path.write_text(DRAFTER.replace(line, new))
    check = run_cli("check", "--root", str(repo))
    assert check.returncode == 1
    n = DRAFTER.splitlines().index(line) + 1
    assert f"improvements/02-drafter.yaml:{n}:{new.index(at) + 1}: {complaint}" in check.stderr, check.stderr


def test_a_circle_through_variants_is_a_build_cycle(repo: Path) -> None:
    # The custom arm's 124K result measured on top of the drafter, which is on top of the arm.
    arms = ARMS.replace(
        "        metrics: {output_throughput: [33.8, 34.1, 33.5, 34.0, 33.9]}\n"
        "        baseline: {output_throughput: [30.0, 30.3, 29.8, 30.2, 30.1]}\n",
        "        metrics: {output_throughput: [33.8, 34.1, 33.5, 34.0, 33.9]}\n"
        "        baseline_from: {record: drafter, result: 59K prompt on custom}\n",
    )
    drafter = DRAFTER.replace("result: 59K prompt}", "result: 124K prompt}")
    (repo / "improvements" / "01-allreduce-arms.yaml").write_text(arms)
    (repo / "improvements" / "02-drafter.yaml").write_text(drafter)
    check = run_cli("check", "--root", str(repo))
    assert check.returncode == 1
    assert "error[build-cycle]: results are each other's baseline in a circle" in check.stderr
    assert "allreduce-arms variant `custom` `124K prompt`" in check.stderr


def test_variant_table_keeps_each_results_label_interval_decision_and_note(repo: Path) -> None:
    analysis = analyse(require_project(repo))
    rec = analysis.by_slug["allreduce-arms"]
    table = variant_table(analysis, rec)
    assert table is not None
    rows = {row.label: row for row in table.rows}
    [cell] = rows["custom"].cells
    custom = analysis.record(rec).variant_results[1]
    c59, c124 = (r.comparisons["output_throughput"] for r in custom)
    assert c59 is not None and c124 is not None
    # Two results, two labelled figures: never one unlabelled cell.
    parts = cell.split("; ")
    assert parts[0].startswith("59K prompt: 52.34 ± ") and parts[1].startswith("124K prompt: 33.86 ± ")
    for part, c in ((parts[0], c59), (parts[1], c124)):
        interval = f"{fmt_percent(c.ci_low_percent)} to {fmt_percent(c.ci_high_percent)}"
        assert f"({fmt_percent(c.change_percent)}, {interval}, {c.decision})" in part
    assert c59.decision == "better"
    assert "59K prompt: Content-matched prompts, the same five on each side." in rows["custom"].notes
    # A variant with one result shows it without a label.
    assert rows["2-GPU isolation"].cells[0].startswith("60.25 ± ")


def test_a_variants_own_setup_is_said_and_not_called_the_records_change(repo: Path) -> None:
    analysis = analyse(require_project(repo))
    table = variant_table(analysis, analysis.by_slug["allreduce-arms"])
    assert table is not None
    row = next(r for r in table.rows if r.label == "2-GPU isolation")
    assert row.change == "command not recorded"
    assert (
        "setup: 2x NVIDIA RTX PRO 6000 Blackwell Server Edition; all-reduce microbenchmark; command not recorded"
        in row.notes
    )
    assert run_cli("build", "--root", str(repo)).returncode == 0
    [page] = (repo / "docs" / "improvements").glob("*-01-allreduce-arms.md")
    text = page.read_text()
    assert "the record's change" not in text


def test_a_retained_variant_with_its_own_unrecorded_command_prints_none(repo: Path) -> None:
    arms = ARMS.replace(
        '    outcome: retained\n    change: {flags: ["--all-reduce-backend custom"]}\n',
        "    outcome: retained\n    setup: {command: not-recorded, benchmark: patched server}\n",
    )
    (repo / "improvements" / "01-allreduce-arms.yaml").write_text(arms)
    assert run_cli("build", "--root", str(repo)).returncode == 0
    [page] = (repo / "docs" / "improvements").glob("*-01-allreduce-arms.md")
    text = page.read_text()
    assert "No launch command is shown: this record's command was not recorded (patched server)." in text


def test_the_sweep_chart_compares_one_result_label_across_variants(repo: Path) -> None:
    analysis = analyse(require_project(repo))
    chart = sweep_chart(analysis, analysis.by_slug["allreduce-arms"])
    assert chart is not None
    # The 59K results of the three arms with a value; the 124K figures are another workload.
    means = [statistics.fmean(v) for v in ([41.2, 40.8, 41.5, 41.0, 40.9], CUSTOM_59K, [39.7, 40.1, 39.5, 39.9, 40.0])]
    assert "(59K prompt)" in chart.alt
    for m in means:
        assert f"{m:.4g}" in chart.alt or f"{m:.2f}".rstrip("0") in chart.alt, (m, chart.alt)
    # No 124K figure (the custom arm's 124K mean is 33.86) is among the points.
    assert "33.86" not in chart.alt and "30.22" not in chart.alt


def test_an_unknown_sweep_result_label_is_reported(repo: Path) -> None:
    (repo / "improvements" / "01-allreduce-arms.yaml").write_text(ARMS.replace("result: 59K prompt\n", "result: 59k\n"))
    check = run_cli("check", "--root", str(repo))
    assert check.returncode == 1
    assert (
        "improvements/01-allreduce-arms.yaml:10:11: error[unknown-result]: no variant has a result labelled `59k`"
        in (check.stderr)
    )


def test_the_csv_export_holds_the_variants_samples(repo: Path) -> None:
    out = run_cli("export", "--root", str(repo), "--format", "csv")
    assert out.returncode == 0, out.stderr
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    custom = [
        float(r["value"])
        for r in rows
        if r["record"] == "allreduce-arms" and r["variant"] == "custom" and r["result"] == "59K prompt"
        if r["side"] == "record"
    ]
    assert custom == CUSTOM_59K
    assert {r["variant"] for r in rows if r["record"] == "drafter"} == {""}
    assert {r["variant"] for r in rows if r["record"] == "allreduce-arms"} == {
        "nccl",
        "custom",
        "mscclpp",
        "2-GPU isolation",
    }


def test_the_report_lists_each_variants_results(repo: Path) -> None:
    out = run_cli("report", "--root", str(repo))
    assert out.returncode == 0, out.stderr
    arms = out.stdout[out.stdout.index("### 01. All-reduce transport") : out.stdout.index("### 02.")]
    assert "- Variant custom (retained)\n" in arms
    assert "  - 59K prompt (concurrency 1): Output token throughput 52.34 ± " in arms
    assert "  - 124K prompt (concurrency 1): Output token throughput 33.86 ± " in arms
    assert "- Variant mscclpp (rejected)\n" in arms


def test_a_variant_on_its_own_setup_is_not_compared_with_the_campaign_baseline(repo: Path) -> None:
    # The campaign baseline's single-stream result (8 GPUs, "about 8-11 tok/s") is at the same
    # concurrency, but the 2-GPU isolation run did not run on its setup.
    analysis = analyse(require_project(repo))
    [isolation] = analysis.record(analysis.by_slug["allreduce-arms"]).variant_results[3]
    assert isolation.no_baseline
    assert isolation.comparisons == {"output_throughput": None}
    assert "No baseline: this variant ran on a setup of its own, not the campaign baseline's." in isolation.notes


def test_the_road_reads_a_retained_variants_change(repo: Path) -> None:
    campaign = repo / "improvements" / "campaign.yaml"
    text = campaign.read_text()
    assert "goals:" in text and "metric: output_throughput" in text
    analysis = analyse(require_project(repo))
    road = analysis.stack.road
    assert road is not None and road.metric == "output_throughput" and road.concurrency == 1
    [step] = [s for s in road.steps if s.record.slug == "allreduce-arms"]
    # The retained arm's 59K result, its first at the road's concurrency: +30.5% on its baseline.
    assert step.change is not None
    assert step.change.result.label == "59K prompt"
    assert step.change.after.mean == pytest.approx(statistics.fmean(CUSTOM_59K))
    assert step.change.before.mean == pytest.approx(statistics.fmean([40.1, 40.4, 39.9, 40.2, 40.0]))


SWEPT = """\
title: Larger CUDA graph batch sizes
tier: 1
status: adopted
hypothesis: Capturing graphs up to 32 running requests keeps decode steps on the graph path.
verdict: Kept at 32.
variants:
  - label: cuda-graph-max-bs 16
    outcome: rejected
    change: {flags: ["--cuda-graph-max-bs 16"]}
    results:
      - {label: c16, concurrency: 16, metrics: {output_throughput: 500, tpot_p99: 45},
         baseline: {output_throughput: 480, tpot_p99: 40}}
  - label: cuda-graph-max-bs 32
    outcome: retained
    change: {flags: ["--cuda-graph-max-bs 32"]}
    results:
      - {label: c16, concurrency: 16, metrics: {output_throughput: 520, tpot_p99: 30},
         baseline: {output_throughput: 480, tpot_p99: 40}}
      - {label: c32, concurrency: 32, metrics: {output_throughput: 900, tpot_p99: 60},
         baseline: {output_throughput: 800, tpot_p99: 80}}
"""


def test_capacity_reads_the_retained_variants_sweep(minimal: Path) -> None:
    import numpy as np

    campaign = minimal / "improvements" / "campaign.yaml"
    campaign.write_text(campaign.read_text() + "slo: {tpot_p99: 50}\n")
    (minimal / "improvements" / "01-graphs.yaml").write_text(SWEPT)
    analysis = analyse(require_project(minimal))
    [sweep] = analysis.record(analysis.by_slug["graphs"]).sweeps
    assert sweep.labels == ("c16", "c32")
    mine, theirs = sweep.record.capacity, sweep.baseline.capacity
    assert mine is not None and theirs is not None
    # Where tpot_p99 reaches 50 ms, linearly between the two loads (numpy's own interpolation):
    # this arm at 30 -> 60 ms, its baseline at 40 -> 80 ms.
    load = float(np.interp(50, [30, 60], [16, 32]))
    assert mine.limit_load == pytest.approx(load)
    assert mine.limit_throughput == pytest.approx(float(np.interp(load, [16, 32], [520, 900])))
    base_load = float(np.interp(50, [40, 80], [16, 32]))
    assert theirs.limit_load == pytest.approx(base_load)
