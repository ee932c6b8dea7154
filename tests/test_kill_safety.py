"""`kill -9` in the middle of `import`, `status`, `new` and `renumber`: nothing lost, nothing
half-written, and the next run recovers.

A kill that lands by luck lands after the command finished (the review's attempts did). Here the
command runs under a wrapper (KILL, below) that makes each of its file-system steps under the
campaign an event: a file created, synced, moved into place, renamed, linked or removed, and a
lock taken. A first run lists the events; then, for a handful of them, a fresh copy of the
campaign runs the command until that event, where the wrapper says so on a pipe and blocks,
and the test kills it with SIGKILL. The command runs in a fork of the test's process (its
imports done, so a kill point costs no interpreter start), and once in a fresh process. Then:

- every file is byte for byte what it was before or what the finished command writes (a
  temporary of ours, hidden and read by no command, is the only other file allowed);
- `check` finds no error;
- running the command again finishes the job: the records and results are those of a run that
  was never killed.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import pytest

from conftest import BENCH, REPO, run_cli

# Slow: some fifty processes killed, forks of this one and a fresh one.
pytestmark = pytest.mark.slow

KILL = textwrap.dedent(
    """
    # `improvements ARGS` with kill points. Every step under KILL_ROOT is an event, counted
    # before and after the call. KILL_AT=0 lists them all on the pipe KILL_FD; otherwise event
    # KILL_AT is announced there and the process blocks until it is killed.
    import os, re, sys, threading

    root = os.environ["KILL_ROOT"]
    at = int(os.environ["KILL_AT"])
    pipe = int(os.environ["KILL_FD"])
    count = 0


    def point(what, path):
        global count
        count += 1
        # A temporary's random name is the same event in every run.
        shown = re.sub(r"\\.improvements-tmp-[^/]*", ".improvements-tmp-*", os.path.relpath(path, root))
        line = f"{count} {what} {shown}\\n".encode()
        if at == 0:
            os.write(pipe, line)
        elif count == at:
            os.write(pipe, b"HIT " + line)
            threading.Event().wait()


    def under(path):
        try:
            return os.path.abspath(os.fsdecode(path)).startswith(root + os.sep)
        except TypeError:
            return False


    def wrap(name, where, only=lambda *a: True):
        original = getattr(os, name)

        def wrapped(*args, **kwargs):
            path = where(args)
            hit = under(path) and only(*args)
            if hit:
                point(f"before {name}", path)
            result = original(*args, **kwargs)
            if hit:
                point(f"after {name}", path)
            return result

        setattr(os, name, wrapped)


    def fd_path(args):
        try:
            return os.readlink(f"/proc/self/fd/{args[0]}")
        except OSError:
            return ""


    wrap("open", lambda a: a[0], lambda path, flags, *rest: bool(flags & os.O_CREAT))
    wrap("fsync", fd_path)
    wrap("replace", lambda a: a[1])
    wrap("rename", lambda a: a[1])
    wrap("link", lambda a: a[1])
    wrap("unlink", lambda a: a[0])

    import contextlib
    from generator.base import fsio

    _lock = fsio.lock


    @contextlib.contextmanager
    def lock(path, timeout=-1, **kwargs):
        with _lock(path, timeout, **kwargs):
            point("locked", os.path.join(root, "improvements"))
            yield


    fsio.lock = lock

    from generator.cli import run

    sys.argv = ["improvements", *sys.argv[1:]]
    run()
    """
)

RECORDS = {
    "01-first.yaml": "title: First\ntier: 1\nstatus: proposed\nhypothesis: One.\n",
    "03-second.yaml": "title: Second\ntier: 1\nstatus: proposed\nhypothesis: Two.\n",
    "05-third.yaml": "title: Third\ntier: 2\nstatus: proposed\nhypothesis: Three.\n",
}

COMMANDS = {
    "import": ["import", "bench.jsonl", "--record", "first"],
    "status": ["status", "second", "in-progress"],
    "new": ["new", "Fourth idea", "--tier", "1", "--hypothesis", "Four."],
    "renumber": ["renumber", "--compact"],
}


def _campaign(root: Path) -> Path:
    (root / "improvements").mkdir(parents=True)
    (root / "results").mkdir()
    shutil.copy(REPO / "improvements" / "campaign.yaml", root / "improvements" / "campaign.yaml")
    for name, text in RECORDS.items():
        (root / "improvements" / name).write_text(text)
    shutil.copy(BENCH / "sglang-bench-one-batch.jsonl", root / "bench.jsonl")
    out = run_cli("build", "--quiet", "--root", str(root))
    assert out.returncode == 0, out.stderr
    return root


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != ".improvements.lock"
    }


def _temporary(path: str) -> bool:
    return Path(path).name.startswith(".improvements-tmp-")


# The build's manifest has a third state by design: a build first claims every file it is about
# to write (the manifest without its digests), so the next build can clean up after a killed one.
CLAIM = "docs/.improvements-manifest.json"


class _Forked:
    """A fork of this process running KILL, as subprocess.Popen would show it."""

    def __init__(self, pid: int, stderr: BinaryIO) -> None:
        self.pid, self.stderr, self.returncode = pid, stderr, None

    def wait(self) -> int:
        if self.returncode is None:
            # A signal as Popen gives it: -signal.SIGKILL for a kill.
            self.returncode = os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
            self.stderr.close()
        return self.returncode


def _fork(root: Path, args: list[str], env: dict[str, str], write: int) -> _Forked:
    """KILL in a fork of this process: the package is already imported, so a kill point costs no
    interpreter start, and the kill is as real (SIGKILL, no clean-up of any kind)."""
    err_read, err_write = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: never back into pytest, whatever happens
        code = 1
        try:
            os.close(err_read)
            os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
            os.dup2(err_write, 2)
            sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115 (the child's whole life)
            sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
            os.environ.update(env)
            os.chdir(root)
            sys.argv = ["kill.py", *args]
            exec(compile(KILL, "kill.py", "exec"), {"__name__": "__main__"})
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:
            import traceback

            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    os.close(err_write)
    return _Forked(pid, os.fdopen(err_read, "rb"))


def _run(
    root: Path, args: list[str], at: int, wrapper: Path | None = None
) -> tuple[subprocess.Popen[bytes] | _Forked, list[str]]:
    """The command under KILL: events listed (at=0, run to the end), or stopped at event `at`.

    In a fresh process running `wrapper` (a copy of KILL), or without one in a fork of this one.
    """
    read, write = os.pipe()
    env = {
        "PYTHONDONTWRITEBYTECODE": "1",
        "KILL_ROOT": str(root),
        "KILL_AT": str(at),
        "KILL_FD": str(write),
    }
    proc: subprocess.Popen[bytes] | _Forked
    if wrapper is None:
        proc = _fork(root, args, env, write)
    else:
        proc = subprocess.Popen(
            [sys.executable, str(wrapper), *args],
            cwd=root,
            env={**os.environ, **env},
            pass_fds=(write,),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
    os.close(write)
    lines: list[str] = []
    buffer = b""
    with os.fdopen(read, "rb", buffering=0) as pipe:
        while True:
            # Bounded: a command that neither reaches the point nor ends within a minute is a
            # failure, and is stopped (every process we start, we stop).
            ready, _, _ = select.select([pipe], [], [], 60)
            if not ready:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()
                pytest.fail(f"no event and no end from {args} within 60 s")
            chunk = pipe.read(65536)
            if not chunk:
                break  # the command ended: every write end is closed
            buffer += chunk
            *done, buffer = buffer.split(b"\n")
            lines += [d.decode() for d in done]
            if at and any(line.startswith("HIT ") for line in lines):
                break
    return proc, lines


def _points(events: list[str]) -> list[int]:
    """A handful of events: every step on a record itself and every lock taken, then, up to ten in
    all, steps that put another file in place (a run, a kept raw file, a page), spread out."""
    record = [i for i, e in enumerate(events, 1) if "locked" in e or (" improvements/" in e and "tmp" not in e)]
    placing = [i for i, e in enumerate(events, 1) if i not in record and any(w in e for w in ("replace", "rename"))]
    others = [i for i in range(1, len(events) + 1) if i not in record and i not in placing]
    room = max(0, 10 - len(record))
    spread = placing[:: max(1, -(-len(placing) // max(1, room - 2)))][: max(0, room - 2)]
    ends = [i for i in (others[:1] + others[-1:]) if i not in spread][: room - len(spread)]
    return sorted({*record, *spread, *ends})


@pytest.fixture(scope="module")
def wrapper(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("kill") / "kill.py"
    path.write_text(KILL)
    return path


@dataclass
class Reference:
    """What a command does when it is not killed."""

    events: list[str]
    before: dict[str, bytes]
    after: dict[str, bytes]
    kept: dict[str, bytes]  # its records and results


def _reference(tmp_path: Path, name: str) -> Reference:
    args = COMMANDS[name]
    reference = _campaign(tmp_path / "reference")
    before = _tree(reference)
    proc, events = _run(reference, args, 0)
    assert proc.wait() == 0, proc.stderr.read() if proc.stderr else ""
    assert events, "the command made no file-system step the wrapper sees"
    # What the command writes when it is not killed; renumber's pages come from a build.
    if name == "renumber":
        assert run_cli("build", "--quiet", "--root", str(reference)).returncode == 0
    after = _tree(reference)
    assert after != before
    kept = {p: b for p, b in after.items() if p.startswith(("improvements/", "results/"))}
    return Reference(events, before, after, kept)


def _kill_at(tmp_path: Path, name: str, ref: Reference, at: int, wrapper: Path | None = None) -> None:
    """Kill the command at event `at` (in a fork of this process, or a fresh one running `wrapper`):
    nothing half-written, `check` finds no error, and the next run finishes the job."""
    args = COMMANDS[name]
    before, after, kept = ref.before, ref.after, ref.kept
    root = _campaign(tmp_path / f"killed-{at}")
    assert _tree(root) == before
    proc, lines = _run(root, args, at, wrapper)
    hit = [line for line in lines if line.startswith("HIT ")]
    assert hit == [f"HIT {ref.events[at - 1]}"], (at, lines)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    where = f"killed at {hit[0]}"

    # Nothing half-written: each file is as it was or as the finished command writes it.
    for path, data in _tree(root).items():
        if _temporary(path):
            continue
        if path == CLAIM and data not in (before.get(path), after.get(path)):
            assert set(json.loads(data)["files"]) >= {p for p in after if p.startswith("docs/")} - {CLAIM}
            continue
        assert data in (before.get(path), after.get(path)), f"{where}: {path} is neither before nor after"
    check = run_cli("check", "--root", str(root))
    assert check.returncode == 0 and "Traceback" not in check.stderr, f"{where}: {check.stderr}"

    # The next run finishes the job.
    again = run_cli(*args, cwd=root)
    if name == "new" and any(p.endswith("-fourth-idea.yaml") for p in _tree(root)) and again.returncode != 0:
        assert "is taken" in again.stderr, f"{where}: {again.stderr}"
    else:
        assert again.returncode == 0, f"{where}: {again.stderr}"
    if name == "renumber":
        assert run_cli("build", "--quiet", "--root", str(root)).returncode == 0
    final = {p: b for p, b in _tree(root).items() if p.startswith(("improvements/", "results/"))}
    assert {p: b for p, b in final.items() if not _temporary(p)} == kept, where
    if name == "renumber":
        pages = {p for p in _tree(root) if p.startswith("docs/") and not _temporary(p)}
        assert pages == {p for p in after if p.startswith("docs/")}, where


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_kill_at_any_step_loses_nothing_and_the_next_run_recovers(tmp_path: Path, name: str) -> None:
    # Each kill in a fork of this process; the test below kills a fresh one, as a user's is.
    ref = _reference(tmp_path, name)
    for at in _points(ref.events):
        _kill_at(tmp_path, name, ref, at)


def test_a_kill_of_a_fresh_process_loses_nothing_and_the_next_run_recovers(tmp_path: Path, wrapper: Path) -> None:
    ref = _reference(tmp_path, "status")
    # A fresh process takes the very steps a fork does...
    root = _campaign(tmp_path / "listed")
    proc, events = _run(root, COMMANDS["status"], 0, wrapper)
    assert proc.wait() == 0, proc.stderr.read() if proc.stderr else ""
    assert events == ref.events
    # ...and killed as it moves the record into place, loses nothing either.
    at = next(i for i, e in enumerate(ref.events, 1) if e.startswith(f"{i} before replace improvements/"))
    _kill_at(tmp_path, "status", ref, at, wrapper)


def test_the_import_reference_links_every_run(tmp_path: Path) -> None:
    # The control of the tests above: the import they kill really writes runs and a record.
    root = _campaign(tmp_path / "c")
    proc, events = _run(root, COMMANDS["import"], 0)
    assert proc.wait() == 0
    runs = sorted((root / "results" / "runs").glob("*.json"))
    assert runs and all(
        json.loads(p.read_text())["id"] in (root / "improvements" / "01-first.yaml").read_text() for p in runs
    )
    assert any("replace improvements/01-first.yaml" in e for e in events)
    assert any("replace results/runs/" in e for e in events)
