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
    # The summary's table (its ranking rule names "single shots" as a group, in prose above it).
    table = "\n".join(line for line in summary.splitlines() if line.startswith("|"))
    for text in (page, table):
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
    # Holm over the candidates with a p-value only (issue 36): a candidate without one tests nothing.
    adjusted = multipletests(ps, method="holm")[1]
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


# --- part 3: guardrails across the record, and the metric that decided it ----------------------

TTFT_BASE = [1000.0, 1010.0, 990.0, 1005.0, 995.0]
TTFT_124K = [1380.0, 1390.0, 1370.0, 1385.0, 1375.0]

# A cap that wins on throughput at 59K and is rejected for the TTFT it costs at 124K.
CAP = f"""\
title: Fair-share cap
tier: 1
status: rejected
verdict: Rejected; TTFT at 124K regressed.
hypothesis: Capping a long prompt's share of a step lets the short ones through.
expected:
  metric: output_throughput
  guardrails: {{ttft_p99: 5}}
decided_by: {{metric: ttft_p99, result: 124K prompt, change: 38}}
results:
  - label: 59K prompt
    concurrency: 8
    metrics: {{output_throughput: [52.3, 51.8, 52.9, 52.1, 52.6], ttft_p99: [800, 805, 798, 802, 801]}}
    baseline: {{output_throughput: [40.1, 40.4, 39.9, 40.2, 40.0], ttft_p99: [799, 803, 800, 801, 798]}}
  - label: 124K prompt
    concurrency: 8
    metrics: {{output_throughput: [30.2, 30.5, 29.9, 30.1, 30.4], ttft_p99: {TTFT_124K}}}
    baseline: {{output_throughput: [30.0, 30.3, 29.8, 30.2, 30.1], ttft_p99: {TTFT_BASE}}}
  - label: prefill, as the author reported
    reported_change: {{ttft_p99: 41}}
"""


@pytest.fixture
def cap(minimal: Path) -> Path:
    (minimal / "improvements" / "01-cap.yaml").write_text(CAP)
    return minimal


def test_a_guardrail_is_read_on_every_result_that_measures_it(cap: Path) -> None:
    import numpy as np

    analysis = analyse(require_project(cap))
    primary = analysis.records[0].primary
    assert primary is not None and primary.label == "59K prompt"
    readings = {g.result: g for g in primary.guardrails}
    assert readings["59K prompt"].held is True
    # Non-inferiority at alpha 0.05 reads the 90% interval of the log ratio (Welch): its worse end.
    logs = np.log(TTFT_124K), np.log(TTFT_BASE)
    ci = sps.ttest_ind(*logs, equal_var=False).confidence_interval(0.90)
    assert readings["124K prompt"].ci_low_percent == pytest.approx(100 * np.expm1(ci.low), rel=1e-9)
    assert readings["124K prompt"].held is False
    # A reported change has no interval: beyond the margin it breaks, never holds.
    assert readings["prefill, as the author reported"].held is False
    assert readings["prefill, as the author reported"].reported
    assert primary.guardrail_broken
    assert analysis.records[0].group == "worse"


def test_a_mean_without_spread_cannot_hold_a_guardrail(cap: Path) -> None:
    text = CAP.replace(f"ttft_p99: {TTFT_124K}}}", "ttft_p99: {mean: 1010, n: 5}}").replace(
        f"ttft_p99: {TTFT_BASE}}}", "ttft_p99: {mean: 1000, n: 5}}"
    )
    text = text.replace("  - label: prefill, as the author reported\n    reported_change: {ttft_p99: 41}\n", "")
    text = text.replace("decided_by: {metric: ttft_p99, result: 124K prompt, change: 38}\n", "")
    (cap / "improvements" / "01-cap.yaml").write_text(text)
    primary = analyse(require_project(cap)).records[0].primary
    assert primary is not None
    [reading] = [g for g in primary.guardrails if g.result == "124K prompt"]
    # +1% is inside the margin, but without a spread nothing shows it: not held, not broken.
    assert reading.held is None and reading.change_percent == pytest.approx(1.0)


