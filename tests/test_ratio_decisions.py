"""Issue 23 beyond one comparison: guardrails, best of k, the primary comparison of a sweep, the road.

References: statsmodels (`ttost_ind`, `multipletests(method="holm")`), scipy (Welch on logs),
a seeded simulation of best-of-10 null variants (/work/refs part 4: P(best called better) 0.111
unadjusted, 0.011 with Holm), and hand arithmetic for the road's ratios.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sp

from generator.analysis.campaign import Analysis, analyse
from generator.analysis.stats import compare, holm
from generator.checks.validate import require_project
from generator.model.quantity import fmt_value
from generator.model.result import About, Range, Statistics

from conftest import run_cli

CAMPAIGN = """\
name: Ratio decisions
series: ratio
model: {name: Toy}
hardware: {gpu: Example GPU, count: 1}
engine: {name: ExampleServe}
baseline:
  label: base
  command: python -m example.serve
  results:
    - label: c64
      concurrency: 64
      metrics: {output_throughput: 1200}
goals:
  - metric: output_throughput
    concurrency: 64
    target: 1500
decision:
  primary_metric: output_throughput
  guardrails: {ttft_p99: 5}
tiers: {1: a, 2: b, 3: c}
"""


def _write(root: Path, records: dict[str, str], campaign: str = CAMPAIGN) -> Analysis:
    (root / "improvements").mkdir(parents=True, exist_ok=True)
    (root / "improvements" / "campaign.yaml").write_text(campaign)
    for name, text in records.items():
        (root / "improvements" / name).write_text(text)
    return analyse(require_project(root))


GUARDED = """\
title: Faster but slower to start
tier: 1
status: adopted
hypothesis: H.
verdict: Adopted.
results:
  - label: c64
    concurrency: 64
    metrics: {output_throughput: [1300, 1310, 1290], ttft_p99: [230, 235, 228]}
    baseline: {output_throughput: [1200, 1210, 1190], ttft_p99: [200, 204, 198]}
"""

HELD = """\
title: Faster and as quick to start
tier: 1
status: in-progress
hypothesis: H.
results:
  - label: c64
    concurrency: 64
    metrics: {output_throughput: [1250, 1255, 1245], ttft_p99: [200, 201, 199]}
    baseline: {output_throughput: [1200, 1210, 1190], ttft_p99: [200, 202, 198]}
