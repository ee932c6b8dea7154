"""Invariants over generated records and files (issue 15), checked with Hypothesis:

- whatever `check` accepts, `build`, `export` and `summary --format json` handle without a
  traceback, and the export is JSON a strict parser takes; `build --site` too (marked mkdocs);
- whatever an edit command (`status`, `import`) writes, `check` accepts;
- `import` writes everything or nothing;
- no command is worse than linear in its input within the documented limits: measured at two
  sizes by counting work (Python lines executed in our code, folder listings), never by wall
  time, so a loaded CI machine cannot make it flake.

Example counts are small and fixed (derandomized): each example runs real commands.
"""

from __future__ import annotations

import io
import json
import math
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import BENCH, REPO, copy_campaign, run_cli

SETTINGS = settings(
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# Text that once broke a later stage, or that YAML, shlex, markdown, LaTeX, CSV or Jinja read
# as something other than text.
HOSTILE = [
    "$x^2$",
    "$",
    "'",
    '"',
    "\\",
    "it's",
    'a "b',
    "{{ x }}",
    "{% if %}",
    "<script>x</script>",
    "=HYPERLINK(1)",
    "on",
    "yes",
    "no",
    "2024-01-01",
    "2024-02-30",
    "1e309",
    "0o17",
    "010",
    "1:30",
    ".inf",
    "~",
    "|",
    "`",
    "#",
    "a: b",
    "- x",
    "[x",
    "{x",
    "*x",
    "&x",
    "!x",
    "%x",
    "@x",
    "\u202e",
    "\u2028",
    "x" * 300,
]
# Mostly values `check` takes, so that most examples go on to `build`; some it refuses.
text = st.one_of(
    st.sampled_from(HOSTILE), st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=30)
)
number = st.one_of(
    st.floats(min_value=-1e15, max_value=1e15),
    st.sampled_from([0, 0.0, -0.0, 1e-15, 1e15, -1e15, 1, 2, 1000, 10**15]),
    st.sampled_from([5e-324, 1e300, math.nan, math.inf, True]),
)
count = st.one_of(st.integers(min_value=1, max_value=10**15), st.sampled_from([0, 10**16, 10**400, True]))
rate = st.one_of(st.floats(min_value=0.001, max_value=1e6), st.sampled_from(["inf", "trace", math.inf, -1, True]))
metric = st.sampled_from(["output_throughput", "ttft_p99", "itl_p50", "total_throughput"])
value = st.one_of(
    number, st.lists(number, min_size=1, max_size=3), st.fixed_dictionaries({"min": number, "max": number})
)


def _optional(**fields: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({}, optional=fields)


result = st.builds(
    lambda base, extra: {**base, **extra},
    st.fixed_dictionaries({"label": text, "metrics": st.dictionaries(metric, value, min_size=1, max_size=2)}),
    _optional(
        concurrency=count,
        request_rate=rate,
        baseline=st.dictionaries(metric, value, max_size=2),
        note=text,
        workload=_optional(input_len=count, output_len=count, dataset=text),
    ),
)
flag = st.one_of(
    st.builds(lambda v: f"--flag {v}", text),
    st.fixed_dictionaries({"flag": st.just("--flag"), "value": text}),
)
record = st.builds(
    lambda base, extra: {**base, **extra},
    st.fixed_dictionaries(
        {
            "title": text,
            "tier": st.sampled_from([1, 2, 3, 1, 2, 3, "yes", True]),
            "status": st.just("proposed"),
            "hypothesis": text,
        }
    ),
    _optional(
        summary=text,
        verdict=text,
        caveats=st.lists(text, max_size=2),
        results=st.lists(result, max_size=3),
        change=_optional(flags=st.lists(flag, max_size=2), base_command=text),
        references=st.lists(
            st.fixed_dictionaries({"title": text, "url": st.sampled_from(["https://x.org/a b", "x.md", "../y", "/z"])}),
            max_size=1,
        ),
        expected=st.fixed_dictionaries({"metric": metric}, optional={"gain": number, "concurrency": count}),
    ),
)


@contextmanager
def _campaign(record_data: dict[str, Any] | None = None, raw: str | None = None) -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "c"
        (root / "improvements").mkdir(parents=True)
        (root / "results").mkdir()
        shutil.copy(REPO / "improvements" / "campaign.yaml", root / "improvements" / "campaign.yaml")
        body = raw if raw is not None else yaml.safe_dump(record_data, allow_unicode=True, sort_keys=False)
        (root / "improvements" / "90-generated.yaml").write_text(body, encoding="utf-8")
        yield root


def _no_traceback(root: Path, *args: str) -> int:
    res = run_cli(*args, cwd=root)
    assert "Traceback" not in res.stderr, (args, res.stderr[-3000:])
    return res.returncode


@pytest.mark.slow
@given(record)
@settings(SETTINGS, max_examples=40)
def test_what_check_accepts_builds_and_exports(data: dict[str, Any]) -> None:
    with _campaign(data) as root:
        if _no_traceback(root, "check") != 0:
            return
        assert _no_traceback(root, "build") == 0
        assert _no_traceback(root, "export", "-o", "x.json") == 0
        # Strict JSON: no NaN or Infinity, which Python's parser would otherwise take.
        json.loads((root / "x.json").read_text(), parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))
        res = run_cli("summary", "--format", "json", cwd=root)
        assert res.returncode == 0 and "Traceback" not in res.stderr
        json.loads(res.stdout, parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))


@pytest.mark.mkdocs
@given(record)
@settings(SETTINGS, max_examples=4)
def test_what_check_accepts_builds_a_site(data: dict[str, Any]) -> None:
    with _campaign(data) as root:
        (root / "mkdocs.yml").write_text("site_name: Generated\nplugins: [improvements]\n")
        if _no_traceback(root, "check") != 0:
            return
        assert _no_traceback(root, "build", "--site") == 0


