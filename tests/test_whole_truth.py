"""The headline tells the whole truth (issue 36): one estimate, and a road level from the runs in force.

Each case is pinned against scipy (the geometric means, the t interval) or a seeded simulation
(the road's coverage in chains whose steps are independent, share runs, or move together).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst
from scipy import stats as sp

from generator.analysis import levels, stats
from generator.analysis.stats import Moments, compare
from generator.model.quantity import fmt_percent

# --- one estimate: the point the interval is built on -----------------------------------------------


def test_summary_statistics_with_unequal_spreads_print_the_geometric_point() -> None:
    # Equal means, very unequal spreads: the arithmetic means' ratio is 0.0%, outside the interval.
    c = compare(Moments(1000, 600, 200), Moments(1000, 10, 200), higher_is_better=True)
    # Each side's log-normal of that mean and SD: log mean log(m) - s^2 / 2, s^2 = log(1 + cv^2).
    s2x, s2b = math.log1p(0.6**2), math.log1p(0.01**2)
    assert c.change_percent == pytest.approx(math.expm1((s2b - s2x) / 2) * 100)
    assert round(c.change_percent, 1) == -14.2 and c.arith_change_percent == 0.0
    assert (round(c.ci_low_percent or 0, 1), round(c.ci_high_percent or 0, 1)) == (-20.6, -7.4)
    assert c.decision == "worse"
    assert (c.ci_low_percent or 0) <= c.change_percent <= (c.ci_high_percent or 0)


def test_raw_repetitions_with_unequal_spreads_print_the_geometric_point() -> None:
    x, b = [500.0, 1500.0] * 50, [990.0, 1010.0] * 50
    c = compare(x, b, higher_is_better=True)
    assert c.change_percent == pytest.approx((sp.gmean(x) / sp.gmean(b) - 1) * 100)
    assert c.arith_change_percent == pytest.approx(0.0, abs=1e-12)
    welch = sp.ttest_ind(np.log(x), np.log(b), equal_var=False).confidence_interval(0.95)
    assert (c.ci_low_percent, c.ci_high_percent) == pytest.approx(
        (math.expm1(welch.low) * 100, math.expm1(welch.high) * 100)
    )
    assert c.decision == "worse" and (c.ci_low_percent or 0) < c.change_percent < (c.ci_high_percent or 0)
    # The ratio the pages print ("0.87x") and the road composes is the same point.
    assert c.ratio == pytest.approx(sp.gmean(x) / sp.gmean(b))


positive = hst.floats(min_value=1e-6, max_value=1e12, allow_nan=False, allow_infinity=False)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(hst.lists(positive, min_size=2, max_size=8), hst.lists(positive, min_size=2, max_size=8), hst.booleans())
def test_the_point_always_lies_inside_its_interval(x: list[float], b: list[float], paired: bool) -> None:
    if paired:
        b = (b * len(x))[: len(x)]
    c = compare(x, b, higher_is_better=True, paired=paired)
    assert c.change_percent is not None and c.ci_low_percent is not None and c.ci_high_percent is not None
    # A relative tolerance for the rounding of exp(log(...)); the fixed order holds otherwise.
    slack = 1e-9 * max(1.0, abs(c.change_percent))
    assert c.ci_low_percent - slack <= c.change_percent <= c.ci_high_percent + slack
    assert c.eq_low_percent is not None and c.eq_high_percent is not None
    assert c.eq_low_percent - slack <= c.change_percent <= c.eq_high_percent + slack


def test_an_extreme_ratio_prints_without_float_noise() -> None:
    c = compare([1e30, 1.1e30], [1e-3, 1.1e-3], higher_is_better=True)
    assert c.ci_low_percent is not None and c.ci_high_percent is not None
    assert c.ci_low_percent <= (c.change_percent or 0) <= c.ci_high_percent
    text = fmt_percent(c.change_percent or 0)
    assert text == "+100000000000000000000000000000000000%"
    assert fmt_percent(9.999999999999987e31) == "+100000000000000000000000000000000%"
    assert fmt_percent(-12.34) == "-12.3%" and fmt_percent(12345.6) == "+12350%"


# --- the road: the level from the runs in force, shared runs cancelling -------------------------------


def _chain(rng: np.random.Generator, kind: str, template: stats.Comparison, n: int = 5, s: float = 0.1) -> bool:
    """One chain of three steps; True when the level's 95% interval covers the final configuration's mean."""
    mus = np.cumsum(np.r_[math.log(100.0), rng.normal(0.1, 0.05, 3)])

    def runs(mu: float, common: np.ndarray | float = 0.0) -> list[float]:
        return [float(v) for v in np.exp(mu + rng.normal(0, s, n) + common)]

    prev = runs(mus[0])
    level = levels.level_of(prev, 0.05)
    for i in range(1, 4):
        paired = None
        if kind == "shared":  # each step measured against the runs of the step before it
            before, after = prev, runs(mus[i])
        elif kind == "independent":  # each step against a fresh baseline of the configuration before
            before, after = runs(mus[i - 1]), runs(mus[i])
        else:  # correlated: each step's runs move with its baseline's, repetition by repetition (paired)
            u = rng.normal(0, 2 * s, n)
            before, after = runs(mus[i - 1], u), runs(mus[i], u)
            logs = np.log(after) - np.log(before)
            # The paired standard error and df, by scipy, as `stats.compare(paired=True)` gives them.
            paired = replace(template, log_se=float(sp.sem(logs)), df=n - 1.0)
        level = levels.compose(level, after, before, paired)
        prev = after
    assert level.low is not None and level.high is not None
    truth = math.exp(mus[-1] + s * s / 2)
    return level.low <= truth <= level.high


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["independent", "shared", "correlated"])
def test_the_road_level_interval_covers_at_the_stated_level(kind: str) -> None:
    template = compare([1.0, 1.1], [1.0, 1.2], higher_is_better=True, paired=True)
    rng = np.random.default_rng(20260436)
    coverage = float(np.mean([_chain(rng, kind, template) for _ in range(1500)]))
    assert 0.93 <= coverage <= 0.97, coverage


def test_shared_runs_cancel_so_the_level_is_the_last_steps_own_runs() -> None:
    a, b, c = [100.0, 102.0, 98.0], [120.0, 118.0, 123.0], [150.0, 147.0, 152.0]
    level = levels.compose(levels.compose(levels.level_of(a, 0.05), b, a, None), c, b, None)
    own = levels.level_of(c, 0.05)
    assert (level.value, level.low, level.high) == pytest.approx((own.value, own.low, own.high))
    ci = sp.ttest_1samp(np.log(c), 0.0).confidence_interval(0.95)
    half = (ci.high - ci.low) / 2
    # Centred on the log mean (the geometric mean), as the guide says (issue 51).
    assert level.value == pytest.approx(sp.gmean(c), rel=1e-12)
    assert (level.low, level.high) == pytest.approx((sp.gmean(c) * math.exp(-half), sp.gmean(c) * math.exp(half)))


def test_a_level_that_composes_to_the_goal_passes_it_by_nothing() -> None:
    from generator.analysis.road import _residue_free

    assert _residue_free(250.00000000000001421 - 250.0, 250.0) == 0.0
    assert _residue_free(250.0 * 1.2 / 1.2 - 250.0, 250.0) == 0.0
    assert _residue_free(1e-3, 250.0) == 1e-3


# --- nothing hides: a regression beyond min_effect is named wherever the record is summarised -------

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "h200-decode"


def _ttft(idea: str, batch: int) -> list[float]:
    rows = [json.loads(line) for line in (EXAMPLE / "data" / f"{idea}.jsonl").read_text().splitlines() if line]
    runs = sorted((r for r in rows if not r["warmup"] and r["batch"] == batch), key=lambda r: r["rep"])
    return [float(r["ttft_ms"]) for r in runs]


@pytest.mark.slow
def test_the_h200_regressions_are_named_beside_better_everywhere() -> None:
    from generator.analysis.campaign import analyse
    from generator.checks.validate import require_project
    from generator.output.render import render_files
    from generator.output.report import report_text
    from generator.views.summary import format_rows, summary_rows

    analysis = analyse(require_project(EXAMPLE))
    ra = next(a for a in analysis.records if a.file.slug == "static-cache-compile")
    assert ra.primary is not None and ra.primary.comparison.decision == "better"
    found = {(g.metric, g.label): g for g in ra.regressions}
    assert sorted(found) == [("ttft_median", f"512/128, batch {b}") for b in (32, 64, 8)]
    # Each pinned against scipy: the paired t interval of the log ratio of TTFT (C over B), clear of +1%.
    for batch in (8, 32, 64):
        logs = np.log(_ttft("C", batch)) - np.log(_ttft("B", batch))
        ci = sp.ttest_1samp(logs, 0.0).confidence_interval(0.95)
        g = found[("ttft_median", f"512/128, batch {batch}")]
        assert g.change_percent == pytest.approx(math.expm1(np.mean(logs)) * 100, rel=1e-9)
        assert (g.ci_low_percent, g.ci_high_percent) == pytest.approx(
            (math.expm1(ci.low) * 100, math.expm1(ci.high) * 100)
        )
        assert math.expm1(ci.low) * 100 > analysis.rule.min_effect
    # Batch 128 and 256 are not regressions beyond min_effect with an interval clear of it.
    for batch in (128, 256):
        logs = np.log(_ttft("C", batch)) - np.log(_ttft("B", batch))
        ci = sp.ttest_1samp(logs, 0.0).confidence_interval(0.95)
        assert math.expm1(ci.low) * 100 <= analysis.rule.min_effect
    said = "+54.4% (512/128, batch 8), +6.2% (512/128, batch 32), +2.0% (512/128, batch 64)"
    files = render_files(analysis)
    page = files["docs/improvements/h200decode-02-static-cache-compile.md"]
    header = next(line for line in page.splitlines() if line.startswith("| Decision |"))
    assert "**better**" in header and f"worse elsewhere: Time to first token (median) {said}" in header
    summary = next(line for line in files["docs/summary.md"].splitlines() if "02-static-cache-compile" in line)
    assert said in summary
    home = files["docs/index.md"]
    road = next(line for line in home.splitlines() if line.startswith("| [02-static-cache-compile]"))
    assert said in road
    rows = summary_rows(analysis)
    row = next(r for r in rows if r.slug == "static-cache-compile")
    assert row.regressions == [
        f"ttft_median {change} (512/128, batch {b})" for change, b in (("+54.4%", 8), ("+6.2%", 32), ("+2.0%", 64))
    ]
    assert "worse elsewhere: ttft_median +54.4% (512/128, batch 8)" in format_rows(rows, "markdown")
    assert "ttft_median +54.4% (512/128, batch 8)" in format_rows(rows, "csv")
    assert "worse elsewhere: ttft_median +54.4% (512/128, batch 8)" in report_text(analysis)
    export = json.loads(files["docs/records.json"])
    primary = next(r for r in export["records"] if r["slug"] == "static-cache-compile")["primary"]
    assert [r["result"] for r in primary["regressions"]] == [f"512/128, batch {b}" for b in (8, 32, 64)]


def test_no_better_hides_a_regression_in_either_shipped_campaign() -> None:
    """Every record whose other comparisons include a regression beyond min_effect carries it."""
    from generator.analysis.answers import regressions
    from generator.analysis.campaign import analyse
    from generator.checks.validate import require_project

    for root in (EXAMPLE, EXAMPLE.parent.parent):
        analysis = analyse(require_project(root))
        for ra in analysis.records:
            # Independently of the analysis' own list: every headline comparison, its interval read here.
            expected = {
                (name, r.result.label)
                for i, r in enumerate(ra.headline)
                for name, c in r.comparisons.items()
                if c is not None
                and c.decision == "worse"
                and (c.gain_high_percent or 0) < -analysis.rule.min_effect
                and not (ra.primary is not None and ra.primary.metric == name and ra.primary.index == i)
            }
            assert {(g.metric, g.label) for g in ra.regressions} == expected
            assert regressions(ra.headline, ra.primary, analysis.rule.min_effect) == ra.regressions


# --- guardrails: held, broken, not shown --------------------------------------------------------------


def _ttost_ps(x: list[float], b: list[float], margin: float) -> tuple[float, float]:
    """(p of "not worse than margin", p of "worse than margin"), statsmodels' one-sided t tests on the
    logs (unequal variances), for a lower-is-better metric: worse is up."""
    from statsmodels.stats.weightstats import ttost_ind

    bound = math.log1p(margin / 100)
    _, _, (_, p_not_worse, _) = ttost_ind(np.log(x), np.log(b), -math.inf, bound, usevar="unequal")
    _, (_, p_worse, _), _ = ttost_ind(np.log(x), np.log(b), bound, math.inf, usevar="unequal")
    return float(p_not_worse), float(p_worse)


@pytest.mark.parametrize(
    ("x", "b", "state"),
    [
        ([200.0, 201.0, 199.0], [200.0, 202.0, 198.0], "held"),
        ([230.0, 235.0, 228.0], [200.0, 204.0, 198.0], "broken"),
        # Untouched but noisy: the interval reaches past the margin and back inside it.
        ([190.0, 230.0, 205.0, 185.0, 215.0], [200.0, 220.0, 180.0, 210.0, 195.0], "not shown"),
    ],
)
def test_a_guardrail_has_three_states_pinned_to_statsmodels(x: list[float], b: list[float], state: str) -> None:
    c = compare(x, b, higher_is_better=False)
    assert stats.guardrail_state(c, 5.0) == state
    p_not_worse, p_worse = _ttost_ps(x, b, 5.0)
    assert (p_not_worse < 0.05) == (state == "held")
    assert (p_worse < 0.05) == (state == "broken")


def test_a_single_shot_or_nothing_is_not_a_broken_guardrail() -> None:
    assert stats.guardrail_state(compare([260.0], [200.0], higher_is_better=False), 5.0) == "not shown"
    assert stats.guardrail_state(None, 5.0) == "not measured"


@pytest.mark.slow
@pytest.mark.parametrize("cv", [0.05, 0.15])
def test_an_untouched_guardrail_is_rarely_broken(cv: float, monkeypatch: pytest.MonkeyPatch) -> None:
    # What it would take is not read by a guardrail: skipped so the simulation takes seconds.
    monkeypatch.setattr(stats, "_with_reps", lambda c, est, *, ratio: c)
    rng = np.random.default_rng(36)
    states = []
    for _ in range(600):
        x, b = (list(np.exp(rng.normal(math.log(200), cv, 5))) for _ in range(2))
        states.append(stats.guardrail_state(compare(x, b, higher_is_better=False), 5.0))
    # True change 0: calling "not shown" broken said broken 60% (cv 5%) and 89% (cv 15%) of the time.
    assert states.count("broken") / len(states) <= 0.05
    # A true 15% regression at a 5% spread is shown broken nearly always.
    worse = [
        stats.guardrail_state(
            compare(
                list(np.exp(rng.normal(math.log(230), 0.05, 5))),
                list(np.exp(rng.normal(math.log(200), 0.05, 5))),
                higher_is_better=False,
            ),
            5.0,
        )
        for _ in range(200)
    ]
    assert worse.count("broken") / len(worse) >= 0.8


CAMPAIGN = """\
name: Whole truth
series: truth
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


