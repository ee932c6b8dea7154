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
import socket
import urllib.request

from synth import chart_record, make_campaign, retitle, touch_metric, touch_record

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "benchmarks" / "out"
DOC = REPO / "docs" / "guide" / "performance.md"
BEGIN, END = "<!-- benchmark:begin -->", "<!-- benchmark:end -->"
PY = sys.executable
BIN = Path(PY).parent

# What a build with nothing to do cannot avoid: start Python, read and hash every input.
HASH_FLOOR = """
import hashlib, os, sys
h = hashlib.blake2b()
for folder in ("improvements", "results", "templates"):
    for dirpath, dirs, files in os.walk(os.path.join(sys.argv[1], folder)):
        dirs.sort()
        for name in sorted(files):
            with open(os.path.join(dirpath, name), "rb") as f:
                h.update(f.read())
"""

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


# The build cache lives in the user's cache folder; the benchmark keeps its own, so that a
# "fresh clone" can start with an empty one and nothing of the user's is touched.
CACHE_HOME = OUT / "cache-home"


def run_once(cmd: list[str], cwd: Path, cache_home: Path | None = None) -> tuple[float, int, float]:
    """Wall time, peak resident memory (KB) and CPU time of one fresh process; fails on a non-zero exit."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "XDG_CACHE_HOME": str(cache_home or CACHE_HOME)}
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


def measure(
    cmd: list[str], cwd: Path, repeat: int, before: object = None, warmup: bool = True, cache_home: Path | None = None
) -> Sample:
    """Median-ready samples of `cmd`; `before()` runs untimed before every run (warm-up included)."""
    sample = Sample()
    for i in range(repeat + (1 if warmup else 0)):
        if callable(before):
            before()
        seconds, rss, cpu = run_once(cmd, cwd, cache_home)
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


def bench_size(n: int, repeat: int, parts: set[str], log: list[str], quick: bool = False) -> dict[str, object]:
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
        # A clean build: a new copy of the campaign, with no generated pages and an empty build
        # cache of its own. (The copy is at the same path each time, so in the shared cache home
        # it found the cache of the run before it: the tables before 2 December 2026 timed that.)
        clean_cache = OUT / "cache-clean"

        def clean() -> None:
            _fresh_copy(pristine, work)
            shutil.rmtree(clean_cache, ignore_errors=True)

        build = measure(
            [*IMPROVEMENTS, "build", "--root", str(work)], REPO, repeat, before=clean, cache_home=clean_cache
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
        charted = chart_record(records)
        metric = measure(
            [*IMPROVEMENTS, "build", "--root", str(work)],
            REPO,
            repeat,
            before=lambda: touch_metric(charted, next(generation)),
        )
        row["metric"] = metric.median
        row["metric_cpu"] = metric.cpu_median
        say(f"N={n:<5} build (one metric changed)       {metric.median:7.3f} s")
        # A fresh clone of the built campaign: another path, new mtimes, an empty user cache.
        clone, clone_cache = OUT / f"clone-{n}", OUT / f"clone-cache-{n}"

        def fresh_clone() -> None:
            for folder in (clone, clone_cache):
                if folder.exists():
                    shutil.rmtree(folder)
            shutil.copytree(work, clone, symlinks=True)
            for path in clone.rglob("*"):
                os.utime(path, follow_symlinks=False)

        cloned = measure(
            [*IMPROVEMENTS, "build", "--root", str(clone)], REPO, repeat, before=fresh_clone, cache_home=clone_cache
        )
        out = subprocess.run(
            [*IMPROVEMENTS, "build", "--root", str(clone)],
            capture_output=True,
            text=True,
            env={**os.environ, "XDG_CACHE_HOME": str(clone_cache)},
        ).stdout
        row["clone"] = cloned.median
        row["clone_wrote_nothing"] = " 0 written" in out and not (clone_cache / "improvements").exists()
        say(
            f"N={n:<5} build (fresh clone, current)     {cloned.median:7.3f} s  "
            f"wrote nothing: {row['clone_wrote_nothing']}"
        )
        hashing = measure([PY, "-c", HASH_FLOOR, str(work)], REPO, repeat)
        row["hash_floor"] = hashing.median
        say(f"N={n:<5} floor (read and hash the inputs)  {hashing.median:7.3f} s")
        row["peak_mb"] = max(build.peak_mb, noop.peak_mb, rebuild.peak_mb, metric.peak_mb, row.get("check_mb", 0.0))

    if "serve" in parts and n <= SERVE_MAX:
        row.update(bench_serve(n, work, records, repeat, say))

    site_sizes = n in SITE_QUICK_SIZES or not quick
    if "site" in parts and site_sizes:
        report = OUT / f"mkdocs-{n}.json"
        reports: list[dict[str, float]] = []
        # A whole-site build is the slowest measurement by far: at most 3 runs, one with --quick.
        # The untimed first one also keeps the analysis, as `build --site` does before mkdocs runs.
        site_runs = 1 if quick else max(1, min(repeat, 3))
        warm = 1
        site = Sample()
        for i in range(site_runs + warm):
            report.unlink(missing_ok=True)
            seconds, rss, cpu = run_once(
                [PY, str(REPO / "benchmarks" / "mkdocs_timed.py"), str(work), str(report)], work
            )
            if i >= warm:
                site.seconds.append(seconds)
                site.max_rss_kb.append(rss)
                site.cpu.append(cpu)
                reports.append(json.loads(report.read_text()))
        own = statistics.median(r["own"] for r in reports)
        own_cpu = statistics.median(r["own_cpu"] for r in reports)
        row["site"] = site.median
        row["site_cpu"] = site.cpu_median
        row["site_own"] = own
        row["site_own_cpu"] = own_cpu
        # The share by CPU time: on a shared machine the wall clock also counts waiting for a core.
        row["site_share"] = own_cpu / site.cpu_median
        row["site_mb"] = site.peak_mb
        row["site_bytes"] = _dir_bytes(work / "site")
        say(
            f"N={n:<5} mkdocs build                     {site.median:7.3f} s  (CPU {site.cpu_median:.2f} s), "
            f"project's share {own_cpu:.2f} s CPU ({100 * row['site_share']:.0f}%), "
            f"site {row['site_bytes'] / 1e6:.1f} MB"
        )
    if "zensical" in parts and site_sizes:
        # The same docs built by Zensical (`improvements build --zensical`), into a folder of its own.
        zsite = OUT / f"zensical-site-{n}"
        shutil.rmtree(zsite, ignore_errors=True)
        try:
            zensical = measure(
                [*IMPROVEMENTS, "build", "--zensical", "--quiet", "--root", str(work), "--site-dir", str(zsite)],
                REPO,
                1 if quick else max(1, min(repeat, 3)),
                warmup=not quick,
            )
        except Failed as exc:
            # Zensical refusing the site is a finding to report, not the end of the benchmark.
            lines = [line for line in str(exc).splitlines() if line.strip()]
            row["zensical_error"] = lines[-1][:200] if lines else "failed"
            say(f"N={n:<5} build --zensical                  failed: {row['zensical_error']}")
        else:
            row["zensical"] = zensical.median
            row["zensical_cpu"] = zensical.cpu_median
            row["zensical_mb"] = zensical.peak_mb
            say(
                f"N={n:<5} build --zensical                  {zensical.median:7.3f} s  "
                f"(CPU {zensical.cpu_median:.2f} s)"
            )
    return row


SERVE_MAX = 1000
# With --quick, whole sites (mkdocs, Zensical) are built at these sizes only: the targets' size
# and the smallest; at 3,000 records one build takes longer than the rest of a quick run.
SITE_QUICK_SIZES = (10, 1000)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _fetch(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return str(response.read().decode("utf-8", "replace"))
    except OSError:
        return None


def _wait(what: str, check: object, limit: float, step: float = 0.05) -> float:
    """Seconds until `check()` is true, polled every `step`; fails after `limit` seconds."""
    start = time.perf_counter()
    while time.perf_counter() - start < limit:
        if callable(check) and check():
            return time.perf_counter() - start
        time.sleep(step)
    raise Failed(f"serve: {what} not seen within {limit:.0f} s")


def _page(work: Path, record: Path) -> Path:
    """The generated page of a record: SERIES-NN-slug.md, whatever the width of the record's number."""
    number = int(record.name.split("-", 1)[0])
    pages = (work / "docs" / "improvements").glob("*.md")
    return next(p for p in pages if p.name.split("-")[1].isdigit() and int(p.name.split("-")[1]) == number)


