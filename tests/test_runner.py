"""`improvements run` with real processes: a test engine (an HTTP server on 127.0.0.1 whose speed a
flag sets) and a real client writing vLLM `bench serve` JSON. Engines sleep milliseconds."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from generator.base.fsio import _edit_lock_file
from generator.runner.keeper import descendants

from conftest import REPO, run_cli

ENGINE = REPO / "tests" / "engine"
PY = shlex.quote(sys.executable)

pytestmark = pytest.mark.slow


def make_campaign(
    root: Path,
    *,
    server: bool,
    bench_extra: str = "",
    engine_extra: str = "",
    timeout: float = 60,
    ready_timeout: float = 20,
    speed: str = "--speed 400",
    decision: bool = True,
) -> Path:
    (root / "improvements").mkdir(parents=True)
    (root / "results").mkdir()
    # The engine binds port 0 and writes the port it got; the benchmark reads it there, once the
    # engine's ready line (printed after the file is written) is in its log.
    port_file = shlex.quote(str(root / "engine.port"))
    serve = f"{PY} {ENGINE / 'server.py'} --port 0 --port-file {port_file} --speed 200{engine_extra}"
    if server:
        run = {
            "bench": {
                "command": f"{PY} {ENGINE / 'bench.py'} --port-file {port_file} --output {{output}} "
                f"--concurrency {{load}} --seed {{seed}}{bench_extra}",
                "timeout_s": timeout,
            },
            "ready": {"log": r"^engine: serving on port \d+", "timeout_s": ready_timeout},
            "format": "vllm-bench-serve",
            "stop_grace_s": 2,
            "loads": [2],
            "versions": {"python-major": f"{PY} -c 'import sys; print(sys.version_info[0])'"},
        }
        command = serve
    else:
        run = {
            "bench": {
                "command": f"{PY} {ENGINE / 'oneshot.py'} --output {{output}} --load {{load}} "
                f"--seed {{seed}}{bench_extra} -- {{command}}",
                "timeout_s": timeout,
            },
            "format": "vllm-bench-serve",
            "stop_grace_s": 2,
            "loads": [2],
        }
        command = f"{PY} {ENGINE / 'server.py'} --speed 200{engine_extra}"
    campaign = {
        "name": "Runner test",
        "series": "RT",
        "model": {"name": "tiny"},
        "hardware": {"gpu": "none", "count": 1},
        "engine": {"name": "test-engine"},
        "baseline": {"label": "speed 200", "command": command},
        "tiers": {1: "one", 2: "two", 3: "three"},
        "run": run,
    }
    if decision:
        campaign["decision"] = {"primary_metric": "output_throughput", "alpha": 0.05, "min_effect": 1.0}
    (root / "improvements" / "campaign.yaml").write_text(yaml.safe_dump(campaign, sort_keys=False))
    (root / "improvements" / "01-faster.yaml").write_text(
        "title: Faster engine\ntier: 1\nstatus: in-progress\nhypothesis: More speed.\n"
        f"change:\n  flags:\n    - flag: --speed\n      value: '{speed.split()[1]}'\n"
    )
    return root


def journal_events(root: Path) -> list[dict]:
    (path,) = sorted((root / "results" / "journal").glob("faster-*.jsonl"))
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def linked(root: Path) -> dict:
    data = yaml.safe_load((root / "improvements" / "01-faster.yaml").read_text())
    (result,) = data["results"]
    return result


def no_marked_process(plan_id: str) -> list[int]:
    needle = f"IMPROVEMENTS_RUN={plan_id}/".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                env = (entry / "environ").read_bytes()
            except OSError:
                continue
            if needle in env:
                found.append(int(entry.name))
    return found


@pytest.mark.parametrize("server", [False, True])
def test_two_arms_four_blocks_run_link_and_decide(tmp_path: Path, server: bool) -> None:
    # Ten times the speed: the decision stands however busy the machine is.
    root = make_campaign(tmp_path / "c", server=server, speed="--speed 2000")
    done = run_cli("run", "faster", "--root", str(root), "--blocks", "4", "--seed", "7")
    assert done.returncode == 0, done.stderr + done.stdout
    events = journal_events(root)
    plan = events[0]["plan"]
    provenance = events[0]["provenance"]
    assert provenance["host"] and "git_commit" in provenance and "IMPROVEMENTS_RUN" in provenance["environment_set"]
    if server:
        assert provenance["versions"] == {"python-major": "3"}
    ends = [e for e in events if e["event"] == "end"]
    assert all(len(e["outputs"][0]["sha256"]) == 64 and e["exit"] == 0 for e in ends)
    assert len(ends) == 8 and all(e["state"] == "done" for e in ends)
    # Nothing left in the working folder: the outputs moved beside the journal.
    assert not (root / "results" / "journal" / "tmp").exists()
    # Randomized complete blocks: every block holds each arm once, in the recorded order.
    starts = [e for e in events if e["event"] == "start"]
    for block in range(1, 5):
        arms = [e["arm"] for e in starts if e["block"] == block]
        assert sorted(arms) == ["baseline", "faster"]
    assert [e["run"] for e in starts] == [f"c2-b{r['block']:02d}-{r['slot']}" for r in plan["runs"]]
    result = linked(root)
    assert result["paired"] is True and len(result["run"]) == 4 and len(result["baseline_run"]) == 4
    runs = {
        rid: json.loads((root / "results" / "runs" / f"{rid}.json").read_text())
        for rid in result["run"] + result["baseline_run"]
    }
    assert all(r["launch"].startswith(plan["id"]) for r in runs.values())
    # Interleaved, read back from the runs' own start times: block by block, both arms in each.
    by_time = sorted((r["started"], r["launch"].split("/")[1]) for r in runs.values())
    blocks = [key.split("-")[1] for _, key in by_time]
    assert blocks == sorted(blocks) == [f"b{b:02d}" for b in (1, 1, 2, 2, 3, 3, 4, 4)]
    # Paired by block: the i-th run of each side comes from block i.
    for i, (mine, theirs) in enumerate(zip(result["run"], result["baseline_run"], strict=True), 1):
        assert runs[mine]["launch"].endswith(f"b{i:02d}-a1") and runs[theirs]["launch"].endswith(f"b{i:02d}-a0")
    assert "better" in done.stdout
    assert no_marked_process(plan["id"]) == []


def start_runner(root: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "generator", "run", "faster", "--root", str(root), *args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for(root: Path, marker: dict[str, object], proc: subprocess.Popen[str], count: int = 1) -> None:
    """Until the journal holds `count` events with these fields (the runner still going)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            events = journal_events(root)
        except ValueError:
            events = []
        hits = [e for e in events if all(e.get(k) == v for k, v in marker.items())]
        if len(hits) >= count:
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.005)
    raise AssertionError(f"no {marker} in the journal")


