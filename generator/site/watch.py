"""What `serve` watches, and how: the platform's native file watcher, filtered to real edits.

mkdocs 1.6 watches through watchdog's polling observer, which looks for changes every 0.5 s:
half of a second of every edit's wait at 10 records went to it. `use_native_observer` swaps in
watchdog's `Observer` (inotify on Linux, FSEvents on macOS, ReadDirectoryChangesW on Windows;
watchdog falls back to polling itself where none exists) before the server starts, and
schedules every watch itself:

- A native watcher reports reads too (a file opened, closed unwritten), and every build reads
  every record: mkdocs' own handler, which takes any event for a change, would then rebuild
  forever. Only writes, creations, deletions, moves and metadata changes wake the build loop.
- A single file (mkdocs.yml) is watched through its folder: an editor that saves by writing a
  new file and renaming it over the old one leaves a watch on the old file's inode deaf after
  the first save.
- docs/ is watched for the user's own pages only, never for the files each build writes there.
- Where the native watcher cannot start (inotify's watch table full), it polls as mkdocs did.

mkdocs (pinned below 2) offers no filter and no choice of observer, so this reaches the private
names its own `watch` uses; tests/test_mkdocs_private.py fails on an mkdocs that moved them.
Imported by the plugin's `on_serve` only.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Callable
from pathlib import Path

from mkdocs.livereload import LiveReloadServer
from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileAttribEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers.api import BaseObserver, ObservedWatch
from watchdog.observers.polling import PollingObserver

log = logging.getLogger("mkdocs.plugins.improvements")

# The events that mean a file changed. Directory events are asked for so that a recursive watch
# follows new folders and moves, but wake nothing themselves (as in mkdocs' own handler).
CHANGES: list[type[FileSystemEvent]] = [
    FileCreatedEvent,
    FileModifiedEvent,
    FileAttribEvent,
    FileDeletedEvent,
    FileMovedEvent,
    FileClosedEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
]
# What an observer that ignores the filter still reports on a read.
_READS = frozenset({"opened", "closed_no_write"})


def use_native_observer(server: LiveReloadServer) -> None:
    """Watch through the platform's native watcher, filtered, from now on.

    Called from `on_serve`, before the server starts its observer. The watches mkdocs has made
    by then (docs/, mkdocs.yml, the theme's folders) move to the new observer, each counted as
    often as before, and `server.watch` becomes `watch` for everything asked later (mkdocs.yml's
    `watch:` list, other plugins' `on_serve`).
    """
    if server.observer.is_alive():  # started already: too late to swap without losing events
        return
    watched = dict(server._watched_paths)
    for path, count in watched.items():
        for _ in range(count):
            server.unwatch(path)
    # mkdocs types the attribute as its PollingObserver; any observer serves the same calls.
    server.observer = _native(server)  # type: ignore[assignment]

    def watch_here(path: str, func: None = None, *, recursive: bool = True) -> None:
        if func is not None:  # as mkdocs' own `watch` says since 1.4
            raise TypeError("Plugins can no longer pass a 'func' parameter to watch().")
        watch(server, path, recursive=recursive)

    server.watch = watch_here  # type: ignore[method-assign]
    for path, count in watched.items():
        for _ in range(count):
            watch(server, path)


def watch(
    server: LiveReloadServer, path: str, ignore: Callable[[str], bool] | None = None, *, recursive: bool = True
) -> None:
    """Rebuild when a file under `path` (a folder, or one file) changes, unless `ignore` names every path of the event.

    Replaces mkdocs' `watch`, which takes no filter and would wake on reads; `server.unwatch`
    still undoes it.
    """
    path = os.path.abspath(path)
    if path in server._watched_paths:
        server._watched_paths[path] += 1
        return
    # A file is watched through its folder, and only its own name there wakes the loop.
    only = None if os.path.isdir(path) else path

    def wanted(event: FileSystemEvent) -> bool:
        if event.is_directory or event.event_type in _READS:
            return False
        paths = [os.fsdecode(p) for p in (event.src_path, getattr(event, "dest_path", "")) if p]
        if only is not None:
            paths = [p for p in paths if p == only]
        return bool(paths) and (ignore is None or not all(ignore(p) for p in paths))

    folder = path if only is None else os.path.dirname(path)
    server._watched_paths[path] = 1
    server._watch_refs[path] = server.observer.schedule(
        _Wake(server, wanted), folder, recursive=recursive and only is None, event_filter=CHANGES
    )


def _native(server: LiveReloadServer) -> BaseObserver:
    """The platform's native observer, which polls as mkdocs did when it cannot start.

    inotify refuses a watch past `fs.inotify.max_user_watches` (each folder under a recursive
    watch takes one), and mkdocs would then report `serve` as unable to bind its address.
    """
    from watchdog.observers import Observer

    Scheduled = tuple[FileSystemEventHandler, str, bool, list[type[FileSystemEvent]] | None]

    class Native(Observer):  # type: ignore[misc,valid-type]
        def __init__(self) -> None:
            super().__init__()
            self.scheduled: dict[ObservedWatch, list[Scheduled]] = {}

        def schedule(
            self,
            event_handler: FileSystemEventHandler,
            path: str,
            *,
            recursive: bool = False,
            event_filter: list[type[FileSystemEvent]] | None = None,
            follow_symlink: bool = False,
        ) -> ObservedWatch:
            made: ObservedWatch = super().schedule(
                event_handler, path, recursive=recursive, event_filter=event_filter, follow_symlink=follow_symlink
            )
            self.scheduled.setdefault(made, []).append((event_handler, path, recursive, event_filter))
            return made

        def unschedule(self, watch: ObservedWatch) -> None:
            super().unschedule(watch)
            self.scheduled.pop(watch, None)

        def start(self) -> None:
            try:
                super().start()
            except OSError as exc:
                self.unschedule_all()
                log.warning("the native file watcher could not start (%s); polling for changes instead", exc)
                polling = PollingObserver(timeout=0.5)
                moved = {}
                for watch, calls in self.scheduled.items():
                    for handler, path, recursive, event_filter in calls:
                        moved[watch] = polling.schedule(handler, path, recursive=recursive, event_filter=event_filter)
                server._watch_refs = {path: moved.get(ref, ref) for path, ref in server._watch_refs.items()}
                server.observer = polling
                polling.start()

    return Native()


class _Wake(FileSystemEventHandler):
    """Wake mkdocs' build loop on the events `wanted` accepts."""

    def __init__(self, server: LiveReloadServer, wanted: Callable[[FileSystemEvent], bool]) -> None:
        self.server, self.wanted = server, wanted

    def on_any_event(self, event: FileSystemEvent) -> None:
        if not self.wanted(event):
            return
        # What mkdocs' own `watch` does to wake its build loop (mkdocs/livereload/__init__.py, 1.5 and 1.6).
        with self.server._rebuild_cond:
            self.server._want_rebuild = True
            self.server._rebuild_cond.notify_all()


def watch_docs(server: LiveReloadServer, docs: Path, root: Path) -> None:
    """Watch docs/ for the user's own pages, but not for the files each build writes there.

    mkdocs watches the whole docs folder, so the plugin's own writes (the pages rendered from
    the records, the charts, the manifest and their temporaries) woke the watcher again and
    every edit cost two full builds. The generated files are listed in the manifest; a
    change to any other file in docs/ still rebuilds.
    """
    from generator.base.fsio import LOCK_NAME, TMP_PREFIX
    from generator.base.stamp import MANIFEST_NAME

    folder = os.path.abspath(docs)
    while folder in server._watched_paths:
        server.unwatch(folder)
    generated = _Generated(root.resolve(), Path(folder))

    def ours(path: str) -> bool:
        name = os.path.basename(path)
        if name.startswith(TMP_PREFIX) or name in (MANIFEST_NAME, LOCK_NAME):
            return True
        try:
            return Path(path).resolve().relative_to(generated.root).as_posix() in generated
        except ValueError:
            return False

    watch(server, folder, ours)


class _Generated:
    """The outputs the last build listed in its manifest, read again only when the manifest changes."""

    def __init__(self, root: Path, docs: Path) -> None:
        from generator.base.stamp import MANIFEST_NAME

        self.root = root
        self.manifests = sorted({docs / MANIFEST_NAME, root / "docs" / MANIFEST_NAME})
        self.seen: tuple[int, ...] = ()
        self.files: frozenset[str] = frozenset()

    def __contains__(self, rel_path: str) -> bool:
        stamps = tuple(_mtime(m) for m in self.manifests)
        if stamps != self.seen:
            found: set[str] = set()
            for manifest in self.manifests:
                with contextlib.suppress(OSError, ValueError, TypeError, AttributeError):
                    found.update(str(f) for f in json.loads(manifest.read_bytes()).get("files", []))
            self.seen, self.files = stamps, frozenset(found)
        return rel_path in self.files


def watched_paths(root: Path) -> list[Path]:
    """What `serve` watches besides docs/ and mkdocs.yml: the inputs the pages are rendered from.

    templates/ is where a campaign overrides the shipped page templates (see output/templates.py `_Loader`).
    """
    candidates = [root / "improvements", root / "results", root / "templates"]
    return [p for p in candidates if p.is_dir()]


def _mtime(path: Path) -> int:
    """The file's modification time, 0 when there is none: a build may be replacing it just now,
    and this runs in the watcher's thread, where an error would end the thread."""
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0
