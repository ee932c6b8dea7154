"""`improvements run`'s plan before it runs (issue 47): the printed detectable change, `--runs`,
`--runs auto`, `--pilot` and the `--max-blocks` warning, with the test engine's real processes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from test_runner import journal_events, linked, make_campaign

from conftest import run_cli

pytestmark = pytest.mark.slow


def _with_runs(root: Path) -> Path:
    """The one-shot campaign with `{runs}` in its template: the harness times that many runs a launch."""
    path = root / "improvements" / "campaign.yaml"
    data = yaml.safe_load(path.read_text())
    data["run"]["bench"]["command"] = data["run"]["bench"]["command"].replace(" -- ", " --runs {runs} -- ")
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return root


def test_dry_run_without_data_prints_an_assumed_noise_labelled_as_such(tmp_path: Path) -> None:
    root = make_campaign(tmp_path / "c", server=False)
    shown = run_cli("run", "faster", "--root", str(root), "--dry-run", "--until-decided", "--max-blocks", "5")
    assert shown.returncode == 0, shown.stderr
    text = shown.stdout
    assert "# noise (ASSUMED): no runs of these arms yet" in text
    assert re.search(r"# detects at 80% power: \+[0-9.]+% or more in at most 5 blocks", text)
    assert "GPU time: unknown (no journal yet)" in text
    # The campaign's min_effect (1%) is out of reach of five blocks: said, with the blocks it needs.
    assert re.search(r"# WARNING: --max-blocks 5 cannot reach 1% \(the campaign's min_effect\)", text)
    assert "sequential" in text and "fixed" in text


def test_dry_run_after_a_run_reads_the_record_s_noise_and_the_journal_s_costs(tmp_path: Path) -> None:
    root = _with_runs(make_campaign(tmp_path / "c", server=False))
    done = run_cli("run", "faster", "--root", str(root), "--blocks", "3", "--runs", "2", "--seed", "4")
    assert done.returncode == 0, done.stderr
    # The plan printed at the start of the real run, before the first run.
    assert "design: 2 run(s) per launch (--runs 2), fixed" in done.stderr
    # Two measured runs in each launch's one output, sharing their launch.
    result = linked(root)
    assert len(result["run"]) == 6 and len(result["baseline_run"]) == 6
    launches = [json.loads((root / "results" / "runs" / f"{r}.json").read_text())["launch"] for r in result["run"]]
    assert len(set(launches)) == 3 and all(launches.count(x) == 2 for x in launches)
    assert "2 runs per launch are sub-samples of one launch" in result["note"]
    shown = run_cli("run", "faster", "--root", str(root), "--dry-run", "--blocks", "4", "--runs", "2").stdout
    assert "# noise (measured): this record's linked runs at load 2 (6 launches, 12 runs)" in shown
    assert "within-launch" in shown and "ICC" in shown
    # Costs: one run count only, so the block's cost at that count (two launches of the journal's mean).
    assert re.search(r"# GPU time: [0-9]+ s a block, [0-9]+ min for 4 blocks \(launch durations in this record", shown)
    # A count the runs so far never made: the launch-mean spread there is known from the components.
    other = run_cli("run", "faster", "--root", str(root), "--dry-run", "--blocks", "4", "--runs", "5").stdout
    assert "design: 5 run(s) per launch (--runs 5)" in other
    assert re.search(r"detects at 80% power: \+[0-9.]+%", other)
    assert "--runs 5 " not in other.split("mkdir")[0] or "{runs}" not in other
    assert " --runs 5 -- " in other


def test_runs_auto_without_measurements_asks_for_a_pilot(tmp_path: Path) -> None:
    root = _with_runs(make_campaign(tmp_path / "c", server=False))
    shown = run_cli("run", "faster", "--root", str(root), "--dry-run", "--runs", "auto")
    assert shown.returncode != 0
    assert "--runs auto needs" in shown.stderr and "--pilot N" in shown.stderr


def test_more_runs_per_launch_in_one_shot_mode_needs_runs_in_the_template(tmp_path: Path) -> None:
    root = make_campaign(tmp_path / "c", server=False)
    shown = run_cli("run", "faster", "--root", str(root), "--dry-run", "--runs", "3")
    assert shown.returncode != 0 and "{runs}" in shown.stderr


def test_pilot_then_runs_auto_then_sequential(tmp_path: Path) -> None:
    root = _with_runs(make_campaign(tmp_path / "c", server=False, speed="--speed 2000"))
    done = run_cli(
        "run",
        "faster",
        "--root",
        str(root),
        "--runs",
        "auto",
        "--pilot",
        "2",
        "--until-decided",
        "--max-blocks",
        "8",
        "--seed",
        "3",
    )
    assert done.returncode == 0, done.stderr + done.stdout
    # The pilot: its own journal, runs per launch alternating by block, linked to nothing.
    (pilot,) = sorted((root / "results" / "journal" / "pilot").glob("faster-*.jsonl"))
    pilot_events = [json.loads(x) for x in pilot.read_text().splitlines()]
    plan = pilot_events[0]["plan"]
    assert plan["pilot"] is True and plan["sequential"] is None
    assert {(r["block"], r["per_launch"]) for r in plan["runs"]} == {(1, 6), (2, 1)}
    assert all(e.get("state") == "done" for e in pilot_events if e["event"] == "end")
    assert not any(e["event"] == "linked" for e in pilot_events)
    # The plan after it: m* from the pilot's noise and the journal's costs, said before the run.
    chosen = re.search(r"design: ([0-9]+) run\(s\) per launch \(auto: m\* = ([0-9.]+) from", done.stderr)
    assert chosen is not None, done.stderr
    m = int(chosen.group(1))
    assert 1 <= m <= 12
    assert "noise (measured): the pilot's runs (4 launches, 14 runs)" in done.stderr
    events = journal_events(root)
    assert events[0]["plan"]["config"]["runs_per_launch"] == m
    result = linked(root)
    assert len(result["run"]) == m * result["sequential"]["blocks_run"]
    assert ": better" in done.stdout


def test_several_runs_a_launch_stay_paired_by_block_and_read_the_sequence(tmp_path: Path) -> None:
    root = _with_runs(make_campaign(tmp_path / "c", server=False, speed="--speed 2000"))
    args = ("run", "faster", "--root", str(root), "--runs", "3", "--until-decided", "--max-blocks", "8")
    done = run_cli(*args, "--seed", "2")
    assert done.returncode == 0, done.stderr + done.stdout
    result = linked(root)
    assert len(result["run"]) == 3 * result["sequential"]["blocks_run"]
    # The page compares the launch means paired by block, read from the confidence sequence (as
    # the runner's looks did), not as unpaired launch means with a fixed-n interval.
    built = run_cli("build", "--root", str(root))
    assert built.returncode == 0, built.stderr
    page = next(p for p in (root / "docs").rglob("*.md") if "01" in p.name and "faster" in p.name).read_text()
    assert "paired t confidence sequence" in page and "Welch" not in page


def test_pilot_dry_run_prints_the_pilot_s_commands(tmp_path: Path) -> None:
    root = _with_runs(make_campaign(tmp_path / "c", server=False))
    shown = run_cli("run", "faster", "--root", str(root), "--dry-run", "--pilot", "2", "--runs", "auto")
    assert shown.returncode == 0, shown.stderr
    assert "# a pilot of 2 blocks, linked to nothing" in shown.stdout
    assert " --runs 6 -- " in shown.stdout and " --runs 1 -- " in shown.stdout


def test_a_resume_journals_where_the_rest_runs(tmp_path: Path) -> None:
    root = make_campaign(tmp_path / "c", server=False)
    assert run_cli("run", "faster", "--root", str(root), "--blocks", "2").returncode == 0
    assert run_cli("run", "faster", "--root", str(root), "--resume").returncode == 0
    (resumed,) = [e for e in journal_events(root) if e["event"] == "resumed"]
    assert resumed["provenance"]["host"] and "git_commit" in resumed["provenance"]