"""


def test_a_broken_guardrail_is_no_win(tmp_path: Path) -> None:
    from statsmodels.stats.weightstats import ttost_ind

    analysis = _write(tmp_path, {"01-guarded.yaml": GUARDED, "02-held.yaml": HELD})
    guarded = analysis.record(analysis.by_slug["guarded"]).primary
    held = analysis.record(analysis.by_slug["held"]).primary
    assert guarded is not None and held is not None
    assert guarded.comparison.decision == held.comparison.decision == "better"
    (g,) = guarded.guardrails
    assert (g.metric, g.margin, g.held) == ("ttft_p99", 5, False)
    (h,) = held.guardrails
    assert h.held is True

    # Non-inferiority at alpha 0.05 with a 5% margin is the upper of statsmodels' two one-sided
    # tests on the logs: it passes for "held" and fails for "guarded".
    def upper_p(x: list[float], b: list[float]) -> float:
        _, _, (_, p_upper, _) = ttost_ind(np.log(x), np.log(b), -math.inf, math.log(1.05), usevar="unequal")
        return float(p_upper)

    assert upper_p([200, 201, 199], [200, 202, 198]) < 0.05
    assert upper_p([230, 235, 228], [200, 204, 198]) > 0.05
    # Ranked with `worse`, after the record that holds its guardrail.
    assert [a.file.slug for a in analysis.ranked] == ["held", "guarded"]
    assert analysis.record(analysis.by_slug["guarded"]).group == "worse"
    export = {r["slug"]: r for r in json.loads(run_cli("export", "--root", str(tmp_path)).stdout)["records"]}
    (row,) = export["guarded"]["primary"]["guardrails"]
    assert set(row) == {
        *("metric", "margin", "change_percent", "ci_low_percent", "ci_high_percent", "held"),
        *("result", "reported", "state", "smallest_breach_percent"),
    }
    assert row["state"] == "broken"
    assert row["held"] is False and row["ci_high_percent"] > 5
    summary = run_cli("summary", "--root", str(tmp_path), "--format", "markdown").stdout
    assert "better, guardrail broken: ttft_p99" in summary
    r = run_cli("check", "--root", str(tmp_path))
    assert "warning[guardrail-broken]" in r.stderr and "`ttft_p99` (margin 5%" in r.stderr
    r = run_cli("build", "-q", "--root", str(tmp_path))
    assert r.returncode == 0, r.stderr
    page = next((tmp_path / "docs" / "improvements").glob("*-01-guarded.md")).read_text()
    assert "guardrail broken: ttft_p99 (margin 5%, change +15.1%), so it does not count as a win" in page


def test_a_records_own_guardrails_replace_the_campaigns(tmp_path: Path) -> None:
    own = GUARDED.replace("results:", "expected:\n  metric: output_throughput\n  guardrails: {ttft_p99: 20}\nresults:")
    analysis = _write(tmp_path, {"01-guarded.yaml": own})
    primary = analysis.record(analysis.by_slug["guarded"]).primary
    assert primary is not None and [g.held for g in primary.guardrails] == [True]


@pytest.mark.slow  # simulates best of k
def test_holm_matches_statsmodels() -> None:
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(3)
    for _ in range(20):
        p = rng.uniform(0, 0.2, 7).tolist()
        assert holm(p) == pytest.approx(list(multipletests(p, method="holm")[1]), abs=1e-12)


def test_best_of_ten_null_variants_is_corrected() -> None:
    # refs part 4: 10 null variants of n = 5 against one baseline of n = 5, CV 5%; the best by
    # point change is called better 11.1% of the time unadjusted, 1.1% after Holm.
    rng = np.random.default_rng(20240304)
    runs, k, n = 4000, 10, 5
    base = np.log(rng.normal(1.0, 0.05, (runs, 1, n)))
    arms = np.log(rng.normal(1.0, 0.05, (runs, k, n)))
    res = sp.ttest_ind(arms, np.broadcast_to(base, arms.shape), axis=2, equal_var=False)
    best = np.argmax(arms.mean(axis=2) - base.mean(axis=2), axis=1)
    p_best = res.pvalue[np.arange(runs), best]
    up = res.statistic[np.arange(runs), best] > 0
    raw = float(np.mean(up & (p_best < 0.05)))
    adjusted = np.array([holm(list(row))[b] for row, b in zip(res.pvalue, best, strict=True)])
    corrected = float(np.mean(up & (adjusted < 0.05)))
    assert raw == pytest.approx(0.111, abs=0.015)
    assert corrected == pytest.approx(0.011, abs=0.006)


def _variants(k: int) -> str:
    lines = ["title: Ten tries", "tier: 1", "status: in-progress", "hypothesis: H.", "variants:"]
    for i in range(k):
        shift = 5 if i == 0 else 0
        lines += [
            f"  - label: v{i}",
            f"    outcome: {'retained' if i == 0 else 'rejected'}",
            "    results:",
            "      - label: c64",
            "        concurrency: 64",
            f"        metrics: {{output_throughput: [{1020 + shift}, {1000 + shift}, {1040 + shift}, {990 + shift}]}}",
            "        baseline: {output_throughput: [1000, 1010, 990, 1005]}",
        ]
    return "\n".join(lines) + "\n"


@pytest.mark.slow  # simulates best of k
def test_a_record_that_kept_one_of_k_says_best_of_k(tmp_path: Path) -> None:
    analysis = _write(tmp_path, {"01-tries.yaml": _variants(10)})
    primary = analysis.record(analysis.by_slug["tries"]).primary
    assert primary is not None and primary.best_of == 10 and primary.holm_p is not None
    summary = run_cli("summary", "--root", str(tmp_path), "--format", "markdown").stdout
    assert f"(best of 10, Holm-corrected, adjusted p = {primary.holm_p:.2g})" in summary


def test_a_sweep_record_is_ranked_at_the_goals_load(tmp_path: Path) -> None:
    sweep = """\
