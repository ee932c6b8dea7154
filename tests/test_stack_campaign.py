"""Changes that build on each other, end to end: `builds_on`, `baseline_from`, the checks, the
`stack` command, and the road to the goal on the home page."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from generator import charts
from generator.analysis.campaign import analyse
from generator.checks.validate import require_project
from generator.model.quantity import fmt_number
from generator.output.render import render_files
from generator.views.road import road_plot

from conftest import REPO, run_cli

CAMPAIGN = """\
name: Stack test
series: stackt
model: {name: M}
hardware: {gpu: G, count: 8}
engine: {name: SGLang}
baseline:
  label: TP8
  command: >-
    python -m sglang.launch_server --model-path $MODEL_PATH --tp-size 8
    --max-running-requests 1024
  env: {NCCL_P2P_LEVEL: SYS}
  results:
    - label: single stream
      concurrency: 1
      metrics: {output_throughput: 100}
goals:
  - metric: output_throughput
    concurrency: 1
    target: 200
tiers: {1: a, 2: b, 3: c}
"""

DP = """\
title: DP attention
tier: 1
status: adopted
hypothesis: h
verdict: v
change:
  flags: ["--enable-dp-attention", "--dp-size 8"]
results:
  - label: arm 2
    concurrency: 1
    metrics: {output_throughput: 138.3}
    baseline: {output_throughput: 100}
"""

# Numbered before the record it builds on: the stack still applies it after.
DRAFTER = """\
title: Drafter
tier: 1
status: adopted
hypothesis: h
verdict: v
builds_on: [dp-attention]
change:
  flags: ["--speculative-algorithm EAGLE", "--speculative-num-steps 3"]
  env: {SGLANG_ENABLE_SPEC: "1"}
results:
  - label: on top
    concurrency: 1
    metrics: {output_throughput: 153.5}
    baseline_from: {record: dp-attention, result: arm 2}
"""

NO_LIMIT = """\
title: No request limit
tier: 2
status: adopted
hypothesis: h
verdict: v
builds_on: [drafter]
change:
  remove_flags: ["--max-running-requests"]
results:
  - label: c1
    concurrency: 1
    metrics: {output_throughput: 160}
    baseline_from: {record: drafter, result: on top}
