"""What `improvements run` says on the terminal (issue 46): a failed run's last log lines, what
`--resume` found, stopped and ran again, and the decision with its interval as the page has it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_runner import journal_events, make_campaign, no_marked_process, start_runner, wait_for

from conftest import run_cli

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    ("engine_extra", "bench_extra", "said"),
    [
        # The benchmark failed: its own last lines, and the engine's (the server's log) below them.
        ("", " --fail", ["bench: failing on purpose", "engine: serving on port"]),
        # The engine failed before it was ready: its log.
        (" --crash", "", ["engine: crashing on purpose"]),
    ],
)
def test_a_failed_run_shows_the_last_lines_of_its_logs(
    tmp_path: Path, engine_extra: str, bench_extra: str, said: list[str]
) -> None:
    root = make_campaign(tmp_path / "c", server=True, engine_extra=engine_extra, bench_extra=bench_extra)
    done = run_cli("run", "faster", "--root", str(root), "--blocks", "1")
    assert done.returncode == 1, done.stderr
    plan = journal_events(root)[0]["plan"]
    for line in said:
        assert f"  | {line}" in done.stderr, done.stderr
    assert f"the last lines of {plan['workdir']}/logs/" in done.stderr
    assert "last lines are above" in done.stderr


def test_resume_says_what_it_found_stopped_and_ran_again(tmp_path: Path) -> None:
    # The benchmark hangs: the runner is killed while a run's processes are running, for certain.
    root = make_campaign(tmp_path / "c", server=True, bench_extra=" --hang", timeout=5)
    proc = start_runner(root, "--blocks", "2")
    wait_for(root, {"event": "process", "role": "bench"}, proc)
    proc.kill()
    proc.wait()
    events = journal_events(root)
    plan = events[0]["plan"]
    first = next(e["run"] for e in events if e["event"] == "start")
    done = run_cli("run", "faster", "--root", str(root), "--resume")
    err = done.stderr
    assert f"resume: plan {plan['id']} (results/journal/faster-{plan['id']}.jsonl): 0 of 4 runs done, 4 left" in err
    assert f"run again, as started before and not ended well: {first} (never ended)" in err
    # What it stopped is what it journalled it stopped (none, where the system stopped them first).
    (resumed,) = [e for e in journal_events(root) if e["event"] == "resumed"]
    groups = resumed["stopped_leftover_groups"]
    if groups:
        stopped = ", ".join(map(str, groups))
        assert f"resume: stopped {len(groups)} process group(s) a killed runner of this plan left: {stopped}" in err
    else:
        assert "resume: no process of this plan was left running" in err
    # The run is run again (and hangs again, so fails): said so, with the benchmark's last lines.
    assert f"resume: ran 1 run(s); reran {first} (failed again)" in err
    assert "  | bench: hanging" in err
    assert done.returncode == 1
    assert no_marked_process(plan["id"]) == []


def test_a_fixed_design_prints_the_decision_with_its_interval_as_the_page_has_it(tmp_path: Path) -> None:
    root = make_campaign(tmp_path / "c", server=False, speed="--speed 2000")
    done = run_cli("run", "faster", "--root", str(root), "--blocks", "3")
    assert done.returncode == 0, done.stderr
    (line,) = [x for x in done.stdout.splitlines() if "output_throughput" in x]
    found = re.search(r"output_throughput (\S+), interval (\S+ to \S+), n 3 / 3, paired t, log scale: better", line)
    assert found, line
    change, interval = found.groups()
    built = run_cli("build", "--root", str(root))
    assert built.returncode == 0, built.stderr
    page = next(p for p in (root / "docs").rglob("*.md") if "01" in p.name and "faster" in p.name).read_text()
    row = next(x for x in page.splitlines() if interval in x)
    assert change.rstrip(",") in row and "better" in row
