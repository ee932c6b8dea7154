"""`improvements export`: every record with its computed summary, deterministic, also on the site."""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path

import pytest

from generator.analysis.campaign import analyse
from generator.checks.validate import require_project
from generator.output.export import FORMAT, write_site_export
from generator.project.load import record_files

from conftest import REPO, run_cli


def test_export_has_every_record_with_the_summarys_numbers(campaign: Path) -> None:
    run = run_cli("export", "--format", "json", cwd=campaign)
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    assert (data["format"], data["version"]) == (FORMAT, 2)
    files, _ = record_files(campaign / "improvements")
    assert [(r["number"], r["slug"]) for r in data["records"]] == [(n, s) for _p, n, s in files]
    # The summary command, a separate path, agrees on rank, primary evidence and open blockers.
    rows = json.loads(run_cli("summary", "--format", "json", cwd=campaign).stdout)
    by_slug = {r["slug"]: r for r in data["records"]}
    for rank, row in enumerate(rows, 1):
        summary = by_slug[row["slug"]]["summary"]
        assert summary["rank"] == rank
        assert summary["open_blockers"] == row["open_blockers"]
        assert summary["open_blocker_titles"] == row["open_blocker_titles"]
        primary = by_slug[row["slug"]]["primary"]
        assert (primary["metric"], primary["result"], primary["decision"]) == (
            row["primary_metric"],
            row["primary_result"],
            row["primary_decision"],
        )
    for rec in data["records"]:
        assert (campaign / rec["file"]).is_file()
        assert rec["page"].startswith("docs/improvements/glb5improvement-")
        assert rec["record"]["title"] and len(rec["results"]) == len(rec["record"]["results"])


def test_export_says_which_installation_computed_it(minimal: Path) -> None:
    # Provenance of the numbers: the installed version (from git), never a time, so two exports
    # from one installation are the same bytes; the pages do not carry it (they are committed).
    data = json.loads(run_cli("export", cwd=minimal).stdout)
    assert data["generator"] == {"name": "improvements", "version": version("improvements")}
    assert version("improvements") not in "".join(p.read_text() for p in (REPO / "docs").rglob("*.md"))
    # Nor does the committed docs/records.json: the version changes with every commit, so a clone
    # would find it stale. It holds the same export otherwise.
    assert run_cli("build", cwd=minimal).returncode == 0
    committed = json.loads((minimal / "docs" / "records.json").read_text())
    assert committed["generator"] == {"name": "improvements"}
    assert {**committed, "generator": data["generator"]} == data


def test_export_computes_comparisons_from_typed_numbers(minimal: Path) -> None:
    (minimal / "improvements" / "01-x.yaml").write_text(
        "title: X\ntier: 1\nstatus: in-progress\nhypothesis: H\n"
        "results:\n  - label: a\n    concurrency: 4\n"
        "    metrics: {output_throughput: 110, ttft_p99: 90}\n"
        "    baseline: {output_throughput: 100, ttft_p99: 100}\n"
    )
    data = json.loads(run_cli("export", cwd=minimal).stdout)
    (rec,) = data["records"]
    comparisons = rec["results"][0]["comparisons"]
    tp = comparisons["output_throughput"]
    assert round(tp["change_percent"], 6) == 10.0
    assert (tp["n"], tp["baseline_n"], tp["test"], tp["decision"], tp["p_value"]) == (1, 1, None, "unreplicated", None)
    assert tp["ci_low_percent"] is None and tp["ci_high_percent"] is None
    # The change keeps the number's sign: a latency that went down is negative.
    assert round(comparisons["ttft_p99"]["change_percent"], 6) == -10.0
    keys = ("metric", "result", "change_percent", "ci_low_percent", "ci_high_percent", "decision", "group")
    assert {k: rec["primary"][k] for k in keys} == {
        "metric": "output_throughput",
        "result": "a",
        "change_percent": tp["change_percent"],
        "ci_low_percent": None,
        "ci_high_percent": None,
        "decision": "unreplicated",
        "group": "not settled",
    }
    assert "best_gain" not in rec["summary"]


@pytest.mark.slow
def test_export_is_deterministic_across_locale_and_time_zone(campaign: Path, tmp_path: Path) -> None:
    one = run_cli("export", cwd=campaign, env={"TZ": "Pacific/Kiritimati", "LC_ALL": "C"}).stdout
    two = run_cli("export", cwd=campaign, env={"TZ": "America/Adak", "LC_ALL": "C.UTF-8", "PYTHONHASHSEED": "7"}).stdout
    assert one == two
    out = tmp_path / "out" / "records.json"
    assert run_cli("export", "--output", str(out), cwd=campaign).returncode == 0
    assert out.read_text() == one
    assert json.loads(one) == json.loads(json.dumps(json.loads(one), sort_keys=True))


def test_site_export_writes_records_json_at_the_root(tmp_path: Path) -> None:
    project = require_project(REPO)
    path = write_site_export(analyse(project), tmp_path / "site")
    assert path == tmp_path / "site" / "records.json"
    assert path.read_text() == run_cli("export").stdout