def test_the_deciding_metric_is_shown_beside_the_decision_and_checked(cap: Path) -> None:
    build = run_cli("build", "--root", str(cap))
    assert build.returncode == 0, build.stderr
    page = _page(cap, "cap")
    change = 100 * (sum(TTFT_124K) / sum(TTFT_BASE) - 1)
    assert f"| Decided by | Time to first token (P99) in result 124K prompt: +{change:.1f}%" in page
    assert "worse; stated +38.0% |" in page
    assert "guardrail broken: ttft_p99 (margin 5%, change" in page and "in `124K prompt`" in page
    check = run_cli("check", "--root", str(cap))
    assert "decided by" not in check.stderr
    (cap / "improvements" / "01-cap.yaml").write_text(CAP.replace("change: 38}", "change: 12}"))
    check = run_cli("check", "--root", str(cap), "--verbose")
    assert (
        "improvements/01-cap.yaml:9:13: warning[status-contradicts-evidence]: status `rejected` is said to be "
        "decided by `ttft_p99` in result `124K prompt`, stated as +12.0%, "
        f"but its numbers give `worse` (+{change:.1f}%)"
    ) in check.stderr


def test_the_deciding_result_must_exist(cap: Path) -> None:
    (cap / "improvements" / "01-cap.yaml").write_text(CAP.replace("result: 124K prompt, change", "result: 12K, change"))
    check = run_cli("check", "--root", str(cap))
    assert check.returncode == 1
    assert "error[unknown-result]: `decided_by` names result `12K`, not among the record's own results" in (
        check.stderr
    )


# --- part 4: a baseline by name ------------------------------------------------------------------

NAMED = """\
title: Overlap scheduler
tier: 1
status: in-progress
hypothesis: Scheduling the next batch while this one runs hides the CPU's time.
results:
  - label: single stream, short prompts
    metrics: {output_throughput: [9.6, 9.8, 9.7]}
    baseline_from: {result: single stream typed}
  - label: single stream, long prompts
    metrics: {output_throughput: [9.1, 9.2, 9.0]}
    baseline_from: {result: single stream typed}
"""


def test_results_take_the_campaign_baseline_by_name_without_a_load(minimal: Path) -> None:
    path = minimal / "improvements" / "campaign.yaml"
    text = path.read_text()
    # The baseline typed once, with no load: nothing could match it by concurrency.
    typed = "    - label: single stream typed\n      metrics: {output_throughput: [8.1, 8.3, 8.2]}\n"
    path.write_text(text.replace("  results:\n", "  results:\n" + typed, 1))
    (minimal / "improvements" / "01-overlap.yaml").write_text(NAMED)
    check = run_cli("check", "--root", str(minimal))
    assert check.returncode == 0, check.stderr
    entry = analyse(require_project(minimal)).records[0]
    for res in entry.results:
        c = res.comparisons["output_throughput"]
        assert c is not None and (c.baseline_n, c.baseline_mean) == (3, pytest.approx(8.2))
        assert (
            "Compared with the campaign baseline result `single stream typed`, named by `baseline_from`." in res.notes
        )
    (minimal / "improvements" / "01-overlap.yaml").write_text(
        NAMED.replace("{result: single stream typed}", "{result: single strem typed}", 1)
    )
    check = run_cli("check", "--root", str(minimal))
    assert check.returncode == 1
    assert "error[unknown-result]: the campaign baseline has no result labelled `single strem typed`" in check.stderr
    assert "did you mean `single stream typed`?" in check.stderr


# --- part 5: the image and the in-container steps of a change -----------------------------------

UPGRADE = """\
title: Newer transformers
tier: 1
status: adopted
verdict: Kept.
hypothesis: The newer tokenizer is faster.
change:
  image: lmsysorg/sglang:v0.5.9-cu129
  before: [nvidia-smi -pm 1]
  inside: [pip install --upgrade transformers]
  flags: [--enable-fast-tokenizer]
results:
  - label: decode
    concurrency: 1
    reported_change: {output_throughput: 3}
"""


