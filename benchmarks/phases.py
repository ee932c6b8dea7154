"""Where a build's time goes: the phases of `improvements build`, for the targets it misses.

benchmarks/run.py times whole processes; this says which phase holds a missed target. Each
case runs `improvements build` in a fresh process under cProfile, after the same preparation
as run.py (a synthetic campaign from synth.py, built once, then one record's text or one
metric edited, or a clean copy), and prints each phase's share of the profiled process with
that share of the same case's unprofiled wall time (median of `--repeat` fresh processes).
cProfile slows Python code more than C code, so the seconds are estimates; the shares are
what it measured.

    .venv/bin/python benchmarks/phases.py                 # 1,000 records
    .venv/bin/python benchmarks/phases.py --records 3000 --cases clean
"""

from __future__ import annotations

import argparse
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from synth import chart_record, make_campaign, touch_metric, touch_record

REPO = Path(__file__).resolve().parent.parent
PYTHON = sys.executable

# (shown name, the profile's function: file suffix and name), in the order a build runs them.
PHASES = [
    ("imports", ("<frozen importlib._bootstrap>", "_find_and_load")),
    ("inputs digest (stamp)", ("generator/base/stamp.py", "inputs_digest")),
    ("load + cross-check", ("generator/checks/validate.py", "require_project")),
    ("analysis", ("generator/analysis/campaign.py", "analyse")),
    ("render: charts", ("generator/output/render.py", "_charts")),
    ("render: record page models", ("generator/views/record_page.py", "model")),
    ("render: Jinja templates", ("jinja2/environment.py", "render")),
    # The home page, the summary, the blockers page and the timeline: their models, the keys of
    # their pieces, and the Jinja of the pieces that changed and of the pages around them.
    ("render: listing pages", ("generator/output/listing.py", "pages")),
    ("render: records.json + summary.csv", ("generator/output/render.py", "downloads")),
    # Outputs are written as they are rendered: this one holds the render phases above.
    ("write outputs (rendering included)", ("generator/base/generated.py", "write_outputs")),
    ("build cache save", ("generator/base/incremental.py", "save")),
]


def _cumulative(stats: pstats.Stats, where: str, name: str) -> float:
    raw = stats.stats  # type: ignore[attr-defined]
    return sum(v[3] for (file, _line, func), v in raw.items() if file.endswith(where) and func == name)


def _build(root: Path, env: dict[str, str], profile: Path | None = None) -> float:
    cmd = [PYTHON, "-m", "generator", "build", "--root", str(root)]
    if profile is not None:
        cmd = [PYTHON, "-m", "cProfile", "-o", str(profile), *cmd[1:]]
    began = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, capture_output=True)
    return time.perf_counter() - began


def _prepare(case: str, base: Path, work: Path, generation: int) -> None:
    if case == "clean":
        if work.exists():
            shutil.rmtree(work)
        shutil.copytree(base, work, ignore=shutil.ignore_patterns("docs"))
        return
    records = sorted((work / "improvements").glob("[0-9]*.yaml"))
    if case == "text":
        touch_record(records[len(records) // 2], generation)
    else:
        touch_metric(chart_record(records), generation)


def measure(case: str, n: int, repeat: int, folder: Path) -> None:
    base = folder / f"base-{n}"
    if not base.exists():
        make_campaign(base, n)
    work = folder / f"work-{n}-{case}"
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(base, work)
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", XDG_CACHE_HOME=str(folder / f"cache-{case}"))
    shutil.rmtree(folder / f"cache-{case}", ignore_errors=True)
    if case != "clean":
        _build(work, env)
    walls = []
    for generation in range(1, repeat + 2):
        if case == "clean":
            shutil.rmtree(folder / f"cache-{case}", ignore_errors=True)
        _prepare(case, base, work, generation)
        wall = _build(work, env)
        if generation > 1:  # the first is the warm-up
            walls.append(wall)
    if case == "clean":
        shutil.rmtree(folder / f"cache-{case}", ignore_errors=True)
    _prepare(case, base, work, repeat + 2)
    profile = folder / f"{case}.prof"
    _build(work, env, profile)
    stats = pstats.Stats(str(profile))
    total = stats.total_tt  # type: ignore[attr-defined]
    wall = statistics.median(walls)
    title = {"text": "one record's text changed", "metric": "one metric changed", "clean": "clean build"}[case]
    print(f"\n{title}, {n} records: {wall:.2f} s wall (median of {len(walls)}); profiled {total:.2f} s")
    print("| Phase | share | about |\n| --- | ---: | ---: |")
    for shown, (where, name) in PHASES:
        share = _cumulative(stats, where, name) / total
        print(f"| {shown} | {share:.0%} | {share * wall:.2f} s |")
    print("(imports are counted again inside the phases that make them, and rendering inside the writing)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cases", default="text,metric,clean")
    args = parser.parse_args()
    subprocess.run([PYTHON, "-m", "compileall", "-q", str(REPO / "generator")], check=True)
    with tempfile.TemporaryDirectory(prefix="phases-") as tmp:
        for case in args.cases.split(","):
            measure(case, args.records, args.repeat, Path(tmp))


if __name__ == "__main__":
    main()
