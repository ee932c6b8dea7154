"""Two versions of the package side by side, in one run: `check`, a clean build, one record's text
changed and one metric changed, on the synthetic campaigns (benchmarks/synth.py).

    .venv/bin/python benchmarks/ab.py --old main --sizes 100,1000 --repeat 3

The old version is `git archive`d into benchmarks/out/ab-<rev>/ and this checkout is the new one
(or, with `--new REV`, that revision archived the same way, so that editing the checkout while it
runs changes nothing measured);
both have their bytecode compiled, as an installation has it, and every timed process is fresh
(`python -m generator`, run in the version's own folder so that it imports that version). The two
take turns within each repetition, so a machine that gets busier slows both alike. Each figure is
the median of the repetitions after one untimed warm-up, as wall time and CPU time (user + system
of that process alone, from `wait4`): on a shared machine the wall times rise, the CPU times much
less.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from synth import chart_record, make_campaign, touch_metric, touch_record

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "benchmarks" / "out"
PY = sys.executable
FLOOR = """
import os, sys, yaml
folder = sys.argv[1]
for name in sorted(os.listdir(folder)):
    if name.endswith(".yaml"):
        with open(os.path.join(folder, name), "rb") as f:
            yaml.load(f, Loader=yaml.CSafeLoader)
"""


def run_once(cmd: list[str], cwd: Path, cache_home: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one fresh process; fails on a non-zero exit."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "XDG_CACHE_HOME": str(cache_home)}
    env.pop("PYTHONPATH", None)
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            raise SystemExit(f"`{' '.join(cmd)}` in {cwd} failed:\n{err.read().decode(errors='replace')[-3000:]}")
    return elapsed, usage.ru_utime + usage.ru_stime


def old_tree(rev: str) -> Path:
    # By commit, so that a branch or HEAD that moved is archived again.
    sha = subprocess.run(["git", "rev-parse", rev], cwd=REPO, check=True, capture_output=True, text=True).stdout
    dest = OUT / f"ab-{sha.strip()[:12]}"
    if not (dest / "generator").is_dir():
        dest.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "archive", rev, "generator"], cwd=REPO, check=True, capture_output=True)
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    return dest


def bench(n: int, versions: dict[str, Path], repeat: int) -> None:
    """Each case at `n` records, the versions taking turns."""
    pristine = OUT / f"ab-pristine-{n}"
    make_campaign(pristine, n)
    floor = [run_once([PY, "-c", FLOOR, str(pristine / "improvements")], REPO, OUT / "ab-cache") for _ in range(3)]
    print(f"N={n} floor (CSafeLoader) {statistics.median(w for w, _ in floor):.3f} s")
    work = {v: OUT / f"ab-work-{v}-{n}" for v in versions}
    cache = {v: OUT / f"ab-cache-{v}-{n}" for v in versions}
    generation = iter(range(1, 10_000))

    def clean(v: str) -> None:
        shutil.rmtree(work[v], ignore_errors=True)
        shutil.rmtree(cache[v], ignore_errors=True)
        shutil.copytree(pristine, work[v])

    def text(v: str) -> None:
        records = sorted((work[v] / "improvements").glob("[0-9]*.yaml"))
        touch_record(records[len(records) // 2], next(generation))

    def metric(v: str) -> None:
        touch_metric(chart_record(sorted((work[v] / "improvements").glob("[0-9]*.yaml"))), next(generation))

    cases: list[tuple[str, str, Callable[[str], None]]] = [
        ("build (clean)", "build", clean),
        ("check", "check", lambda v: None),
        ("build (one record's text)", "build", text),
        ("build (one metric)", "build", metric),
    ]
    for name, command, before in cases:
        times: dict[str, list[tuple[float, float]]] = {v: [] for v in versions}
        for i in range(repeat + 1):
            for v, tree in versions.items():
                before(v)
                took = run_once([PY, "-m", "generator", command, "--root", str(work[v])], tree, cache[v])
                if i:
                    times[v].append(took)
        shown = "  ".join(
            f"{v} {statistics.median(w for w, _ in t):6.3f} ({statistics.median(c for _, c in t):6.3f})"
            for v, t in times.items()
        )
        print(f"N={n} {name:<26} {shown}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", default="main", help="the git revision to compare with (default main)")
    parser.add_argument("--new", default=None, help="a git revision to measure instead of this checkout")
    parser.add_argument("--sizes", default="100,1000")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    versions = {"old": old_tree(args.old), "new": REPO if args.new is None else old_tree(args.new)}
    for tree in versions.values():
        subprocess.run([PY, "-m", "compileall", "-q", str(tree / "generator")], check=True, stdout=subprocess.DEVNULL)
    new = args.new or "this checkout"
    print(f"old = {args.old}, new = {new}; median of {args.repeat} after a warm-up; wall s (CPU s)")
    for n in (int(s) for s in args.sizes.split(",")):
        bench(n, versions, args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