"""


def make(tmp_path: Path, records: dict[str, str]) -> Path:
    root = tmp_path / "repo"
    (root / "improvements").mkdir(parents=True)
    (root / "results").mkdir()
    (root / "improvements" / "campaign.yaml").write_text(CAMPAIGN)
    for name, text in records.items():
        (root / "improvements" / name).write_text(text)
    return root


THREE = {"05-dp-attention.yaml": DP, "03-drafter.yaml": DRAFTER, "07-no-limit.yaml": NO_LIMIT}


def check(root: Path) -> list[str]:
    out = run_cli("check", "--root", str(root), env={"COLUMNS": "300"})
    return [line for line in (out.stderr + out.stdout).splitlines() if "error[" in line or "warning[" in line]


# --- the stack command ----------------------------------------------------------------------------


@pytest.mark.slow
def test_three_step_stack_is_a_script_a_shell_runs_with_the_baseline_plus_the_adopted_changes(tmp_path: Path) -> None:
    root = make(tmp_path, THREE)
    assert check(root) == []
    out = run_cli("stack", "--root", str(root))
    assert out.returncode == 0, out.stderr
    script = out.stdout
    assert "applied in this order: 05-dp-attention, 03-drafter, 07-no-limit" in script
    assert "--enable-dp-attention" in script and "from 05-dp-attention" in script
    assert "(removed) --max-running-requests 1024" in script and "by 07-no-limit" in script
    assert "SGLANG_ENABLE_SPEC=1" in script and "from 03-drafter" in script
    bash = shutil.which("bash")
    assert bash is not None
    assert subprocess.run([bash, "-n"], input=script, text=True, check=False).returncode == 0
    # Run it with `python` standing in as a function that prints its words and the environment.
    fake = 'python() { printf "%s\\n" "$NCCL_P2P_LEVEL" "$SGLANG_ENABLE_SPEC" "$@"; }\nMODEL_PATH="/m o"\n'
    ran = subprocess.run([bash, "-c", fake + script], text=True, capture_output=True, check=True).stdout.splitlines()
    expected = [
        *["-m", "sglang.launch_server", "--model-path", "/m o", "--tp-size", "8"],
        *["--enable-dp-attention", "--dp-size", "8", "--speculative-algorithm", "EAGLE"],
        "--speculative-num-steps",
        "3",
    ]
    assert ran == ["SYS", "1", *expected]
    one = run_cli("stack", "--root", str(root), "--format", "command").stdout
    assert shlex.split(one) == [
        "NCCL_P2P_LEVEL=SYS",
        "SGLANG_ENABLE_SPEC=1",
        "python",
        *expected[:3],
        "$MODEL_PATH",
        *expected[4:],
    ]


def test_stack_json_names_each_lines_record(tmp_path: Path) -> None:
    root = make(tmp_path, THREE)
    data = json.loads(run_cli("stack", "--root", str(root), "--format", "json").stdout)
    assert [r["slug"] for r in data["records"]] == ["dp-attention", "drafter", "no-limit"]
    by_text = {line["text"]: line for line in data["lines"]}
    assert by_text["--dp-size 8"]["record"] == "05-dp-attention"
    assert by_text["--max-running-requests 1024"] == {
        "text": "--max-running-requests 1024",
        "kind": "removed",
        "record": "07-no-limit",
        "replaces": None,
    }
    assert data["env"] == {"NCCL_P2P_LEVEL": "SYS", "SGLANG_ENABLE_SPEC": "1"}


def test_superseded_record_leaves_the_stack(tmp_path: Path) -> None:
    old = DP.replace("status: adopted", "status: superseded\nsuperseded_by: dp-attention").replace(
        "--dp-size 8", "--dp-size 4"
    )
    root = make(tmp_path, {"05-dp-attention.yaml": DP, "02-old-dp.yaml": old})
    # Adopted, the two would conflict on --dp-size; superseded, the old one is out of the stack.
    assert check(root) == []
    data = json.loads(run_cli("stack", "--root", str(root), "--format", "json").stdout)
    assert [r["slug"] for r in data["records"]] == ["dp-attention"]
    summary = {
        r["slug"]: r["in_stack"] for r in json.loads(run_cli("summary", "--root", str(root), "--format", "json").stdout)
    }
    assert summary == {"dp-attention": True, "old-dp": False}


def test_no_adopted_record_is_the_baseline(tmp_path: Path) -> None:
    root = make(tmp_path, {"05-dp-attention.yaml": DP.replace("status: adopted", "status: in-progress")})
    out = run_cli("stack", "--root", str(root)).stdout
    assert out.startswith("# No record is adopted: the launch command in force is the campaign baseline (TP8).")
    # The caveats under the command are comments: the script runs as printed.
    assert "\n# Caveat: " in out.rsplit("1024", 1)[1]
    assert shlex.split(out.split("\n", 1)[1].replace("\\\n", ""), comments=True) == [
        "NCCL_P2P_LEVEL=SYS",
        *["python", "-m", "sglang.launch_server", "--model-path", "$MODEL_PATH", "--tp-size", "8"],
        *["--max-running-requests", "1024"],
    ]


# --- the checks -----------------------------------------------------------------------------------


def test_conflict_is_shown_at_both_positions(tmp_path: Path) -> None:
    other = DP.replace("--dp-size 8", "--dp-size 4").replace("--enable-dp-attention", "--enable-foo")
    other = other.replace("title: DP attention", "title: Other")
    other += "  - label: x\n    concurrency: 1\n    metrics: {output_throughput: 101}\n"
    other = other.replace("change:\n", "change:\n  env: {NCCL_P2P_LEVEL: NVL}\n")
    dp = DP.replace("change:\n", "change:\n  env: {NCCL_P2P_LEVEL: PIX}\n")
    root = make(tmp_path, {"05-dp-attention.yaml": dp, "06-other.yaml": other})
    problems = check(root)
    hint = " (hint: say which wins: let the later record build on the other (`builds_on`), or supersede one)"
    assert problems == [
        "improvements/05-dp-attention.yaml:7:25: error[stack-conflict]: adopted changes conflict: "
        "`NCCL_P2P_LEVEL=PIX` here, `NCCL_P2P_LEVEL=NVL` in 06-other" + hint,
        "improvements/05-dp-attention.yaml:8:36: error[stack-conflict]: adopted changes conflict: "
        "`--dp-size 8` here, `--dp-size 4` in 06-other" + hint,
        "improvements/06-other.yaml:7:25: error[stack-conflict]: adopted changes conflict: "
        "`NCCL_P2P_LEVEL=NVL` here, `NCCL_P2P_LEVEL=PIX` in 05-dp-attention" + hint,
        "improvements/06-other.yaml:8:27: error[stack-conflict]: adopted changes conflict: "
        "`--dp-size 4` here, `--dp-size 8` in 05-dp-attention" + hint,
    ]
    # Building on the other, the later record knowingly overrides it: no conflict, its values win.
    (root / "improvements" / "06-other.yaml").write_text(
        other.replace("verdict: v\n", "verdict: v\nbuilds_on: [dp-attention]\n")
    )
    assert check(root) == []
    data = json.loads(run_cli("stack", "--root", str(root), "--format", "json").stdout)
    assert data["env"]["NCCL_P2P_LEVEL"] == "NVL" and "4" in data["tokens"]


def test_removing_what_another_adopted_record_sets_is_a_conflict(tmp_path: Path) -> None:
    remover = NO_LIMIT.replace("builds_on: [drafter]\n", "").replace("--max-running-requests", "--dp-size")
    remover = remover.replace("baseline_from: {record: drafter, result: on top}", "baseline: {output_throughput: 150}")
    root = make(tmp_path, {"05-dp-attention.yaml": DP, "07-no-dp.yaml": remover})
    problems = check(root)
    assert len(problems) == 2
    assert problems[0].startswith(
        "improvements/05-dp-attention.yaml:7:36: error[stack-conflict]: adopted changes conflict: "
        "`--dp-size 8` here, removed in 07-no-dp"
    )
    assert problems[1].startswith(
        "improvements/07-no-dp.yaml:7:18: error[stack-conflict]: adopted changes conflict: "
        "`--dp-size` removed here, set to `--dp-size 8` in 05-dp-attention"
    )


def test_missing_record_and_label_are_errors_with_positions(tmp_path: Path) -> None:
    drafter = DRAFTER.replace("builds_on: [dp-attention]", "builds_on: [dp-attentoin]")
    drafter = drafter.replace("result: arm 2}", "result: arm two}")
    root = make(tmp_path, {"05-dp-attention.yaml": DP, "03-drafter.yaml": drafter})
    assert check(root) == [
        "improvements/03-drafter.yaml:6:13: error[unknown-slug]: no record has slug `dp-attentoin` "
        "(hint: did you mean `dp-attention`?)",
        "improvements/03-drafter.yaml:14:51: error[unknown-result]: record `dp-attention` has no result labelled "
        "`arm two` (hint: did you mean `arm 2`?)",
    ]
    missing = DRAFTER.replace("record: dp-attention,", "record: nowhere,").replace("builds_on: [dp-attention]\n", "")
    (root / "improvements" / "03-drafter.yaml").write_text(missing)
    assert check(root) == [
        "improvements/03-drafter.yaml:13:29: error[unknown-slug]: no record has slug `nowhere` "
        "(hint: slugs are the part of a file name after the number)",
    ]


def test_cycles_are_errors_with_positions(tmp_path: Path) -> None:
    dp = DP.replace("verdict: v\n", "verdict: v\nbuilds_on: [drafter]\n")
    root = make(tmp_path, {"05-dp-attention.yaml": dp, "03-drafter.yaml": DRAFTER})
    assert [p.split(": error[")[0] + " " + p.split("]")[0].split("[")[1] for p in check(root)] == [
        "improvements/03-drafter.yaml:6:13 build-cycle",
        "improvements/05-dp-attention.yaml:6:13 build-cycle",
    ]
    # Results that are each other's baseline, in records that do not build on each other.
    a = DP.replace("    baseline: {output_throughput: 100}", "    baseline_from: {record: drafter, result: on top}")
    root = make(
        tmp_path / "2",
        {"05-dp-attention.yaml": a, "03-drafter.yaml": DRAFTER.replace("builds_on: [dp-attention]\n", "")},
    )
    problems = check(root)
    assert len(problems) == 2 and all(
        "error[build-cycle]: results are each other's baseline in a circle" in p for p in problems
    )
    assert problems[0].startswith("improvements/03-drafter.yaml:13:20:")
    assert problems[1].startswith("improvements/05-dp-attention.yaml:12:20:")


def test_baseline_from_with_typed_baseline_is_refused(tmp_path: Path) -> None:
    both = DRAFTER.replace("    baseline_from:", "    baseline: {output_throughput: 138.3}\n    baseline_from:")
    root = make(tmp_path, {"05-dp-attention.yaml": DP, "03-drafter.yaml": both})
    problems = check(root)
    assert len(problems) == 1 and "`baseline_from` names the baseline; it replaces `baseline`" in problems[0]


# --- numbers and the road -------------------------------------------------------------------------


def test_baseline_from_resolves_the_other_records_numbers(tmp_path: Path) -> None:
    root = make(tmp_path, THREE)
    analysis = analyse(require_project(root))
    drafter = analysis.record(analysis.by_slug["drafter"]).results[0]
    assert dict(drafter.baseline) == {"output_throughput": 138.3}
    assert drafter.notes == ("Measured on top of 05-dp-attention: compared with its result `arm 2`.",)
    delta = drafter.comparisons["output_throughput"]
    assert delta is not None and delta.change_percent == pytest.approx((153.5 - 138.3) / 138.3 * 100)
    # Change the number once, in its own record: the drafter's baseline follows.
    dp = root / "improvements" / "05-dp-attention.yaml"
    dp.write_text(dp.read_text().replace("138.3", "140"))
    again = analyse(require_project(root))
    assert dict(again.record(again.by_slug["drafter"]).results[0].baseline) == {"output_throughput": 140.0}


def test_road_and_waterfall_numbers_are_computed_from_the_records(tmp_path: Path) -> None:
    root = make(tmp_path, THREE)
    analysis = analyse(require_project(root))
    road = analysis.stack.road
    assert road is not None and road.chained
    deltas = [s.change.delta for s in road.steps if s.change]
    assert deltas == pytest.approx([38.3, 153.5 - 138.3, 160 - 153.5])
    assert road.current.mean == pytest.approx(160)
    # Single shots all the way: the level has no interval, so the distance is the point's, and never "reached".
    assert [(g.low, g.high, g.interval) for g in road.goals] == [(pytest.approx(40), pytest.approx(40), False)]
    found = road_plot(analysis)
    assert found is not None
    path, alt, svg = found
    assert (
        path == "docs/plots/road-to-goal.svg"
        and svg.splitlines()[1] == "<!-- generated by improvements; do not edit -->"
    )
    levels = [100.0]
    for d in deltas:
        levels.append(levels[-1] + d)
    for label, d, level in zip(["05-dp-attention", "03-drafter", "07-no-limit"], deltas, levels[1:], strict=True):
        assert f"{label} +{fmt_number(d)} to {fmt_number(level)}" in alt
    assert charts.description(svg.split("\n", 2)[2]) == alt
    files = render_files(analysis)
    home = files["docs/index.md"]
    assert "| **Current** | | | | | **160 tok/s** |" in home
    assert "- Goal above 200 tok/s: 40 tok/s to go (no interval: a single measurement without a spread" in home
    assert "The chain breaks" not in home
    page = files["docs/improvements/stackt-03-drafter.md"]
    assert "| In the stack | yes, step 2 of 3, after 05-dp-attention |" in page
    # A record's own command applies what it builds on first.
    assert "--enable-dp-attention" in page and "--speculative-algorithm EAGLE" in page


def test_a_step_measured_under_another_load_breaks_the_chain(tmp_path: Path) -> None:
    moved = (
        NO_LIMIT.replace("concurrency: 1\n", "concurrency: 64\n")
        .replace("    baseline_from: {record: drafter, result: on top}", "    baseline: {output_throughput: 2000}")
        .replace("output_throughput: 160", "output_throughput: 2300")
    )
    root = make(tmp_path, {**THREE, "07-no-limit.yaml": moved})
    analysis = analyse(require_project(root))
    road = analysis.stack.road
    assert road is not None and not road.chained
    assert road.steps[2].chain_break == "concurrency 64 here, 1 in 03-drafter"
    home = render_files(analysis)["docs/index.md"]
    assert '!!! warning "The chain breaks"' in home
    assert "    - before 07-no-limit: concurrency 64 here, 1 in 03-drafter" in home
    # No level and no goal distance are made up from steps measured under different conditions.
    assert "not measured: the chain breaks (below), so the steps do not add up to a level" in home
    assert road.goals == () and "to go" not in home.split("## The road to the goal", 1)[1].split("## Tiers", 1)[0]
    found = road_plot(analysis)
    assert found is not None and "chain breaks (concurrency 64 here, 1 in 03-drafter), then 07-no-limit" in found[1]


def test_shipped_campaign_says_no_record_is_adopted_and_shows_the_baseline_against_the_goal() -> None:
    analysis = analyse(require_project(REPO))
    assert analysis.stack.records == ()
    home = render_files(analysis)["docs/index.md"]
    section = home[home.index("## The road to the goal") : home.index("## Tiers")]
    assert "No record is adopted yet: the launch command in force is the baseline command (below)." in section
    assert "~8–11 tok/s (a range; the chart draws its midpoint, 9.5 tok/s)" in section
    assert "The goal is above 100 tok/s: 89 to 92 tok/s to go." in section
    assert "![" in section and "plots/road-to-goal.svg" in section


def test_what_the_command_cannot_say_is_named(tmp_path: Path) -> None:
    # 07 builds on the drafter, which is not adopted, and patches a kernel: the stack says both.
    drafter = DRAFTER.replace("status: adopted", "status: in-progress")
    no_limit = NO_LIMIT.replace("  remove_flags:", "  patches: [{summary: A faster top-k kernel}]\n  remove_flags:")
    root = make(tmp_path, {**THREE, "03-drafter.yaml": drafter, "07-no-limit.yaml": no_limit})
    assert check(root) == []
    script = run_cli("stack", "--root", str(root)).stdout
    assert "# Not in the command: 07-no-limit: builds on `drafter`, which is not adopted" in script
    assert "# Not in the command: 07-no-limit: patch: A faster top-k kernel" in script
    home = render_files(analyse(require_project(root)))["docs/index.md"]
    assert "- 07-no-limit: builds on `drafter`, which is not adopted" in home


ARMS = """\
title: Transport arms
tier: 1
status: adopted
hypothesis: h
verdict: v
variants:
  - label: arm 1
    outcome: rejected
    change: {flags: ["--dp-size 2"]}
  - label: arm 2
    outcome: retained
    change: {flags: ["--dp-size 8"]}
    results:
      - label: arm 2
        concurrency: 1
        metrics: {output_throughput: 138.3}
        baseline: {output_throughput: 100}