title: Sweep
tier: 1
status: in-progress
hypothesis: H.
results:
  - label: c1
    concurrency: 1
    metrics: {output_throughput: [14.0, 14.1, 13.9]}
    baseline: {output_throughput: [13.0, 13.1, 12.9]}
  - label: c64
    concurrency: 64
    metrics: {output_throughput: [1200, 1210, 1190]}
    baseline: {output_throughput: [1200, 1190, 1210]}
"""
    analysis = _write(tmp_path, {"01-sweep.yaml": sweep})
    primary = analysis.record(analysis.by_slug["sweep"]).primary
    assert primary is not None and primary.concurrency == 64 and primary.chosen.startswith("at the goal's load")
    # The road reads the same result.
    road = analysis.stack.road
    assert road is not None


def test_the_road_composes_ratios_and_refuses_another_days_baseline(tmp_path: Path) -> None:
    step = """\
title: Step
tier: 1
status: adopted
hypothesis: H.
verdict: Adopted.
results:
  - label: c64
    concurrency: 64
    metrics: {output_throughput: 600}
    baseline: {output_throughput: 500}
"""
    analysis = _write(tmp_path, {"01-step.yaml": step})
    road = analysis.stack.road
    assert road is not None
    (s,) = road.steps
    # Measured 500 -> 600 on a baseline of 500 while the level before it is 1200: not +100 onto
    # 1200, and not chained at all; the page says why.
    assert s.chain_break is not None and "its baseline (500) is not the level before it (1200)" in s.chain_break
    assert road.current.mean == 1200 and not road.chained
    same_day = step.replace("600}\n    baseline: {output_throughput: 500}", "1440}")
    analysis = _write(tmp_path, {"01-step.yaml": same_day})
    road = analysis.stack.road
    assert road is not None and road.chained
    # 1440 against the campaign baseline's 1200: x1.2, so the level is 1200 * 1.2 = 1440.
    assert road.current.mean == pytest.approx(1440)
    (d,) = road.goals
    assert not d.reached and not d.interval  # single shots: no interval, never "reached"


def test_the_level_interval_composes_log_variances(tmp_path: Path) -> None:
    base = [1000.0, 1010.0, 990.0]
    arm = [1500.0, 1530.0, 1515.0]
    campaign = CAMPAIGN.replace("metrics: {output_throughput: 1200}", f"metrics: {{output_throughput: {base}}}")
    step = f"""\
title: Step
tier: 1
status: adopted
hypothesis: H.
verdict: Adopted.
results:
  - label: c64
    concurrency: 64
    metrics: {{output_throughput: {arm}}}