@pytest.mark.parametrize(
    ("marker", "count"),
    [
        ({"event": "plan"}, 1),
        ({"event": "process", "role": "server"}, 3),  # a launch started, its benchmark not yet
        ({"event": "process", "role": "bench"}, 2),  # a benchmark running
        ({"event": "end", "state": "done"}, 5),  # right after a run ended
    ],
)
def test_kill_9_then_resume_gives_exactly_the_planned_runs(tmp_path: Path, marker: dict, count: int) -> None:
    root = make_campaign(tmp_path / "c", server=True, bench_extra=" --requests 12")
    proc = start_runner(root, "--blocks", "4", "--seed", "3")
    wait_for(root, marker, proc, count)
    proc.kill()
    proc.wait()
    plan = journal_events(root)[0]["plan"]
    done = run_cli("run", "faster", "--root", str(root), "--resume")
    assert done.returncode == 0, done.stderr + done.stdout
    events = journal_events(root)
    ends = [e["run"] for e in events if e["event"] == "end" and e["state"] == "done"]
    assert sorted(ends) == sorted(f"c2-b{r['block']:02d}-{r['slot']}" for r in plan["runs"])  # each once
    result = linked(root)
    assert len(result["run"]) == 4 and len(result["baseline_run"]) == 4
    assert len(set(result["run"]) | set(result["baseline_run"])) == 8
    # Nothing of a killed run was kept: the temporary folder is empty, every output is a done run's.
    assert not list((root / "results" / "journal" / "tmp" / "faster").glob("*"))
    outs = sorted(p.name for p in (root / plan["workdir"] / "out").iterdir())
    assert outs == sorted(f"{k}.json" for k in ends)
    assert no_marked_process(plan["id"]) == []


