"""The third shipped campaign, examples/h200-runner: made by `improvements run` on H200s.

Its runs, outputs and journals are the runner's own files, byte for byte. CI has no GPU, so it
rebuilds the example from them; each decision is computed here again from the harness's
outputs with scipy (the sequential one by numerical integration of the mixture it rests on).
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate, optimize, stats

from generator.analysis.campaign import analyse
from generator.checks.validate import require_project
from generator.output.export import export_data

from conftest import REPO, run_cli

# Slow: builds a whole shipped campaign and integrates numerically.
pytestmark = pytest.mark.slow

EXAMPLE = REPO / "examples" / "h200-runner"
JOURNAL = EXAMPLE / "results" / "journal"


def journal(slug: str) -> tuple[Path, list[dict]]:
    (path,) = sorted(JOURNAL.glob(f"{slug}-*.jsonl"))
    return path, [json.loads(line) for line in path.read_text().splitlines()]


def log_ratios(slug: str, arm: str) -> np.ndarray:
    """log(arm) - log(baseline) of each block's timed generate call, from the harness's outputs."""
    path, _ = journal(slug)
    out = path.with_suffix("") / "out"

    def side(name: str) -> dict[int, float]:
        found = {}
        for f in out.glob(f"c*-b*-{name}.json"):
            rows = [json.loads(line) for line in f.read_text().splitlines() if line.strip()]
            (row,) = [r for r in rows if not r["warmup"]]
            found[int(f.name.split("-")[1][1:])] = row["output_tok_s"]
        return found

    mine, base = side(arm), side("baseline")
    assert sorted(mine) == sorted(base)
    return np.array([math.log(mine[k]) - math.log(base[k]) for k in sorted(mine)])


@pytest.fixture(scope="module")
def export() -> dict[str, dict]:
    data = export_data(analyse(require_project(EXAMPLE)))
    return {r["slug"]: r for r in data["records"]}


def test_every_kept_output_is_the_one_the_journal_digested() -> None:
    for path in JOURNAL.glob("*.jsonl"):
        events = [json.loads(line) for line in path.read_text().splitlines()]
        ends = [e for e in events if e["event"] == "end"]
        assert ends and all(e["state"] == "done" and e["exit"] == 0 for e in ends)
        for e in ends:
            for out in e["outputs"]:
                data = (EXAMPLE / out["path"]).read_bytes()
                assert hashlib.sha256(data).hexdigest() == out["sha256"]
                # The imported run keeps the same bytes as its raw evidence.
                raw = EXAMPLE / "results" / "raw" / f"{out['sha256'][:12]}-{Path(out['path']).name}"
                assert raw.read_bytes() == data


def test_blocks_were_interleaved_in_the_plan_order() -> None:
    for slug in ("sdpa-attention", "null-control", "static-cache"):
        _, events = journal(slug)
        plan = events[0]["plan"]
        order = [(r["block"], r["arm"]) for r in plan["runs"]]
        started = [(e["run"], e["started"]) for e in events if e["event"] == "end"]
        # Run in the plan's order: each block holds each arm once, blocks one after another.
        assert [s for s, _ in sorted(started, key=lambda x: x[1])] == [
            f"c{plan['loads'][0]}-b{b:02d}-{arm}" for b, arm in order[: len(started)]
        ]
        assert all(sorted(a for bb, a in order if bb == b) == sorted({a for _, a in order}) for b, _ in order)


def _log_mixture(d: np.ndarray, mu: float) -> float:
    """log of the scale-invariant likelihood ratio of the standardized effect, mixed over N(0, 1)."""
    x = d - mu
    n, s, v = len(x), float(x.sum()), float((x * x).sum())

    def ratio(delta: float) -> float:
        def f(r: float) -> float:
            return r ** (n - 1) * math.exp(-(r * r * v - 2 * r * delta * s + n * delta * delta) / 2)

        return integrate.quad(f, 0, np.inf)[0]

    den = integrate.quad(lambda r: r ** (n - 1) * math.exp(-r * r * v / 2), 0, np.inf)[0]
    mix = integrate.quad(lambda t: ratio(t) * math.exp(-t * t / 2) / math.sqrt(2 * math.pi), -np.inf, np.inf)[0]
    return math.log(mix / den)


def test_the_sequential_comparison_is_its_confidence_sequence(export: dict[str, dict]) -> None:
    d = log_ratios("sdpa-attention", "sdpa-attention")
    (result,) = export["sdpa-attention"]["results"]
    c = result["comparisons"]["output_throughput"]
    sequential = export["sdpa-attention"]["record"]["results"][0]["sequential"]
    assert sequential["blocks_run"] == len(d) == 6 and sequential["max_blocks"] == 8
    assert c["test"] == "sequence" and c["decision"] == "better"
    assert c["change_percent"] == pytest.approx(math.expm1(d.mean()) * 100, rel=1e-9)
    m, threshold = float(d.mean()), math.log(1 / 0.05)
    low = optimize.brentq(lambda mu: _log_mixture(d, mu) - threshold, m - 5, m)
    high = optimize.brentq(lambda mu: _log_mixture(d, mu) - threshold, m, m + 5)
    assert c["ci_low_percent"] == pytest.approx(math.expm1(low) * 100, rel=1e-6)
    assert c["ci_high_percent"] == pytest.approx(math.expm1(high) * 100, rel=1e-6)
    # Wider than the one-look t interval, which a data-dependent stop would not keep at alpha.
    t = stats.ttest_1samp(d, 0.0).confidence_interval(0.95)
    assert c["ci_low_percent"] < math.expm1(t.low) * 100 and c["ci_high_percent"] > math.expm1(t.high) * 100


@pytest.mark.parametrize("slug", ["null-control", "static-cache"])
def test_the_fixed_five_block_comparisons_are_paired_t_on_logs(export: dict[str, dict], slug: str) -> None:
    d = log_ratios(slug, slug)
    (result,) = export[slug]["results"]
    c = result["comparisons"]["output_throughput"]
    ci = stats.ttest_1samp(d, 0.0).confidence_interval(0.95)
    assert len(d) == 5 and c["test"] == "paired" and c["decision"] == "inconclusive"
    assert c["p_value"] == pytest.approx(stats.ttest_1samp(d, 0.0).pvalue, rel=1e-9)
    assert c["change_percent"] == pytest.approx(math.expm1(d.mean()) * 100, rel=1e-9)
    assert (c["ci_low_percent"], c["ci_high_percent"]) == pytest.approx(
        (math.expm1(ci.low) * 100, math.expm1(ci.high) * 100), rel=1e-9
    )


def test_it_builds_from_the_runners_files_and_says_so(tmp_path: Path) -> None:
    copy = tmp_path / "h200-runner"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns("docs", "site"))
    assert run_cli("check", "--root", str(copy)).returncode == 0
    built = run_cli("build", "--root", str(copy))
    assert built.returncode == 0, built.stderr
    home = (copy / "docs" / "index.md").read_text()
    assert "improvements run" in home and "randomized complete blocks" in home
    page = (copy / "docs" / "improvements" / "h200run-01-sdpa-attention.md").read_text()
    assert "sequential" in page.lower() and "6 of at most 8 blocks" in page
    # The shipped pages are the ones these files give.
    for name in ("index.md", "summary.md", "improvements/h200run-01-sdpa-attention.md"):
        assert (copy / "docs" / name).read_text() == (EXAMPLE / "docs" / name).read_text()


def test_the_static_cache_ran_against_the_stack_it_builds_on() -> None:
    # 02 builds on 01 (adopted): its baseline arm is 01's command, not the campaign baseline.
    _, events = journal("static-cache")
    arms = {a["name"]: a["tokens"] for a in events[0]["plan"]["arms"]}
    assert arms == {
        "baseline": ["python3", "harness/decode.py", "--attn", "sdpa"],
        "static-cache": ["python3", "harness/decode.py", "--attn", "sdpa", "--cache", "static"],
    }


def test_a_benchmark_that_takes_a_load_needs_one(tmp_path: Path) -> None:
    # The example's command has `--batch {load}` and its campaign names no `run.loads`: without
    # --load the command would run as `--batch --seed 1`, so the runner refuses to plan it.
    copy = tmp_path / "h200-runner"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns("docs", "site"))
    refused = run_cli("run", "static-cache", "--blocks", "1", "--dry-run", "--root", str(copy))
    assert refused.returncode == 2 and "no load is given" in refused.stderr, refused.stderr
    planned = run_cli("run", "static-cache", "--blocks", "1", "--load", "64", "--dry-run", "--root", str(copy))
    assert planned.returncode == 0, planned.stderr
    assert planned.stdout.count("--batch 64 ") == 2


def test_the_examples_own_commands_run_again_and_it_still_checks_and_builds(tmp_path: Path) -> None:
    # The README's commands, as typed, on a copy whose harness is a CPU stand-in writing the same
    # format: each adds a second result at the same load, which the record reads as its latest.
    import re

    root = tmp_path / "example"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("docs"))
    shutil.copy(REPO / "tests" / "engine" / "decode_standin.py", root / "harness" / "decode.py")
    typed = re.findall(r"^improvements run [^#\n]*", (EXAMPLE / "README.md").read_text(), re.M)
    # The `--resume` line went on with a run a device call's time limit stopped: nothing to resume here.
    commands = [c for c in typed if "--resume" not in c]
    assert len(typed) == 5 and len(commands) == 4
    for command in commands:
        done = run_cli(*command.split()[1:], "--root", str(root))
        assert done.returncode == 0, done.stderr
    checked = run_cli("check", "--root", str(root), "--verbose")
    assert checked.returncode == 0, checked.stderr
    # Each earlier run is named as not used, at its result, and the build quotes the latest.
    assert checked.stderr.count("warning[rerun-unused]") == 4
    built = run_cli("build", "--root", str(root))
    assert built.returncode == 0, built.stderr
    data = export_data(analyse(require_project(root)))
    for entry in data["records"]:
        labels = [r["label"] for r in entry["record"]["results"]]
        assert len(labels) == 2 and entry["primary"]["result"] == max(labels, key=lambda x: x.rsplit(" ", 1)[1])


def test_a_harness_writing_four_runs_a_launch_reports_the_sequence_it_stopped_on(tmp_path: Path) -> None:
    # The example's one-shot harness with `--runs 4`: four timed calls in each output, one launch.
    root = tmp_path / "example"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("docs"))
    shutil.copy(REPO / "tests" / "engine" / "decode_standin.py", root / "harness" / "decode.py")
    done = run_cli(
        "run",
        *("sdpa-attention", "--runs", "4", "--until-decided", "--max-blocks", "8", "--load", "256", "--new-sequence"),
        *("--root", str(root)),
    )
    assert done.returncode == 0, done.stderr
    (path,) = [
        p
        for p in (root / "results" / "journal").glob("sdpa-attention-*.jsonl")
        if p.name != journal("sdpa-attention")[0].name
    ]
    events = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    last = [e for e in events if e["event"] == "look"][-1]
    runner = last["arms"]["sdpa-attention"]
    data = {r["slug"]: r for r in export_data(analyse(require_project(root)))["records"]}
    entry = data["sdpa-attention"]
    (latest,) = [r for r in entry["results"] if r["label"] == entry["primary"]["result"]]
    c = latest["comparisons"]["output_throughput"]
    assert latest["unit"] == "launch" and latest["launch_pairs"] and c["test"] == "sequence"
    assert c["n"] == runner["blocks"] and c["decision"] == runner["call"]
    assert (c["ci_low_percent"], c["ci_high_percent"]) == pytest.approx(
        (runner["low_percent"], runner["high_percent"]), rel=1e-9
    )


def _launch_log_ratios(slug: str) -> np.ndarray:
    """log(arm) - log(baseline) of each block's launch means (several timed calls a launch)."""
    path, _ = journal(slug)
    out = path.with_suffix("") / "out"

    def side(name: str) -> dict[int, float]:
        found = {}
        for f in out.glob(f"c*-b*-{name}.json"):
            rows = [json.loads(line) for line in f.read_text().splitlines() if line.strip()]
            timed = [r["output_tok_s"] for r in rows if not r["warmup"]]
            found[int(f.name.split("-")[1][1:])] = sum(timed) / len(timed)
        return found

    mine, base = side(slug), side("baseline")
    assert sorted(mine) == sorted(base)
    return np.array([math.log(mine[k]) - math.log(base[k]) for k in sorted(mine)])