"""
    analysis = _write(tmp_path, {"01-step.yaml": step}, campaign)
    road = analysis.stack.road
    assert road is not None and road.level is not None
    # The step's baseline is the campaign baseline's own runs, so they cancel: the level is the
    # step's runs alone, a t interval on their logs (scipy) around their log mean (the guide's
    # centre: the geometric mean, issue 51).
    lx = np.log(arm)
    q = sp.t.ppf(0.975, 2)
    half = q * lx.std(ddof=1) / math.sqrt(3)
    assert road.level.value == pytest.approx(sp.gmean(arm), rel=1e-12)
    assert road.level.low == pytest.approx(sp.gmean(arm) * math.exp(-half), rel=1e-9)
    assert road.level.high == pytest.approx(sp.gmean(arm) * math.exp(half), rel=1e-9)
    (d,) = road.goals
    assert d.interval and d.reached == (road.level.low >= 1500)
    # Its own baseline runs instead (another day): independent sets, their log variances add.
    own = [980.0, 1000.0, 990.0]
    step2 = step.replace("    metrics: {", f"    baseline: {{output_throughput: {own}}}\n    metrics: {{")
    road = _write(tmp_path / "own", {"01-step.yaml": step2}, campaign).stack.road
    assert road is not None and road.level is not None
    lb, lo = np.log(base), np.log(own)
    parts = [(v.var(ddof=1) / 3, 2.0) for v in (lb, lx, lo)]
    var = sum(v for v, _ in parts)
    df = var**2 / sum(v * v / d for v, d in parts)
    level = sp.gmean(base) * sp.gmean(arm) / sp.gmean(own)
    half = sp.t.ppf(0.975, df) * math.sqrt(var)
    assert road.level.value == pytest.approx(level)
    assert (road.level.low, road.level.high) == pytest.approx((level * math.exp(-half), level * math.exp(half)))


def test_values_print_as_given() -> None:
    assert fmt_value(About(value=2.5)) == "~2.5"
    assert fmt_value(Range(min=8, max=11, about=True)) == "~8–11"
    assert fmt_value(Statistics(mean=1080, sd=15, n=5)) == "1080 ± 15 (n=5, as statistics)"
    assert fmt_value(Statistics(mean=300, n=5)) == "300 (mean of n=5, no spread given)"


def test_no_change_is_tost_against_statsmodels() -> None:
    from statsmodels.stats.weightstats import ttost_ind

    a, b = [98.7, 100.0, 100.0, 99.7, 99.0], [99.6, 98.9, 98.6, 100.2, 98.9]
    p, _, _ = ttost_ind(np.log(a), np.log(b), math.log(0.99), math.log(1.01), usevar="unequal")
    assert p < 0.05
    assert compare(a, b, higher_is_better=True).decision == "no-change"


def test_a_stacked_record_measured_in_its_retained_variant_is_on_the_road(tmp_path: Path) -> None:
    kept = """\
title: Kept
tier: 1
status: adopted
hypothesis: H.
verdict: Adopted.
variants:
  - label: on
    outcome: retained
    change: {flags: [--on]}
    results:
      - label: c64
        concurrency: 64
        metrics: {output_throughput: 1320}
"""
    analysis = _write(tmp_path, {"01-kept.yaml": kept})
    road = analysis.stack.road
    assert road is not None
    (s,) = road.steps
    assert s.change is not None and road.current.mean == pytest.approx(1320)


def test_the_ratio_reads_its_interval() -> None:
    from generator.views.variants import ratio_text

    # refs (a): 105.88x lower, interval 132.93x to 83.84x lower.
    c = compare([0.040, 0.045, 0.0425], [4.0, 4.5, 5.0], higher_is_better=False)
    assert ratio_text(c) == "106x lower (133x to 84x)"


def test_the_fold_is_the_analysis_ratio_and_its_interval_turned() -> None:
    from scipy.stats import gmean

    # The "106x" is the analysis' number (Comparison.fold), the page only words it.
    c = compare([0.040, 0.045, 0.0425], [4.0, 4.5, 5.0], higher_is_better=False)
    fold = c.fold
    assert fold is not None and fold.word == "lower"
    # The printed estimate's ratio: the geometric means' (issue 36), one number with the percent.
    assert fold.times == pytest.approx(gmean([4.0, 4.5, 5.0]) / gmean([0.040, 0.045, 0.0425]))
    assert c.ratio is not None and fold.times == pytest.approx(1 / c.ratio)
    assert c.ci_low_percent is not None and c.ci_high_percent is not None
    low, high = fold.interval or (0.0, 0.0)
    assert (low, high) == pytest.approx((1 / (1 + c.ci_high_percent / 100), 1 / (1 + c.ci_low_percent / 100)))
    up = compare([4.0, 4.5, 5.0], [0.040, 0.045, 0.0425], higher_is_better=True)
    assert up.fold is not None and up.fold.word == "higher" and up.fold.times == pytest.approx(fold.times)
    # A zero has no logarithm: the difference scale, whose interval is not one of the ratio.
    diff = compare([0.0, 1.0, 2.0], [1.0, 2.0, 3.0], higher_is_better=True)
    assert diff.fold is not None and diff.fold.interval is None and diff.fold.times == 2.0
    assert compare([-1.0, -2.0, -3.0], [1.0, 2.0, 3.0], higher_is_better=True).fold is None