"""


def test_the_stack_takes_the_retained_variants_change(tmp_path: Path) -> None:
    root = make(tmp_path, {"03-transport-arms.yaml": ARMS})
    assert check(root) == []
    out = run_cli("stack", "--root", str(root), "--format", "command").stdout
    tokens = shlex.split(out)
    assert tokens[tokens.index("--dp-size") + 1] == "8"
    # A conflict with another adopted record is shown where the retained variant sets the flag.
    other = DP.replace("--dp-size 8", "--dp-size 4")
    root = make(tmp_path / "two", {"03-transport-arms.yaml": ARMS, "05-dp-attention.yaml": other})
    found = check(root)
    assert any(p.startswith("improvements/03-transport-arms.yaml:12:") and "stack-conflict" in p for p in found), found


def test_two_base_commands_conflict_at_each_records_base_command(tmp_path: Path) -> None:
    one = DP.replace("change:\n", "change:\n  base_command: python -m sglang.launch_server --model-path X\n")
    other = DP.replace("title: DP attention", "title: Other").replace("--dp-size 8", "--dp-size 4")
    other = other.replace("change:\n", "change:\n  base_command: python -m vllm.entrypoints.api_server\n")
    root = make(tmp_path, {"05-dp-attention.yaml": one, "06-other.yaml": other})
    found = [p.split(" (hint:")[0] for p in check(root) if "base_command" in p]
    assert found == [
        "improvements/05-dp-attention.yaml:7:17: error[stack-conflict]: adopted changes conflict: "
        "a different `base_command` from 06-other",
        "improvements/06-other.yaml:7:17: error[stack-conflict]: adopted changes conflict: "
        "a different `base_command` from 05-dp-attention",
    ]
