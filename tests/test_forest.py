"""A record's forest chart (issue 49): every metric of its primary result on one axis around
zero, the primary first, then the guardrails (a broken one flagged in words), then the rest."""

from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

import pytest

from generator.analysis.campaign import analyse
from generator.checks.validate import require_project
from generator.views.forest import forest_charts

from conftest import REPO

# Slow: analyses a copy of a shipped campaign.
pytestmark = pytest.mark.slow


def _rows(svg: str) -> list[str]:
    """The rows as the chart's description names them, in order."""
    desc = re.search(r"<desc[^>]*>(.*?)</desc>", svg, re.S)
    assert desc is not None
    rows = html.unescape(desc.group(1)).split("in the table's order: ")[1]
    return [part.split(":")[0].strip() for part in rows.split("; ")]


def test_every_metric_on_one_axis_guardrails_in_their_own_marked_rows(tmp_path: Path) -> None:
    copy = tmp_path / "h200-decode"
    shutil.copytree(REPO / "examples" / "h200-decode", copy, ignore=shutil.ignore_patterns("docs", "site"))
    campaign = copy / "improvements" / "campaign.yaml"
    text = campaign.read_text()
    # Ranked at batch 8, where the stack's time to first token rose 54.4%: that guardrail breaks.
    text = text.replace("    target: 250\n    concurrency: 1\n", "    target: 250\n    concurrency: 8\n")
    campaign.write_text(
        text.replace("  min_effect: 1\n", "  min_effect: 1\n  guardrails: {ttft_median: 0, tpot_p99: 50}\n")
    )
    analysis = analyse(require_project(copy))
    charts = {c.path.rsplit("/", 1)[1]: c for c in forest_charts(analysis)}
    svg = charts["static-cache-compile-forest.svg"].svg
    assert _rows(svg) == [
        "Output token throughput (primary)",
        "Time to first token (median) (guardrail, 0% margin)",
        "Time per output token (P99) (guardrail, 50% margin)",
        "Decode throughput (secondary)",
        "Time per output token (median) (secondary)",
    ]
    # One axis, + is better: the latencies that fell are positive rows.
    assert re.search(r"Time per output token \(P99\) \(guardrail, 50% margin\): \+\d", svg)
    by_slug = {ra.file.slug: ra for ra in analysis.records}
    for slug, chart in charts.items():
        ra = by_slug[slug.removesuffix("-forest.svg")]
        assert ra.primary is not None
        broken = [g.metric for g in ra.primary.guardrails if g.held is False and g.result == ra.primary.label]
        assert chart.svg.count('class="flag small"') == len(broken)
        assert ("guardrail broken" in chart.svg) == bool(broken)
    assert "Time to first token (median) (guardrail, 0% margin): -54.4%" in svg
    assert 'class="flag small">guardrail broken · </text>' in svg
