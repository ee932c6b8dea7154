"""The runner itself is no difference between arms: every process of every arm gets an environment
and arguments of the same size, whatever the arms are called (issue 46).

The harness (tests/engine: bench.py, oneshot.py with --report, server.py always) reports the bytes
of its own environment block and of each argument, read from /proc/self as the kernel laid them
out; the arms' names differ in length ("baseline", "faster") and their changes do not (`--speed
200` and `--speed 400`), so any difference would be the runner's.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_runner import journal_events, make_campaign

from conftest import run_cli

pytestmark = pytest.mark.slow


def _reports(root: Path, plan: dict, server: bool) -> dict[str, list[dict]]:
    """run key -> what each process of it said of itself: the benchmark's output, the server's log."""
    folder = root / plan["workdir"]
    out: dict[str, list[dict]] = {}
    for run in plan["runs"]:
        key = f"c2-b{run['block']:02d}-{run['slot']}"
        data = json.loads((folder / "out" / f"{key}.json").read_text())
        seen = [{k: v for k, v in data.items() if k.startswith("harness_")}]
        if server:
            log = (folder / "logs" / f"{key}.a1.server.log").read_text()
            line = next(x for x in log.splitlines() if x.startswith("engine: itself "))
            seen.append(json.loads(line.removeprefix("engine: itself ")))
        out[run["arm"]] = out.get(run["arm"], []) + seen
    return out


@pytest.mark.parametrize("server", [False, True])
def test_every_arm_gets_an_environment_and_arguments_of_one_size(tmp_path: Path, server: bool) -> None:
    root = make_campaign(tmp_path / "c", server=server, bench_extra=" --report --arm {arm}")
    done = run_cli("run", "faster", "--root", str(root), "--blocks", "2", "--seed", "4")
    assert done.returncode == 0, done.stderr + done.stdout
    plan = journal_events(root)[0]["plan"]
    assert {a["name"]: a["slot"] for a in plan["arms"]} == {"baseline": "a0", "faster": "a1"}
    seen = _reports(root, plan, server)
    assert sorted(seen) == ["baseline", "faster"]
    assert all(r["harness_environ_bytes"] > 0 and r["harness_argv_bytes"] for rs in seen.values() for r in rs)
    # Every process in the same place of every run (benchmark, server) reports the same sizes.
    for place in range(len(seen["baseline"])):
        sizes = {json.dumps(rs[place], sort_keys=True) for rs in seen.values()}
        assert len(sizes) == 1, sizes
    # The names are nowhere in what the runner made for a run: its paths, `{arm}` (the slug is).
    commands = [e["command"] for e in journal_events(root) if e["event"] == "process" and e["role"] != "server"]
    assert all(re.search(r"-b0[12]-a[01]\.a1\.json .*--arm a[01]\b", c) for c in commands), commands
    assert not any(re.search(r"-b0[12]-(baseline|faster)|--arm (baseline|faster)", c) for c in commands)
