"""The tier-ranked summary: ranking, filters and every output format."""

from __future__ import annotations

import csv
import io
import json
import math
import shutil
from pathlib import Path

import pytest

from generator.analysis.campaign import analyse
from generator.checks.validate import require_project
from generator.views.summary import COLUMNS, Row, summary_rows

from conftest import FIXTURES, run_cli

EXTRA = {
    # Tier 1 with a bigger gain than 01's +13.6%: ranks first in its tier.
    "05-big-win.yaml": """\
title: Big win
tier: 1
status: adopted
tags: [throughput]
hypothesis: Much faster.
verdict: Adopted.
results:
  - label: c64
    concurrency: 64
    metrics: {output_throughput: 1250}
""",
    # Tier 1 with no result: after every tier 1 record that has a gain, despite its number.
    "00-unmeasured.yaml": """\
title: Unmeasured
tier: 1
status: proposed
hypothesis: Not tried yet.
""",
    # Tier 1 with a loss, rejected: after every open and adopted record of its tier, measured or not.
    "06-a-loss.yaml": """\
title: A loss
tier: 1
status: rejected
hypothesis: Slower after all.
verdict: Rejected.
results:
  - label: c64
    concurrency: 64
    metrics: {output_throughput: 900, ttft_p99: 300}
""",
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(FIXTURES / "render", root)
    for name, text in EXTRA.items():
        (root / "improvements" / name).write_text(text)
    return root


def test_ranked_by_tier_then_decision_then_number(repo: Path) -> None:
    rows = summary_rows(analyse(require_project(repo)))
    assert [(r.number, r.tier) for r in rows] == [(5, 1), (1, 1), (0, 1), (6, 1), (3, 2), (2, 2), (4, 3)]
    big = rows[0]
    assert (big.primary_change_percent, big.primary_metric, big.primary_concurrency) == (
        25.0,
        "output_throughput",
        64,
    )
    assert (big.primary_decision, big.primary_n, big.primary_baseline_n) == ("unreplicated", 1, 1)
    loss = rows[3]
    # output_throughput 900 against the campaign baseline's 1000: -10%, one run a side. Its
    # ttft_p99 (+20%) is shown on the page, never ranked.
    assert (loss.primary_change_percent, loss.primary_metric, loss.primary_decision) == (
        -10.0,
        "output_throughput",
        "unreplicated",
    )
    # 03's primary evidence is its repeated result (n=3 vs 2), inconclusive: after tier 2's nothing.
    assert rows[4].primary_decision == "inconclusive" and rows[5].primary_decision is None


def test_open_blockers_count_shared_ones(repo: Path) -> None:
    rows = {r.slug: r for r in summary_rows(analyse(require_project(repo)))}
    assert rows["uses-ref"].open_blockers == 1
    assert rows["uses-ref"].open_blocker_titles == ["Kernel crashes on <small> GPUs"]
    # The resolved blocker of 02 is not open.
    assert rows["shared-blocker"].open_blockers == 1
    assert rows["fast-flag"].open_blockers == 0


def test_json_is_a_list_of_objects_with_the_columns(repo: Path) -> None:
    result = run_cli("summary", "--root", str(repo), "--format", "json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert isinstance(data, list) and len(data) == 7
    assert all(list(obj) == list(COLUMNS) for obj in data)
    assert data[0]["slug"] == "big-win" and data[-1]["primary_decision"] is None


def test_csv_parses(repo: Path) -> None:
    result = run_cli("summary", "--root", str(repo), "--format", "csv")
    assert result.returncode == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert list(rows[0]) == list(COLUMNS)
    assert [r["slug"] for r in rows][:2] == ["big-win", "fast-flag"]
    assert rows[0]["primary_change_percent"] == "25.0" and rows[0]["primary_decision"] == "unreplicated"
    shared = next(r for r in rows if r["slug"] == "shared-blocker")
    assert shared["open_blocker_titles"] == "Kernel crashes on <small> GPUs"


def test_markdown_table(repo: Path) -> None:
    result = run_cli("summary", "--root", str(repo), "--format", "markdown")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("| #") and "Primary metric" in lines[0]
    assert set(lines[1]) <= {"|", "-", ":", " "}
    assert len(lines) == 2 + 7
    assert "+25.0% output_throughput, n=1 vs 1, unreplicated (single shot: replicate it), at concurrency 64" in lines[2]


def test_terminal_table_is_the_default(repo: Path) -> None:
    result = run_cli("summary", "--root", str(repo))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split()[:3] == ["#", "Title", "Tier"]
    assert lines[2].startswith("05") and "not measured" in result.stdout


@pytest.mark.parametrize(
    ("args", "slugs"),
    [
        (["--tier", "2"], ["uses-ref", "shared-blocker"]),
        (["--tier", "1", "--tier", "3"], ["big-win", "fast-flag", "unmeasured", "a-loss", "old-idea"]),
        (["--status", "blocked"], ["shared-blocker"]),
        (["--status", "adopted", "--status", "superseded"], ["big-win", "fast-flag", "old-idea"]),
        (["--tag", "kernels"], ["uses-ref", "shared-blocker"]),
        (["--tag", "throughput", "--tier", "2"], ["uses-ref"]),
        (["--tag", "no-such-tag"], []),
    ],
)
def test_filters(repo: Path, args: list[str], slugs: list[str]) -> None:
    result = run_cli("summary", "--root", str(repo), "--format", "json", *args)
    assert result.returncode == 0, result.stderr
    assert [r["slug"] for r in json.loads(result.stdout)] == slugs


def test_bad_filter_is_a_usage_error(repo: Path) -> None:
    assert run_cli("summary", "--root", str(repo), "--status", "done").returncode == 2
    assert run_cli("summary", "--root", str(repo), "--tier", "4").returncode == 2


def test_invalid_campaign_exits_1(repo: Path) -> None:
    (repo / "improvements" / "07-broken.yaml").write_text("title: [\n")
    result = run_cli("summary", "--root", str(repo))
    assert result.returncode == 1
    assert "07-broken.yaml:" in result.stderr and "Traceback" not in result.stderr


def test_the_site_summary_page_is_the_same_table(repo: Path) -> None:
    from generator.output.render import render_files

    page = render_files(analyse(require_project(repo)))["docs/summary.md"]
    rows = [line for line in page.splitlines() if line.startswith("| 0")]
    assert [line.split("|")[1].strip() for line in rows] == ["05", "01", "00", "06", "03", "02", "04"]
    assert "[Big win](improvements/testseries-05-big-win.md)" in rows[0]


def test_no_matching_record(repo: Path) -> None:
    table = run_cli("summary", "--root", str(repo), "--tag", "no-such-tag")
    markdown_out = run_cli("summary", "--root", str(repo), "--tag", "no-such-tag", "--format", "markdown")
    assert table.stdout == "no records match\n"
    assert len(markdown_out.stdout.splitlines()) == 2 and "Primary metric" in markdown_out.stdout


def test_a_pipe_in_a_title_stays_in_its_markdown_cell(repo: Path) -> None:
    path = repo / "improvements" / "04-old-idea.yaml"
    path.write_text(path.read_text().replace("title: Old idea", "title: Old | idea"))
    lines = run_cli("summary", "--root", str(repo), "--format", "markdown").stdout.splitlines()
    row = next(line for line in lines if "Old" in line)
    # The site's cell escaping: an entity, which every markdown flavour shows as a pipe.
    assert "Old &#124; idea" in row
    assert len(row.split("|")) == len(lines[0].split("|"))


NOISY = {
    # +6.9% (geometric means; +8.3% arithmetic), but two repetitions a side that scatter widely:
    # inconclusive. Not settled, like the unreplicated +2%: one group by point change, so it
    # ranks first (never above a replicated better, which the tests of decisions pin).
    "07-noisy.yaml": """\
title: Noisy
tier: 1
status: in-progress
hypothesis: Maybe faster.
results:
  - label: c8
    concurrency: 8
    metrics: {output_throughput: [100, 160]}
    baseline: {output_throughput: [100, 140]}
""",
    "08-small-real.yaml": """\
title: Small real
tier: 1
status: in-progress
hypothesis: A little faster.
results:
  - label: c8
    concurrency: 8
    metrics: {output_throughput: 102}
    baseline: {output_throughput: 100}
""",
}


@pytest.fixture
def noisy(minimal: Path) -> Path:
    for name, text in NOISY.items():
        (minimal / "improvements" / name).write_text(text)
    return minimal


def test_single_shots_and_inconclusive_rank_together_by_change_in_every_format(noisy: Path) -> None:
    rows = summary_rows(analyse(require_project(noisy)))
    assert [(r.slug, r.primary_change_percent, r.primary_decision) for r in rows] == [
        ("noisy", 6.9, "inconclusive"),
        ("small-real", 2.0, "unreplicated"),
    ]
    data = json.loads(run_cli("summary", "--root", str(noisy), "--format", "json").stdout)
    assert [(d["slug"], d["primary_decision"]) for d in data] == [
        ("noisy", "inconclusive"),
        ("small-real", "unreplicated"),
    ]
    assert (data[0]["primary_n"], data[0]["primary_baseline_n"]) == (2, 2)
    low, high = data[0]["primary_ci_low_percent"], data[0]["primary_ci_high_percent"]
    assert low is not None and high is not None and low < 0 < high
    csv_rows = list(csv.DictReader(io.StringIO(run_cli("summary", "--root", str(noisy), "--format", "csv").stdout)))
    assert [r["primary_decision"] for r in csv_rows] == ["inconclusive", "unreplicated"]
    assert csv_rows[1]["primary_ci_low_percent"] == ""  # no interval for a single shot
    markdown = run_cli("summary", "--root", str(noisy), "--format", "markdown").stdout
    assert (
        f"| +6.9% output_throughput (interval {low:+.1f}% to {high:+.1f}%), n=2 vs 2, inconclusive, at concurrency 8 |"
        in markdown
    )
    single = "| +2.0% output_throughput, n=1 vs 1, unreplicated (single shot: replicate it), at concurrency 8 "
    assert single in markdown
    export = json.loads(run_cli("export", "--root", str(noisy)).stdout)
    primary = {r["slug"]: r["primary"] for r in export["records"]}
    keys = ("metric", "result", "change_percent", "ci_low_percent", "ci_high_percent", "decision")
    assert {k: primary["noisy"][k] for k in keys} == {
        "metric": "output_throughput",
        "result": "c8",
        "change_percent": pytest.approx((math.sqrt(160 / 140) - 1) * 100),
        "ci_low_percent": pytest.approx(low, abs=0.05),
        "ci_high_percent": pytest.approx(high, abs=0.05),
        "decision": "inconclusive",
    }
    r = run_cli("build", "-q", "--root", str(noisy))
    assert r.returncode == 0, r.stderr
    summary_page = next((noisy / "docs").glob("*summary*.md")).read_text()
    row = next(line for line in summary_page.splitlines() if "**inconclusive**" in line)
    assert "n 2 / 2 · output_throughput, concurrency 8" in row
    gains = (noisy / "docs" / "plots" / "summary-gains.svg").read_text()
    # An inconclusive change is drawn as such, in words beside its value.
    assert "+6.9% inconclusive" in gains


def test_only_the_primary_metric_ranks(minimal: Path) -> None:
    # ttft_p99 improved 5% (one run a side), output_throughput is inconclusive: the row reports
    # output_throughput, the campaign's primary metric; the latency is shown on the page only.
    (minimal / "improvements" / "01-mixed.yaml").write_text(
        "title: Mixed\ntier: 1\nstatus: in-progress\nhypothesis: H\nresults:\n"
        "  - label: c8\n    concurrency: 8\n"
        "    metrics: {output_throughput: [100, 160], ttft_p99: 95}\n"
        "    baseline: {output_throughput: [100, 140], ttft_p99: 100}\n"
    )
    [row] = summary_rows(analyse(require_project(minimal)))
    assert (row.primary_metric, row.primary_decision) == ("output_throughput", "inconclusive")


def _pandas_csv(rows: list[Row], columns: tuple[str, ...]) -> str:
    """summary.csv as pandas wrote it before the csv module did (the same steps, pandas' writer)."""
    import pandas as pd

    from generator.base.csvsafe import formula_safe
    from generator.views.summary import SLO_COLUMN

    frame = pd.DataFrame([{k: getattr(row, k) for k in columns} for row in rows], columns=list(columns), dtype=object)
    frame["open_blocker_titles"] = frame["open_blocker_titles"].map("; ".join)
    frame["broken_guardrails"] = frame["broken_guardrails"].map("; ".join)
    for column in ("best_of", "best_of_tested", "holm_p"):
        frame[column] = frame[column].map(lambda v: "" if v is None else str(v))
    frame["primary_spread_unknown"] = frame["primary_spread_unknown"].map(lambda v: v if v is None else str(v).lower())
    for column in ("design", "regressions", "unshown_guardrails", "variant_reasons"):
        frame[column] = frame[column].map("; ".join)
    for column in ("primary_change_percent", "primary_ci_low_percent", "primary_ci_high_percent"):
        frame[column] = frame[column].map(lambda v: "" if v is None else f"{v:.1f}")
    frame["in_stack"] = frame["in_stack"].map(lambda v: str(v).lower())
    slo_text = (SLO_COLUMN,) if SLO_COLUMN in columns else ()
    text_columns = ("slug", "title", "status", "primary_metric", "primary_result", "open_blocker_titles", "standing")
    extra = ("variant_decisions", "variant_reasons", "design", "regressions", "own_load", "unranked")
    for column in (*text_columns, "reported", "variants", *extra, *slo_text):
        frame[column] = frame[column].map(lambda v: formula_safe(v) if isinstance(v, str) else v)
    return str(frame.to_csv(index=False, lineterminator="\n"))


@pytest.mark.parametrize("campaign", ["shipped", "h200", "render", "hostile"])
def test_csv_is_the_bytes_pandas_wrote(campaign: str, tmp_path: Path) -> None:
    from generator.views.summary import SLO_COLUMN, format_rows

    from conftest import REPO

    roots = {"shipped": REPO, "h200": REPO / "examples" / "h200-decode", "render": FIXTURES / "render"}
    if campaign == "hostile":
        # Formula-like titles, quotes, commas, newlines and a missing gain, in one campaign.
        root = tmp_path / "repo"
        shutil.copytree(FIXTURES / "render", root)
        first = sorted((root / "improvements").glob("0*.yaml"))[0]
        text = first.read_text().replace("title:", 'title: "=cmd|\' /C calc\'!A0, \\"quoted\\"\\nline" #', 1)
        first.write_text(text)
    else:
        root = roots[campaign]
    rows = summary_rows(analyse(require_project(root)))
    columns = (*COLUMNS, SLO_COLUMN) if rows and rows[0].capacity_under_slo is not None else COLUMNS
    assert format_rows(rows, "csv") == _pandas_csv(rows, columns)
