"""Evidence as real write-ups give it (issue 38): no certainty the data do not give.

Each case is the smallest record that showed a bend: a sweep of means of 3 runs published
without spread, a candidate sweep where no candidate has a p-value, a change made only of
`before` steps, and an A/B whose every arm was measured and rejected.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy import stats as sps

from generator.analysis.campaign import analyse
from generator.checks.validate import require_project

from conftest import run_cli

# A cap sweep whose write-up gives each value's mean of 3 runs and nothing about their spread.
NO_SPREAD_SWEEP = """\
title: Chunked prefill cap
tier: 1
status: adopted
verdict: 8192 kept.
hypothesis: A larger chunk keeps the GPU busier between decode steps.
sweep: {parameter: --chunked-prefill-size}
variants:
  - label: "4096"
    value: 4096
    outcome: rejected
    results:
      - label: decode
        concurrency: 1
        metrics: {output_throughput: {mean: 970, n: 3}}
        baseline: {output_throughput: {mean: 940, n: 3}}
  - label: "8192"
    value: 8192
    outcome: retained
    results:
      - label: decode
        concurrency: 1
        metrics: {output_throughput: {mean: 985, n: 3}}
        baseline: {output_throughput: {mean: 940, n: 3}}
"""

# Only host steps: a persistence-mode switch run before the launch.
BEFORE_ONLY = """\
title: Persistence mode
tier: 1
status: proposed
hypothesis: Keeping the driver loaded removes the first request's warm-up.
variants:
  - label: persistence on
    outcome: retained
    change: {before: ["nvidia-smi -pm 1"]}
    results:
      - label: first request
        concurrency: 1
        metrics: {output_throughput: [50.1, 50.3]}
        baseline: {output_throughput: [49.9, 50.0]}
"""

# Both arms measured with five repetitions, both rejected; one also quotes the author.
ALL_REJECTED = """\
title: All-reduce transport
tier: 1
status: rejected
verdict: Neither arm pays.
hypothesis: A one-shot all-reduce waits less than NCCL's ring.
variants:
  - label: mscclpp
    outcome: rejected
    change: {flags: ["--enable-mscclpp"]}
    results:
      - label: 59K prompt
        concurrency: 1
        metrics: {output_throughput: [39.7, 40.1, 39.5, 39.9, 40.0]}
        baseline: {output_throughput: [40.1, 40.4, 39.9, 40.2, 40.0]}
        finding: slower than NCCL on every prompt length
  - label: custom
    outcome: rejected
    change: {flags: ["--enable-custom-ar"]}
    results:
      - label: 59K prompt
        concurrency: 1
        metrics: {output_throughput: [38.2, 38.5, 38.1, 38.4, 38.3]}
        baseline: {output_throughput: [40.1, 40.4, 39.9, 40.2, 40.0]}