def _record(title: str, ttft: list[float], ttft_base: list[float]) -> str:
    return f"""\
title: {title}
tier: 1
status: in-progress
hypothesis: H.
results:
  - label: c64
    concurrency: 64
    metrics: {{output_throughput: [1300, 1310, 1290], ttft_p99: {ttft}}}
    baseline: {{output_throughput: [1200, 1210, 1190], ttft_p99: {ttft_base}}}
"""


@pytest.mark.slow
def test_only_a_broken_guardrail_ranks_with_worse_and_every_output_says_which(tmp_path: Path) -> None:
    from generator.analysis.campaign import analyse
    from generator.checks.validate import require_project
    from generator.output.render import render_files
    from generator.views.summary import format_rows, summary_rows

    (tmp_path / "improvements").mkdir()
    (tmp_path / "improvements" / "campaign.yaml").write_text(CAMPAIGN)
    records = {
        "01-broken.yaml": _record("Broken", [230, 235, 228], [200, 204, 198]),
        "02-unshown.yaml": _record("Unshown", [190, 230, 205, 185, 215], [200, 220, 180, 210, 195]),
    }
    for name, text in records.items():
        (tmp_path / "improvements" / name).write_text(text)
    analysis = analyse(require_project(tmp_path))
    by = {a.file.slug: a for a in analysis.records}
    assert [g.state for g in by["broken"].primary.guardrails] == ["broken"]  # type: ignore[union-attr]
    assert [g.state for g in by["unshown"].primary.guardrails] == ["not shown"]  # type: ignore[union-attr]
    assert (by["broken"].group, by["unshown"].group) == ("worse", "better")
    assert [a.file.slug for a in analysis.ranked] == ["unshown", "broken"]
    rows = summary_rows(analysis)
    markdown = format_rows(rows, "markdown")
    assert "better, guardrail not shown: ttft_p99" in markdown and "better, guardrail broken: ttft_p99" in markdown
    files = render_files(analysis)
    summary = files["docs/summary.md"]
    assert "guardrail not shown: ttft_p99" in summary and "guardrail broken: ttft_p99 +15.1%" in summary
    page = next(t for p, t in files.items() if p.endswith("-02-unshown.md"))
    assert "guardrail not shown either way: ttft_p99 (margin 5%" in page
    assert "neither held nor broken, so it does not rank it with `worse`" in page
    export = json.loads(files["docs/records.json"])
    states = {r["slug"]: [g["state"] for g in r["primary"]["guardrails"]] for r in export["records"]}
    assert states == {"broken": ["broken"], "unshown": ["not shown"]}
    # A guardrail not shown says the smallest breach its data could have shown (issue 50): the
    # change at which an interval as wide as its 90% one, on the log scale, clears the margin.
    unshown = next(r for r in export["records"] if r["slug"] == "unshown")["primary"]["guardrails"][0]
    low, high = (math.log1p(unshown[k] / 100) for k in ("ci_low_percent", "ci_high_percent"))
    breach = 100 * math.expm1(math.log1p(5 / 100) + (high - low) / 2)
    assert unshown["smallest_breach_percent"] == pytest.approx(breach)
    assert f"at this spread only a change beyond {fmt_percent(breach)} could have shown it broken" in page