def test_stack_prints_the_image_in_force_and_keeps_host_and_container_steps_apart(minimal: Path) -> None:
    (minimal / "improvements" / "01-upgrade.yaml").write_text(UPGRADE)
    out = run_cli("stack", "--root", str(minimal))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "# The engine runs in the container image lmsysorg/sglang:v0.5.9-cu129 (from 01-upgrade)" in lines
    inside_head = "# Inside the container, before the launch (run them there; this script does not):"
    host, inside = lines.index("# On the host:"), lines.index(inside_head)
    # Piped to bash, the container's step must not run on the host: it is printed as a comment.
    assert host < lines.index("nvidia-smi -pm 1") < inside < lines.index("#   pip install --upgrade transformers")
    assert "pip install --upgrade transformers" not in lines
    data = json.loads(run_cli("stack", "--root", str(minimal), "--format", "json").stdout)
    assert (data["image"], data["image_from"]) == ("lmsysorg/sglang:v0.5.9-cu129", "01-upgrade")
    assert data["inside"] == [{"command": "pip install --upgrade transformers", "record": "01-upgrade"}]
    assert run_cli("build", "--root", str(minimal)).returncode == 0
    page = _page(minimal, "upgrade")
    assert "Container image: `lmsysorg/sglang:v0.5.9-cu129`" in page
    # The page's copyable block prints the steps as `stack` does: the container's as comments.
    steps = lines[host : lines.index("#   pip install --upgrade transformers") + 1]
    assert "\n".join(steps) + "\n" in page
    assert "\npip install --upgrade transformers\n" not in page
    # The report likewise: the image in force, the same steps, and the command's caveats.
    report = run_cli("report", "--root", str(minimal)).stdout
    assert "In the container image `lmsysorg/sglang:v0.5.9-cu129`." in report
    assert "\n".join(steps) + "\n" in report and "\npip install --upgrade transformers\n" not in report
    caveats = [line.removeprefix("# Caveat: ") for line in lines if line.startswith("# Caveat: ")]
    assert caveats and all(f"- Caveat: {c}" in report for c in caveats)


def test_a_variants_image_is_in_its_change(repo: Path) -> None:
    arms = ALL_REJECTED.replace('change: {flags: ["--enable-custom-ar"]}', 'change: {image: "sglang:v0.5.10"}')
    (repo / "improvements" / "03-transport.yaml").write_text(arms)
    assert run_cli("build", "--root", str(repo)).returncode == 0
    assert "| custom | rejected | image sglang:v0.5.10 |" in _page(repo, "transport")


# --- part 6: standing beside the status, and expectations on other terms ------------------------

DRAFTER_BASE = [80.1, 80.4, 79.9, 80.2, 80.0]
DRAFTER = [103.2, 104.1, 102.8, 103.9, 103.5]
ACCEPT = [5.2, 5.4, 5.3, 5.1, 5.5]


def _drafter(standing: str = "recommended", status: str = "adopted") -> str:
    return f"""\
title: EAGLE-3 drafter
tier: 1
status: {status}
standing: {standing}
standing_note: kept for the Dev branch
verdict: Kept.
hypothesis: A drafter that accepts five tokens a step pays for itself.
expected:
  metric: output_throughput
  gain_absolute: {{min: 20, max: 25}}
  thresholds: [{{metric: accept_length, at_least: 5}}]
results:
  - label: decode
    concurrency: 1
    metrics: {{output_throughput: {DRAFTER}, accept_length: {ACCEPT}}}
    baseline: {{output_throughput: {DRAFTER_BASE}}}
"""


def test_standing_is_shown_on_the_summary_and_home(minimal: Path) -> None:
    (minimal / "improvements" / "01-drafter.yaml").write_text(_drafter())
    (minimal / "improvements" / "02-later.yaml").write_text(
        _drafter("latest")
        .replace("EAGLE-3 drafter", "EAGLE-3 drafter, newer")
        .replace("standing_note: kept for the Dev branch\n", "")
    )
    (minimal / "improvements" / "03-open.yaml").write_text(
        _drafter("undecided", "in-progress").replace("standing_note: kept for the Dev branch\n", "")
    )
    build = run_cli("build", "--root", str(minimal))
    assert build.returncode == 0, build.stderr
    home = (minimal / "docs" / "index.md").read_text()
    assert "- Recommended: [01 EAGLE-3 drafter](" in home and "(kept for the Dev branch)" in home
    assert "- Latest (not the recommended): [02 EAGLE-3 drafter, newer](" in home
    assert "- Measured, undecided: [03 EAGLE-3 drafter](" in home
    summary = (minimal / "docs" / "summary.md").read_text()
    assert "adopted</span> recommended" in summary and "in-progress</span> measured, undecided" in summary
    assert (
        '| Status | <span class="badge status-adopted">adopted</span> recommended (kept for the Dev branch) |'
        in _page(minimal, "drafter")
    )


def test_a_standing_that_contradicts_the_status_is_refused(minimal: Path) -> None:
    (minimal / "improvements" / "01-drafter.yaml").write_text(_drafter("recommended", "rejected"))
    check = run_cli("check", "--root", str(minimal))
    assert check.returncode == 1
    assert "`standing: recommended` is for an adopted record; this one is `rejected`" in check.stderr