"""


@pytest.fixture
def repo(minimal: Path) -> Path:
    folder = minimal / "improvements"
    (folder / "01-chunk-sweep.yaml").write_text(NO_SPREAD_SWEEP)
    (folder / "02-persistence.yaml").write_text(BEFORE_ONLY)
    (folder / "03-transport.yaml").write_text(ALL_REJECTED)
    return minimal


def _page(repo: Path, slug: str) -> str:
    [page] = (repo / "docs" / "improvements").glob(f"*-{slug}.md")
    return page.read_text()


def test_means_without_spread_draw_no_interval_and_are_not_single_shots(repo: Path) -> None:
    build = run_cli("build", "--root", str(repo))
    assert build.returncode == 0, build.stderr
    svg = (repo / "docs" / "improvements" / "plots" / "sweeps" / "chunk-sweep.svg").read_text()
    assert "interval 985 to 985" not in svg
    assert "985 (mean of 3 runs, no spread published)" in svg
    page = _page(repo, "chunk-sweep")
    summary = (repo / "docs" / "summary.md").read_text()
    for text in (page, summary):
        assert "single shot" not in text
        assert "3 vs 3 runs, no spread published" in text
        # No candidate has a p-value: there is nothing for Holm's correction to adjust.
        assert "best of" not in text.lower()
        assert "Holm" not in text


def test_best_of_k_counts_only_candidates_with_a_p_value(repo: Path) -> None:
    arms = (repo / "improvements" / "03-transport.yaml").read_text()
    kept = arms.replace("status: rejected", "status: adopted").replace(
        "  - label: custom\n    outcome: rejected", "  - label: custom\n    outcome: retained"
    )
    # A third candidate given as a mean without spread: it has no p-value to adjust.
    kept += (
        "  - label: nccl\n    outcome: rejected\n    results:\n      - label: 59K prompt\n"
        "        concurrency: 1\n        metrics: {output_throughput: {mean: 40.2, n: 3}}\n"
        "        baseline: {output_throughput: {mean: 40.1, n: 3}}\n"
    )
    (repo / "improvements" / "03-transport.yaml").write_text(kept)
    analysis = analyse(require_project(repo))
    primary = next(a for a in analysis.records if a.file.slug == "transport").primary
    assert primary is not None
    mine = [38.2, 38.5, 38.1, 38.4, 38.3]
    other = [39.7, 40.1, 39.5, 39.9, 40.0]
    base = [40.1, 40.4, 39.9, 40.2, 40.0]
    import numpy as np
    from statsmodels.stats.multitest import multipletests

    ps = [sps.ttest_ind(np.log(x), np.log(base), equal_var=False).pvalue for x in (other, mine)]
    # Holm over the three candidates, the one without a p-value entering as p = 1 (conservative).
    adjusted = multipletests([*ps, 1.0], method="holm")[1]
    assert primary.best_of == 3
    assert primary.best_of_tested == 2
    assert primary.holm_p == pytest.approx(adjusted[1], rel=1e-9)
    assert run_cli("build", "--root", str(repo)).returncode == 0
    page = _page(repo, "transport")
    assert "best of 3 variants (2 with a p-value)" in page


def test_a_change_of_before_steps_only_says_so(repo: Path) -> None:
    assert run_cli("build", "--root", str(repo)).returncode == 0
    page = _page(repo, "persistence")
    assert "no change recorded" not in page
    assert "host steps before the launch only: nvidia-smi -pm 1" in page


def test_an_all_rejected_measured_record_shows_its_comparisons(repo: Path, tmp_path: Path) -> None:
    assert run_cli("build", "--root", str(repo)).returncode == 0
    page = _page(repo, "transport")
    assert "as its source reported it, never compared" not in page
    assert "| Decision | none retained; its variants compared on Output token throughput:" in page
    assert "mscclpp **inconclusive**" in page or "mscclpp **worse**" in page
    assert "custom **worse**" in page
    out = tmp_path / "summary.json"
    summary = run_cli("summary", "--root", str(repo), "--format", "json")
    assert summary.returncode == 0, summary.stderr
    row = next(r for r in json.loads(summary.stdout) if r["slug"] == "transport")
    assert row["primary_decision"] is None
    assert "custom worse" in row["variant_decisions"]
    del out


def test_variant_results_show_p_test_and_strip(repo: Path) -> None:
    assert run_cli("build", "--root", str(repo)).returncode == 0
    page = _page(repo, "transport")
    base = [40.1, 40.4, 39.9, 40.2, 40.0]
    import numpy as np

    p = sps.ttest_ind(np.log([38.2, 38.5, 38.1, 38.4, 38.3]), np.log(base), equal_var=False).pvalue
    assert "\n### custom: 59K prompt\n" in page
    assert f"p = {p:.2g}" in page
    assert "Welch's t, log scale" in page
    strip = repo / "docs" / "improvements" / "plots" / "transport--variant-2-result-1-strip.svg"
    assert strip.is_file()
    assert "transport--variant-2-result-1-strip.svg" in page


# --- part 2: a spread as min-max of n, and a goal's current level in any shape -----------------


def test_mean_with_min_max_of_n_draws_the_runs_range_and_decides_nothing(repo: Path) -> None:
    sweep = NO_SPREAD_SWEEP.replace("{mean: 985, n: 3}", "{mean: 985, min: 970, max: 1000, n: 3}")
    (repo / "improvements" / "01-chunk-sweep.yaml").write_text(sweep)
    analysis = analyse(require_project(repo))
    entry = next(a for a in analysis.records if a.file.slug == "chunk-sweep")
    c = entry.primary.comparison if entry.primary else None
    # The range bounds the sd only loosely: shown, never a direction.
    assert c is not None and c.decision == "unreplicated" and c.p_value is None
    assert run_cli("build", "--root", str(repo)).returncode == 0
    svg = (repo / "docs" / "improvements" / "plots" / "sweeps" / "chunk-sweep.svg").read_text()
    assert "8192: 985 (interval 970 to 1000), retained" in svg
    assert "985 (mean of n=3, range 970–1000, no spread given)" in _page(repo, "chunk-sweep")


@pytest.mark.parametrize(
    ("value", "complaint"),
    [
        ("{mean: 985, min: 990, max: 1000, n: 3}", "the mean (985) lies outside min-max (990 to 1000)"),
        ("{mean: 985, min: 970, n: 3}", "`min` and `max` go together"),
    ],
)
def test_a_range_of_n_that_cannot_hold_its_mean_is_refused(repo: Path, value: str, complaint: str) -> None:
    sweep = NO_SPREAD_SWEEP.replace("{mean: 985, n: 3}", value)
    (repo / "improvements" / "01-chunk-sweep.yaml").write_text(sweep)
    check = run_cli("check", "--root", str(repo))
    assert check.returncode == 1
    assert complaint in check.stderr


@pytest.mark.parametrize(
    ("current", "shown"),
    [
        ("{value: 100, about: true}", "**~100 tok/s**"),
        ("{mean: 90, n: 3}", "**90 (mean of n=3, no spread given) tok/s**"),
    ],
)
def test_a_goals_current_level_takes_every_value_shape(minimal: Path, current: str, shown: str) -> None:
    path = minimal / "improvements" / "campaign.yaml"
    text = path.read_text()
    start = text.index("    current: {min: 8, max: 11, about: true}")
    path.write_text(text.replace("    current: {min: 8, max: 11, about: true}", f"    current: {current}", 1))
    assert start > 0
    build = run_cli("build", "--root", str(minimal))
    assert build.returncode == 0, build.stderr
    assert shown in (minimal / "docs" / "index.md").read_text()