def bench_serve(n: int, work: Path, records: list[Path], repeat: int, say: object) -> dict[str, object]:
    """From saving a record to its page showing the change, through `improvements serve`; builds per edit."""
    port = _free_port()
    log = OUT / f"serve-{n}.log"
    run_once([*IMPROVEMENTS, "build", "--root", str(work)], REPO)  # the pages whose URLs are polled
    target = records[len(records) // 3]
    page = _page(work, target)
    url = f"http://127.0.0.1:{port}/improvements/{page.stem}.html"  # use_directory_urls: false
    with log.open("wb") as err:
        proc = subprocess.Popen(
            [*IMPROVEMENTS, "serve", "--root", str(work), "--dev-addr", f"127.0.0.1:{port}"],
            stdout=subprocess.DEVNULL,
            stderr=err,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "XDG_CACHE_HOME": str(CACHE_HOME)},
        )
        try:
            _wait("the first page", lambda: _fetch(url) is not None, 600, 0.5)
            time.sleep(1.5)  # let the watcher settle after the first build
            builds = log.read_text().count("Building documentation")
            times = []
            for i in range(repeat):
                token = f"Served edit {n}-{i}-{time.time_ns()}"
                text = target.read_text(encoding="utf-8").replace("summary: >-\n", f"summary: >-\n  {token}.\n", 1)
                start = time.perf_counter()
                target.write_text(text, encoding="utf-8")
                _wait("the edit", lambda token=token: token in (_fetch(url) or ""), 120)
                times.append(time.perf_counter() - start)
                time.sleep(2.0)  # a second build, if any, shows up in the log meanwhile
            per_edit = (log.read_text().count("Building documentation") - builds) / repeat
            # A new title changes every page's navigation: another page of the same tier, in the
            # same section of the sidebar (the theme prunes the others), must show it.
            at = records.index(target)
            other = _page(work, records[at + 3 if at + 3 < len(records) else at - 3])
            other_url = f"http://127.0.0.1:{port}/improvements/{other.stem}.html"
            title = f"Renamed while serving {time.time_ns()}"
            retitle(target, title)
            nav_ok = True
            try:
                _wait("the new title in another page's navigation", lambda: title in (_fetch(other_url) or ""), 120)
            except Failed:
                nav_ok = False
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    latency = statistics.median(times)
    if callable(say):
        say(
            f"N={n:<5} serve: edit to page            {latency:7.3f} s  builds per edit {per_edit:.1f}, "
            f"navigation after a title change {'right' if nav_ok else 'STALE'}"
        )
    return {"serve": latency, "serve_builds": per_edit, "serve_nav": nav_ok}