def test_the_planned_run_is_its_confidence_sequence_over_launch_means(export: dict[str, dict]) -> None:
    # Record 04: six timed calls a launch, the launches paired by block, decided sequentially.
    d = _launch_log_ratios("sdpa-batch64")
    (result,) = export["sdpa-batch64"]["results"]
    c = result["comparisons"]["output_throughput"]
    sequential = export["sdpa-batch64"]["record"]["results"][0]["sequential"]
    assert sequential["blocks_run"] == len(d) == 16 and sequential["max_blocks"] == 40
    assert c["test"] == "sequence" and c["decision"] == "better"
    assert c["change_percent"] == pytest.approx(math.expm1(d.mean()) * 100, rel=1e-9)
    m, threshold = float(d.mean()), math.log(1 / 0.05)
    low = optimize.brentq(lambda mu: _log_mixture(d, mu) - threshold, m - 5, m)
    high = optimize.brentq(lambda mu: _log_mixture(d, mu) - threshold, m, m + 5)
    assert c["ci_low_percent"] == pytest.approx(math.expm1(low) * 100, rel=1e-6)
    assert c["ci_high_percent"] == pytest.approx(math.expm1(high) * 100, rel=1e-6)
    assert 10 <= c["change_percent"] <= 20 and c["ci_low_percent"] > 0


