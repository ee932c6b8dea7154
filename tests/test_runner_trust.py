"""What `improvements run` keeps and resumes can be trusted: no secret kept, only the held record's
plan resumed, only verified outputs linked, and no finished run left unlinked by a command beside it.

Real processes, as in test_runner.py: the test engine and client on 127.0.0.1. The client's
`--gate PATH` holds a run at its benchmark until the test lets it go, so "during a run" is a
state the test is in, not a race it hopes to win.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shlex
import sys
import time
from pathlib import Path

import pytest
import yaml
from test_runner import journal_events, linked, make_campaign, no_marked_process, start_runner, wait_for

from generator.runner.processes import stop_leftovers

from conftest import REPO, run_cli

pytestmark = pytest.mark.slow

sys.path.insert(0, str(REPO / "tests" / "engine"))
from bench import SECRETS  # noqa: E402


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_no_planted_secret_is_kept_anywhere_under_results(tmp_path: Path) -> None:
    root = make_campaign(
        tmp_path / "c",
        server=True,
        engine_extra=" --leak",
        bench_extra=" --leak --block {block} --arm {arm} --fail-in 2:a1",
    )
    path = root / "improvements" / "campaign.yaml"
    data = yaml.safe_load(path.read_text())
    # A `versions:` command that prints a secret it does not spell: the provenance keeps what it printed.
    hidden = base64.b64encode(SECRETS["password"].encode()).decode()
    data["run"]["versions"]["mirror"] = f"echo https://me:$(echo {hidden} | base64 -d)@mirror.example/simple"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    done = run_cli("run", "faster", "--root", str(root), "--blocks", "3", "--keep-going")
    assert done.returncode == 0, done.stderr + done.stdout
    events = journal_events(root)
    (failed,) = [e for e in events if e["event"] == "end" and e["state"] == "failed"]
    assert "failing on purpose" in failed["tail"] and "<redacted>" in failed["tail"]
    assert "<redacted>" in events[0]["provenance"]["versions"]["mirror"]
    kept = _files(root / "results")
    assert any("/logs/" in name for name in kept) and any("/out/" in name for name in kept)
    leaks = [(name, which) for name, data in kept.items() for which, s in SECRETS.items() if s.encode() in data] + [
        (name, "PLANTED") for name, data in kept.items() if b"PLANTED" in data
    ]
    assert leaks == []
    assert b"PLANTED" not in done.stdout.encode() + done.stderr.encode()
    # The digest the journal keeps is of what is kept (a resume checks it), and the run still links.
    for end in (e for e in events if e["event"] == "end" and e["state"] == "done"):
        (out,) = end["outputs"]
        assert hashlib.sha256((root / out["path"]).read_bytes()).hexdigest() == out["sha256"]
        assert json.loads((root / out["path"]).read_text())["server_info"]["api_key"] == "<redacted>"
    assert len(linked(root)["run"]) == 2


def test_a_killed_runner_s_logs_are_redacted_by_the_resume(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    root = make_campaign(tmp_path / "c", server=True, bench_extra=f" --leak --gate {shlex.quote(str(gate))}")
    proc = start_runner(root, "--blocks", "1")
    wait_for(root, {"event": "process", "role": "bench"}, proc)
    logs = root / journal_events(root)[0]["plan"]["workdir"] / "logs"
    deadline = time.monotonic() + 60
    while not any(b"PLANTED" in p.read_bytes() for p in logs.glob("*.bench.log")):
        assert time.monotonic() < deadline
        time.sleep(0.01)
    proc.kill()  # the benchmark, holding its secrets in its log, waits at the gate
    proc.wait()
    gate.touch()
    done = run_cli("run", "faster", "--root", str(root), "--resume")
    assert done.returncode == 0, done.stderr
    assert [name for name, data in _files(root / "results").items() if b"PLANTED" in data] == []
    assert no_marked_process(journal_events(root)[0]["plan"]["id"]) == []


def test_the_shipped_example_keeps_no_secret() -> None:
    from generator.project.runs.redact import redact_text

    example = REPO / "examples" / "h200-runner"
    found = []
    for name, data in _files(example).items():
        if name.startswith(("docs/", "site/")):
            continue  # generated from the files checked here
        text = data.decode("utf-8", errors="replace")
        if redact_text(text)[1] or b"PLANTED" in data:
            found.append(name)
    assert found == []
    assert len([n for n in _files(example) if n.startswith("results/journal/")]) > 40


def test_resume_runs_again_an_output_changed_since_its_run(tmp_path: Path) -> None:
    root = make_campaign(tmp_path / "c", server=False)
    assert run_cli("run", "faster", "--root", str(root), "--blocks", "2").returncode == 0
    events = journal_events(root)
    end = next(e for e in events if e["event"] == "end" and e["run"].endswith("b01-a1"))
    out = root / end["outputs"][0]["path"]
    edited = json.loads(out.read_text())
    edited["output_throughput"] *= 100
    out.write_text(json.dumps(edited))
    before = {r: json.loads((root / "results" / "runs" / f"{r}.json").read_text()) for r in linked(root)["run"]}
    assert not any(r["metrics"]["output_throughput"] == edited["output_throughput"] for r in before.values())
    again = run_cli("run", "faster", "--root", str(root), "--resume")
    assert again.returncode == 0, again.stderr
    assert f"run {end['run']} is run again" in again.stderr and "changed since its run wrote it" in again.stderr
    events = journal_events(root)
    assert [e["run"] for e in events if e["event"] == "discarded"] == [end["run"]]
    assert [e["run"] for e in events if e["event"] == "start"][4:] == [end["run"]]  # only that one again
    # The edited file is kept aside; what is linked is the new run's output, as its digest says.
    changed = hashlib.sha256(json.dumps(edited).encode()).hexdigest()[:12]
    assert json.loads(out.with_name(f"{out.name}.changed-{changed}").read_text()) == edited
    ends = [e for e in events if e["event"] == "end" and e["run"] == end["run"]]
    assert hashlib.sha256(out.read_bytes()).hexdigest() == ends[-1]["outputs"][0]["sha256"]
    for rid in linked(root)["run"]:
        run = json.loads((root / "results" / "runs" / f"{rid}.json").read_text())
        assert run["metrics"]["output_throughput"] != edited["output_throughput"]


def _second_record(root: Path) -> None:
    (root / "improvements" / "02-other.yaml").write_text(
        "title: Other engine\ntier: 1\nstatus: in-progress\nhypothesis: Other speed.\n"
        "change:\n  flags:\n    - flag: --speed\n      value: '300'\n"
    )


@pytest.mark.parametrize("forged", ["copied", "slug rewritten"])
def test_resume_runs_only_a_plan_of_the_record_it_holds(tmp_path: Path, forged: str) -> None:
    root = make_campaign(tmp_path / "c", server=False)
    _second_record(root)
    other = run_cli("run", "other", "--root", str(root), "--blocks", "1")
    assert other.returncode == 0, other.stderr
    (theirs,) = (root / "results" / "journal").glob("other-*.jsonl")
    plan_line = json.loads(theirs.read_text().splitlines()[0])
    if forged == "slug rewritten":
        plan_line["plan"]["slug"] = "faster"
        plan_line["plan"]["workdir"] = plan_line["plan"]["workdir"].replace("/other-", "/faster-")
    # Only the plan: an unfinished plan of `other`, under `faster`'s name.
    (root / "results" / "journal" / theirs.name.replace("other-", "faster-")).write_text(json.dumps(plan_line) + "\n")
    record = (root / "improvements" / "02-other.yaml").read_bytes()
    before = _files(root / "results")
    done = run_cli("run", "faster", "--root", str(root), "--resume")
    assert done.returncode == 1, done.stderr
    assert "is not a plan of `faster`" in done.stderr and "nothing run" in done.stderr
    assert (root / "improvements" / "02-other.yaml").read_bytes() == record
    assert _files(root / "results") == before
    assert "results" not in yaml.safe_load((root / "improvements" / "01-faster.yaml").read_text())


def test_resume_picks_the_unfinished_plan_whatever_the_clock_said(tmp_path: Path) -> None:
    root = make_campaign(tmp_path / "c", server=True)
    assert run_cli("run", "faster", "--root", str(root), "--blocks", "1").returncode == 0
    # A second plan, killed at once; then made as a clock set back a year would have made it.
    proc = start_runner(root, "--blocks", "2")
    folder = root / "results" / "journal"
    deadline = time.monotonic() + 60
    while len(list(folder.glob("faster-*.jsonl"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.005)
    proc.kill()
    proc.wait()
    first, killed = sorted(folder.glob("faster-*.jsonl"))
    lines = killed.read_text().splitlines()
    head = json.loads(lines[0])
    new_id = "20000101T000000Z-" + head["plan"]["id"][-6:]
    old_dir = root / head["plan"]["workdir"]
    stop_leftovers(head["plan"]["id"], 2)  # what it started under its real id
    head["plan"]["id"] = new_id
    head["plan"]["workdir"] = f"results/journal/faster-{new_id}"
    if old_dir.exists():
        old_dir.rename(root / head["plan"]["workdir"])
    # Only the plan: killed before its first run, as far as its journal says.
    (folder / f"faster-{new_id}.jsonl").write_text(json.dumps(head) + "\n")
    killed.unlink()
    assert sorted(folder.glob("faster-*.jsonl"))[-1] == first  # the finished plan sorts last by name
    done = run_cli("run", "faster", "--root", str(root), "--resume")
    assert done.returncode == 0, done.stderr
    assert f"plan {new_id}" in done.stderr
    events = [json.loads(x) for x in (folder / f"faster-{new_id}.jsonl").read_text().splitlines()]
    assert sum(e["event"] == "end" and e["state"] == "done" for e in events) == 4
    assert events[-1]["event"] == "linked"
    labels = [r["label"] for r in yaml.safe_load((root / "improvements" / "01-faster.yaml").read_text())["results"]]
    assert any(new_id in label for label in labels)


def _gated(tmp_path: Path) -> tuple[Path, Path]:
    gate = tmp_path / "gate"
    return make_campaign(tmp_path / "c", server=True, bench_extra=f" --gate {shlex.quote(str(gate))}"), gate


def test_renumber_and_new_wait_for_a_run_and_say_why(tmp_path: Path) -> None:
    root, gate = _gated(tmp_path)
    proc = start_runner(root, "--blocks", "2")
    wait_for(root, {"event": "process", "role": "bench"}, proc)
    moved = run_cli("renumber", "faster", "5", "--root", str(root))
    assert moved.returncode == 1, moved.stderr
    assert "`improvements run` is going" in moved.stderr and "run it again once the run has ended" in moved.stderr
    added = run_cli("new", "Next idea", "--tier", "1", "--root", str(root))
    assert added.returncode == 1 and "`improvements run` is going" in added.stderr
    assert sorted(p.name for p in (root / "improvements").iterdir()) == ["01-faster.yaml", "campaign.yaml"]
    gate.touch()
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert len(linked(root)["run"]) == 2
    # Once the run has ended, both go ahead.
    assert run_cli("renumber", "faster", "5", "--root", str(root)).returncode == 0
    assert run_cli("new", "Next idea", "--tier", "1", "--root", str(root)).returncode == 0


def test_a_link_that_fails_after_the_runs_says_the_command_that_links_them(tmp_path: Path) -> None:
    root, gate = _gated(tmp_path)
    proc = start_runner(root, "--blocks", "2")
    wait_for(root, {"event": "process", "role": "bench"}, proc)
    # Written by hand during the run (no lock can stop an editor): a record `check` refuses.
    broken = root / "improvements" / "02-half-written.yaml"
    broken.write_text("title: Half written\ntier: 1\nstatus: in-progress\n")
    gate.touch()
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err
    plan_id = journal_events(root)[0]["plan"]["id"]
    command = f"improvements run faster --root {shlex.quote(str(root))} --resume --plan {plan_id}"
    assert f"`{command}` links them" in err and "4 finished run(s) are journalled" in err
    assert "02-half-written.yaml" in err  # and what stopped the link
    broken.unlink()
    again = run_cli(*shlex.split(command)[1:])
    assert again.returncode == 0, again.stderr
    assert len(linked(root)["run"]) == 2
    assert sum(e["event"] == "start" for e in journal_events(root)) == 4  # nothing run again


def test_a_record_renumbered_after_a_kill_is_linked_where_it_is_now(tmp_path: Path) -> None:
    root = make_campaign(tmp_path / "c", server=True)
    proc = start_runner(root, "--blocks", "2")
    wait_for(root, {"event": "end", "state": "done"}, proc, 1)
    proc.kill()
    proc.wait()
    assert run_cli("renumber", "faster", "7", "--root", str(root)).returncode == 0
    done = run_cli("run", "faster", "--root", str(root), "--resume")
    assert done.returncode == 0, done.stderr
    data = yaml.safe_load((root / "improvements" / "07-faster.yaml").read_text())
    assert len(data["results"][0]["run"]) == 2
    assert not (root / "improvements" / "01-faster.yaml").exists()
    assert no_marked_process(journal_events(root)[0]["plan"]["id"]) == []


def _killed_plan(root: Path) -> str:
    """A plan killed once its journal has begun: its id (what it started is stopped)."""
    folder = root / "results" / "journal"
    before = set(folder.glob("faster-*.jsonl")) if folder.is_dir() else set()
    proc = start_runner(root, "--blocks", "1")
    deadline = time.monotonic() + 60
    while not set(folder.glob("faster-*.jsonl")) - before and time.monotonic() < deadline:
        time.sleep(0.005)
    proc.kill()
    proc.wait()
    (path,) = set(folder.glob("faster-*.jsonl")) - before
    plan_id = path.name[len("faster-") : -len(".jsonl")]
    stop_leftovers(plan_id, 2)
    return plan_id


def test_with_two_unfinished_plans_resume_asks_which(tmp_path: Path) -> None:
    root = make_campaign(tmp_path / "c", server=True)
    first, second = _killed_plan(root), _killed_plan(root)
    asked = run_cli("run", "faster", "--root", str(root), "--resume")
    assert asked.returncode == 2, asked.stderr
    assert "2 plans of `faster` are unfinished" in asked.stderr and first in asked.stderr and second in asked.stderr
    assert "--plan" in asked.stderr
    unknown = run_cli("run", "faster", "--root", str(root), "--resume", "--plan", "20000101T000000Z-abcdef")
    assert unknown.returncode == 2 and "no journal of plan 20000101T000000Z-abcdef" in unknown.stderr
    done = run_cli("run", "faster", "--root", str(root), "--resume", "--plan", first)
    assert done.returncode == 0, done.stderr
    assert f"plan {first}" in done.stderr
    # The other is now the one unfinished plan: a plain --resume takes it up.
    done = run_cli("run", "faster", "--root", str(root), "--resume")
    assert done.returncode == 0 and f"plan {second}" in done.stderr


def test_init_s_gitignore_commits_the_journal_and_its_outputs_not_the_logs(tmp_path: Path) -> None:
    import subprocess

    root = tmp_path / "c"
    assert run_cli("init", str(root), "--no-input").returncode == 0
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    plan = "results/journal/faster-20261202T093349Z-054277"
    paths = [
        f"{plan}.jsonl",
        f"{plan}/out/c64-b01-baseline.json",
        f"{plan}/logs/c64-b01-baseline.a1.bench.log",
        "results/journal/tmp/faster/c64-b01-baseline.a1.json",
        ".improvements-runs.lock",
    ]
    shown = subprocess.run(["git", "check-ignore", *paths], cwd=root, capture_output=True, text=True)
    assert shown.stdout.split() == paths[2:]