def test_ctrl_c_stops_every_process(tmp_path: Path) -> None:
    root = make_campaign(tmp_path / "c", server=True, bench_extra=" --hang")
    proc = start_runner(root, "--blocks", "2")
    wait_for(root, {"event": "process", "role": "bench"}, proc)
    plan_id = journal_events(root)[0]["plan"]["id"]
    pids = [e["pid"] for e in journal_events(root) if e["event"] == "process"]
    assert all(_alive(p) for p in pids)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "--resume" in err
    assert not any(_alive(p) for p in pids)
    assert no_marked_process(plan_id) == []
    assert journal_events(root)[-1]["event"] == "interrupted"


def test_a_second_runner_of_the_record_is_refused_and_the_first_goes_on(tmp_path: Path) -> None:
    root = make_campaign(tmp_path / "c", server=True, bench_extra=" --hang")
    first = start_runner(root, "--blocks", "2")
    wait_for(root, {"event": "process", "role": "bench"}, first)
    second = run_cli("run", "faster", "--root", str(root), "--resume")
    assert second.returncode == 1, second.stderr
    assert "another `improvements run faster` is going" in second.stderr
    # The refused runner wrote nothing and stopped nothing: the first one's benchmark still runs.
    pids = [e["pid"] for e in journal_events(root) if e["event"] == "process"]
    assert all(_alive(p) for p in pids)
    assert [e["event"] for e in journal_events(root)].count("plan") == 1
    # Only the runner holds the run lock: no process it started has the lock file open, so a
    # `kill -9` of the runner frees it at once, whatever its children go on doing.
    lock = os.path.realpath(_edit_lock_file(root, root / "results" / "journal" / "faster.run"))
    assert lock in _open_files(first.pid)
    assert not [p for p in pids + [d for p in pids for d in descendants(p)] if lock in _open_files(p)]
    first.send_signal(signal.SIGINT)
    first.communicate(timeout=60)
    assert first.returncode == 130


def _open_files(pid: int) -> set[str]:
    found = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            found.add(os.path.realpath(os.readlink(fd)))
        except OSError:
            continue
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead; /proc says so.
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ")[-1].startswith("Z"))


@pytest.mark.parametrize(
    ("server", "engine_extra", "bench_extra", "why"),
    [
        (True, " --never-ready", "", "not ready within"),
        (True, " --crash", "", "exited with status 3 before it was ready"),
        (True, "", " --hang", "still running after"),
        (True, "", " --fail", "exited with status 2"),
        (False, "", " --garbage", "not readable as"),
    ],
)
def test_failures_are_recorded_with_their_log(
    tmp_path: Path, server: bool, engine_extra: str, bench_extra: str, why: str
) -> None:
    root = make_campaign(
        tmp_path / "c",
        server=server,
        engine_extra=engine_extra,
        bench_extra=bench_extra,
        timeout=1 if "hang" in bench_extra else 30,
        # Short only where readiness is what fails: a loaded machine may start a server slowly.
        ready_timeout=1 if "never-ready" in engine_extra else 30,
    )
    done = run_cli("run", "faster", "--root", str(root), "--blocks", "2")
    assert done.returncode == 1, done.stderr
    assert "nothing linked" in done.stderr
    events = journal_events(root)
    (failed,) = [e for e in events if e["event"] == "end"]
    assert failed["state"] == "failed" and why in failed["why"], failed
    assert "results" not in yaml.safe_load((root / "improvements" / "01-faster.yaml").read_text())
    assert no_marked_process(events[0]["plan"]["id"]) == []
    if bench_extra == " --fail":
        assert "failing on purpose" in failed["tail"]


