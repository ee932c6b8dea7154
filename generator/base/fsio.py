"""Every way the generator changes a file: atomic writes, exclusive creates, the lock, and
reading or deleting a file without following a link.

One module so that each guarantee is written once: a reader sees the old file or the new
one, never a part; a file that exists is never overwritten by a create; two processes never
interleave; and a path is never followed through a symbolic link into a file the generator
does not own. Nothing here keeps state between calls.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath

# Temporary files start with this, so a crash leaves files that say what they are.
TMP_PREFIX = ".improvements-tmp-"
# The repository's lock file (gitignored), shared by every command that writes.
LOCK_NAME = ".improvements.lock"


# Characters encoded at a time: a generated file can be tens of megabytes of text (records.json
# at 3,000 records), and encoding it whole held a second copy of it.
CHUNK = 1 << 20


def encoded_chunks(data: bytes | str) -> Iterator[bytes]:
    """`data` as UTF-8, a slice at a time (a slice never splits a character: str slices are whole)."""
    if isinstance(data, bytes):
        yield data
        return
    for start in range(0, len(data), CHUNK):
        yield data[start : start + CHUNK].encode("utf-8")


def _mode_for(path: Path) -> int:
    """The permission bits `path` has now, or those a new file gets under the umask."""
    try:
        return path.stat().st_mode & 0o7777
    except FileNotFoundError:
        # The umask can only be read by setting it; this process is not threaded while writing.
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _write_fd(fd: int, data: bytes | str, *, sync: bool) -> None:
    """`data` into the open file `fd` (closed after), a chunk at a time; synced to disk when `sync`."""
    with os.fdopen(fd, "wb") as fh:
        for chunk in encoded_chunks(data):
            fh.write(chunk)
        fh.flush()
        if sync:
            os.fsync(fh.fileno())


def write_temp(target: Path, data: bytes | str, *, sync: bool = True) -> Path:
    """A new temporary file beside `target` holding `data`, with `target`'s mode; synced unless `sync` is False.

    For callers that move several files into place together; `atomic_write` for one file.
    With `sync=False` the caller must call `sync_all` before moving the file into place.
    """
    # Short whatever the target's name: a page name near the file system's limit must still
    # leave room for its temporary (`bad-filename` guards the page names themselves).
    fd, name = tempfile.mkstemp(prefix=TMP_PREFIX, dir=target.parent)
    try:
        _write_fd(fd, data, sync=sync)
        os.chmod(name, _mode_for(target))
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(name)
        raise
    return Path(name)


# One fsync costs about 5 ms on ext4 (a journal commit each), so a clean build of 1,300 files
# spent 6 s syncing; past this many files one sync() of everything is far cheaper.
SYNC_ALL_FROM = 16


def sync_written(paths: list[Path]) -> None:
    """Flush files written with `write_temp(sync=False)` to disk: a few one by one, many by one sync(),
    which waits for the data on Linux."""
    if len(paths) >= SYNC_ALL_FROM and hasattr(os, "sync"):
        os.sync()
        return
    for path in paths:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def sweep_temps(folder: Path) -> list[str]:
    """Remove the temporary files a killed run left in `folder`; their names.

    Only under the lock of whatever writes there (a live writer's temporaries would go too), and
    only regular files with our prefix, never through a link.
    """
    removed: list[str] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        if entry.name.startswith(TMP_PREFIX) and entry.is_file(follow_symlinks=False):
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
                removed.append(entry.name)
    return removed


def atomic_write(path: Path, data: bytes | str) -> None:
    """Replace `path` with `data` (text as UTF-8, line endings untouched), keeping its mode.

    Readers see the old file or the new one, never a part; nothing is left behind on failure.
    """
    tmp = write_temp(path, data)
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def create_exclusive(path: Path, data: bytes | str) -> bool:
    """Create `path` holding `data`; False, writing nothing, when anything already has that name.

    The data is written to a temporary first and linked into place whole: created empty and then
    filled, a kill between the two left an empty record that stopped every later `check`.
    """
    tmp = write_temp(path, data)
    try:
        os.link(tmp, path)
    except FileExistsError:
        return False
    except OSError:
        # A file system without hard links: created and filled in place, as before.
        return _create_in_place(path, data)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
    return True


def _create_in_place(path: Path, data: bytes | str) -> bool:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except FileExistsError:
        return False
    try:
        _write_fd(fd, data, sync=True)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise
    return True


@contextlib.contextmanager
def lock(path: Path, timeout: float = -1, waiting: Callable[[], None] | None = None) -> Iterator[None]:
    """Hold the exclusive lock kept in file `path` (waits for it; `timeout` seconds, -1 forever).

    `waiting` is called once, before waiting, when another process holds the lock.
    filelock uses flock on POSIX and msvcrt on Windows, so the same lock works everywhere.
    """
    from filelock import FileLock, Timeout

    held = FileLock(path)
    try:
        held.acquire(timeout=0)
    except Timeout:
        if waiting is not None:
            waiting()
        held.acquire(timeout=timeout)
    try:
        yield
    finally:
        held.release()


@contextlib.contextmanager
def edit_lock(root: Path, path: Path) -> Iterator[None]:
    """Hold the lock of one file's edits (a record, campaign.yaml) from its read to its replace.

    Every command that edits a user file takes it, so two edits of one file queue up instead
    of the second overwriting the first; edits of different files still run side by side.
    The lock files live in the user's cache folder (named by the file's real path), so a
    checkout never gains files to ignore; without a usable cache folder, the repository's
    one lock stands in (coarser, as safe).
    """
    with lock(_edit_lock_file(root, path)):
        yield


class LockBusy(Exception):
    """Another process holds the lock that `edit_lock_now` asked for."""


@contextlib.contextmanager
def edit_lock_now(root: Path, path: Path, wait: float = 0) -> Iterator[None]:
    """`edit_lock` that waits at most `wait` seconds: LockBusy while another process holds it.

    Its own exception, raised only by the taking of the lock: a TimeoutError from the work done
    under it (a socket's, another lock's) is that work's error, not a sign of another process.
    """
    held = lock(_edit_lock_file(root, path), timeout=wait)
    try:
        held.__enter__()
    except TimeoutError:
        raise LockBusy(str(path)) from None
    with contextlib.ExitStack() as stack:
        stack.push(held)
        yield


@contextlib.contextmanager
def edit_locks(root: Path, paths: list[Path]) -> Iterator[None]:
    """`edit_lock` of every path, taken in one order (their lock files' names) so that two
    commands locking overlapping sets never wait for each other in a circle."""
    files = sorted({_edit_lock_file(root, p) for p in paths})
    with contextlib.ExitStack() as stack:
        for file in files:
            stack.enter_context(lock(file))
        yield


def _edit_lock_file(root: Path, path: Path, fallback: str = LOCK_NAME) -> Path:
    import hashlib

    from platformdirs import user_cache_dir

    key = hashlib.sha256(os.fsencode(os.path.realpath(path))).hexdigest()[:32]
    try:
        folder = Path(user_cache_dir("improvements", appauthor=False)) / "locks"
        folder.mkdir(parents=True, exist_ok=True)
        if not os.access(folder, os.W_OK):
            raise PermissionError(folder)
    except (OSError, RuntimeError):
        return root / fallback
    return folder / f"{key}.lock"


# Without a cache folder, the campaign's runs lock lives here (gitignored by `init`): never in the
# repository's one lock, which every edit takes alone and a run holding it shared would block.
RUNS_LOCK_NAME = ".improvements-runs.lock"


@contextlib.contextmanager
def runs_lock(root: Path, *, shared: bool, wait: float = 0) -> Iterator[None]:
    """The campaign's runs lock: every `improvements run` holds it shared while it runs, and a
    command that moves or adds records under a run (`renumber`, `new`) takes it alone. LockBusy
    after `wait` seconds.

    filelock has no shared mode, so this is flock(2) itself; the runner is POSIX-only (process
    groups), so where there is no flock no run can be going and nothing is locked.
    """
    try:
        import fcntl
    except ImportError:  # Windows
        yield
        return
    import time

    path = _edit_lock_file(root, root / "results" / "journal" / ".runs", RUNS_LOCK_NAME)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise LockBusy(str(path)) from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # releases the lock


def link_in_path(root: Path, rel_path: str) -> str | None:
    """The first component of `rel_path` below `root` that is a symbolic link, as a relative path.

    Every component is checked with lstat, so nothing is followed; a missing component ends
    the walk (nothing below it exists to be reached through a link).
    """
    here = root
    parts = PurePosixPath(rel_path).parts
    for i, part in enumerate(parts):
        here = here / part
        try:
            mode = os.lstat(here).st_mode
        except (FileNotFoundError, NotADirectoryError):
            return None
        if stat.S_ISLNK(mode):
            return PurePosixPath(*parts[: i + 1]).as_posix()
    return None


def _open_parent(root: Path, rel_path: str) -> tuple[int, str]:
    """A descriptor of the folder holding `rel_path`, opened component by component without
    following a link, and the file's name in it. OSError when a component is a link or missing.
    """
    parts = PurePosixPath(rel_path).parts
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in parts[:-1]:
            nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd, parts[-1]


def read_regular(root: Path, rel_path: str) -> bytes | None:
    """The bytes of `root/rel_path` when every component is a real folder and the file a regular
    file (no link followed anywhere); None otherwise, or when it does not exist.
    """
    if not _no_follow_supported():
        if link_in_path(root, rel_path) is not None:
            return None
        path = root / rel_path
        return path.read_bytes() if path.is_file() else None
    try:
        dir_fd, name = _open_parent(root, rel_path)
    except OSError:
        return None
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
    except OSError:
        return None
    finally:
        os.close(dir_fd)
    with os.fdopen(fd, "rb") as fh:
        # O_NONBLOCK: a FIFO put where an output was must not hang the build; it is refused here.
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return None
        return fh.read()


def unlink_regular(root: Path, rel_path: str, expected: bytes) -> bool:
    """Delete `root/rel_path` when it is a regular file reached without following a link and
    still holds `expected`; True when it was deleted.
    """
    if not _no_follow_supported():
        if link_in_path(root, rel_path) is not None or read_regular(root, rel_path) != expected:
            return False
        (root / rel_path).unlink()
        return True
    try:
        dir_fd, name = _open_parent(root, rel_path)
    except OSError:
        return False
    try:
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
        except OSError:
            return False
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode) or fh.read() != expected:
                return False
        os.unlink(name, dir_fd=dir_fd)
        return True
    finally:
        os.close(dir_fd)


def _no_follow_supported() -> bool:
    # Windows has neither O_NOFOLLOW nor dir_fd; there the lstat walk stands in.
    return hasattr(os, "O_NOFOLLOW") and os.open in os.supports_dir_fd and os.unlink in os.supports_dir_fd