# --- one answer: Holm over the arms with a p-value, and the interval that goes with the word ----------


def _ab(arms: list[tuple[str, str, str]]) -> str:
    """A record with variants: (label, outcome, the variant's metrics line), against one baseline."""
    lines = ["title: AB", "tier: 1", "status: adopted", "hypothesis: H.", "verdict: Kept.", "variants:"]
    for label, outcome, metrics in arms:
        lines += [
            f"  - label: {label}",
            f"    outcome: {outcome}",
            "    results:",
            "      - label: c64",
            "        concurrency: 64",
            f"        metrics: {metrics}",
            "        baseline: {output_throughput: [1000, 1010, 990, 1005, 995]}",
        ]
    return "\n".join(lines) + "\n"


def _write_campaign(root: Path, records: dict[str, str]) -> object:
    from generator.analysis.campaign import analyse
    from generator.checks.validate import require_project

    (root / "improvements").mkdir(parents=True)
    (root / "improvements" / "campaign.yaml").write_text(CAMPAIGN)
    for name, text in records.items():
        (root / "improvements" / name).write_text(text)
    return analyse(require_project(root))


def test_holm_counts_only_arms_with_a_p_value(tmp_path: Path) -> None:
    # Arm 1 is a mean of 5 without a spread: it tests nothing, so Holm has one p and corrects nothing.
    kept = "{output_throughput: [1030, 1045, 1020, 1040, 1025]}"
    analysis = _write_campaign(
        tmp_path,
        {"01-ab.yaml": _ab([("a1", "rejected", "{output_throughput: {mean: 1010, n: 5}}"), ("a2", "retained", kept)])},
    )
    ra = analysis.records[0]  # type: ignore[attr-defined]
    c = ra.primary.comparison
    x, b = [1030, 1045, 1020, 1040, 1025], [1000, 1010, 990, 1005, 995]
    welch = sp.ttest_ind(np.log(x), np.log(b), equal_var=False)
    assert c.p_value == pytest.approx(welch.pvalue) and c.decision == "better"
    assert ra.primary.best_of is None and ra.primary.holm_p is None
    # The road reads the record's one answer.
    (step,) = analysis.stack.road.steps  # type: ignore[attr-defined]
    assert step.change.decision == "better"