def test_keep_going_names_the_dropped_block(tmp_path: Path) -> None:
    root = make_campaign(tmp_path / "c", server=True, bench_extra=" --block {block} --arm {arm} --fail-in 2:a1")
    done = run_cli("run", "faster", "--root", str(root), "--blocks", "3", "--keep-going")
    assert done.returncode == 0, done.stderr
    events = journal_events(root)
    (failed,) = [e for e in events if e["event"] == "end" and e["state"] == "failed"]
    assert failed["run"] == "c2-b02-a1" and "failing on purpose" in failed["tail"]
    # Block 2 is left out of both sides, and the note says which block and why: never silently.
    result = linked(root)
    assert len(result["run"]) == len(result["baseline_run"]) == 2
    assert "Left out of both sides: block 2 (faster failed: `bench` exited with status 2)" in result["note"]
    assert "1 run(s) failed: c2-b02-a1" in done.stderr
    # The baseline's half of block 2 is journalled, not imported: every run written is linked.
    assert sorted(p.stem for p in (root / "results" / "runs").iterdir()) == sorted(
        result["run"] + result["baseline_run"]
    )
    assert no_marked_process(events[0]["plan"]["id"]) == []


def test_dry_run_prints_commands_that_run_as_printed(tmp_path: Path) -> None:
    root = make_campaign(tmp_path / "c", server=False)
    shown = run_cli("run", "faster", "--root", str(root), "--blocks", "2", "--seed", "5", "--dry-run")
    assert shown.returncode == 0, shown.stderr
    assert not (root / "results" / "journal").exists() or not list((root / "results" / "journal").glob("*.jsonl"))
    script = shown.stdout
    subprocess.run(["bash", "-e", "-c", script], cwd=root, check=True, timeout=120)
    outputs = sorted((root / "results" / "journal" / "tmp" / "faster").glob("*.json"))
    assert len(outputs) == 4
    for out in outputs:
        assert json.loads(out.read_text())["output_throughput"] > 0
    # The real run uses the very same commands.
    for p in outputs:
        p.unlink()
    done = run_cli("run", "faster", "--root", str(root), "--blocks", "2", "--seed", "5")
    assert done.returncode == 0, done.stderr
    ran = [e["command"] for e in journal_events(root) if e["event"] == "process"]
    printed = [line for line in script.splitlines() if line and not line.startswith(("#", "mkdir"))]
    assert ran == printed


def test_server_mode_dry_run_names_each_process_the_runner_starts(tmp_path: Path) -> None:
    root = make_campaign(tmp_path / "c", server=True)
    path = root / "improvements" / "campaign.yaml"
    data = yaml.safe_load(path.read_text())
    data["run"]["warmup"] = 1
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    script = run_cli("run", "faster", "--root", str(root), "--blocks", "2", "--seed", "9", "--dry-run").stdout
    assert "# warm-up 1, discarded" in script and "SIGKILL after 2 s" in script
    done = run_cli("run", "faster", "--root", str(root), "--blocks", "2", "--seed", "9")
    assert done.returncode == 0, done.stderr
    ran = [e["command"] for e in journal_events(root) if e["event"] == "process"]
    # The runner's lines, each alone on its line; around the launch, the script's own: it starts
    # in the background in its own process group, is waited for, and is stopped.
    runs = script[script.index("\n# run 1 ") :]
    scaffold = ("#", "set -m", "{", "} >", "improvements_", "set +m")
    printed = [line for line in runs.splitlines() if line and not line.startswith(scaffold)]
    assert ran == printed and len(ran) == 12  # per run: the server, a warm-up, the benchmark


