"""`improvements check`: one real file per kind of problem, run through the CLI as users do."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES, REPO, run_cli

CASES = FIXTURES / "check"

# fixture file -> (code, line, col, a fragment of the message or hint)
EXPECTED: dict[str, tuple[str, int, int, str]] = {
    "90-unknown-key.yaml": ("unknown-key", 5, 1, "did you mean `hypothesis`?"),
    "90-missing-field.yaml": ("missing-field", 1, 1, "required field `hypothesis` is missing"),
    "90-invalid-tier.yaml": ("invalid-value", 2, 7, "expected 1, 2 or 3"),
    "90-invalid-status.yaml": ("invalid-value", 3, 9, "did you mean `adopted`?"),
    "90-duplicate-key.yaml": ("duplicate-key", 5, 1, "key `tier` is already set at line 2"),
    "90-list-root.yaml": ("wrong-type", 1, 1, "the document must be a mapping, not a list"),
    "90-empty.yaml": ("empty-file", 1, 1, "holds no YAML document"),
    "90-tab.yaml": ("yaml-tab", 5, 1, "tab"),
    "90-malformed.yaml": ("yaml-syntax", 4, 11, "expected ',' or ']'"),
    "90-wrong-type.yaml": ("wrong-type", 5, 7, "`tags` must be a list, not the text `blocked-on-pcie`"),
    "90-not-utf8.yaml": ("not-utf8", 1, 11, "byte 0xe9 is not valid UTF-8"),
    "90-unknown-metric.yaml": ("unknown-metric", 9, 7, "did you mean `output_throughput`?"),
    "90-status-rule.yaml": ("status-rule", 3, 9, "needs a `verdict` and at least one result"),
    "90-unknown-slug.yaml": ("unknown-slug", 7, 5, "no record has slug `no-such-record`"),
    "90-path-outside.yaml": ("path-outside", 8, 13, "leaves results/"),
    "90-missing-source.yaml": ("missing-source", 8, 13, "does not exist"),
    "90-duplicate-label.yaml": ("duplicate-label", 8, 12, "label `c1` is already used"),
    "90-alias-bomb.yaml": ("yaml-alias-limit", 5, 4, "more than 100,000 nodes"),
}


def _campaign_with(root: Path, *records: Path) -> Path:
    (root / "improvements").mkdir(parents=True)
    (root / "results").mkdir()
    # The whole shipped campaign, so its cross-references resolve and only the fixture is wrong.
    for shipped in (REPO / "improvements").glob("*.yaml"):
        shutil.copy(shipped, root / "improvements")
    for record in records:
        shutil.copy(record, root / "improvements" / record.name)
    return root


def test_every_fixture_has_an_expectation() -> None:
    assert sorted(p.name for p in CASES.glob("*.yaml")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_problem_position_and_code(tmp_path: Path, name: str) -> None:
    code, line, col, fragment = EXPECTED[name]
    root = _campaign_with(tmp_path / "c", CASES / name)
    res = run_cli("check", cwd=root)
    assert res.returncode == 1, res.stderr
    assert "Traceback" not in res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith("improvements/") and ": error[" in ln]
    assert lines, res.stderr
    first = lines[0]
    assert first.startswith(f"improvements/{name}:{line}:{col}: error[{code}]: "), first
    assert fragment in first, first


def test_shipped_campaign_is_clean() -> None:
    res = run_cli("check", cwd=REPO)
    assert res.returncode == 0, res.stderr
    assert "no errors" in res.stdout


def test_all_problems_in_all_files_in_one_run(tmp_path: Path) -> None:
    root = _campaign_with(tmp_path / "c", *sorted(CASES.glob("*.yaml")))
    res = run_cli("check", "--format", "json", cwd=root)
    assert res.returncode == 1
    found = {(p["path"].split("/")[-1], p["code"]) for p in res.json()}  # type: ignore[union-attr]
    for name, (code, *_rest) in EXPECTED.items():
        assert (name, code) in found, (name, code)


def test_huge_file_is_refused(tmp_path: Path) -> None:
    root = _campaign_with(tmp_path / "c")
    big = root / "improvements" / "90-huge.yaml"
    big.write_text("title: huge\nhypothesis: |\n" + ("  " + "x" * 99 + "\n") * 11_000)
    res = run_cli("check", cwd=root)
    assert res.returncode == 1
    assert "improvements/90-huge.yaml:1:1: error[file-too-large]" in res.stderr


def test_cross_file_rules(tmp_path: Path) -> None:
    root = _campaign_with(tmp_path / "c")
    imp = root / "improvements"
    (imp / "01-other-idea.yaml").write_text("title: Other\ntier: 1\nstatus: proposed\nhypothesis: h\n")
    (imp / "02-piecewise-cuda-graphs.yaml").write_text("title: Again\ntier: 1\nstatus: proposed\nhypothesis: h\n")
    (imp / "notes.md").write_text("scratch\n")
    (imp / "3-short.yaml").write_text("title: x\n")
    res = run_cli("check", cwd=root)
    assert res.returncode == 1
    err = res.stderr
    assert "improvements/01-piecewise-cuda-graphs.yaml:1:1: error[duplicate-number]" in err
    assert "improvements renumber piecewise-cuda-graphs NN" in err
    assert "improvements/02-piecewise-cuda-graphs.yaml:1:1: error[duplicate-slug]" in err
    assert "improvements/notes.md:1:1: error[bad-filename]" in err
    assert "improvements/3-short.yaml:1:1: error[bad-filename]" in err


def test_formats_json_and_github(tmp_path: Path) -> None:
    root = _campaign_with(tmp_path / "c", CASES / "90-unknown-key.yaml")
    res = run_cli("check", "--format", "json", cwd=root)
    assert res.returncode == 1
    problems = res.json()
    assert problems == [
        {
            "path": "improvements/90-unknown-key.yaml",
            "line": 5,
            "col": 1,
            "code": "unknown-key",
            "message": "unknown key `hypothessis`",
            "hint": "did you mean `hypothesis`?",
            "severity": "error",
        }
    ]
    res = run_cli("check", "--format", "github", cwd=root)
    assert res.returncode == 1
    assert res.stdout.startswith(
        "::error file=improvements/90-unknown-key.yaml,line=5,col=1,title=unknown-key::unknown key `hypothessis`"
    )


def test_runs_from_a_subfolder_and_with_root(tmp_path: Path) -> None:
    root = _campaign_with(tmp_path / "c")
    sub = root / "results" / "deep"
    sub.mkdir()
    assert run_cli("check", cwd=sub).returncode == 0
    assert run_cli("check", "--root", str(root), cwd=tmp_path).returncode == 0


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    res = run_cli("check", cwd=tmp_path)
    assert res.returncode == 2
    assert "no improvements/campaign.yaml" in res.stderr
    assert "Traceback" not in res.stderr
    res = run_cli("check", "--format", "xml", cwd=REPO)
    assert res.returncode == 2
    res = run_cli("no-such-command", cwd=REPO)
    assert res.returncode == 2


def test_missing_campaign(tmp_path: Path) -> None:
    root = _campaign_with(tmp_path / "c")
    (root / "improvements" / "campaign.yaml").unlink()
    for where in (["--root", str(root)], []):
        res = run_cli("check", *where, cwd=root / "results")
        assert res.returncode == 1, res.stderr
        assert "improvements/campaign.yaml:1:1: error[missing-campaign]" in res.stderr
    res = run_cli("check", "--root", str(tmp_path))
    assert res.returncode == 2
    assert "has no improvements/ folder" in res.stderr


@pytest.mark.slow
def test_python_dash_m_and_console_script_agree() -> None:
    import subprocess
    import sys

    script = Path(sys.executable).parent / "improvements"
    proc = subprocess.run([str(script), "--help"], capture_output=True, text=True, check=True)
    assert "Examples:" in proc.stdout
    assert proc.stdout == run_cli("--help").stdout


def test_supersession_that_goes_round_in_a_circle(tmp_path: Path) -> None:
    root = _campaign_with(tmp_path / "c")
    imp = root / "improvements"
    (imp / "20-old.yaml").write_text(
        "title: Old\ntier: 1\nstatus: superseded\nhypothesis: h\nsuperseded_by: old\n", encoding="utf-8"
    )
    (imp / "21-a.yaml").write_text("title: A\ntier: 1\nstatus: superseded\nhypothesis: h\nsuperseded_by: b\n")
    (imp / "22-b.yaml").write_text("title: B\ntier: 1\nstatus: superseded\nhypothesis: h\nsuperseded_by: a\n")
    res = run_cli("check", cwd=root)
    assert res.returncode == 1
    assert "improvements/20-old.yaml:5:16: error[invalid-value]: superseded_by goes round in a circle: old -> old" in (
        res.stderr
    )
    assert "improvements/21-a.yaml:5:16: error[invalid-value]: superseded_by goes round in a circle: a -> b -> a" in (
        res.stderr
    )


def test_superseded_by_needs_the_superseded_status(tmp_path: Path) -> None:
    root = _campaign_with(tmp_path / "c")
    record = root / "improvements" / "20-x.yaml"
    record.write_text("title: X\ntier: 1\nstatus: proposed\nhypothesis: h\nsuperseded_by: ep8\n")
    res = run_cli("check", cwd=root)
    assert "improvements/20-x.yaml:5:1: error[status-rule]: `superseded_by` is set, but the status is `proposed`" in (
        res.stderr
    )
    # Moving a superseded record back drops the replacement it no longer has.
    record.write_text("title: X\ntier: 1\nstatus: superseded\nhypothesis: h\nsuperseded_by: ep8\n")
    assert run_cli("check", cwd=root).returncode == 0
    assert run_cli("status", "x", "in-progress", cwd=root).returncode == 0
    assert record.read_text() == "title: X\ntier: 1\nstatus: in-progress\nhypothesis: h\n"


def test_docs_dir_outside_the_repository_is_a_check_problem(tmp_path: Path) -> None:
    root = _campaign_with(tmp_path / "c")
    campaign = root / "improvements" / "campaign.yaml"
    lines = campaign.read_text().count("\n")
    campaign.write_text(campaign.read_text() + "docs_dir: ../escaped\n")
    res = run_cli("check", cwd=root)
    assert res.returncode == 1
    assert res.stderr.startswith(
        f"improvements/campaign.yaml:{lines + 1}:11: error[path-outside]: docs_dir `../escaped` leaves the repository"
    )


def test_a_broken_record_does_not_make_false_problems_in_others(tmp_path: Path) -> None:
    # 07 defines the shared blocker that 06 and 08 point at; its own error is the only one.
    root = _campaign_with(tmp_path / "c")
    gemm = root / "improvements" / "07-persistent-grouped-gemm.yaml"
    gemm.write_text(gemm.read_text().replace("\ntier: 3\n", "\ntier: 9\n"))
    res = run_cli("check", cwd=root)
    errors = [ln for ln in res.stderr.splitlines() if ": error[" in ln]
    assert len(errors) == 1 and errors[0].startswith("improvements/07-persistent-grouped-gemm.yaml:"), errors


def test_links_and_folders_in_improvements_are_named_as_they_stand(tmp_path: Path) -> None:
    root = _campaign_with(tmp_path / "c")
    imp = root / "improvements"
    (root / "notes.txt").write_text("title: [\n")
    (imp / "20-linked.yaml").symlink_to(root / "notes.txt")
    (imp / "21-dangling.yaml").symlink_to(root / "nowhere.yaml")
    (imp / "22-folder.yaml").mkdir()
    res = run_cli("check", cwd=root)
    assert res.returncode == 1
    assert "improvements/20-linked.yaml:2:1: error[yaml-syntax]" in res.stderr
    for name in ("21-dangling.yaml", "22-folder.yaml"):
        assert (
            f"improvements/{name}:1:1: error[bad-filename]: `{name}` has a record's name but is not a regular file"
            in (res.stderr)
        )


def test_an_output_file_that_cannot_be_written_is_one_clear_line(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("")
    for args in (["export", "-o", "afile/records.json"], ["schema", "-o", "afile/schema.json"]):
        res = run_cli(*args, "--root", str(REPO), cwd=tmp_path) if args[0] == "export" else run_cli(*args, cwd=tmp_path)
        assert res.returncode == 1, res.stderr
        assert "Traceback" not in res.stderr
        assert res.stderr.startswith("Error: cannot write afile/"), res.stderr


def test_an_empty_campaign_file_points_at_init(tmp_path: Path) -> None:
    # An empty record is started with `new`; an empty campaign.yaml with `init`, which makes one.
    (tmp_path / "improvements").mkdir()
    (tmp_path / "improvements" / "campaign.yaml").write_text("")
    (tmp_path / "improvements" / "01-x.yaml").write_text("")
    res = run_cli("check", cwd=tmp_path)
    assert res.returncode == 1
    assert "improvements/campaign.yaml:1:1: error[empty-file]" in res.stdout + res.stderr
    lines = (res.stdout + res.stderr).splitlines()
    campaign = [line for line in lines if line.startswith("improvements/campaign.yaml:1:1")]
    record = [line for line in lines if line.startswith("improvements/01-x.yaml:1:1")]
    assert campaign and "`improvements init`" in campaign[0]
    assert record and "`improvements new`" in record[0]


def test_a_result_whose_campaign_baseline_ran_another_workload_is_named(minimal: Path) -> None:
    # The campaign's baseline at concurrency 1024 ran `random`; the record's result at that load
    # ran `sharegpt` and gives no baseline of its own: nothing is compared, and `check` says so.
    campaign = minimal / "improvements" / "campaign.yaml"
    text = campaign.read_text()
    anchor = "    - label: concurrency 1024\n      concurrency: 1024\n"
    assert anchor in text
    campaign.write_text(
        text.replace(anchor, anchor + "      workload: {dataset: random, input_len: 1024, output_len: 256}\n")
    )
    (minimal / "improvements" / "01-other-workload.yaml").write_text(
        "title: Another workload\ntier: 2\nstatus: in-progress\nhypothesis: Faster.\nresults:\n"
        "  - label: sharegpt\n    concurrency: 1024\n"
        "    workload: {dataset: sharegpt, input_len: 1024, output_len: 256}\n"
        "    metrics: {output_throughput: [1300, 1310, 1290]}\n"
    )
    res = run_cli("check", cwd=minimal)
    assert res.returncode == 0, res.stderr
    [line] = [ln for ln in res.stderr.splitlines() if "comparison-not-made" in ln]
    assert line.startswith("improvements/01-other-workload.yaml:6:"), line
    assert "result `sharegpt` is not compared: the campaign baseline result `concurrency 1024`" in line
    assert "ran another workload" in line
    # The build says the same on the page; no comparison is made up.
    built = run_cli("build", "--root", str(minimal))
    assert built.returncode == 0, built.stderr