def test_a_corrected_word_shows_the_interval_that_goes_with_it(tmp_path: Path) -> None:
    from statsmodels.stats.multitest import multipletests

    from generator.output.render import render_files

    b = [1000, 1010, 990, 1005, 995]
    arms = {
        "a1": [1022, 1002, 1032, 1008, 1026],  # retained: p 0.031 alone
        "a2": [1000, 1012, 985, 1008, 990],
        "a3": [995, 1015, 992, 1002, 1001],
    }
    records = [(k, "retained" if k == "a1" else "rejected", f"{{output_throughput: {v}}}") for k, v in arms.items()]
    analysis = _write_campaign(tmp_path, {"01-ab.yaml": _ab(records)})
    ra = analysis.records[0]  # type: ignore[attr-defined]
    ps = [sp.ttest_ind(np.log(v), np.log(b), equal_var=False).pvalue for v in arms.values()]
    assert ps[0] < 0.05
    adjusted = multipletests(ps, method="holm")[1][0]
    assert adjusted >= 0.05
    primary = ra.primary
    assert primary.best_of == 3 and primary.holm_p == pytest.approx(adjusted)
    c = primary.comparison
    assert c.decision == "inconclusive" and c.interval_alpha == pytest.approx(0.05 / 3)
    # The Bonferroni interval at alpha / k (scipy), which holds 0 whenever Holm's adjusted p >= alpha.
    ci = sp.ttest_ind(np.log(arms["a1"]), np.log(b), equal_var=False).confidence_interval(1 - 0.05 / 3)
    assert (c.ci_low_percent, c.ci_high_percent) == pytest.approx((math.expm1(ci.low) * 100, math.expm1(ci.high) * 100))
    assert (c.ci_low_percent or 0) < 0 < (c.ci_high_percent or 0)
    files = render_files(analysis)  # type: ignore[arg-type]
    page = next(t for p, t in files.items() if p.endswith("-01-ab.md"))
    header = next(line for line in page.splitlines() if line.startswith("| Decision |"))
    assert "**inconclusive**" in header and "98.33%, Holm's step" in header
    assert f"best of 3 variants: Holm-adjusted p = {adjusted:.2g}" in header
    (step,) = analysis.stack.road.steps  # type: ignore[attr-defined]
    assert step.change.decision == "inconclusive"
    # The variants table's retained row names the record's corrected answer beside its own figures.
    said = f"corrected for picking one of 3 variants (Holm): inconclusive, adjusted p = {adjusted:.2g}"
    assert f"the record's decision, {said}" in page