def test_until_decided_stops_early_and_says_so(tmp_path: Path) -> None:
    root = make_campaign(tmp_path / "c", server=False, speed="--speed 2000")
    done = run_cli("run", "faster", "--root", str(root), "--until-decided", "--max-blocks", "12")
    assert done.returncode == 0, done.stderr
    events = journal_events(root)
    looks = [e for e in events if e["event"] == "look"]
    assert looks and looks[-1]["arms"]["faster"]["call"] == "better"
    stopped = [e for e in events if e["event"] == "stopped"][-1]
    assert stopped["reason"].startswith("decided after block") and stopped["blocks_run"] < 12
    assert "interim" in done.stderr
    result = linked(root)
    assert "Run sequentially" in result["note"] and "of at most 12 blocks" in result["note"]
    assert result["sequential"]["blocks_run"] == stopped["blocks_run"] == len(result["run"])
    # The record's decision reads the confidence sequence, as the runner's last look did.
    assert "output_throughput" in done.stdout and ": better" in done.stdout
    # The record's page says so, and `check` finds nothing wrong with what the runner wrote.
    assert run_cli("check", "--root", str(root)).returncode == 0
    built = run_cli("build", "--root", str(root))
    assert built.returncode == 0, built.stderr
    page = next(p for p in (root / "docs").rglob("*.md") if "01" in p.name and "faster" in p.name).read_text()
    assert "Run sequentially" in " ".join(page.split())
    assert "**better** (sequential: an interval valid at every look)" in page


def test_several_runs_a_launch_report_the_sequence_the_runner_stopped_on(tmp_path: Path) -> None:
    # Four measured runs a launch: the unit is the launch, and the page, export and summary read
    # the confidence sequence of the block-paired launch means, the one the runner looked at.
    root = make_campaign(tmp_path / "c", server=True, speed="--speed 2000")
    path = root / "improvements" / "campaign.yaml"
    data = yaml.safe_load(path.read_text())
    data["run"]["runs_per_launch"] = 4
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    done = run_cli("run", "faster", "--root", str(root), "--until-decided", "--max-blocks", "8")
    assert done.returncode == 0, done.stderr
    last = [e for e in journal_events(root) if e["event"] == "look"][-1]["arms"]["faster"]
    assert last["call"] == "better"
    result = linked(root)
    assert len(result["run"]) == 4 * last["blocks"] and result["paired"]
    exported = json.loads(run_cli("export", "--root", str(root)).stdout)
    (entry,) = [r for r in exported["records"] if r["slug"] == "faster"]
    (res,) = entry["results"]
    c = res["comparisons"]["output_throughput"]
    assert (res["unit"], res["launch_pairs"], res["unpaired_why"]) == ("launch", True, None)
    assert (c["test"], c["decision"], c["n"], c["baseline_n"]) == ("sequence", "better", last["blocks"], last["blocks"])
    for mine, runner in (
        ("change_percent", "change_percent"),
        ("ci_low_percent", "low_percent"),
        ("ci_high_percent", "high_percent"),
    ):
        assert c[mine] == pytest.approx(last[runner], rel=1e-9), mine
    assert run_cli("check", "--root", str(root)).returncode == 0
    assert run_cli("build", "--root", str(root)).returncode == 0
    page = " ".join(next(p for p in (root / "docs").rglob("*.md") if "faster" in p.name).read_text().split())
    assert f"Compared on launch means, paired by block: {last['blocks']} block(s)" in page
    assert "paired t confidence sequence, log scale, on launch means" in page
    assert "Where a launch holds several runs (test: on launch means), n counts launches" in page
    assert "A result run sequentially (test: confidence sequence) reads an interval valid at every look" in page
    (row,) = json.loads(run_cli("summary", "--root", str(root), "--format", "json").stdout)
    assert row["primary_test"] == "paired t confidence sequence, log scale, on launch means"
    assert row["primary_decision"] == "better" and row["primary_n"] == last["blocks"]
    low, high = f"{last['low_percent']:+.1f}%", f"{last['high_percent']:+.1f}%"
    assert f"{low} to {high}" in page


