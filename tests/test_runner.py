"""`improvements run` with real processes: a test engine (an HTTP server on 127.0.0.1 whose speed a
flag sets) and a real client writing vLLM `bench serve` JSON. Engines sleep milliseconds."""

from __future__ import annotations

import json
import shlex
import socket
import sys
from pathlib import Path

import pytest
import yaml

from conftest import REPO, run_cli

ENGINE = REPO / "tests" / "engine"
PY = shlex.quote(sys.executable)

pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


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
    port = free_port()
    serve = f"{PY} {ENGINE / 'server.py'} --port {port} --speed 200{engine_extra}"
    if server:
        run = {
            "bench": {
                "command": f"{PY} {ENGINE / 'bench.py'} --url http://127.0.0.1:{port} --output {{output}} "
                f"--concurrency {{load}} --seed {{seed}}{bench_extra}",
                "timeout_s": timeout,
            },
            "ready": {"url": f"http://127.0.0.1:{port}/health", "timeout_s": ready_timeout},
            "format": "vllm-bench-serve",
            "stop_grace_s": 2,
            "loads": [2],
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
    root = make_campaign(tmp_path / "c", server=server)
    done = run_cli("run", "faster", "--root", str(root), "--blocks", "4", "--seed", "7")
    assert done.returncode == 0, done.stderr + done.stdout
    events = journal_events(root)
    plan = events[0]["plan"]
    ends = [e for e in events if e["event"] == "end"]
    assert len(ends) == 8 and all(e["state"] == "done" for e in ends)
    # Randomized complete blocks: every block holds each arm once, in the recorded order.
    starts = [e for e in events if e["event"] == "start"]
    for block in range(1, 5):
        arms = [e["arm"] for e in starts if e["block"] == block]
        assert sorted(arms) == ["baseline", "faster"]
    assert [e["run"] for e in starts] == [f"c2-b{r['block']:02d}-{r['arm']}" for r in plan["runs"]]
    # Interleaved: the arms alternate within blocks, checked from the journal's timestamps.
    times = sorted((e["at"], e["arm"]) for e in starts)
    assert len({a for _, a in times[:2]}) == 2
    result = linked(root)
    assert result["paired"] is True and len(result["run"]) == 4 and len(result["baseline_run"]) == 4
    runs = {
        rid: json.loads((root / "results" / "runs" / f"{rid}.json").read_text())
        for rid in result["run"] + result["baseline_run"]
    }
    assert all(r["launch"].startswith(plan["id"]) and r["started"] for r in runs.values())
    assert "better" in done.stdout
    assert no_marked_process(plan["id"]) == []
