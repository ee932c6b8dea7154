"""The runner's processes and journal at their edges: a log of gigabytes, a pattern that
backtracks, a keeper whose runner is gone, a line a full disk cut short."""

from __future__ import annotations

import errno
import io
import json
import os
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import BinaryIO

import pytest

from generator.runner import keeper
from generator.runner.journal import Journal
from generator.runner.processes import KEEPER, LogWatch, Started, wait_ready


class Counting(io.FileIO):
    """A log opened for the watch, counting every byte read through it."""

    read_total = 0

    def read(self, size: int = -1) -> bytes:
        data = super().read(size)
        Counting.read_total += len(data or b"")
        return data or b""


def counting(path: Path) -> BinaryIO:
    Counting.read_total = 0
    return Counting(path, "rb")  # type: ignore[return-value]


def test_the_ready_watch_reads_each_byte_of_the_log_once(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(b"loading weights 0123456789\n" * 40_000)  # about a megabyte
    watch = LogWatch(log, r"^server ready on port (\d+)$", counting)
    far = time.monotonic() + 60
    try:
        for _ in range(5):  # looks with nothing new read nothing more
            assert not watch.found(far)
        assert Counting.read_total == log.stat().st_size
        with log.open("ab") as fh:
            fh.write(b"server ready on port 8000\n")
        assert watch.found(far)
        assert Counting.read_total == log.stat().st_size
    finally:
        watch.close()


def test_a_line_split_between_reads_is_matched_whole(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(b"starting\nserver rea")
    watch = LogWatch(log, r"^server ready$", lambda p: p.open("rb"))
    watch.CHUNK = 3  # every line crosses reads
    far = time.monotonic() + 60
    try:
        assert not watch.found(far)
        with log.open("ab") as fh:
            fh.write(b"dy\n")
        assert watch.found(far)
    finally:
        watch.close()
    # A ready line not ended yet counts; a pattern never reaches across lines.
    log.write_bytes(b"server ready")
    assert LogWatch(log, r"^server ready$", lambda p: p.open("rb")).found(far)
    log.write_bytes(b"server\nready\n")
    assert not LogWatch(log, r"server\nready", lambda p: p.open("rb")).found(far)


def test_an_endless_line_is_matched_on_its_head_in_bounded_memory(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(b"ready " + b"x" * (4 * LogWatch.CHUNK) + b"\n")
    watch = LogWatch(log, r"^ready", lambda p: p.open("rb"))
    try:
        assert watch.found(time.monotonic() + 60)
        assert len(watch.line) <= LogWatch.MAX_LINE
    finally:
        watch.close()


def _sleeper(tmp_path: Path, log: Path) -> Started:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    return Started(proc, log)


@pytest.mark.slow
def test_the_ready_wait_on_a_large_log_holds_a_chunk_not_the_log(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    with log.open("wb") as fh:
        for _ in range(64):
            fh.write(b"progress: loading shard 0000 of 9999\n" * 16_384)  # 40 MB in all
        fh.write(b"The server is fired up\n")
    started = _sleeper(tmp_path, log)
    try:
        tracemalloc.start()
        why = wait_ready(started, None, "fired up", 60)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    finally:
        started.proc.kill()
        started.proc.wait()
    assert why is None
    assert peak < 8 * 1024 * 1024, peak  # a few 1 MB chunks, not 40 MB of text


@pytest.mark.slow
def test_a_backtracking_pattern_stops_at_the_deadline(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(b"a" * 60 + b"!\n")
    started = _sleeper(tmp_path, log)
    try:
        why = wait_ready(started, None, "^(a|aa)+$", 1)
    finally:
        started.proc.kill()
        started.proc.wait()
    assert why is not None and "not ready within 1 s" in why and "took longer" in why


@pytest.mark.slow
def test_a_keeper_whose_runner_is_gone_starts_nothing(tmp_path: Path) -> None:
    # The runner died between its fork and the keeper's set-up: the keeper's parent is not the
    # pid it was given. It must start nothing, or that child would run with no one to stop it.
    touched = tmp_path / "ran"
    not_parent = os.getppid()  # any live pid other than the keeper's real parent (this process)
    done = subprocess.run(
        [sys.executable, "-I", "-S", str(KEEPER), str(not_parent), "1", "touch", str(touched)], timeout=60
    )
    assert done.returncode == keeper.ORPHANED
    assert not touched.exists()
    # The control: given its real parent, it runs the command and exits as it did.
    done = subprocess.run(
        [sys.executable, "-I", "-S", str(KEEPER), str(os.getpid()), "1", "sh", "-c", f"touch {touched}; exit 7"],
        timeout=60,
    )
    assert done.returncode == 7 and touched.exists()


def test_a_torn_tail_is_cut_before_the_next_line(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    journal = Journal(path)
    journal.append("plan", n=1)
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"event": "end", "run": "c2-b0')
    journal.append("resumed")
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and [json.loads(line)["event"] for line in lines[:-1]] == ["plan", "resumed"]


def test_a_short_write_is_undone_and_the_error_raised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "j.jsonl"
    journal = Journal(path)
    journal.append("plan", n=1)
    before = path.read_bytes()
    real = os.write

    def full_disk(fd: int, data: bytes) -> int:
        if len(data) > 10:
            return real(fd, bytes(data)[:10])  # part of the line went in ...
        raise OSError(errno.ENOSPC, "No space left on device")  # ... then the disk was full

    monkeypatch.setattr(os, "write", full_disk)
    with pytest.raises(OSError):
        journal.append("end", run="c2-b01-baseline", state="done")
    monkeypatch.undo()
    assert path.read_bytes() == before  # whole lines or nothing
    journal.append("resumed")
    assert [json.loads(line)["event"] for line in path.read_text().splitlines()] == ["plan", "resumed"]