def test_a_new_sequence_after_an_undecided_one_is_refused_unless_asked(tmp_path: Path) -> None:
    # Two blocks: too few for the sequence to exclude anything, so it ends undecided.
    root = make_campaign(tmp_path / "c", server=False)
    first = run_cli("run", "faster", "--root", str(root), "--until-decided", "--max-blocks", "2")
    assert first.returncode == 0, first.stderr
    (earlier,) = yaml.safe_load((root / "improvements" / "01-faster.yaml").read_text())["results"]
    assert earlier["sequential"]["stopped"] == "planned blocks run"
    journals = sorted((root / "results" / "journal").glob("faster-*.jsonl"))
    again = run_cli("run", "faster", "--root", str(root), "--until-decided", "--max-blocks", "2")
    assert again.returncode == 2 and "ended undecided" in again.stderr and "--new-sequence" in again.stderr
    # Refused before anything ran: no new plan, no new journal.
    assert sorted((root / "results" / "journal").glob("faster-*.jsonl")) == journals
    new = run_cli("run", "faster", "--root", str(root), "--until-decided", "--max-blocks", "2", "--new-sequence")
    assert new.returncode == 0, new.stderr
    results = yaml.safe_load((root / "improvements" / "01-faster.yaml").read_text())["results"]
    assert len(results) == 2 and results[0]["label"] == earlier["label"]
    # Both sequences are kept and shown; the new one says what its guarantee covers.
    checked = run_cli("check", "--root", str(root))
    assert checked.returncode == 0 and "warning[rerun-unused]" in checked.stderr
    assert run_cli("build", "--root", str(root)).returncode == 0
    page = " ".join(next(p for p in (root / "docs").rglob("*.md") if "faster" in p.name).read_text().split())
    assert earlier["label"] in page and results[1]["label"] in page
    assert "A new sequence (`--new-sequence`): 1 earlier sequence(s) of this comparison ended undecided" in page
    assert "up to 2 x alpha = 0.1, not alpha" in page
    # A fixed design is never refused: it makes no claim at every look.
    assert run_cli("run", "faster", "--root", str(root), "--blocks", "2").returncode == 0


def test_warmups_and_sub_samples_share_their_launch(tmp_path: Path) -> None:
    root = make_campaign(tmp_path / "c", server=True)
    path = root / "improvements" / "campaign.yaml"
    data = yaml.safe_load(path.read_text())
    data["run"].update({"warmup": 1, "runs_per_launch": 2})
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    done = run_cli("run", "faster", "--root", str(root), "--blocks", "2")
    assert done.returncode == 0, done.stderr
    events = journal_events(root)
    assert sum(e["event"] == "warmup" and e["discarded"] for e in events) == 4
    # One launch per run: each run's server started once, its two measured runs share the launch.
    assert sum(e["event"] == "process" and e["role"] == "server" for e in events) == 4
    result = linked(root)
    assert len(result["run"]) == 4 and len(result["baseline_run"]) == 4
    stored = [json.loads((root / "results" / "runs" / f"{rid}.json").read_text()) for rid in result["run"]]
    launches = [r["launch"] for r in stored]
    assert len(set(launches)) == 2 and launches[0] == launches[1] and launches[2] == launches[3]
    # Each sub-sample's own start, one after the other within the launch.
    assert stored[0]["started"] < stored[1]["started"] and stored[2]["started"] < stored[3]["started"]
    assert "sub-samples of one launch" in result["note"]


