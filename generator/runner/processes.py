"""Processes the runner starts: each under a keeper in its own session, every one stopped, even on Ctrl-C.

A server or a benchmark is started through a keeper (`keeper.py`, which says why) with
`start_new_session`, so it and everything it starts share one process group that Ctrl-C at the
terminal does not reach: the runner stops it itself, SIGTERM to the whole group, then SIGKILL
after the grace period. The keeper stops what left the group (`setsid`, daemons) when the
command ends, and the whole tree when the runner dies, even by `kill -9`. Each child's
environment holds `IMPROVEMENTS_RUN=<plan id>/...`, so what is left of a plan can be found (on
Linux, through /proc): after every run, and by a resume before it runs anything again.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import regex

MARKER = "IMPROVEMENTS_RUN"
POLL_S = 0.02
KEEPER = Path(__file__).with_name("keeper.py")
# The keeper's own SIGKILL comes after the grace period; the runner's SIGKILL of the group only
# this much later, so it does not cut short the keeper stopping what left the group.
KEEPER_MARGIN_S = 5.0


@dataclass
class Started:
    proc: subprocess.Popen[bytes]
    log: Path

    @property
    def pgid(self) -> int:
        return self.proc.pid


@dataclass
class Group:
    """Every process group started and not yet stopped."""

    live: dict[int, Started] = field(default_factory=dict)

    def start(self, shell: str, line: str, cwd: Path, log: Path, env: Mapping[str, str], grace: float) -> Started:
        log.parent.mkdir(parents=True, exist_ok=True)
        keeper = [sys.executable, "-I", "-S", str(KEEPER), str(os.getpid()), f"{grace:g}"]
        with open(log, "ab") as out:
            # Called from the main thread only: the keeper's parent-death signal follows the
            # thread that forked it (keeper.py). close_fds (the default, said here because it
            # matters): no descriptor of the runner, the run lock's least of all, reaches a child.
            proc = subprocess.Popen(
                [*keeper, shell, "-c", line],
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=dict(env),
                start_new_session=True,
                close_fds=True,
            )
        started = Started(proc, log)
        self.live[proc.pid] = started
        return started

    def stop(self, started: Started, grace: float) -> None:
        """SIGTERM to the group, SIGKILL to what is left after `grace` seconds; the leader reaped."""
        stop_group(started.pgid, grace, started.proc)
        self.live.pop(started.pgid, None)

    def stop_all(self, grace: float) -> None:
        for started in list(self.live.values()):
            self.stop(started, grace)


def _group_alive(pgid: int, proc: subprocess.Popen[bytes] | None) -> bool:
    if proc is not None:
        proc.poll()  # reap the leader, or a zombie leader keeps the group "alive"
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # Not our children (a killed runner's): where nothing reaps orphans (a container whose first
    # process is no init), their zombies would keep the group "alive" until the SIGKILL timeout.
    return proc is not None or _living_member(pgid)


def _living_member(pgid: int) -> bool:
    """Whether a process of group `pgid` has not ended (Linux: /proc; elsewhere assumed so)."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return True
    for name in entries:
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_bytes()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()  # state, ppid, pgrp, ...
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] != b"Z":
            return True
    return False


def stop_group(pgid: int, grace: float, proc: subprocess.Popen[bytes] | None = None) -> None:
    # A keeper's group: the keeper sends its SIGKILL at `grace`; ours is the backstop.
    first = grace + KEEPER_MARGIN_S if proc is not None else grace
    for sig, wait in ((signal.SIGTERM, first), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and _group_alive(pgid, proc):
            time.sleep(POLL_S)
        if not _group_alive(pgid, proc):
            break
    if proc is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=1)


def wait_bench(started: Started, timeout: float) -> int | None:
    """The benchmark's exit status, or None when it ran past `timeout` (the caller stops it)."""
    try:
        return started.proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        return None


def wait_ready(
    started: Started,
    url: str | None,
    log_pattern: str | None,
    timeout: float,
    opener: Callable[[Path], BinaryIO] = lambda path: open(path, "rb"),  # noqa: SIM115 (LogWatch closes it)
) -> str | None:
    """None once ready; else why not (exited, not ready within `timeout`, a pattern too slow)."""
    deadline = time.monotonic() + timeout
    watch = LogWatch(started.log, log_pattern, opener) if log_pattern else None
    try:
        return _wait_ready(started, url, watch, timeout, deadline)
    except TimeoutError:
        return (
            f"the server was not ready within {timeout:g} s: matching `{log_pattern}` against its output "
            "took longer than that (a pattern that backtracks: simplify it)"
        )
    finally:
        if watch is not None:
            watch.close()


