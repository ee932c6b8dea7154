"""Typed metrics under the benchmark tools' own keys: `p99_ttft_ms` is `ttft_p99` in ms.

The importers' key table is the vocabulary's (`metrics.TOOL_KEYS`, `metrics.latency_metric`),
so a number copied from a tool's JSON by hand is accepted under the key it had there, and the
pages name it canonically.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.model import metrics
from generator.project.runs.formats import common

from conftest import run_cli

RECORD = """\
title: Two-batch overlap
tier: 1
status: in-progress
hypothesis: Overlapping two micro-batches hides the all-reduce behind compute.
results:
  - label: concurrency 64
    concurrency: 64
    metrics:
      total_token_throughput: [3890, 3912, 3875]
      p99_ttft_ms: [1840.5, 1802.0, 1866.25]
      median_e2el_ms: [20110, 19980, 20240]
    baseline:
      total_token_throughput: [3740, 3751, 3733]
      p99_ttft_ms: [2010.0, 1990.5, 2033.0]
      median_e2el_ms: [21050, 21110, 20990]
"""


def test_the_importers_read_through_the_vocabularys_table() -> None:
    # One table, not two: the serving importers' keys are the vocabulary's.
    assert common.SERVING_METRICS is metrics.TOOL_KEYS


@pytest.mark.parametrize(
    ("key", "name"),
    [
        ("p99_ttft_ms", "ttft_p99"),
        ("p99.9_e2el_ms", "e2e_latency_p99.9"),
        ("median_itl_ms", "itl_median"),
        ("mean_tpot_ms", "tpot_mean"),
        ("total_token_throughput", "total_throughput"),
        ("request_goodput", "goodput"),
        ("spec_decode_acceptance_length", "accept_length"),
        ("max_output_tokens_per_s", "max_output_throughput"),
        ("ttft_p99", None),  # already the vocabulary's name
        ("p100_ttft_ms", None),  # no such percentile
    ],
)
def test_tool_key(key: str, name: str | None) -> None:
    assert metrics.tool_key(key) == name


def test_a_record_typed_in_the_tools_keys_checks_and_shows_canonical_names(minimal: Path, tmp_path: Path) -> None:
    (minimal / "improvements" / "01-tbo.yaml").write_text(RECORD)
    check = run_cli("check", "--root", str(minimal))
    assert check.returncode == 0, check.stderr
    export = tmp_path / "records.json"
    assert run_cli("export", "--root", str(minimal), "-o", str(export)).returncode == 0
    [record] = json.loads(export.read_text())["records"]
    [result] = record["results"]
    assert sorted(result["comparisons"]) == ["e2e_latency_median", "total_throughput", "ttft_p99"]
    ttft = result["comparisons"]["ttft_p99"]
    assert ttft["mean"] == pytest.approx((1840.5 + 1802.0 + 1866.25) / 3)
    assert ttft["baseline_mean"] == pytest.approx((2010.0 + 1990.5 + 2033.0) / 3)
    assert ttft["decision"] == "better"  # a lower TTFT, as the ms latency it is
    assert run_cli("build", "--root", str(minimal)).returncode == 0
    [page] = (minimal / "docs" / "improvements").glob("*-01-tbo.md")
    text = page.read_text()
    assert "Time to first token (P99) (ms, lower is better)" in text
    assert "p99_ttft_ms" not in text


def test_the_same_metric_under_two_keys_is_refused(minimal: Path) -> None:
    text = RECORD.replace("      median_e2el_ms: [20110, 19980, 20240]\n", "      ttft_p99: [1800, 1810, 1790]\n", 1)
    (minimal / "improvements" / "01-tbo.yaml").write_text(text)
    check = run_cli("check", "--root", str(minimal))
    assert check.returncode == 1
    assert (
        "improvements/01-tbo.yaml:9:7: error[invalid-value]: `results[0].metrics`: `p99_ttft_ms` and `ttft_p99` "
        "are the same metric (`ttft_p99`); give it once"
    ) in check.stderr


def test_a_campaign_metric_may_not_take_a_tool_key(minimal: Path) -> None:
    campaign = minimal / "improvements" / "campaign.yaml"
    campaign.write_text(campaign.read_text() + "metrics:\n  p99_ttft_ms: {unit: ms, better: lower, label: Mine}\n")
    check = run_cli("check", "--root", str(minimal))
    assert check.returncode == 1
    assert "`p99_ttft_ms` is how benchmark tools write `ttft_p99`" in check.stderr