def test_a_campaign_format_reads_the_output(tmp_path: Path) -> None:
    root = make_campaign(tmp_path / "c", server=False)
    path = root / "improvements" / "campaign.yaml"
    data = yaml.safe_load(path.read_text())
    data["import_formats"] = {
        "engine-json": {
            "metrics": {"output_throughput": "output_throughput"},
            "settings": {"concurrency": "max_concurrency"},
        }
    }
    data["run"]["format"] = "engine-json"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    done = run_cli("run", "faster", "--root", str(root), "--blocks", "2")
    assert done.returncode == 0, done.stderr
    result = linked(root)
    run = json.loads((root / "results" / "runs" / f"{result['run'][0]}.json").read_text())
    assert run["format"] == "engine-json" and run["settings"]["max_concurrency"] == 2


def test_each_variant_is_an_arm_linked_under_its_variant(tmp_path: Path) -> None:
    root = make_campaign(tmp_path / "c", server=False)
    (root / "improvements" / "01-faster.yaml").write_text(
        "title: Faster engine\ntier: 1\nstatus: in-progress\nhypothesis: More speed.\nvariants:\n"
        "  - label: Speed 400\n    outcome: rejected\n    change:\n      flags:\n        - flag: --speed\n"
        "          value: '400'\n  - label: Speed 800\n    outcome: retained\n    change:\n      flags:\n"
        "        - flag: --speed\n          value: '800'\n  - label: probe\n    outcome: diagnostic\n"
    )
    done = run_cli("run", "faster", "--root", str(root), "--blocks", "2", "--load", "2", "--load", "3")
    assert done.returncode == 0, done.stderr
    data = yaml.safe_load((root / "improvements" / "01-faster.yaml").read_text())
    v400, v800, probe = data["variants"]
    assert [len(r["run"]) for r in v400["results"] + v800["results"]] == [2, 2, 2, 2]
    assert "results" not in probe
    assert sum(e["event"] == "end" for e in journal_events(root)) == 12  # 3 arms x 2 loads x 2 blocks
    assert run_cli("check", "--root", str(root)).returncode == 0


def test_progress_is_a_bar_on_a_terminal_and_plain_lines_elsewhere(tmp_path: Path) -> None:
    import pty

    root = make_campaign(tmp_path / "c", server=False)
    plain = run_cli("run", "faster", "--root", str(root), "--blocks", "1")
    assert plain.returncode == 0, plain.stderr
    assert "run 1 of 2: block 1, arm " in plain.stderr and "\x1b[K" not in plain.stderr
    root2 = make_campaign(tmp_path / "d", server=False)
    parent, child = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "generator", "run", "faster", "--root", str(root2), "--blocks", "1"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=child,
    )
    os.close(child)
    seen = b""
    while True:
        try:
            chunk = os.read(parent, 4096)
        except OSError:  # the terminal's other end closed: the runner has exited
            break
        if not chunk:
            break
        seen += chunk
    proc.wait(timeout=60)
    os.close(parent)
    assert proc.returncode == 0
    assert b"\r\x1b[K[" in seen and b"run 2 of 2" in seen


def test_resume_of_a_finished_plan_runs_nothing_and_links_the_same(tmp_path: Path) -> None:
    root = make_campaign(tmp_path / "c", server=False)
    assert run_cli("run", "faster", "--root", str(root), "--blocks", "2").returncode == 0
    record = (root / "improvements" / "01-faster.yaml").read_bytes()
    runs = sorted(p.name for p in (root / "results" / "runs").iterdir())
    again = run_cli("run", "faster", "--root", str(root), "--resume")
    assert again.returncode == 0, again.stderr
    assert sum(e["event"] == "start" for e in journal_events(root)) == 4
    assert (root / "improvements" / "01-faster.yaml").read_bytes() == record
    assert sorted(p.name for p in (root / "results" / "runs").iterdir()) == runs