def _wait_ready(
    started: Started, url: str | None, watch: LogWatch | None, timeout: float, deadline: float
) -> str | None:
    while True:
        code = started.proc.poll()
        if code is not None:
            return f"the server exited with status {code} before it was ready"
        if url is not None and _answers(url):
            return None
        if watch is not None and watch.found(deadline):
            return None
        if time.monotonic() >= deadline:
            pattern = watch.pattern.pattern if watch is not None else ""
            what = f"{url} did not answer 2xx" if url else f"its output never matched `{pattern}`"
            return f"the server was not ready within {timeout:g} s: {what}"
        time.sleep(POLL_S * 5)


class LogWatch:
    """A pattern looked for in a growing log, line by line, reading each byte of it once.

    The file stays open and only what was appended since the last look is read (in chunks, so a
    log of gigabytes costs a chunk of memory); a line split across reads is joined before it is
    matched (of a line longer than MAX_LINE that spans reads, its first MAX_LINE bytes). The
    pattern runs under the `regex` module's time limit: one that backtracks without end cannot
    outlast the deadline. `^` and `$` are a line's start and end.
    """

    CHUNK = 1 << 20
    MAX_LINE = 1 << 16

    def __init__(self, path: Path, pattern: str, opener: Callable[[Path], BinaryIO]) -> None:
        self.path, self.opener = path, opener
        self.pattern = regex.compile(pattern, regex.MULTILINE)
        self.file: BinaryIO | None = None
        self.line = b""  # the line being read: its bytes so far (at most MAX_LINE)
        self.over = False  # the line being read is longer than MAX_LINE: the rest is skipped

    def found(self, deadline: float) -> bool:
        """Whether a line read so far matches; TimeoutError when matching ran past `deadline`."""
        if self.file is None:
            try:
                self.file = self.opener(self.path)
            except OSError:
                return False
        while data := self.file.read(self.CHUNK):
            if self._feed(data, deadline):
                return True
        # The line being written counts too: a ready message may not end its line yet.
        return bool(self.line) and self._match(self.line, deadline)

    def _grow(self, piece: bytes) -> None:
        if not self.over:
            room = self.MAX_LINE - len(self.line)
            self.line += piece[:room]
            self.over = len(piece) > room

    def _feed(self, data: bytes, deadline: float) -> bool:
        first, last = data.find(b"\n"), data.rfind(b"\n")
        if first < 0:
            self._grow(data)
            return False
        self._grow(data[:first])
        # The lines this read ends, matched as one block: a search per line costs far more.
        block = self.line + data[first:last]
        self.line, self.over = b"", False
        self._grow(data[last + 1 :])
        return self._match(block, deadline)

    def _match(self, lines: bytes, deadline: float) -> bool:
        text = lines.decode("utf-8", errors="replace")
        # At least a moment: a line read just at the deadline is still looked at.
        found = self.pattern.search(text, timeout=max(deadline - time.monotonic(), 0.05))
        if found is None or "\n" not in found.group(0):
            return found is not None
        # A match across lines is none; a line may still match on its own.
        return any(
            self.pattern.search(line, timeout=max(deadline - time.monotonic(), 0.05)) is not None
            for line in text.split("\n")
        )

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return 200 <= int(resp.status) < 300
    except (urllib.error.URLError, OSError, ValueError):
        return False


def tail(path: Path, lines: int = 20, limit: int = 4000) -> str:
    """The last lines of a log, for the journal of a failed run."""
    try:
        data = path.read_bytes()[-limit:]
    except OSError:
        return ""
    return "\n".join(data.decode("utf-8", errors="replace").splitlines()[-lines:])


def marked(plan_id: str) -> Iterator[int]:
    """Processes whose environment carries this plan's marker (Linux: /proc; elsewhere none)."""
    needle = f"{MARKER}={plan_id}/".encode()
    proc = Path("/proc")
    if not proc.is_dir():
        return
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            env = (entry / "environ").read_bytes()
        except OSError:
            continue
        if any(item.startswith(needle) for item in env.split(b"\0")):
            yield int(entry.name)


def stop_leftovers(plan_id: str, grace: float, rounds: int = 20) -> list[int]:
    """Stop every process of this plan still running; the process groups stopped, in order.

    Run after every run of the runner and by a resume before it runs anything. Scanned again
    after each stop until a scan finds nothing: a keeper stopped half-way leaves what it had
    adopted, and a process may fork while its group is being stopped. Each round stops what it
    found (SIGKILL at the latest after `grace`), so the rounds end.
    """
    stopped: list[int] = []
    for _ in range(rounds):
        groups: set[int] = set()
        for pid in marked(plan_id):
            with contextlib.suppress(OSError):
                groups.add(os.getpgid(pid))
        if not groups:
            break
        for pgid in sorted(groups):
            stop_group(pgid, grace)
            if pgid not in stopped:
                stopped.append(pgid)
    return stopped