def test_a_better_within_min_effect_says_so() -> None:
    from generator.views.results import _decision_text

    # A secondary metric: -0.7%, p 0.003, a real change inside min_effect (1%) whose 90% interval
    # reaches past -1%, so it is not `no-change` either: `better`, and the page says it is small.
    x = [99.0, 99.6, 99.3, 98.9, 99.5]
    b = [99.9, 100.1, 99.7, 100.3, 100.0]
    c = compare(x, b, higher_is_better=False, min_effect=1.0)
    welch = sp.ttest_ind(np.log(x), np.log(b), equal_var=False)
    assert c.decision == "better" and c.p_value == pytest.approx(welch.pvalue)
    assert c.within_min_effect and _decision_text(c) == f"better (p = {welch.pvalue:.2g}; within min_effect ±1%)"
    assert not compare([110.0, 111.0, 109.0], [100.0, 101.0, 99.0], higher_is_better=True).within_min_effect


# --- ranking: not settled is one group -----------------------------------------------------------------


def test_a_single_shot_never_ranks_above_stronger_unsettled_evidence_by_its_kind() -> None:
    single = compare([100.1], [100.0], higher_is_better=True)
    # n = 5 at about +30%, an interval reaching below 0: inconclusive.
    x = [95.0, 160.0, 120.0, 175.0, 110.0]
    b = [100.0, 98.0, 102.0, 101.0, 99.0]
    noisy = compare(x, b, higher_is_better=True)
    welch = sp.ttest_ind(np.log(x), np.log(b), equal_var=False).confidence_interval(0.95)
    assert noisy.decision == "inconclusive" and math.expm1(welch.low) < 0 < math.expm1(welch.high)
    assert stats.rank_group(single) == stats.rank_group(noisy) == "not settled"
    assert stats.rank_key(noisy) < stats.rank_key(single)