def test_resume_without_a_journal_says_so(tmp_path: Path) -> None:
    root = make_campaign(tmp_path / "c", server=False)
    done = run_cli("run", "faster", "--root", str(root), "--resume")
    assert done.returncode == 2 and "no journal of `faster`" in done.stderr


def _pids(path: Path) -> list[int]:
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def test_a_setsid_child_does_not_outlive_a_successful_run(tmp_path: Path) -> None:
    # Each benchmark leaves a process of its own session behind (as `setsid cmd &` does): out of
    # the group the runner stops, yet stopped by the end of the run, which succeeds.
    left = tmp_path / "left.pids"
    root = make_campaign(tmp_path / "c", server=True, bench_extra=f" --daemon {shlex.quote(str(left))}")
    done = run_cli("run", "faster", "--root", str(root), "--blocks", "1")
    assert done.returncode == 0, done.stderr
    pids = _pids(left)
    assert len(pids) == 2  # one per run, each started and really of its own session
    assert not [p for p in pids if _alive(p)]
    assert no_marked_process(journal_events(root)[0]["plan"]["id"]) == []


def test_kill_9_leaves_no_engine_running_before_any_resume(tmp_path: Path) -> None:
    # Nobody resumes: what the killed runner started stops by itself (its keeper sees the runner
    # die), the benchmark's session-of-its-own child included.
    left = tmp_path / "left.pids"
    root = make_campaign(tmp_path / "c", server=True, bench_extra=f" --hang --daemon {shlex.quote(str(left))}")
    proc = start_runner(root, "--blocks", "2")
    wait_for(root, {"event": "process", "role": "bench"}, proc)
    while not _pids(left):  # the benchmark is up: its leftover started
        assert proc.poll() is None
        time.sleep(0.01)
    events = journal_events(root)
    plan_id = events[0]["plan"]["id"]
    started = [e["pid"] for e in events if e["event"] == "process"] + _pids(left)
    assert all(_alive(p) for p in started)
    proc.kill()
    proc.communicate()
    # Bounded: the grace period (2 s) and the SIGKILL after it; a minute is far beyond either.
    deadline = time.monotonic() + 60
    while (any(_alive(p) for p in started) or no_marked_process(plan_id)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [p for p in started if _alive(p)] == []
    assert no_marked_process(plan_id) == []


def test_a_backtracking_ready_pattern_keeps_to_its_timeout(tmp_path: Path) -> None:
    # `(a|aa)+$` against sixty a's and a `!` backtracks for ages under `re`: the time limit holds.
    root = make_campaign(tmp_path / "c", server=True, engine_extra=" --say " + "a" * 60 + "!", ready_timeout=2)
    path = root / "improvements" / "campaign.yaml"
    data = yaml.safe_load(path.read_text())
    data["run"]["ready"]["log"] = "^(a|aa)+$"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    runner = start_runner(root, "--blocks", "1")
    try:
        _out, err = runner.communicate(timeout=120)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.communicate()
    assert runner.returncode == 1, err
    (failed,) = [e for e in journal_events(root) if e["event"] == "end"]
    assert "not ready within 2 s" in failed["why"] and "took longer" in failed["why"], failed["why"]


def test_a_torn_journal_line_then_resume_keeps_every_event(tmp_path: Path) -> None:
    # A full disk cut the last line short: the resume's own events are whole lines after it.
    root = make_campaign(tmp_path / "c", server=False)
    assert run_cli("run", "faster", "--root", str(root), "--blocks", "1").returncode == 0
    (path,) = sorted((root / "results" / "journal").glob("faster-*.jsonl"))
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"event": "end", "run": "c2-b0')
    again = run_cli("run", "faster", "--root", str(root), "--resume")
    assert again.returncode == 0, again.stderr
    text = path.read_bytes()
    assert text.startswith(whole) and text.endswith(b"\n")
    events = journal_events(root)  # every line reads as JSON: nothing joined to the torn one
    assert [e["event"] for e in events[-3:]] == ["resumed", "stopped", "linked"]