def test_invalid_campaign_exports_nothing(campaign: Path, tmp_path: Path) -> None:
    first = next((campaign / "improvements").glob("01-*.yaml"))
    first.write_text(first.read_text().replace("tier: 1", "tier: one"))
    out = tmp_path / "records.json"
    run = run_cli("export", "--output", str(out), cwd=campaign)
    assert run.returncode == 1 and "01-piecewise-cuda-graphs.yaml:3:7: error[invalid-value]" in run.stderr
    assert not out.exists()


def _one_dumps(analysis: object) -> str:
    """The export as one `json.dumps` of the whole document: what `dumps` puts together by record."""
    from generator.base import jsonsafe
    from generator.output.export import export_data

    data, places = jsonsafe.finite(export_data(analysis, versioned=False))  # type: ignore[arg-type]
    if places:
        data["non_finite"] = sorted(places)
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


@pytest.mark.parametrize("case", ["shipped", "h200", "non-finite", "runs", "empty"])
def test_the_export_put_together_by_record_is_one_dumps_of_the_whole(case: str, tmp_path: Path) -> None:
    import shutil

    from generator.base.incremental import BuildCache
    from generator.output.export import dumps

    from conftest import BENCH, copy_campaign

    if case == "h200":
        root = REPO / "examples" / "h200-decode"
    elif case == "shipped":
        root = REPO
    else:
        root = copy_campaign(tmp_path / "c")
        campaign = root / "improvements" / "campaign.yaml"
        if case == "non-finite":
            text = campaign.read_text()
            campaign.write_text(text.replace("\n  details:\n", "\n  details:\n    sm_clock: .nan\n    lim: .inf\n", 1))
        if case == "runs":
            # An imported run whose request rate is unlimited: an infinite number inside a record.
            bench = BENCH / "vllm-benchmark-serving-legacy.json"
            assert run_cli("import", str(bench), "--record", "01", cwd=root).returncode == 0
        if case == "empty":
            for path in (root / "improvements").glob("[0-9]*.yaml"):
                path.unlink()
            shutil.rmtree(root / "results")
            (root / "results").mkdir()
    analysis = analyse(require_project(root))
    expected = _one_dumps(analysis)
    assert dumps(analysis, versioned=False) == expected
    # Kept by entry in a build cache, and read back from it: the same bytes again.
    cache = BuildCache(tmp_path / "cached")
    assert dumps(analysis, versioned=False, build_cache=cache) == expected
    assert dumps(analysis, versioned=False, build_cache=cache) == expected
    if case == "non-finite":
        assert json.loads(expected)["non_finite"][0].startswith("campaign.")


def test_a_non_finite_number_inside_a_record_is_placed_by_its_index(monkeypatch: pytest.MonkeyPatch) -> None:
    # No record field can hold one today; the place would still be `records[i]....`.
    from generator.output import export

    analysis = analyse(require_project(REPO))
    real = export._record_entry
    second = sorted(analysis.project.records, key=lambda r: (r.number, r.slug))[1]

    def with_nan(a: object, rec: object, ranked: object, rank: int) -> dict[str, object]:
        data = real(a, rec, ranked, rank)  # type: ignore[arg-type]
        if rec is second:
            data["record"]["odd"] = [1.0, float("nan"), {"x": float("-inf")}]
        return data

    # Every entry, in the document and on its own, is made by `_record_entry`.
    monkeypatch.setattr(export, "_record_entry", with_nan)
    expected = _one_dumps(analysis)
    assert export.dumps(analysis, versioned=False) == expected
    assert json.loads(expected)["non_finite"][-2:] == ["records[1].record.odd[1]", "records[1].record.odd[2].x"]


def _pandas_samples_csv(rows: list[tuple[object, ...]]) -> str:
    """The samples as pandas wrote them before the csv module did (pandas is a test extra only)."""
    import pandas as pd

    from generator.output.export import SAMPLE_COLUMNS

    frame = pd.DataFrame(rows, columns=list(SAMPLE_COLUMNS))
    frame["concurrency"] = frame["concurrency"].astype("Int64")
    return str(frame.to_csv(index=False, lineterminator="\n"))


@pytest.mark.parametrize("root", [REPO / "examples" / "h200-decode"], ids=["h200"])
def test_samples_csv_is_the_bytes_pandas_wrote(root: Path) -> None:
    from generator.output.export import sample_rows, samples_csv

    analysis = analyse(require_project(root))
    rows = sample_rows(analysis)
    assert rows, "no samples to compare"
    assert samples_csv(analysis) == _pandas_samples_csv(rows)


@pytest.mark.parametrize(
    "values",
    [[5, 7], [5, 7.25], [0.1, 1e-05, 1e16, 3], []],
    ids=["whole", "mixed", "tiny-and-huge", "none"],
)
def test_sample_values_are_written_as_pandas_wrote_them(values: list[float]) -> None:
    from generator.output.export import sample_table_csv

    rows = [("r", 'a "b", c', "record", "ttft", k, v, [16, None][k % 2], "") for k, v in enumerate(values, 1)]
    assert sample_table_csv(rows) == _pandas_samples_csv(rows)