# --- comparable rows: ranked at the goal's load, the record's own load beside it -------------------


def _two_loads(title: str, expected: int | None, loads: dict[int, tuple[list[int], list[int]]]) -> str:
    head = f"title: {title}\ntier: 1\nstatus: in-progress\nhypothesis: H.\n"
    if expected is not None:
        head += f"expected:\n  metric: output_throughput\n  concurrency: {expected}\n"
    lines = [head + "results:"]
    for load, (x, b) in loads.items():
        lines += [
            f"  - label: c{load}",
            f"    concurrency: {load}",
            f"    metrics: {{output_throughput: {x}}}",
            f"    baseline: {{output_throughput: {b}}}",
        ]
    return "\n".join(lines) + "\n"


def test_records_rank_at_the_goals_load_with_their_own_load_beside(tmp_path: Path) -> None:
    from generator.views.plots import summary_bars
    from generator.views.summary import gain_text, summary_rows

    flat, up = ([1000, 1010, 990], [1000, 1005, 995]), ([1500, 1510, 1490], [1000, 1005, 995])
    analysis = _write_campaign(
        tmp_path,
        {
            # Big at its own load 256, flat at the goal's 64.
            "01-own.yaml": _two_loads("Own", 256, {64: flat, 256: up}),
            # Measured only at 8: it cannot be read at the goal's load.
            "02-elsewhere.yaml": _two_loads("Elsewhere", None, {8: up}),
        },
    )
    by = {a.file.slug: a for a in analysis.records}  # type: ignore[attr-defined]
    own = by["own"].primary
    assert own.concurrency == 64 and own.chosen == "at the goal's load, concurrency 64"
    assert own.comparison.decision != "better"
    label, load, c = own.expected_load
    assert (label, load, c.decision) == ("c256", 256, "better")
    row = next(r for r in summary_rows(analysis) if r.slug == "own")  # type: ignore[arg-type]
    assert "at concurrency 64 (at its own expected load, concurrency 256: +" in gain_text(row)
    # They cannot share a load, and the summary says so.
    loads = set(analysis.ranked_loads)  # type: ignore[attr-defined]
    assert loads == {"output_throughput at concurrency 8", "output_throughput at concurrency 64"}
    labels = [b.label for b in summary_bars(analysis)]  # type: ignore[arg-type]
    assert any("concurrency 64, workload not recorded" in x for x in labels)
    assert any("concurrency 8, workload not recorded" in x for x in labels)