def test_the_planned_run_used_the_runs_per_launch_its_pilot_gives() -> None:
    """The plan the runner printed before record 04's run (device/console-1.log), again from the
    shipped pilot: its costs, its noise and the runs per launch they give."""
    from generator.analysis.plan_power import best_runs, fit_costs
    from generator.runner.journal import read
    from generator.runner.powerplan import launch_durations, pilot_noise
    from generator.runner.session import parser

    project = require_project(EXAMPLE)
    (pilot,) = sorted((JOURNAL / "pilot").glob("sdpa-batch64-*.jsonl"))
    state = read(pilot)
    assert state.plan.pilot and [r.per_launch for r in state.plan.runs] == [6, 6, 1, 1, 6, 6, 1, 1]
    noise = pilot_noise(EXAMPLE, state, parser(project, state.plan.settings.format), "output_throughput")
    costs = fit_costs(launch_durations(state))
    assert noise is not None and costs is not None and noise.icc is not None
    printed = (EXAMPLE / "device" / "console-1.log").read_text()
    assert f"a launch's {costs.launch_s:.1f} s, a run's {costs.run_s:.2f} s" in printed
    assert f"ICC {noise.icc:.2f}" in printed and "(8 launches, 28 runs)" in printed
    assert best_runs(noise, costs) == 6
    _, events = journal("sdpa-batch64")
    assert events[0]["plan"]["config"]["runs_per_launch"] == 6
