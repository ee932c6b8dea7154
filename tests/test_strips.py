"""Strip charts: every repetition of a comparison, for the campaign's own metrics as for built-in ones."""

from __future__ import annotations

from pathlib import Path

from generator.analysis.campaign import analyse
from generator.checks.validate import require_project
from generator.views.strips import strips

CUSTOM = """
metrics:
  allreduce_p99:
    unit: µs
    better: lower
    label: All-reduce latency (P99)
"""

RECORD = """title: Faster all-reduce
tier: 1
status: in-progress
hypothesis: H.
expected:
  metric: allreduce_p99
results:
  - label: c8
    concurrency: 8
    metrics: {allreduce_p99: [41.0, 42.5, 40.8]}
    baseline: {allreduce_p99: [50.1, 49.7, 51.2]}
"""


def test_a_campaign_metric_gets_a_strip_chart(minimal: Path) -> None:
    campaign = minimal / "improvements" / "campaign.yaml"
    campaign.write_text(campaign.read_text(encoding="utf-8") + CUSTOM, encoding="utf-8")
    (minimal / "improvements" / "01-allreduce.yaml").write_text(RECORD, encoding="utf-8")
    [strip] = strips(analyse(require_project(minimal)))
    assert "All-reduce latency (P99)" in strip.alt
    assert "All-reduce latency (P99) (µs)" in strip.svg