# --- what was measured ----------------------------------------------------------------------------------


def test_a_record_without_its_primary_metric_names_what_it_measured(tmp_path: Path) -> None:
    from generator.output.render import render_files
    from generator.views.summary import gain_text, summary_rows

    decode = """\
title: Decode only
tier: 1
status: in-progress
hypothesis: H.
results:
  - label: bs1
    concurrency: 1
    metrics: {decode_throughput: [121, 122, 121.5]}
    baseline: {decode_throughput: [100, 100.5, 99.5]}
"""
    alone = """\
title: No baseline
tier: 1
status: in-progress
hypothesis: H.
results:
  - label: c8
    concurrency: 8
    metrics: {output_throughput: [1000, 1010, 990]}
"""
    analysis = _write_campaign(tmp_path, {"01-decode.yaml": decode, "02-alone.yaml": alone})
    rows = {r.slug: r for r in summary_rows(analysis)}  # type: ignore[arg-type]
    change = (sp.gmean([121, 122, 121.5]) / sp.gmean([100, 100.5, 99.5]) - 1) * 100
    said = f"no output_throughput in this run; decode_throughput {fmt_percent(change)} (bs1), better"
    assert gain_text(rows["decode"]) == said
    assert gain_text(rows["alone"]) == "output_throughput measured, no baseline to compare it with"
    files = render_files(analysis)  # type: ignore[arg-type]
    for slug, text in (("decode", said), ("alone", "output_throughput measured, no baseline to compare it with")):
        page = next(t for p, t in files.items() if p.endswith(f"-{slug}.md"))
        assert f"| Decision | none: {text} |" in page
        assert text in files["docs/summary.md"]
    assert "not measured" not in files["docs/summary.md"].split("**How the ranking works.**")[0]


# --- capacity: the mean curve's, with an interval that covers ---------------------------------------------

SLO = {"ttft_p99": 100.0}
LOADS = (8, 16, 32, 64)


def _curve(scale: float) -> list[tuple[float, float, float]]:
    """(load, mean throughput, mean p99) of a server: throughput sublinear, p99 convex in the load."""
    return [(load, scale * 100 * load**0.8, 20 + 0.03 * load**2) for load in LOADS]


def _measured(rng: np.random.Generator, scale: float, n: int, cv: float = 0.05) -> list[object]:
    from generator.analysis.capacity import Repetition, aggregate

    return [
        aggregate(
            load,
            [
                Repetition(
                    float(thr * math.exp(rng.normal(0, cv))), {"ttft_p99": float(p99 * math.exp(rng.normal(0, cv)))}
                )
                for _ in range(n)
            ],
        )
        for load, thr, p99 in _curve(scale)
    ]


def _true_capacity(scale: float) -> float:
    from generator.analysis.capacity import Point, capacity

    found = capacity([Point(load, thr, {"ttft_p99": p99}) for load, thr, p99 in _curve(scale)], SLO).throughput
    assert found is not None
    return found


