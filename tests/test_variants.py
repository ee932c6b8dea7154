"""Experiments as they are run: variants and sweeps, campaign metrics, reported-only evidence, cut text."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from generator.analysis.campaign import analyse
from generator.base.generated import is_generated
from generator.base.problems import Report
from generator.base.read import parse
from generator.checks.validate import load_project, require_project
from generator.model import variants
from generator.project.cuttext import cut_text_problems
from generator.views.summary import gain_text, summary_rows

from conftest import FIXTURES, run_cli

VARIANTS = FIXTURES / "variants"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(VARIANTS, root)
    (root / "results").mkdir(exist_ok=True)
    return root


def _rows(root: Path) -> dict[str, dict[str, object]]:
    return {row.slug: row for row in summary_rows(analyse(require_project(root)))}


def _page(root: Path, slug: str) -> str:
    return next((root / "docs" / "improvements").glob(f"*-{slug}.md")).read_text()


def test_the_fixtures_check_clean(repo: Path) -> None:
    r = run_cli("check", cwd=repo)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "no errors" in r.stdout and "warning" not in r.stdout


def test_a_sweep_ranks_on_its_retained_value_and_draws_its_chart(repo: Path) -> None:
    row = _rows(repo)["prefill-cap"]
    # 16384 gained more (+19%) but was rejected: the headline is the retained 8192's +18%.
    assert (row.primary_change_percent, row.primary_metric) == (18.0, "output_throughput")
    assert row.variants == "retained 8192; 4 of 5 rejected"
    # The retained arm has no p-value (one baseline run): there is no word for Holm to correct,
    # and the arms without a p-value are not counted (issue 36).
    assert gain_text(row) == (
        # A single shot has no p-value: no best-of-k correction is claimed for it (issue 38).
        "+18.0% output_throughput, n=3 vs 1, unreplicated (single shot: replicate it), "
        "at concurrency 64 (retained 8192; 4 of 5 rejected)"
    )
    assert run_cli("build", cwd=repo).returncode == 0
    page = _page(repo, "prefill-cap")
    assert "Variants: retained 8192; 4 of 5 rejected. Swept: `--chunked-prefill-size`." in page
    assert "| 8192 | 8192 | retained | --chunked-prefill-size 8192 | 1180 ± 10 (n=3) (+18.0%, unreplicated) |" in page
    assert "](plots/sweeps/prefill-cap.svg)" in page
    assert "--chunked-prefill-size 8192\n```" in page  # the launch command is the retained variant's
    svg = (repo / "docs" / "improvements" / "plots" / "sweeps" / "prefill-cap.svg").read_bytes()
    assert is_generated(svg)
    assert b"8192: 1180 (interval 1170 to 1190), retained" in svg


def test_a_multi_arm_record_never_ranks_its_diagnostic_or_rejected_arms(repo: Path) -> None:
    row = _rows(repo)["allreduce-arms"]
    # The diagnostic pair's 4500x drop is larger; only the retained arm gives the headline.
    # Its own primary metric (`expected.metric`), lower is better: the change is a drop.
    assert (row.primary_change_percent, row.primary_metric) == (-99.1, "allreduce_p99")
    assert row.variants == "retained pinned buffers; 2 of 3 rejected"
    record = require_project(repo).by_slug()["allreduce-arms"].record
    change = variants.effective_change(record)
    assert change is not None and change.env == {"NCCL_BUFFSIZE": "16777216"}


def test_a_campaign_metric_in_microseconds_converted_once_and_shown_as_a_ratio(repo: Path) -> None:
    analysis = analyse(require_project(repo))
    rec = analysis.by_slug["allreduce-arms"]
    [resolved] = analysis.record(rec).variant_results[2]
    # Written in ms with `units`, stored in the metric's own µs.
    assert resolved.metrics["allreduce_p99"] == pytest.approx(42.5)
    c = resolved.comparisons["allreduce_p99"]
    assert c is not None and c.gain_percent is not None and c.gain_percent > 0  # lower is better: a drop is a gain
    assert run_cli("build", cwd=repo).returncode == 0
    page = _page(repo, "allreduce-arms")
    assert "All-reduce latency (P99) (µs, lower is better)" in page
    assert "42.5 (-99.1%, unreplicated, 106x lower)" in page
    assert "- Hardware: 4x NVIDIA RTX PRO 6000 Blackwell Server Edition" in page
    assert "No launch command is shown: this record's command was not recorded" in page
    assert "```bash" not in page
    assert "-1.2% as reported" in page


def test_a_rejection_on_reported_evidence_only(repo: Path) -> None:
    row = _rows(repo)["reported-only"]
    assert row.status == "rejected" and row.primary_change_percent is None
    assert row.primary_decision == "reported"
    assert run_cli("build", cwd=repo).returncode == 0
    page = _page(repo, "reported-only")
    assert "| Output token throughput (tok/s) | +0.4% |" in page
    assert "- Finding, as reported: no measurable change" in page


def _problems(root: Path) -> list[str]:
    report = Report()
    load_project(root, report)
    return [p.text() for p in report.problems]


def test_an_unknown_metric_suggests_the_campaigns_own(repo: Path) -> None:
    path = repo / "improvements" / "12-allreduce-arms.yaml"
    path.write_text(path.read_text().replace("{allreduce_p99: 0.0425,", "{allreduce_p9: 0.0425,"))
    [problem] = [p for p in _problems(repo) if "unknown-metric" in p]
    assert "unknown metric `allreduce_p9`" in problem and "allreduce_p99" in problem


def test_a_campaign_metric_may_not_redefine_a_built_in_one(repo: Path) -> None:
    path = repo / "improvements" / "campaign.yaml"
    path.write_text(path.read_text().replace("  spike_rate:\n", "  ttft_max:\n"))
    assert any("invalid-value" in p and "ttft_max" in p and "built-in" in p for p in _problems(repo))


def test_a_unit_that_does_not_convert_is_an_error(repo: Path) -> None:
    path = repo / "improvements" / "12-allreduce-arms.yaml"
    path.write_text(path.read_text().replace("units: {allreduce_p99: ms}", "units: {allreduce_p99: tok/s}"))
    assert any("cannot be converted" in p for p in _problems(repo))


def test_min_and_max_are_latency_statistics(minimal: Path) -> None:
    (minimal / "improvements" / "01-max.yaml").write_text(
        "title: Max\ntier: 1\nstatus: in-progress\nhypothesis: H\nresults:\n"
        "  - label: c1\n    metrics: {ttft_max: 2.0, itl_min: 1}\n    baseline: {ttft_max: 4.0, itl_min: 1}\n"
        "    units: {ttft_max: s}\nexpected: {metric: ttft_max}\n"
    )
    [row] = summary_rows(analyse(require_project(minimal)))
    assert (row.primary_change_percent, row.primary_metric) == (-50.0, "ttft_max")


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ("outcome: rejected\n    change: {flags: [--chunked-prefill-size 4096]}", None),
        ("outcome: retained\n    change: {flags: [--chunked-prefill-size 4096]}", "invalid-value"),
    ],
)
def test_one_retained_variant_at_most(repo: Path, change: str, code: str | None) -> None:
    path = repo / "improvements" / "11-prefill-cap.yaml"
    text = path.read_text()
    old = "outcome: rejected\n    change: {flags: [--chunked-prefill-size 4096]}"
    path.write_text(text.replace(old, change))
    found = [p for p in _problems(repo) if "retained" in p]
    assert bool(found) == (code is not None)
    if code:
        assert f"error[{code}]" in found[0]


def test_a_sweep_needs_a_value_per_variant(repo: Path) -> None:
    path = repo / "improvements" / "11-prefill-cap.yaml"
    path.write_text(path.read_text().replace("    value: 32768\n", ""))
    assert any("missing-field" in p and "needs `value`" in p for p in _problems(repo))


def test_adopted_with_variants_needs_a_retained_one(repo: Path) -> None:
    path = repo / "improvements" / "11-prefill-cap.yaml"
    path.write_text(path.read_text().replace("outcome: retained", "outcome: rejected"))
    assert any("status-rule" in p and "retained" in p for p in _problems(repo))


@pytest.mark.parametrize(
    ("text", "warned"),
    [
        ("note: issue #8 fixed it\n", True),
        # A tab before the `#` starts a comment too.
        ("note: issue\t#8 fixed it\n", True),
        ('note: "issue #8 fixed it"\n', False),
        ("note: >-\n  issue #8 fixed it\n", False),
        ("tier: 1  # a comment after a number\n", False),
        ("caveats:\n  - one line\n    and the next # cut\n", True),
        ("note: # only a comment\n", False),
    ],
)
def test_cut_text(text: str, warned: bool) -> None:
    data, pos = parse(text)
    problems = cut_text_problems(text, data, pos, "x.yaml")
    assert bool(problems) == warned
    assert all(p.severity == "warning" and p.code == "cut-text" for p in problems)


def test_a_variants_imported_run_is_checked_like_a_records(repo: Path) -> None:
    path = repo / "improvements" / "11-prefill-cap.yaml"
    text = path.read_text()
    path.write_text(
        text.replace(
            "verdict:",
            "  - label: imported\n    value: 65536\n    outcome: rejected\n"
            "    results:\n      - label: run\n        run: sglang-serving-rr4-0000000000\nverdict:",
        )
    )
    line = len(text.splitlines()) + 5
    assert any(
        p.startswith(f"improvements/11-prefill-cap.yaml:{line}:14: error[unknown-run]") for p in _problems(repo)
    ), _problems(repo)


def test_the_editors_schema_knows_the_campaigns_own_metrics() -> None:
    import re

    from generator.model.schema import metric_name_pattern

    assert re.fullmatch(metric_name_pattern(), "ttft_max")
    assert not re.fullmatch(metric_name_pattern(), "allreduce_p99")
    assert re.fullmatch(metric_name_pattern(["allreduce_p99"]), "allreduce_p99")