def test_an_absolute_gain_and_a_threshold_are_checked_against_the_result(minimal: Path) -> None:
    import numpy as np

    (minimal / "improvements" / "01-drafter.yaml").write_text(_drafter())
    entry = analyse(require_project(minimal)).records[0]
    gain, threshold = entry.expectations
    # The interval of the change in tok/s: the ratio's Welch interval on logs, times the baseline mean.
    ci = sps.ttest_ind(np.log(DRAFTER), np.log(DRAFTER_BASE), equal_var=False).confidence_interval(0.95)
    base = float(np.mean(DRAFTER_BASE))
    assert gain.interval == pytest.approx((base * np.expm1(ci.low), base * np.expm1(ci.high)), rel=1e-9)
    assert gain.verdict == ("met" if base * np.expm1(ci.low) >= 20 else "undecided")
    # Acceptance length at least 5: the mean's 95% t interval lies above it.
    t = sps.t.interval(0.95, len(ACCEPT) - 1, loc=np.mean(ACCEPT), scale=sps.sem(ACCEPT))
    assert threshold.interval == pytest.approx(t, rel=1e-9)
    assert threshold.verdict == "met" and t[0] > 5
    assert run_cli("build", "--root", str(minimal)).returncode == 0
    page = _page(minimal, "drafter")
    assert "- Gain in the metric's unit: 20–25" in page
    assert "- Checked: threshold, Speculative accept length at least 5, in result decode: mean 5.3" in page
    (minimal / "improvements" / "01-drafter.yaml").write_text(_drafter().replace("at_least: 5", "at_least: 6"))
    [_, missed] = analyse(require_project(minimal)).records[0].expectations
    assert missed.verdict == "missed"


# --- part 7: one file holding both arms, split on import ------------------------------------------

ARMS_FORMAT = """
import_formats:
  arms:
    metrics: {output_throughput: tok_s}
    settings: {run_name: arm, max_concurrency: conc}
"""
CUDA_GRAPH = [52.1, 51.7, 52.4]
NO_CUDA_GRAPH = [40.2, 40.6, 39.9]


def test_import_splits_a_files_runs_between_the_result_and_its_baseline(minimal: Path) -> None:
    import numpy as np

    campaign = minimal / "improvements" / "campaign.yaml"
    campaign.write_text(campaign.read_text() + ARMS_FORMAT)
    (minimal / "improvements" / "01-graphs.yaml").write_text(
        "title: CUDA graphs\ntier: 1\nstatus: in-progress\nhypothesis: Graphs cut launch overhead.\n"
    )
    rows = [("cuda_graph", v) for v in CUDA_GRAPH] + [("no_cuda_graph", v) for v in NO_CUDA_GRAPH]
    bench = minimal / "both.csv"
    bench.write_text("arm,conc,tok_s\n" + "".join(f"{a},1,{v}\n" for a, v in rows))
    out = run_cli(
        "import",
        str(bench),
        "--root",
        str(minimal),
        "--record",
        "01",
        "--format",
        "arms",
        "--baseline-where",
        "run_name=no_cuda_graph",
    )
    assert out.returncode == 0, out.stderr
    assert "warning" not in out.stderr
    record = (minimal / "improvements" / "01-graphs.yaml").read_text()
    assert record.count("- label:") == 1 and "baseline_run:" in record
    [res] = analyse(require_project(minimal)).records[0].results
    c = res.comparisons["output_throughput"]
    assert c is not None and (c.n, c.baseline_n) == (3, 3)
    p = sps.ttest_ind(np.log(CUDA_GRAPH), np.log(NO_CUDA_GRAPH), equal_var=False).pvalue
    assert c.p_value == pytest.approx(p, rel=1e-9)


def test_a_baseline_value_no_run_has_is_a_usage_error(minimal: Path) -> None:
    campaign = minimal / "improvements" / "campaign.yaml"
    campaign.write_text(campaign.read_text() + ARMS_FORMAT)
    (minimal / "improvements" / "01-graphs.yaml").write_text(
        "title: CUDA graphs\ntier: 1\nstatus: in-progress\nhypothesis: Graphs cut launch overhead.\n"
    )
    bench = minimal / "both.csv"
    bench.write_text("arm,conc,tok_s\ncuda_graph,1,52\nno_cuda_graph,1,40\n")
    out = run_cli(
        "import",
        str(bench),
        "--root",
        str(minimal),
        "--record",
        "01",
        "--format",
        "arms",
        "--baseline-where",
        "run_name=eager",
    )
    assert out.returncode == 2
    assert "no run has run_name `eager` (the values found: `cuda_graph`, `no_cuda_graph`)" in out.stderr