@pytest.mark.slow
@pytest.mark.parametrize(("n", "baseline_n"), [(3, 3), (10, 10), (3, 10)])
def test_the_capacity_change_interval_covers_at_n_3_to_10(n: int, baseline_n: int) -> None:
    from generator.analysis.sweeps import Rule, Side, _compare

    rng = np.random.default_rng(20260436 + 100 * n + baseline_n)
    truth = _true_capacity(1.05) / _true_capacity(1.0)
    from generator.analysis.capacity import capacity

    hits = runs = 0
    for _ in range(1200):
        mine, theirs = _measured(rng, 1.05, n), _measured(rng, 1.0, baseline_n)
        sides = [Side(tuple(p), capacity(p, SLO), ()) for p in (mine, theirs)]  # type: ignore[arg-type]
        c = _compare(sides[0], sides[1], SLO, Rule())
        assert c is not None and c.ci_low_percent is not None and c.ci_high_percent is not None
        runs += 1
        hits += c.ci_low_percent <= (truth - 1) * 100 <= c.ci_high_percent
    assert 0.93 <= hits / runs <= 0.97, hits / runs


def test_the_capacity_does_not_shrink_with_more_repetitions() -> None:
    # The mean curve's capacity: the same server at n = 2 and n = 20 gives the same estimand, so
    # the average estimate barely moves (the worst of n moved it -2.5% to -8.7%).
    from generator.analysis.capacity import capacity

    rng = np.random.default_rng(36)
    means = []
    for n in (2, 20):
        found = [capacity(_measured(rng, 1.0, n), SLO).throughput for _ in range(200)]  # type: ignore[arg-type]
        means.append(float(np.mean([f for f in found if f is not None])))
    truth = _true_capacity(1.0)
    assert abs(means[0] / truth - 1) < 0.01 and abs(means[1] / truth - 1) < 0.01


def test_unequal_repetition_counts_are_warned_about() -> None:
    from generator.analysis.capacity import capacity
    from generator.analysis.sweeps import Side, _unequal

    rng = np.random.default_rng(5)
    ten, three = _measured(rng, 1.0, 10), _measured(rng, 1.0, 3)
    a = Side(tuple(ten), capacity(ten, SLO), ())  # type: ignore[arg-type]
    b = Side(tuple(three), capacity(three, SLO), ())  # type: ignore[arg-type]
    said = _unequal(a, b)
    assert said is not None and said.startswith("the record ran 10 repetitions a load and the baseline 3")
    assert _unequal(a, a) is None


# --- no float residue in any printed number ------------------------------------------------------------

LONG_DECIMAL = re.compile(r"(?<![\w.-])\d+\.\d{7,}(?!\w)")
LONG_WHOLE = re.compile(r"(?<![\w.])\d{17,}")


def _residue(files: dict[str, str]) -> list[str]:
    """Numbers in the pages and charts that carry a binary float's noise: more than six decimals,
    or a whole number whose digits past the fourth significant one are not all zeros."""
    found = []
    for path, text in files.items():
        if not path.endswith((".md", ".svg")):
            continue  # records.json and the CSVs carry the numbers as data, at full precision
        found += [f"{path}: {m.group(0)}" for m in LONG_DECIMAL.finditer(text)]
        found += [f"{path}: {m.group(0)}" for m in LONG_WHOLE.finditer(text) if m.group(0).lstrip("0")[4:].strip("0")]
    return found


EXTREME = """\
title: Extreme
tier: 1
status: adopted
hypothesis: H.
verdict: Kept.
results:
  - label: c64
    concurrency: 64
    metrics: {output_throughput: [1250, 1251, 1249], ttft_p99: [1.0e+14, 1.1e+14, 1.05e+14]}
    baseline: {output_throughput: [1000, 1001, 999], ttft_p99: [0.001, 0.0011, 0.00105]}
"""


@pytest.mark.slow
@pytest.mark.parametrize("where", ["h200", "shipped", "extreme"])
def test_no_number_prints_float_residue(where: str, tmp_path: Path) -> None:
    from generator.analysis.campaign import analyse
    from generator.checks.validate import require_project
    from generator.output.render import render_files

    if where == "extreme":
        # A 1e17-fold latency: its percents run to 20 digits.
        campaign = CAMPAIGN.replace(
            "      metrics: {output_throughput: 1200}", "      metrics: {output_throughput: 1200}"
        )
        (tmp_path / "improvements").mkdir()
        (tmp_path / "improvements" / "campaign.yaml").write_text(campaign)
        (tmp_path / "improvements" / "01-extreme.yaml").write_text(EXTREME)
        root = tmp_path
    else:
        root = EXAMPLE if where == "h200" else EXAMPLE.parent.parent
    files = render_files(analyse(require_project(root)))
    assert _residue(files) == []
    if where == "extreme":
        page = next(t for p, t in files.items() if p.endswith("-01-extreme.md"))
        assert "+10000000000000000000%" in page and "e+" not in page
