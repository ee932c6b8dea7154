"""The speed benchmark: whole fresh processes on synthetic campaigns of 10, 100 and 1000 records.

    .venv/bin/python benchmarks/run.py            # the full run (about five minutes on 2 cores)
    .venv/bin/python benchmarks/run.py --quick    # fewer repetitions, for a quick look

Every number is the median wall time of several fresh processes, each started the way a user
starts it (`improvements check`, `improvements build`, `mkdocs build`), after one untimed
warm-up run so that the page cache and bytecode are warm for all of them alike. The floor is
a fresh Python process that reads and parses the same YAML files with the fastest parser
there is (PyYAML's libyaml-backed CSafeLoader) and does nothing else: `check` is judged
against it, so the target holds on a slower or faster machine alike.

Prints the results, writes benchmarks/out/results.json, and replaces the generated section of
docs/guide/performance.md (unless --no-docs). Not part of the test suite: timings belong here,
never in tests.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synth import make_campaign, touch_record

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "benchmarks" / "out"
DOC = REPO / "docs" / "guide" / "performance.md"
BEGIN, END = "<!-- benchmark:begin -->", "<!-- benchmark:end -->"
PY = sys.executable
BIN = Path(PY).parent

FLOOR = """
import os, sys, yaml
folder = sys.argv[1]
for name in sorted(os.listdir(folder)):
    if name.endswith(".yaml"):
        with open(os.path.join(folder, name), "rb") as f:
            yaml.load(f, Loader=yaml.CSafeLoader)
"""


def _tool(name: str) -> list[str]:
    """A console script of this venv as users run it, or the module when it is not installed."""
    script = BIN / name
    if script.exists():
        return [str(script)]
    return [PY, "-m", {"improvements": "generator"}.get(name, name)]


IMPROVEMENTS = _tool("improvements")


@dataclass
class Sample:
    seconds: list[float] = field(default_factory=list)
    max_rss_kb: list[int] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def cpu_median(self) -> float:
        return statistics.median(self.cpu)

    @property
    def peak_mb(self) -> float:
        return max(self.max_rss_kb) / 1024


class Failed(Exception):
    pass


def run_once(cmd: list[str], cwd: Path) -> tuple[float, int, float]:
    """Wall time, peak resident memory (KB) and CPU time of one fresh process; fails on a non-zero exit."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err, env=env)
        # wait4 gives this child's own rusage; getrusage(RUSAGE_CHILDREN) would mix all children.
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            tail = err.read().decode("utf-8", "replace")[-3000:]
            raise Failed(f"`{' '.join(cmd)}` in {cwd} exited {proc.returncode}:\n{tail}")
    return elapsed, usage.ru_maxrss, usage.ru_utime + usage.ru_stime


def measure(cmd: list[str], cwd: Path, repeat: int, before: object = None, warmup: bool = True) -> Sample:
    """Median-ready samples of `cmd`; `before()` runs untimed before every run (warm-up included)."""
    sample = Sample()
    for i in range(repeat + (1 if warmup else 0)):
        if callable(before):
            before()
        seconds, rss, cpu = run_once(cmd, cwd)
        if warmup and i == 0:
            continue
        sample.seconds.append(seconds)
        sample.max_rss_kb.append(rss)
        sample.cpu.append(cpu)
    return sample


def machine() -> dict[str, str]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 0
    mem = ""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.0f} GiB"
    except OSError:
        pass
    return {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cores": str(cores),
        "cpu": cpu,
        "memory": mem,
        "python": platform.python_version(),
        "os": f"{platform.system()} {platform.release()}",
    }


def _dir_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def _pristine(n: int) -> Path:
    """A campaign of n records with the hand-written docs of this repository, never built."""
    dest = OUT / f"pristine-{n}"
    make_campaign(dest, n)
    docs = REPO / "docs"
    if docs.is_dir():
        # The hand-written pages the site's nav and CSS need; generated pages are left out so the
        # build writes them as it would in a new campaign.
        shutil.copytree(docs, dest / "docs", ignore=shutil.ignore_patterns("improvements"))
    return dest


def _fresh_copy(pristine: Path, dest: Path) -> None:
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(pristine, dest, symlinks=True)