def _fmt_s(value: object) -> str:
    return f"{value:.2f} s" if isinstance(value, float) else "—"


def _fmt_pair(wall: object, cpu: object) -> str:
    """Wall time, then CPU time (user + system) in parentheses."""
    if not isinstance(wall, float):
        return "—"
    return f"{wall:.2f} s ({cpu:.2f})" if isinstance(cpu, float) else f"{wall:.2f} s"


def _verdict(ok: bool, how: str) -> str:
    return "met" if ok else f"**missed** ({how})"


def table(rows: list[dict[str, object]], fixed: dict[str, float], info: dict[str, str], repeat: int) -> str:
    by_n = {r["n"]: r for r in rows}
    out = [
        BEGIN,
        "<!-- Generated by `.venv/bin/python benchmarks/run.py`; do not edit by hand. -->",
        "",
        f"Measured {info['date']} on {info['cores']} cores of an {info['cpu']}, {info['memory']} of memory, "
        f"Python {info['python']}, {info['os']}. Each time is the median of {repeat} fresh processes "
        "after one untimed warm-up; beside each wall time, in parentheses, the CPU time (user + system) "
        "of the same processes, which a busy machine inflates less.",
        "",
        "| Target | Measured | |",
        "| --- | --- | --- |",
    ]

    def num(n: int, key: str) -> float | None:
        value = by_n.get(n, {}).get(key)
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None

    def target(label: str, value: float | None, limit: float, shown: str | None = None) -> None:
        if value is None:
            out.append(f"| {label} | not measured | |")
            return
        how = f"{value / limit:.1f}x the target"
        out.append(f"| {label} | {shown or f'{value:.2f} s'} | {_verdict(value <= limit, how)} |")

    def timed(label: str, n: int, key: str, limit: float) -> None:
        value = num(n, key)
        target(label, value, limit, _fmt_pair(value, num(n, key + "_cpu")) if value is not None else None)

    def ratio(a: float | None, b: float | None) -> float | None:
        return a / b if a is not None and b else None

    help_ratio = ratio(fixed.get("help"), fixed.get("pass"))
    help_cpu = ratio(fixed.get("help_cpu"), fixed.get("pass_cpu"))
    target(
        "`--help` within 2x of `python -c pass`",
        help_ratio,
        2,
        f"{help_ratio or 0:.2f}x" + (f" (CPU {help_cpu:.2f}x)" if help_cpu is not None else ""),
    )
    # In a pre-commit hook, a small campaign's check is mostly Python's and the models' start.
    timed("`check` of 10 records under 0.4 s", 10, "check", 0.4)
    for n in (1000, 3000):
        check_ratio = num(n, "check_ratio")
        cpu_ratio = ratio(num(n, "check_cpu"), num(n, "floor_cpu"))
        target(
            f"`check` of {n} records within 2x of the C-loader floor",
            check_ratio,
            2,
            f"{check_ratio or 0:.2f}x" + (f" (CPU {cpu_ratio:.2f}x)" if cpu_ratio is not None else ""),
        )
    for n in (1000, 3000):
        noop = ratio(num(n, "build_noop"), num(n, "hash_floor"))
        target(
            f"`build` with nothing changed, {n} records: within 3x of reading and hashing the inputs",
            noop,
            3,
            f"{noop or 0:.2f}x",
        )
    for n in (1000, 3000):
        clone, noop = num(n, "clone"), num(n, "build_noop")
        wrote_nothing = by_n.get(n, {}).get("clone_wrote_nothing")
        if clone is None or noop is None:
            out.append(f"| fresh clone of {n} records: writes nothing, as fast as no change | not measured | |")
        else:
            ok = bool(wrote_nothing) and clone <= noop * 1.1
            shown = f"{clone:.2f} s against {noop:.2f} s, {'wrote nothing' if wrote_nothing else 'WROTE FILES'}"
            out.append(
                f"| fresh clone of {n} records: writes nothing, as fast as no change | {shown} | "
                f"{_verdict(ok, f'{clone / noop:.1f}x the no-change time')} |"
            )
    timed("clean `build` of 1000 records under 3 s", 1000, "build", 3)
    timed("clean `build` of 3000 records under 9 s", 3000, "build", 9)
    timed("`build` of 1000 records after one record's text changed under 0.5 s", 1000, "rebuild", 0.5)
    timed("`build` of 1000 records after one metric changed under 0.7 s", 1000, "metric", 0.7)
    for n, limit in ((10, 0.5), (1000, 2.0)):
        target(f"`serve`, {n} records: the edited page shows the change under {limit:g} s", num(n, "serve"), limit)
    builds = [num(n, "serve_builds") for n in by_n if num(n, "serve_builds") is not None]
    if builds:
        worst = max(b for b in builds if b is not None)
        out.append(
            f"| `serve`: one rebuild per edit | {worst:.1f} at most | {_verdict(worst <= 1.0, 'more than one')} |"
        )
    navs = [by_n[n].get("serve_nav") for n in by_n if "serve_nav" in by_n[n]]
    if navs:
        out.append(
            f"| `serve`: navigation right after a title change | {'yes' if all(navs) else 'no'} | "
            f"{_verdict(all(navs), 'stale navigation')} |"
        )
    # Of a clean build, which does all the work (a build with nothing to do exits before loading).
    peak = num(3000, "build_mb")
    target("peak memory of a clean `build` of 3000 records under 300 MB", peak, 300, f"{peak or 0:.0f} MB")
    share = num(1000, "site_share")
    target(
        "`mkdocs build` of 1000 records: the project's share (CPU) under 10%",
        None if share is None else 100 * share,
        10,
        f"{100 * (share or 0):.1f}%",
    )

    out += [
        "",
        "| Records | read + hash floor | `check` | `check` / C-loader floor | `build` (clean) | `build` (no change) "
        "| fresh clone | one record changed | one metric changed | `serve`: edit to page | peak memory (clean build) |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        check_r = r.get("check_ratio")
        mb = r.get("build_mb")
        out.append(
            f"| {r['n']} | {_fmt_s(r.get('hash_floor'))} | {_fmt_pair(r.get('check'), r.get('check_cpu'))} | "
            f"{f'{check_r:.2f}x' if isinstance(check_r, float) else '—'} | "
            f"{_fmt_pair(r.get('build'), r.get('build_cpu'))} | "
            f"{_fmt_pair(r.get('build_noop'), r.get('build_noop_cpu'))} | {_fmt_s(r.get('clone'))} | "
            f"{_fmt_pair(r.get('rebuild'), r.get('rebuild_cpu'))} | "
            f"{_fmt_pair(r.get('metric'), r.get('metric_cpu'))} | "
            f"{_fmt_s(r.get('serve'))} | {f'{mb:.0f} MB' if isinstance(mb, float) else '—'} |"
        )
    sites = [r for r in rows if any(k in r for k in ("site", "zensical", "zensical_error"))]
    if sites:
        out += [
            "",
            "| Records | `mkdocs build` | project's share (CPU) | `build --zensical` | site size |",
            "| ---: | ---: | ---: | ---: | ---: |",
        ]
        for r in sites:
            share, size = r.get("site_share"), r.get("site_bytes")
            out.append(
                f"| {r['n']} | {_fmt_pair(r.get('site'), r.get('site_cpu'))} | "
                f"{f'{100 * share:.1f}%' if isinstance(share, float) else '—'} | "
                f"{'failed' if r.get('zensical_error') else _fmt_pair(r.get('zensical'), r.get('zensical_cpu'))} | "
                f"{f'{size / 1e6:.1f} MB' if isinstance(size, int) else '—'} |"
            )
    failures = [(r["n"], r["zensical_error"]) for r in rows if r.get("zensical_error")]
    for n, error in failures:
        out += ["", f"`build --zensical` of {n} records failed: {error}"]
    out += [
        "",
        f"`python -c pass`: {_fmt_pair(fixed.get('pass'), fixed.get('pass_cpu'))}; "
        f"`improvements --help`: {_fmt_pair(fixed.get('help'), fixed.get('help_cpu'))}; "
        f"`check` of the shipped campaign: {_fmt_pair(fixed.get('check_shipped'), fixed.get('check_shipped_cpu'))}.",
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
    parser.add_argument(
        "--sizes", default="10,100,1000,3000", help="record counts, comma-separated (default 10,100,1000,3000)"
    )
    parser.add_argument(
        "--parts",
        default="check,build,serve,site,zensical",
        help="what to time besides the floors (default check,build,serve,site,zensical; serve up to 1000 records)",
    )
    parser.add_argument("--no-docs", action="store_true", help="do not rewrite docs/guide/performance.md")
    parser.add_argument(
        "--table-only", action="store_true", help="only rewrite the guide's table from benchmarks/out/results.json"
    )
    args = parser.parse_args()
    if args.table_only:
        saved = json.loads((OUT / "results.json").read_text())
        write_doc(table(saved["sizes"], saved["fixed"], saved["machine"], saved["repeat"]))
        print(f"wrote {DOC.relative_to(REPO)}")
        return 0
    repeat = args.repeat or (2 if args.quick else 5)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    parts = {p.strip() for p in args.parts.split(",") if p.strip()}
    OUT.mkdir(parents=True, exist_ok=True)
    # An installed package has its bytecode (pip compiles it); a checkout run with
    # PYTHONDONTWRITEBYTECODE=1 (as every timed process is) would compile every module in every
    # process, about a third of a rebuild's imports. Compiled once here, like an installation.
    subprocess.run([PY, "-m", "compileall", "-q", str(REPO / "generator")], check=True, stdout=subprocess.DEVNULL)
    info = machine()
    print(
        f"{info['date']}: {info['cores']} cores, {info['cpu']}, Python {info['python']}; {repeat} runs each", flush=True
    )
    log: list[str] = []
    rows = []
    try:
        fixed: dict[str, float] = {}
        for name, cmd in (
            ("pass", [PY, "-c", "pass"]),
            ("help", [*IMPROVEMENTS, "--help"]),
            ("check_shipped", [*IMPROVEMENTS, "check", "--root", str(REPO)]),
        ):
            # Start-up is short and noisy: more runs than the rest.
            sample = measure(cmd, REPO, max(repeat, 5))
            fixed[name], fixed[name + "_cpu"] = sample.median, sample.cpu_median
        print(f"improvements --help                        {fixed['help']:7.3f} s", flush=True)
        print(f"check of the shipped campaign              {fixed['check_shipped']:7.3f} s", flush=True)
        for n in sizes:
            rows.append(bench_size(n, repeat, parts, log, args.quick))
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
