"""Issue 51's wrong outputs, each pinned: what the pages printed, and what they print now."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
from scipy import stats as sps

from generator.analysis.levels import level_of, log_mean
from generator.analysis.road import GoalDistance, distance_text
from generator.model.campaign import Goal
from generator.model.quantity import fmt_percent, fmt_value, stat
from generator.model.result import Result, Statistics

from conftest import FIXTURES, run_cli


def test_units_convert_the_range_of_mean_min_max_n_with_its_mean() -> None:
    # "11686 (mean of n=3, range 11.01-12.97)": the mean in ms beside a range left in s.
    r = Result.model_validate(
        {
            "label": "x",
            "concurrency": 1,
            "units": {"e2e_latency_mean": "s"},
            "metrics": {"e2e_latency_mean": {"mean": 11.686, "min": 11.01, "max": 12.97, "n": 3}},
        }
    )
    value = r.metrics["e2e_latency_mean"]
    assert isinstance(value, Statistics)
    assert fmt_value(value) == "11686 (mean of n=3, range 11010–12970, no spread given)"
    # What a sweep chart draws as the point's interval: the same unit as its mean.
    s = stat(value)
    assert (s.low, s.high) == pytest.approx((11010, 12970))


@pytest.mark.parametrize(
    ("percent", "shown"),
    [(0.042, "+0.042%"), (-0.04, "-0.04%"), (1e-7, "+0.0000001%"), (0.0, "0.0%"), (-0.0, "0.0%"), (0.25, "+0.2%")],
)
def test_a_nonzero_percent_never_prints_as_zero(percent: float, shown: str) -> None:
    assert fmt_percent(percent) == shown


def test_a_level_exactly_at_an_above_goal_is_reached_at_it_not_passed_by_0() -> None:
    goal = Goal(metric="output_throughput", target=100)
    at = distance_text(GoalDistance(goal, "above", 0.0, 0.0, interval=False, point=0.0), "tok/s")
    assert "passed" not in at and "by 0" not in at and "at the goal, not past it" in at
    past = distance_text(GoalDistance(goal, "above", -3.0, -3.0, interval=False, point=-3.0), "tok/s")
    assert past.startswith("passed at the point estimate (by 3 tok/s)")
    edge = distance_text(GoalDistance(goal, "above", -5.0, 0.0, interval=True, point=-2.0), "tok/s")
    assert edge.startswith("reached (at the goal: ") and "by at least 0" not in edge


def test_the_road_centres_its_level_on_the_log_mean_as_the_guide_says() -> None:
    runs = [900.0, 1000.0, 1300.0, 1100.0]
    assert math.exp(log_mean(runs)) == pytest.approx(sps.gmean(runs), rel=1e-12)
    level = level_of(runs, 0.05)
    assert level.value == pytest.approx(sps.gmean(runs), rel=1e-12)
    # The interval is centred on it, on the log scale (it was centred on the arithmetic mean).
    assert level.low is not None and level.high is not None
    assert math.log(level.value) == pytest.approx((math.log(level.low) + math.log(level.high)) / 2, rel=1e-12)
    # {mean, sd, n}: the log-normal with that mean and SD, as comparisons read it.
    moments = Statistics(mean=1000.0, sd=600.0, n=200)
    assert log_mean(moments) == pytest.approx(math.log(1000) - math.log1p(0.36) / 2, rel=1e-12)


def test_summary_json_says_measured_for_a_record_measured_under_its_variants(tmp_path: Path) -> None:
    root = tmp_path / "c"
    shutil.copytree(FIXTURES / "variants", root)
    r = run_cli("summary", "--root", str(root), "--format", "json")
    assert r.returncode == 0, r.stderr
    rows = {row["slug"]: row for row in json.loads(r.stdout)}
    assert rows["prefill-cap"]["evidence"] == "measured" and rows["prefill-cap"]["primary_decision"]
    assert rows["allreduce-arms"]["evidence"] == "measured"
    assert rows["reported-only"]["evidence"] == "reported"


def test_the_home_pages_standings_are_one_list_item_each(tmp_path: Path) -> None:
    root = tmp_path / "c"
    shutil.copytree(FIXTURES / "variants", root)
    for name, standing in (("11-prefill-cap.yaml", "recommended"), ("12-allreduce-arms.yaml", "latest")):
        path = root / "improvements" / name
        path.write_text(path.read_text().replace("status: adopted\n", f"status: adopted\nstanding: {standing}\n", 1))
    r = run_cli("build", "--root", str(root))
    assert r.returncode == 0, r.stderr
    lines = (root / "docs" / "index.md").read_text().splitlines()
    items = [line for line in lines if line.startswith(("- Recommended:", "- Latest (not the recommended):"))]
    assert len(items) == 2
    assert all(line.count("](") == 1 for line in items)  # one record per line, not a run-on line


def test_a_result_of_reported_percentages_alone_is_not_said_to_be_not_compared(minimal: Path) -> None:
    campaign = minimal / "improvements" / "campaign.yaml"
    text = campaign.read_text()
    anchor = "      concurrency: 1024\n"
    assert anchor in text
    campaign.write_text(
        text.replace(anchor, anchor + "      workload: {dataset: random, input_len: 1024, output_len: 256}\n")
    )
    (minimal / "improvements" / "01-reported.yaml").write_text(
        "title: As reported\ntier: 2\nstatus: in-progress\nhypothesis: Faster.\nresults:\n"
        "  - label: sharegpt\n    concurrency: 1024\n"
        "    workload: {dataset: sharegpt, input_len: 1024, output_len: 256}\n"
        "    reported_change: {output_throughput: 7.31}\n"
    )
    res = run_cli("check", "--verbose", cwd=minimal)
    assert res.returncode == 0, res.stderr
    assert "comparison-not-made" not in res.stderr


REPORTED_GUARD = """\
title: Fair-share cap
tier: 1
status: in-progress
hypothesis: Capping a long prompt's share of a step lets the short ones through.
expected:
  metric: output_throughput
  guardrails: {ttft_p99: 5}
results:
  - label: 59K prompt
    concurrency: 8
    metrics: {output_throughput: [52.3, 51.8, 52.9, 52.1, 52.6]}
    baseline: {output_throughput: [40.1, 40.4, 39.9, 40.2, 40.0]}
  - label: prefill, as the author reported
    reported_change: {ttft_p99: 3}
"""


def test_a_reported_guardrail_change_is_said_once_and_not_called_a_single_shot(minimal: Path) -> None:
    (minimal / "improvements" / "01-cap.yaml").write_text(REPORTED_GUARD)
    r = run_cli("build", "--root", str(minimal))
    assert r.returncode == 0, r.stderr
    [page] = (minimal / "docs" / "improvements").glob("*-01-cap.md")
    [line] = [ln for ln in page.read_text().splitlines() if "guardrail not shown either way" in ln]
    assert "ttft_p99 (margin 5%, change +3.0%, no interval, in `prefill, as the author reported`, as reported)" in line
    assert "single shot" not in line
    assert line.count("ttft_p99") == 1
