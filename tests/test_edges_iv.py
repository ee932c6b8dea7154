"""Smaller cases of issue 34: repetitions far apart, a campaign's number width, a malformed URL.

- Two rows of one `bench_one_batch_server` file with the same settings, 1841.95 and 9987.78
  tok/s, were one result "5915 ± 5760 (n=2)" with neither value on the page: now `check` warns
  (`spread-beyond-one-configuration`, as it did for compared results) and the page lists the
  values and how far apart they are.
- `renumber --compact` in a campaign numbered 001-200 wrote 2-digit names beside 3-digit ones.
- (`serve` answering `GET /%00` with 400, not a 500 and a traceback: tests/test_site.py.)
"""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from generator.model.quantity import fmt_value

from conftest import run_cli

ROWS = [
    (1841.95, 1.8731),
    (9987.78, 0.4731),
]


def _row(throughput: float, latency: float) -> str:
    return (
        f'{{"run_name": "default", "batch_size": 64, "input_len": 1024, "output_len": 16, "latency": {latency}, '
        f'"output_throughput": {throughput}, "overall_throughput": 17767.9}}\n'
    )


RECORD = "title: Larger decode batches\ntier: 1\nstatus: in-progress\nhypothesis: A batch of 64 keeps GPUs busy.\n"


@pytest.fixture
def repo(minimal: Path) -> Path:
    (minimal / "improvements" / "01-batch.yaml").write_text(RECORD)
    return minimal


def _import(root: Path, rows: list[tuple[float, float]]):
    path = root / "result.jsonl"
    path.write_text("".join(_row(*r) for r in rows))
    return run_cli("import", "--root", str(root), str(path), "--record", "1")


def test_repetitions_far_apart_are_said_by_check_and_the_page(repo: Path) -> None:
    out = _import(repo, ROWS)
    assert out.returncode == 0, out.stderr
    check = run_cli("check", "--root", str(repo), "--verbose")
    assert check.returncode == 0 and "Traceback" not in check.stderr
    warnings = [line for line in check.stderr.splitlines() if "spread-beyond-one-configuration" in line]
    # One per metric whose repetitions are far apart: throughput and latency here, with the values.
    ratio = max(r[0] for r in ROWS) / min(r[0] for r in ROWS)
    assert f"{ratio:.1f}" == "5.4"
    assert [w.split(": ", 2)[2].split(" in result")[0] for w in warnings] == ["`output_throughput`", "`total_latency`"]
    assert "repetitions 1842, 9988 span 5.4x (max/min), more than one configuration plausibly gives" in warnings[0]
    assert warnings[0].startswith("improvements/01-batch.yaml:6:3: warning[")
    build = run_cli("build", "--quiet", "--root", str(repo))
    assert build.returncode == 0, build.stderr
    [page] = (repo / "docs").rglob("*-01-batch.md")
    mean = statistics.fmean(r[0] for r in ROWS)
    sd = statistics.stdev(r[0] for r in ROWS)
    assert f"{mean:.0f} ± {sd:.0f} (n=2: 1842, 9988; 5.4x apart)" in page.read_text()


def test_repetitions_within_2x_are_one_mean_without_a_warning(repo: Path) -> None:
    out = _import(repo, [(1841.95, 1.8731), (3600.0, 1.2)])
    assert out.returncode == 0
    assert "spread-beyond-one-configuration" not in run_cli("check", "--root", str(repo)).stderr


@pytest.mark.parametrize(
    ("values", "shown"),
    [
        ([1841.95, 9987.78], "5915 ± 5760 (n=2: 1842, 9988; 5.4x apart)"),
        ([10.0, 20.0], "15 ± 7.071 (n=2)"),  # exactly 2x: one configuration's spread may be that
        ([10.0, 20.1], "15.05 ± 7.142 (n=2: 10, 20.1; 2.0x apart)"),
        ([-1.0, 5.0], "2 ± 4.243 (n=2)"),  # a signed metric has no ratio
        ([float(v) for v in range(1, 11)], "5.5 ± 3.028 (n=10: from 1 to 10; 10.0x apart)"),
    ],
)
def test_a_page_lists_repetitions_far_apart(values: list[float], shown: str) -> None:
    assert fmt_value(values) == shown


# --- a campaign's number width ------------------------------------------------------------------


def _numbered(root: Path, names: list[str]) -> None:
    for name in names:
        slug = name.split("-", 1)[1].removesuffix(".yaml")
        (root / "improvements" / name).write_text(f"title: Record {slug}\ntier: 1\nstatus: proposed\nhypothesis: h.\n")


def _names(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "improvements").glob("[0-9]*.yaml"))


def test_compact_keeps_the_campaigns_width(minimal: Path) -> None:
    _numbered(minimal, ["001-first.yaml", "003-second.yaml", "150-third.yaml", "200-fourth.yaml"])
    out = run_cli("renumber", "--compact", "--root", str(minimal))
    assert out.returncode == 0, out.stderr
    assert _names(minimal) == ["001-first.yaml", "002-second.yaml", "003-third.yaml", "004-fourth.yaml"]
    out = run_cli("renumber", "fourth", "7", "--root", str(minimal))
    assert out.returncode == 0, out.stderr
    assert "007-fourth.yaml" in _names(minimal)
    out = run_cli("new", "Fifth record", "--tier", "1", "--root", str(minimal))
    assert out.returncode == 0, out.stderr
    assert "008-fifth-record.yaml" in _names(minimal)


def test_compact_keeps_two_digits_where_the_campaign_has_two(minimal: Path) -> None:
    _numbered(minimal, ["01-first.yaml", "05-second.yaml", "100-third.yaml"])
    assert run_cli("renumber", "--compact", "--root", str(minimal)).returncode == 0
    assert _names(minimal) == ["01-first.yaml", "02-second.yaml", "03-third.yaml"]
