"""The runner's plan without running anything: arms, blocks, the dry run's commands, `run:` checked."""

from __future__ import annotations

import shlex
from pathlib import Path

import yaml

from conftest import run_cli

CAMPAIGN = {
    "name": "Plan test",
    "series": "PT",
    "model": {"name": "tiny"},
    "hardware": {"gpu": "none", "count": 1},
    "engine": {"name": "e"},
    "baseline": {"label": "base", "command": 'serve --port 8000 --model "$MODEL_PATH"', "env": {"A": "1"}},
    "tiers": {1: "one", 2: "two", 3: "three"},
    "run": {
        "bench": {"command": "harness --out {output} --batch {load} --seed {seed} --arm {arm} -- {command}"},
        "format": "vllm-bench-serve",
        "loads": [8],
    },
}


def campaign(root: Path, records: dict[str, str], run: dict | None = None) -> Path:
    (root / "improvements").mkdir(parents=True)
    data = dict(CAMPAIGN)
    if run is not None:
        data["run"] = run
    (root / "improvements" / "campaign.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    for name, text in records.items():
        (root / "improvements" / name).write_text(text)
    return root


BASE = "title: T\ntier: 1\nstatus: in-progress\nhypothesis: H.\n"


def dry(root: Path, slug: str, *args: str) -> str:
    done = run_cli("run", slug, "--root", str(root), "--dry-run", *args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_variants_are_arms_and_builds_on_is_the_baseline(tmp_path: Path) -> None:
    root = campaign(
        tmp_path / "c",
        {
            "01-graphs.yaml": BASE.replace("in-progress", "adopted")
            + "verdict: v\nresults:\n  - label: r\n    metrics: {output_throughput: 1}\n"
            "    baseline: {output_throughput: 1}\n"
            "change:\n  before: ['echo prepared']\n  flags:\n    - flag: --graphs\n",
            "02-sizes.yaml": BASE + "builds_on: [graphs]\nchange:\n  flags:\n    - flag: --size\n      value: '1'\n"
            "variants:\n  - label: Size 2\n    outcome: rejected\n    change:\n      flags:\n        - flag: --size\n"
            "          value: '2'\n  - label: Size 4\n    outcome: retained\n    change:\n      flags:\n"
            "        - flag: --size\n          value: '4'\n  - label: probe\n    outcome: diagnostic\n",
        },
    )
    text = dry(root, "sizes", "--blocks", "3", "--seed", "11")
    arms = [line for line in text.splitlines() if line.startswith("# arm ")]
    assert arms == [
        "# arm baseline (baseline, {arm} and paths: a0): the stack it builds on",
        "# arm size-2 (arm, {arm} and paths: a1): variant Size 2",
        "# arm size-4 (arm, {arm} and paths: a2): variant Size 4",
    ]
    benches = [line for line in text.splitlines() if line.startswith("harness ")]
    assert len(benches) == 9
    # The baseline arm is the stack below: --graphs, and its `before:` step runs first.
    base = next(b for b in benches if "--arm a0" in b)
    words = shlex.split(base.split(" -- ", 1)[1])
    assert words[:2] == ["env", "A=1"] and "--graphs" in words and "--size" not in words
    four = shlex.split(next(b for b in benches if "--arm a2" in b).split(" -- ", 1)[1])
    assert four[four.index("--size") + 1] == "4" and "--graphs" in four
    assert text.count("echo prepared") == 9
    # Every block holds each arm once; the order differs between blocks for this seed.
    blocks = [line for line in text.splitlines() if line.startswith("# run ")]
    assert [b.split(":")[0] for b in blocks] == [f"# run {i} of 9" for i in range(1, 10)]
    orders = [[b.split("arm ")[1].split(",")[0] for b in blocks[i : i + 3]] for i in range(0, 9, 3)]
    assert all(sorted(o) == ["baseline", "size-2", "size-4"] for o in orders)
    assert len({tuple(o) for o in orders}) > 1
    # The same seed draws the same plan.
    assert dry(root, "sizes", "--blocks", "3", "--seed", "11").splitlines()[3:] == text.splitlines()[3:]


def test_model_path_stays_expandable_and_seed_is_per_block(tmp_path: Path) -> None:
    root = campaign(tmp_path / "c", {"01-x.yaml": BASE + "change:\n  flags:\n    - flag: --fast\n"})
    text = dry(root, "x", "--blocks", "2", "--seed", "100")
    benches = [line for line in text.splitlines() if line.startswith("harness ")]
    assert all('"$MODEL_PATH"' in b for b in benches)
    seeds = sorted(b.split("--seed ")[1].split()[0] for b in benches)
    assert seeds == ["101", "101", "102", "102"]


def test_run_settings_are_checked_with_positions(tmp_path: Path) -> None:
    bad = {
        "bench": {"command": "harness --out {outptu} -- {command}"},
        "format": "no-such-format",
    }
    root = campaign(tmp_path / "c", {"01-x.yaml": BASE}, run=bad)
    done = run_cli("check", "--root", str(root))
    assert done.returncode == 1
    assert "campaign.yaml:" in done.stdout + done.stderr
    out = done.stdout + done.stderr
    assert "unknown placeholder {outptu}" in out
    oneshot = {"bench": {"command": "harness --out {output}"}, "format": "vllm-bench-serve"}
    root2 = campaign(tmp_path / "d", {"01-x.yaml": BASE}, run=oneshot)
    out2 = run_cli("check", "--root", str(root2))
    assert out2.returncode == 1 and "put {command}" in out2.stdout + out2.stderr
    fmt = {"bench": {"command": "h --out {output} {command}"}, "format": "no-such-format"}
    root3 = campaign(tmp_path / "e", {"01-x.yaml": BASE}, run=fmt)
    out3 = run_cli("check", "--root", str(root3))
    assert out3.returncode == 1 and "`no-such-format` is neither a built-in format" in out3.stdout + out3.stderr


def test_a_record_without_a_change_has_no_arm_to_run(tmp_path: Path) -> None:
    root = campaign(tmp_path / "c", {"01-x.yaml": BASE})
    done = run_cli("run", "x", "--root", str(root), "--dry-run")
    assert done.returncode == 2 and "records no `change`" in done.stderr


def test_the_baseline_arm_is_what_stack_prints(tmp_path: Path) -> None:
    server = {
        "bench": {"command": "client --out {output} --concurrency {load}"},
        "ready": {"url": "http://127.0.0.1:8000/health"},
        "format": "vllm-bench-serve",
    }
    graphs = (
        BASE.replace("in-progress", "adopted")
        + "verdict: v\nresults:\n  - label: r\n    metrics: {output_throughput: 1}\n"
        "    baseline: {output_throughput: 1}\nchange:\n  before: ['echo prepared']\n  env: {B: 'x y'}\n"
        "  flags:\n    - flag: --graphs\n"
    )
    on_top = BASE + "builds_on: [graphs]\nchange:\n  flags:\n    - flag: --size\n      value: '4'\n"
    root = campaign(tmp_path / "c", {"01-graphs.yaml": graphs, "02-size.yaml": on_top}, run=server)
    stack = run_cli("stack", "--root", str(root), "--format", "command")
    assert stack.returncode == 0, stack.stderr
    text = dry(root, "size", "--blocks", "1", "--seed", "0", "--load", "4")
    lines = text.splitlines()
    at = lines.index(next(line for line in lines if line.startswith("# run ") and "arm baseline" in line))
    # The `before:` step, then the launch (in the background, in its own process group): the
    # very lines `stack --format command` prints, each alone on its line.
    assert lines[at + 3 : at + 5] == ["set -m", "{"]
    assert [lines[at + 1], lines[at + 5]] == stack.stdout.splitlines()


def test_slots_are_one_width_for_every_arm() -> None:
    from generator.runner.plan import Arm, draw_runs, with_slots

    arms = with_slots([Arm(name, name, "arm", None, ("serve",), ()) for name in ["baseline", *"bcdefghijk"]])
    assert [a.slot for a in arms] == [f"a{i:02d}" for i in range(11)]
    assert [a.slot for a in with_slots(arms[:10])] == [f"a{i}" for i in range(10)]
    runs = draw_runs(arms, 2, [8, 128], 0)
    # Within a block and load every arm's key has one length: the load and block are shared.
    for block in (1, 2):
        for load in (8, 128):
            assert len({len(r.key) for r in runs if r.block == block and r.load == load}) == 1
