"""Concurrent edits of one record lose nothing: every editor holds the file's lock from read to replace.

Without the lock, two `import`s into one record each read the record, added their own link and
replaced the file, so the later write dropped the earlier one's links while both reported
success (issue 26: 4 of 4 trials); `import` beside `status` lost the status change. Each trial
here starts both commands as real processes at once and checks the file afterwards. No sleeps:
the processes race as they will, and the result must hold whatever the order.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import BENCH, REPO, run_cli

# Without the lock every trial lost an edit (issue 26: 4 of 4), so a few trials fail for sure.
TRIALS = 4


def _start(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "generator", *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _bench_files(folder: Path, n: int) -> list[Path]:
    """`n` benchmark files that differ in one measured value, so each becomes a run of its own."""
    raw = json.loads((BENCH / "vllm-benchmark-serving-legacy.json").read_text())
    out = []
    for i in range(n):
        data = {**raw, "mean_ttft_ms": raw["mean_ttft_ms"] + i + 1}
        path = folder / f"bench-{i}.json"
        path.write_text(json.dumps(data))
        out.append(path)
    return out


def _record(minimal: Path) -> Path:
    made = run_cli("new", "--root", str(minimal), "Concurrent idea", "--tier", "1", "--hypothesis", "It helps.")
    assert made.returncode == 0, made.stderr
    [path] = (minimal / "improvements").glob("01-*.yaml")
    return path


@pytest.mark.slow
def test_two_imports_into_one_record_keep_both_runs(minimal: Path, tmp_path: Path) -> None:
    record = _record(minimal)
    files = _bench_files(tmp_path, 2 * TRIALS)
    for trial in range(TRIALS):
        a, b = files[2 * trial], files[2 * trial + 1]
        procs = [_start("import", "--root", str(minimal), str(f), "--record", "01") for f in (a, b)]
        outs = [p.communicate(timeout=120) for p in procs]
        assert [p.returncode for p in procs] == [0, 0], outs
        ids = [line.split()[0] for out, _err in outs for line in out.splitlines() if line.startswith("  ")]
        assert len(ids) == 2, outs
        text = record.read_text()
        for rid in ids:
            assert rid in text, f"trial {trial}: run {rid} was reported imported but is not linked"
            assert (minimal / "results" / "runs" / f"{rid}.json").is_file()
    runs = list((minimal / "results" / "runs").glob("*.json"))
    assert len(runs) == 2 * TRIALS
    assert sum(record.read_text().count(p.stem) for p in runs) == 2 * TRIALS
    assert run_cli("check", "--root", str(minimal)).returncode == 0


@pytest.mark.slow
def test_import_beside_status_keeps_both_edits(minimal: Path, tmp_path: Path) -> None:
    record = _record(minimal)
    files = _bench_files(tmp_path, TRIALS)
    statuses = ["in-progress", "proposed"]
    for trial in range(TRIALS):
        status = statuses[trial % 2]
        procs = [
            _start("import", "--root", str(minimal), str(files[trial]), "--record", "01"),
            _start("status", "--root", str(minimal), "01", status),
        ]
        outs = [p.communicate(timeout=120) for p in procs]
        assert [p.returncode for p in procs] == [0, 0], outs
        [rid] = [line.split()[0] for line in outs[0][0].splitlines() if line.startswith("  ")]
        text = record.read_text()
        assert rid in text, f"trial {trial}: the import's link was lost"
        assert f"status: {status}" in text, f"trial {trial}: the status change was lost after it was printed"
    assert run_cli("check", "--root", str(minimal)).returncode == 0


def test_a_lock_taken_now_is_busy_only_while_another_process_holds_it(minimal: Path) -> None:
    from generator.base.fsio import LockBusy, edit_lock_now

    target = minimal / "results" / "journal" / "x.run"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; from generator.base.fsio import edit_lock\n"
            f"with edit_lock(Path({str(minimal)!r}), Path({str(target)!r})):\n"
            "    print('held', flush=True); sys.stdin.read()",
        ],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    with pytest.raises(LockBusy), edit_lock_now(minimal, target):
        pass
    holder.communicate("")
    assert holder.returncode == 0
    # Free again; and a TimeoutError of the work under the lock stays that work's error.
    with pytest.raises(TimeoutError) as raised, edit_lock_now(minimal, target):
        raise TimeoutError("the work's own")
    assert not isinstance(raised.value, LockBusy) and str(raised.value) == "the work's own"