def bench_size(n: int, repeat: int, parts: set[str], log: list[str]) -> dict[str, object]:
    pristine = _pristine(n)
    work = OUT / f"work-{n}"
    _fresh_copy(pristine, work)
    records = sorted((work / "improvements").glob("[0-9]*.yaml"))
    row: dict[str, object] = {"n": n}

    def say(text: str) -> None:
        print(text, flush=True)
        log.append(text)

    floor = measure([PY, "-c", FLOOR, str(work / "improvements")], REPO, repeat)
    row["floor"] = floor.median
    row["floor_cpu"] = floor.cpu_median
    say(f"N={n:<5} floor (CSafeLoader, fresh process) {floor.median:7.3f} s")

    if "check" in parts:
        check = measure([*IMPROVEMENTS, "check", "--root", str(work)], REPO, repeat)
        row["check"] = check.median
        row["check_cpu"] = check.cpu_median
        row["check_ratio"] = check.median / floor.median
        row["check_mb"] = check.peak_mb
        ratio = check.median / floor.median
        say(f"N={n:<5} check                            {check.median:7.3f} s  {ratio:5.2f}x floor")

    if "build" in parts:
        # A clean build: a new copy of the campaign, with no cache and no generated pages.
        build = measure(
            [*IMPROVEMENTS, "build", "--root", str(work)], REPO, repeat, before=lambda: _fresh_copy(pristine, work)
        )
        row["build"] = build.median
        row["build_cpu"] = build.cpu_median
        row["build_mb"] = build.peak_mb
        say(f"N={n:<5} build (clean)                    {build.median:7.3f} s  peak {build.peak_mb:.0f} MB")
        records = sorted((work / "improvements").glob("[0-9]*.yaml"))
        noop = measure([*IMPROVEMENTS, "build", "--root", str(work)], REPO, repeat)
        row["build_noop"] = noop.median
        row["build_noop_cpu"] = noop.cpu_median
        say(f"N={n:<5} build (nothing changed)          {noop.median:7.3f} s")
        generation = iter(range(1, 1000))
        target = records[len(records) // 2]
        rebuild = measure(
            [*IMPROVEMENTS, "build", "--root", str(work)],
            REPO,
            repeat,
            before=lambda: touch_record(target, next(generation)),
        )
        row["rebuild"] = rebuild.median
        row["rebuild_cpu"] = rebuild.cpu_median
        say(f"N={n:<5} build (one record changed)       {rebuild.median:7.3f} s")

    if "site" in parts:
        report = OUT / f"mkdocs-{n}.json"
        shares: list[float] = []

        def collect() -> None:
            if report.exists():
                shares.append(json.loads(report.read_text())["own"])

        site_runs = max(1, min(repeat, 3))
        site = Sample()
        for i in range(site_runs + 1):
            collect() if i > 0 else None
            seconds, rss, cpu = run_once(
                [PY, str(REPO / "benchmarks" / "mkdocs_timed.py"), str(work), str(report)], work
            )
            if i > 0:
                site.seconds.append(seconds)
                site.max_rss_kb.append(rss)
                site.cpu.append(cpu)
        collect()
        own = statistics.median(shares[-site_runs:])
        row["site"] = site.median
        row["site_cpu"] = site.cpu_median
        row["site_own"] = own
        row["site_share"] = own / site.median
        row["site_mb"] = site.peak_mb
        row["site_bytes"] = _dir_bytes(work / "site")
        say(
            f"N={n:<5} mkdocs build                     {site.median:7.3f} s  project's share "
            f"{own:.2f} s ({100 * own / site.median:.0f}%), site {row['site_bytes'] / 1e6:.1f} MB"
        )
    return row


def _fmt_s(value: object) -> str:
    return f"{value:.2f} s" if isinstance(value, float) else "—"


def _verdict(ok: bool, how: str) -> str:
    return "met" if ok else f"**missed** ({how})"


def table(rows: list[dict[str, object]], fixed: dict[str, float], info: dict[str, str], repeat: int) -> str:
    by_n = {r["n"]: r for r in rows}
    big = by_n.get(1000, rows[-1] if rows else {})
    out = [
        BEGIN,
        "<!-- Generated by `.venv/bin/python benchmarks/run.py`; do not edit by hand. -->",
        "",
        f"Measured {info['date']} on {info['cores']} cores of an {info['cpu']}, {info['memory']} of memory, "
        f"Python {info['python']}, {info['os']}. Each time is the median of {repeat} fresh processes "
        "after one untimed warm-up.",
        "",
        "| Target | Measured | |",
        "| --- | --- | --- |",
    ]

    def target(label: str, value: float | None, limit: float, unit: str = "s", fmt: str = "{:.2f}") -> None:
        if value is None:
            out.append(f"| {label} | not measured | |")
            return
        shown = fmt.format(value) + (unit if unit in ("x", "%") else f" {unit}" if unit else "")
        how = f"{value / limit:.1f}x the target"
        out.append(f"| {label} | {shown} | {_verdict(value <= limit, how)} |")

    target("`improvements --help` under 0.1 s", fixed.get("help"), 0.1, fmt="{:.3f}")
    target("`check` of the shipped campaign under 0.3 s", fixed.get("check_shipped"), 0.3, fmt="{:.3f}")
    ratio = big.get("check_ratio")
    target(
        f"`check` of {big.get('n')} records within 2.5x the floor ({_fmt_s(big.get('floor'))})",
        ratio if isinstance(ratio, float) else None,
        2.5,
        unit="x",
    )
    target(f"`build` of {big.get('n')} records under 1.5 s", big.get("build"), 1.5)  # type: ignore[arg-type]
    target(f"`build` of {big.get('n')} records after one record changed under 0.3 s", big.get("rebuild"), 0.3)  # type: ignore[arg-type]
    share = big.get("site_share")
    target(
        f"site of {big.get('n')} records: the project's share under 10%",
        100 * share if isinstance(share, float) else None,
        10,
        unit="%",
        fmt="{:.1f}",
    )
    target(f"site of {big.get('n')} records under 12 s", big.get("site"), 12)  # type: ignore[arg-type]
    memory = f"peak memory of `build` on {big.get('n')} records under 300 MB"
    target(memory, big.get("build_mb"), 300, unit="MB", fmt="{:.0f}")  # type: ignore[arg-type]

    out += [
        "",
        "| Records | Floor | `check` | `check` / floor | `build` (clean) | `build` (no change) | `build` (one changed) "
        "| `mkdocs build` | project's share | site size | `build` peak memory |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        ratio = r.get("check_ratio")
        share = r.get("site_share")
        size = r.get("site_bytes")
        mb = r.get("build_mb")
        out.append(
            f"| {r['n']} | {_fmt_s(r.get('floor'))} | {_fmt_s(r.get('check'))} | "
            f"{f'{ratio:.2f}x' if isinstance(ratio, float) else '—'} | {_fmt_s(r.get('build'))} | "
            f"{_fmt_s(r.get('build_noop'))} | {_fmt_s(r.get('rebuild'))} | {_fmt_s(r.get('site'))} | "
            f"{f'{100 * share:.1f}%' if isinstance(share, float) else '—'} | "
            f"{f'{size / 1e6:.1f} MB' if isinstance(size, int) else '—'} | "
            f"{f'{mb:.0f} MB' if isinstance(mb, float) else '—'} |"
        )
    # A sidebar listing every record on every page would make each added record cost more than
    # the last; equal marginal costs at both steps say the site grows linearly.
    steps = []
    for a, b in itertools.pairwise(rows):
        if all(isinstance(r.get(k), int | float) for r in (a, b) for k in ("site", "site_bytes")):
            n = b["n"] - a["n"]  # type: ignore[operator]
            ms = 1000 * (b["site"] - a["site"]) / n  # type: ignore[operator]
            kb = (b["site_bytes"] - a["site_bytes"]) / n / 1000  # type: ignore[operator]
            steps.append(f"from {a['n']} to {b['n']} records, {ms:.0f} ms and {kb:.0f} KB of site per record")
    if steps:
        out += ["", "Site cost of each added record: " + "; ".join(steps) + "."]
    out += [
        "",
        f"`improvements --help`: {_fmt_s(fixed.get('help'))}; `check` of the shipped campaign: "
        f"{_fmt_s(fixed.get('check_shipped'))}.",
        END,
    ]
    return "\n".join(out)


def write_doc(section: str) -> None:
    text = DOC.read_text(encoding="utf-8") if DOC.exists() else f"# Performance\n\n{BEGIN}\n{END}\n"
    if BEGIN not in text or END not in text:
        text = text.rstrip("\n") + f"\n\n{BEGIN}\n{END}\n"
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    DOC.parent.mkdir(parents=True, exist_ok=True)
    tmp = DOC.with_suffix(".md.tmp")
    tmp.write_text(head + section + tail, encoding="utf-8")
    os.replace(tmp, DOC)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 repetitions instead of 5, for a quick look")
    parser.add_argument("--repeat", type=int, help="repetitions per measurement (default 5, or 2 with --quick)")
    parser.add_argument("--sizes", default="10,100,1000", help="record counts, comma-separated (default 10,100,1000)")
    parser.add_argument(
        "--parts", default="check,build,site", help="what to time besides the floor (default check,build,site)"
    )
    parser.add_argument("--no-docs", action="store_true", help="do not rewrite docs/guide/performance.md")
    args = parser.parse_args()
    repeat = args.repeat or (2 if args.quick else 5)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    parts = {p.strip() for p in args.parts.split(",") if p.strip()}
    OUT.mkdir(parents=True, exist_ok=True)
    info = machine()
    print(
        f"{info['date']}: {info['cores']} cores, {info['cpu']}, Python {info['python']}; {repeat} runs each", flush=True
    )
    log: list[str] = []
    rows = []
    try:
        fixed = {
            "help": measure([*IMPROVEMENTS, "--help"], REPO, repeat).median,
            "check_shipped": measure([*IMPROVEMENTS, "check", "--root", str(REPO)], REPO, repeat).median,
        }
        print(f"improvements --help                        {fixed['help']:7.3f} s", flush=True)
        print(f"check of the shipped campaign              {fixed['check_shipped']:7.3f} s", flush=True)
        for n in sizes:
            rows.append(bench_size(n, repeat, parts, log))
    except Failed as exc:
        print(f"benchmark failed: {exc}", file=sys.stderr)
        return 1
    (OUT / "results.json").write_text(
        json.dumps({"machine": info, "repeat": repeat, "fixed": fixed, "sizes": rows}, indent=2) + "\n"
    )
    section = table(rows, fixed, info, repeat)
    print()
    print(section)
    if not args.no_docs:
        write_doc(section)
        print(f"\nwrote {DOC.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
