"""Journals and stored runs carry their format; the journal's provenance digests the harness and the
records (issue 46). An older format is read as it migrates, a newer one is refused in words."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest
import yaml
from test_runner import ENGINE, PY, journal_events, linked, make_campaign

from generator.checks.validate import require_project
from generator.project.load import Project
from generator.project.runs.run import RUN_FORMAT, Run
from generator.project.runs.store import load_runs, run_text
from generator.runner import session
from generator.runner.plan import PLAN_FORMAT, Plan

from conftest import run_cli


def _plan(root: Path, slug: str = "faster") -> tuple[Project, Plan]:
    project = require_project(root)
    rec = next(r for r in project.records if r.slug == slug)
    return project, session.new_plan(project, rec, blocks=2, seed=1, loads=[], max_blocks=None)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_provenance_digests_the_harness_the_commands_name_and_the_records(tmp_path: Path) -> None:
    root = make_campaign(tmp_path / "c", server=False)
    (root / "harness").mkdir()
    shutil.copy(ENGINE / "oneshot.py", root / "harness" / "oneshot.py")
    shutil.copy(ENGINE / "bench.py", root / "harness" / "bench.py")
    (root / "harness" / "load.yaml").write_text("requests: 6\n")
    path = root / "improvements" / "campaign.yaml"
    data = yaml.safe_load(path.read_text())
    # The harness by a relative path, a file as `--flag=PATH`, and an absolute path outside the root.
    data["run"]["bench"]["command"] = (
        f"{PY} harness/oneshot.py --output {{output}} --load {{load}} --config=harness/load.yaml -- {{command}}"
    )
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    project, plan = _plan(root)
    found = session.provenance(project, plan)
    assert found["harness_sha256"] == {
        "harness/load.yaml": _sha(root / "harness" / "load.yaml"),
        "harness/oneshot.py": _sha(root / "harness" / "oneshot.py"),
    }
    # The records as they were when planned, campaign.yaml with them.
    assert found["records_sha256"] == {
        "improvements/01-faster.yaml": _sha(root / "improvements" / "01-faster.yaml"),
        "improvements/campaign.yaml": _sha(path),
    }
    # A launch's own words count too: the baseline's engine, copied under the root.
    shutil.copy(ENGINE / "server.py", root / "harness" / "server.py")
    data["baseline"]["command"] = f"{PY} harness/server.py --speed 200"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    project, plan = _plan(root)
    found = session.provenance(project, plan)
    assert found["harness_sha256"]["harness/server.py"] == _sha(root / "harness" / "server.py")


def _journal(root: Path, plan: dict, version: object) -> Path:
    plan = {**plan, "format_version": version}
    path = root / "results" / "journal" / f"faster-{plan['id']}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"event": "plan", "at": "2026-01-01T00:00:00+00:00", "plan": plan}) + "\n")
    return path


@pytest.mark.parametrize("version", [PLAN_FORMAT + 1, "two"])
def test_a_journal_of_a_newer_or_unknown_format_is_refused(tmp_path: Path, version: object) -> None:
    root = make_campaign(tmp_path / "c", server=False)
    _project, plan = _plan(root)
    path = _journal(root, plan.to_json(), version)
    done = run_cli("run", "faster", "--root", str(root), "--resume")
    assert done.returncode == 1, done.stderr
    assert f"{path.relative_to(root)}: cannot be read as a journal" in done.stderr
    assert f"format_version {version!r}" in done.stderr and f"formats 1 to {PLAN_FORMAT}" in done.stderr
    assert "newer improvements" in done.stderr and "Traceback" not in done.stderr
    assert [e["event"] for e in journal_events(root)] == ["plan"]  # nothing run, nothing appended


def test_stored_runs_carry_their_format_an_older_is_read_a_newer_refused(tmp_path: Path) -> None:
    run = Run("r-0123456789", "vllm-bench-serve", {"max_concurrency": 2}, {"output_throughput": 100.0})
    written = json.loads(run_text(run))
    assert written["format_version"] == RUN_FORMAT == 2
    folder = tmp_path / "results" / "runs"
    folder.mkdir(parents=True)
    old = {k: v for k, v in written.items() if k != "format_version"}
    (folder / "r-0123456789.json").write_text(json.dumps(old))
    (folder / "r-9999999999.json").write_text(json.dumps({**written, "id": "r-9999999999", "format_version": 3}))
    runs, broken = load_runs(tmp_path)
    # Format 1 (no key) reads as it is, and writes back as format 2 with the same fields.
    assert list(runs) == ["r-0123456789"] and run_text(runs["r-0123456789"]) == run_text(run)
    assert broken == {
        "r-9999999999": "cannot read results/runs/r-9999999999.json: format_version 3: this improvements reads "
        "run files of formats 1 to 2; it was written by a newer improvements (upgrade to read it)"
    }


@pytest.mark.slow
def test_a_format_1_journal_resumes_and_links_under_its_arms_names(tmp_path: Path) -> None:
    """A journal written before the slots (paths by arm name) resumes: its done runs kept, the rest
    run under the names it planned, all linked."""
    root = make_campaign(tmp_path / "c", server=False)
    record = (root / "improvements" / "01-faster.yaml").read_text()
    assert run_cli("run", "faster", "--root", str(root), "--blocks", "2", "--seed", "3").returncode == 0
    (path,) = (root / "results" / "journal").glob("faster-*.jsonl")
    events = journal_events(root)
    plan = events[0]["plan"]
    names = {a["slot"]: a["name"] for a in plan["arms"]}
    # Format 1: no version, no slots, every key and path by the arm's name; block 1 done, then killed.
    old_plan = {k: v for k, v in plan.items() if k != "format_version"}
    old_plan["arms"] = [{k: v for k, v in a.items() if k != "slot"} for a in plan["arms"]]
    old_plan["runs"] = [{k: v for k, v in r.items() if k != "slot"} for r in plan["runs"]]
    cut = [i for i, e in enumerate(events) if e["event"] == "end"][1]
    kept = [json.dumps({**events[0], "plan": old_plan})]
    for event in events[1 : cut + 1]:
        kept.append(re.sub(r"(b0\d)-(a[01])\b", lambda m: f"{m[1]}-{names[m[2]]}", json.dumps(event)))
    path.write_text("\n".join(kept) + "\n")
    out = root / plan["workdir"] / "out"
    for f in sorted(out.iterdir()):
        block, slot = re.search(r"b(0\d)-(a[01])", f.name).groups()  # type: ignore[union-attr]
        if block == "01":
            f.rename(out / f.name.replace(f"-{slot}", f"-{names[slot]}"))
        else:
            f.unlink()
    (root / "improvements" / "01-faster.yaml").write_text(record)
    shutil.rmtree(root / "results" / "runs")
    shutil.rmtree(root / "results" / "raw")

    done = run_cli("run", "faster", "--root", str(root), "--resume")
    assert done.returncode == 0, done.stderr + done.stdout
    assert "2 of 4 runs done, 2 left" in done.stderr
    ends = sorted(e["run"] for e in journal_events(root) if e["event"] == "end" and e["state"] == "done")
    assert ends == ["c2-b01-baseline", "c2-b01-faster", "c2-b02-baseline", "c2-b02-faster"]
    assert sorted(f.name for f in out.iterdir()) == [f"{k}.json" for k in ends]
    result = linked(root)
    assert len(result["run"]) == len(result["baseline_run"]) == 2
    stored = [json.loads((root / "results" / "runs" / f"{rid}.json").read_text()) for rid in result["run"]]
    assert [r["launch"].split("/")[1] for r in stored] == ["c2-b01-faster", "c2-b02-faster"]
    assert all(r["format_version"] == RUN_FORMAT for r in stored)
    assert run_cli("check", "--root", str(root)).returncode == 0
