"""The keeper of one process the runner starts: its whole tree stopped when it ends, or the runner dies.

    python -I -S keeper.py PARENT GRACE COMMAND...

The runner starts every server and benchmark through a keeper (a session of its own, so Ctrl-C
at the terminal reaches neither). The keeper starts COMMAND in the keeper's process group, and waits.
When COMMAND exits, when the keeper gets SIGTERM (the runner stopping the group), or when the
runner dies, it stops every process below it: SIGTERM, SIGKILL after GRACE seconds, all reaped.
Then it exits as COMMAND did (the same status, or the same signal).

Why a keeper and not the runner alone:
- A child started with `setsid` (or double-forked, as daemons do) leaves the process group the
  runner stops. The keeper is a child subreaper (Linux `PR_SET_CHILD_SUBREAPER`, no root needed),
  so such orphans are re-parented to it, not to init: every process COMMAND started stays below
  the keeper until the keeper has stopped it.
- `kill -9` of the runner runs no cleanup in the runner. The keeper asks the kernel for SIGTERM
  when its parent dies (`PR_SET_PDEATHSIG`) and stops its tree, so no engine holds the GPU
  until someone resumes. That signal is sent when the *thread* that forked the keeper ends; the
  runner starts keepers from its main thread only, whose end is the runner's end. Elsewhere
  than Linux the keeper looks at its parent once a second instead.
- A runner killed between its fork and the keeper's set-up: the keeper finds its parent is not
  the runner any more (the check after the prctl, which closes that race) and starts nothing.
  So the leftover scan of a resume cannot miss a child caught between fork and exec: such a
  child starts nothing.

Not a cgroup: making one needs a delegated hierarchy (a systemd user session), which containers
and many GPU hosts lack; pidfds alone do not outlive a killed runner. The marker scan
(processes.py) is the backstop for a keeper that was itself killed.

Run by path with only the standard library (`-I -S`: no site, no environment), so starting it
costs milliseconds and nothing of the user's Python setup changes what it does. What it starts
gets the environment it was given, unchanged.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
POLL_S = 0.02
# Exit status when the runner was gone before the keeper started anything.
ORPHANED = 125


def _prctl(option: int, value: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    return int(libc.prctl(option, value, 0, 0, 0)) == 0


def descendants(root: int) -> list[int]:
    """Every living process below `root`, read from /proc (empty where there is none)."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        # The command name may hold spaces and parentheses: the fields start after the last ')'.
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(int(name))
    found: list[int] = []
    todo = [root]
    while todo:
        for pid in children.get(todo.pop(), []):
            found.append(pid)
            todo.append(pid)
    return found


def _reap() -> dict[int, int]:
    """Wait statuses of every child that has ended (orphans adopted as subreaper included)."""
    ended: dict[int, int] = {}
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return ended
        if pid == 0:
            return ended
        ended[pid] = status


def stop_tree(grace: float) -> dict[int, int]:
    """SIGTERM to everything below the keeper, SIGKILL to what is left after `grace`; all reaped.

    Scanned again at every step: a process forked while the others were being signalled is
    found at the next scan, so none is left because it appeared late.
    """
    me = os.getpid()
    ended: dict[int, int] = {}
    termed: set[int] = set()
    deadline = time.monotonic() + grace
    killing = False
    give_up = deadline + 10.0  # SIGKILL cannot be refused: only a fork storm outruns this
    while True:
        ended.update(_reap())
        below = descendants(me)
        if not below:
            return ended
        now = time.monotonic()
        if not killing and now >= deadline:
            killing = True
        for pid in below:
            if killing or pid not in termed:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL if killing else signal.SIGTERM)
                termed.add(pid)
        if now >= give_up:
            return ended
        time.sleep(POLL_S)


class _Stop(Exception):
    pass


def main(argv: list[str]) -> int:
    parent, grace, command = int(argv[0]), float(argv[1]), argv[2:]
    linux = _prctl(PR_SET_CHILD_SUBREAPER, 1) and _prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM))
    if os.getppid() != parent:
        # The runner died before the death signal was asked for: it will never come. Start nothing.
        return ORPHANED
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    stopping: list[int] = []

    def stop(signum: int, _frame: object) -> None:
        stopping.append(signum)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, stop)
    # A handler of its own, so that a child's end writes to the wake-up pipe too.
    signal.signal(signal.SIGCHLD, lambda _s, _f: None)
    try:
        child = os.posix_spawnp(command[0], command, dict(os.environ))
    except OSError as exc:
        sys.stderr.write(f"{command[0]}: {exc.strerror}\n")
        return 127
    status: int | None = None
    while status is None and not stopping:
        status = _reap().get(child)
        if status is not None or stopping:
            break
        if not linux and os.getppid() != parent:
            break
        # Woken by SIGCHLD, SIGTERM or SIGINT; off Linux, once a second to look at the parent.
        select.select([wake_r], [], [], None if linux else 1.0)
        with contextlib.suppress(BlockingIOError):
            os.read(wake_r, 512)
    ended = stop_tree(grace)
    if status is None:
        status = ended.get(child)
    if status is None:
        return 128 + int(signal.SIGKILL)
    if os.WIFSIGNALED(status):
        # Dies of the same signal, so the runner reads the same status as without a keeper.
        killed = os.WTERMSIG(status)
        signal.signal(killed, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [killed])
        os.kill(os.getpid(), killed)
        return 128 + killed
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
