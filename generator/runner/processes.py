"""Processes the runner starts: each in its own process group, every one stopped, even on Ctrl-C.

A server or a benchmark is started with `start_new_session`, so it and everything it starts
share one process group that Ctrl-C at the terminal does not reach: the runner stops it itself,
SIGTERM to the whole group, then SIGKILL after the grace period. Each child's environment holds
`IMPROVEMENTS_RUN=<plan id>/<run>/<attempt>`, so after the runner itself was killed, a resume
finds what it left running (on Linux, through /proc) and stops it before running anything again.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

MARKER = "IMPROVEMENTS_RUN"
POLL_S = 0.02


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

    def start(self, shell: str, line: str, cwd: Path, log: Path, env: Mapping[str, str]) -> Started:
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "ab") as out:
            proc = subprocess.Popen(
                [shell, "-c", line],
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=dict(env),
                start_new_session=True,
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
    return True


def stop_group(pgid: int, grace: float, proc: subprocess.Popen[bytes] | None = None) -> None:
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
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


def wait_ready(started: Started, url: str | None, log_pattern: str | None, timeout: float) -> str | None:
    """None once ready; else why not (exited, or not ready within `timeout`)."""
    deadline = time.monotonic() + timeout
    pattern = re.compile(log_pattern) if log_pattern else None
    while True:
        code = started.proc.poll()
        if code is not None:
            return f"the server exited with status {code} before it was ready"
        if url is not None and _answers(url):
            return None
        if pattern is not None and pattern.search(started.log.read_text("utf-8", errors="replace")):
            return None
        if time.monotonic() >= deadline:
            what = f"{url} did not answer 2xx" if url else f"its output never matched `{log_pattern}`"
            return f"the server was not ready within {timeout:g} s: {what}"
        time.sleep(POLL_S * 5)


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


def stop_leftovers(plan_id: str, grace: float) -> list[int]:
    """Stop every process a killed runner of this plan left behind; the process groups stopped."""
    groups: set[int] = set()
    for pid in marked(plan_id):
        with contextlib.suppress(OSError):
            groups.add(os.getpgid(pid))
    for pgid in sorted(groups):
        stop_group(pgid, grace)
    return sorted(groups)