@pytest.mark.slow
@given(st.one_of(text, st.text(min_size=1, max_size=200)))
@settings(SETTINGS, max_examples=25)
def test_what_status_writes_check_accepts(verdict: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = copy_campaign(Path(tmp))
        if _no_traceback(root, "status", "09", "rejected", "--verdict", verdict) == 0:
            assert _no_traceback(root, "check") == 0


@pytest.mark.slow
@given(st.one_of(text, st.text(min_size=1, max_size=200)))
@settings(SETTINGS, max_examples=15)
def test_what_import_writes_check_accepts(label: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = copy_campaign(Path(tmp))
        sweep = str(BENCH / "vllm-benchmark-serving-legacy.json")
        if _no_traceback(root, "import", sweep, "--record", "02", "--label", label) == 0:
            assert _no_traceback(root, "check") == 0


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.slow
@given(st.lists(st.sampled_from(["good", "garbage", "truncated", "empty"]), min_size=1, max_size=3))
@settings(SETTINGS, max_examples=12)
def test_import_writes_everything_or_nothing(kinds: list[str]) -> None:
    good = (BENCH / "sglang-bench-serving-2024-sweep.jsonl").read_bytes()
    contents = {"good": good, "garbage": b"\x00\x01not a benchmark", "truncated": good[: len(good) // 2], "empty": b""}
    with tempfile.TemporaryDirectory() as tmp:
        root = copy_campaign(Path(tmp) / "r")
        files = []
        for i, kind in enumerate(kinds):
            path = Path(tmp) / f"in{i}.jsonl"
            path.write_bytes(contents[kind])
            files.append(str(path))
        before = _tree(root)
        code = _no_traceback(root, "import", *files, "--record", "02")
        after = _tree(root)
        if code != 0:
            assert after == before
        else:
            assert set(kinds) == {"good"}
            assert len([p for p in after if p.startswith("results/runs/")]) == 7


# --- no command worse than linear ----------------------------------------------------------

GENERATOR = str(REPO / "generator")


def _lines_run(fn: Callable[[], object]) -> int:
    """Python lines executed in the generator's own code while `fn` runs: a count of work that
    does not depend on the machine's load."""
    lines = 0

    def local(frame: Any, event: str, arg: Any) -> Any:
        nonlocal lines
        if event == "line":
            lines += 1
        return local

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename.startswith(GENERATOR) else None

    sys.settrace(tracer)
    try:
        fn()
    finally:
        sys.settrace(None)
    return lines


def _check_work(raw: str) -> int:
    from generator.base.problems import Report
    from generator.checks.validate import load_project

    with _campaign(raw=raw) as root:
        return _lines_run(lambda: load_project(root, Report()))


HEAD = "title: T\ntier: 2\nstatus: proposed\nhypothesis: H\n"
SHAPES = {
    "unknown keys": lambda n: HEAD + "".join(f"k{i}: 1\n" for i in range(n)),
    "wrong-typed items": lambda n: HEAD + "tags:\n" + "".join(f"  - {{x: {i}}}\n" for i in range(n)),
    "results with unknown metrics": lambda n: (
        HEAD + "results:\n" + "".join(f"  - {{label: r{i}, metrics: {{m{i}: 1}}}}\n" for i in range(n))
    ),
    "blockers missing fields": lambda n: HEAD + "blockers:\n" + "".join(f"  - {{id: b{i}}}\n" for i in range(n)),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_check_is_linear_in_the_number_of_problems(shape: str) -> None:
    small, large = (_check_work(SHAPES[shape](n)) for n in (250, 1000))
    # Four times the input: linear work grows about four times, quadratic sixteen.
    assert large < 6 * small, (shape, small, large)


def _runs_campaign(tmp: Path, n: int) -> Path:
    src = json.loads((BENCH / "vllm-benchmark-serving-legacy.json").read_text())
    root = copy_campaign(tmp / f"c{n}")
    lines = [json.dumps({**src, "max_concurrency": i + 1, "output_throughput": 100.0 + i}) for i in range(n)]
    sweep = tmp / f"sweep{n}.json"
    sweep.write_text("\n".join(lines) + "\n")
    assert run_cli("import", str(sweep), "--record", "02", cwd=root).returncode == 0
    return root


def test_build_lists_the_runs_folder_a_fixed_number_of_times(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs are loaded once per project (`Project.runs`), not per run a result names: the
    folder is listed as often for 40 runs as for 10, and each run file is read a fixed number
    of times, whatever their number (the load, and the inputs' digests that `build` takes
    around its writes, so that a file changed mid-build is never stamped as built)."""
    real_scandir, real_open = os.scandir, open
    listings: list[str] = []
    reads: list[str] = []

    def scandir(path: Any = ".") -> Any:
        listings.append(str(path))
        return real_scandir(path)

    def counting_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        reads.append(str(file))
        return real_open(file, *args, **kwargs)

    counts = {}
    for n in (10, 40):
        root = _runs_campaign(tmp_path, n)
        listings.clear()
        reads.clear()
        monkeypatch.setattr(os, "scandir", scandir)
        monkeypatch.setattr("builtins.open", counting_open)
        monkeypatch.setattr(io, "open", counting_open)  # what pathlib's read_text calls
        code = run_cli("build", cwd=root).returncode
        monkeypatch.undo()
        assert code == 0
        run_reads = [r for r in reads if "/results/runs/" in r]
        counts[n] = (sum("/results/runs" in p for p in listings), len(run_reads))
        assert len(run_reads) <= 4 * n, (n, len(run_reads))
    assert counts[10][0] == counts[40][0], counts