def test_a_numeric_baseline_value_matches_as_a_number(minimal: Path) -> None:
    # The file says `4.0`; the command line's `4` is the same rate.
    campaign = minimal / "improvements" / "campaign.yaml"
    fmt = ARMS_FORMAT.replace("{run_name: arm, max_concurrency: conc}", "{request_rate: rate, max_concurrency: conc}")
    campaign.write_text(campaign.read_text() + fmt)
    (minimal / "improvements" / "01-graphs.yaml").write_text(
        "title: CUDA graphs\ntier: 1\nstatus: in-progress\nhypothesis: Graphs cut launch overhead.\n"
    )
    bench = minimal / "both.csv"
    bench.write_text("rate,conc,tok_s\n" + "".join(f"{r},1,{v}\n" for r in ("8.0", "4.0") for v in (50, 51, 52)))
    args = ["import", str(bench), "--root", str(minimal), "--record", "01", "--format", "arms"]
    out = run_cli(*args, "--baseline-where", "request_rate=4")
    assert out.returncode == 0, out.stderr
    [res] = analyse(require_project(minimal)).records[0].results
    assert res.result.request_rate == 8 and len(res.result.run or ()) == 3 and len(res.result.baseline_run or ()) == 3


# --- part 8: report wording, init's placeholder, remove_flags on a flag not there -----------------

REMOVES = """\
title: No CUDA graph padding
tier: 1
status: proposed
hypothesis: Padding wastes a step at small batches.
change:
  remove_flags: [--cuda-graph-max-bs]
  patches: [{summary: pad to 8}]
"""


def test_the_report_says_a_removal_without_a_stray_separator(minimal: Path) -> None:
    (minimal / "improvements" / "01-padding.yaml").write_text(REMOVES)
    out = run_cli("report", "--root", str(minimal))
    assert out.returncode == 0, out.stderr
    assert "Change: removed `--cuda-graph-max-bs`; patch: pad to 8\n" in out.stdout
    assert "Change:;" not in out.stdout


def test_remove_flags_naming_a_flag_the_command_lacks_is_a_warning(minimal: Path) -> None:
    (minimal / "improvements" / "01-padding.yaml").write_text(REMOVES)
    check = run_cli("check", "--root", str(minimal))
    assert check.returncode == 0
    assert (
        "improvements/01-padding.yaml:6:18: warning[invalid-value]: `remove_flags` names `--cuda-graph-max-bs`, "
        "which the command it applies to does not have"
    ) in check.stderr
    shipped = (minimal / "improvements" / "01-padding.yaml").read_text().replace("--cuda-graph-max-bs", "--tp-size")
    (minimal / "improvements" / "01-padding.yaml").write_text(shipped)
    assert "remove_flags" not in run_cli("check", "--root", str(minimal)).stderr


def test_init_placeholder_goes_when_results_are_imported(tmp_path: Path) -> None:
    from conftest import BENCH

    root = tmp_path / "fresh"
    assert run_cli("init", str(root), cwd=tmp_path, input="").returncode == 0
    campaign = root / "improvements" / "campaign.yaml"
    assert "# results:" in campaign.read_text()
    out = run_cli("import", str(BENCH / "sglang-bench-serving-2024-sweep.jsonl"), "--baseline", "--root", str(root))
    assert out.returncode == 0, out.stderr
    text = campaign.read_text()
    assert "# results:" not in text and "#   - label: concurrency 64" not in text
    assert "  results:\n" in text


def test_an_expected_null_effect_is_read_by_the_equivalence_rule(minimal: Path) -> None:
    control = _drafter().replace("  gain_absolute: {min: 20, max: 25}\n", "  gain: 0\n")
    control = control.replace(f"output_throughput: {DRAFTER}", f"output_throughput: {DRAFTER_BASE}")
    (minimal / "improvements" / "01-drafter.yaml").write_text(control)
    entry = analyse(require_project(minimal)).records[0]
    gain = entry.expectations[0]
    assert entry.primary is not None and entry.primary.comparison.decision == "no-change"
    assert (gain.kind, gain.verdict) == ("gain", "met")
