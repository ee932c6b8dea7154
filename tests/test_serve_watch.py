"""`serve` watches through the platform's native file watcher, woken by writes and never by reads.

Real folders and a real watchdog observer in this process, and a real `improvements serve`
process answering on 127.0.0.1: an edit reaches the page, and on Linux the process holds an
inotify descriptor (mkdocs' own polling observer holds none).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from mkdocs.livereload import LiveReloadServer
from test_site import fetch, free_port, serving, wait_for
from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.polling import PollingObserver

from generator.checks.validate import require_project
from generator.site.watch import use_native_observer, watch

from conftest import copy_campaign


def until(predicate: Callable[[], bool], limit: float = 30.0) -> bool:
    """Poll `predicate` until it holds or `limit` seconds pass (a bound, not a timing)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False


class Seen(FileSystemEventHandler):
    """Every event the observer dispatches for a folder, in order."""

    def __init__(self) -> None:
        self.events: list[FileSystemEvent] = []
        self.lock = threading.Lock()

    def on_any_event(self, event: FileSystemEvent) -> None:
        with self.lock:
            self.events.append(event)

    def saw(self, path: Path, kind: str) -> bool:
        with self.lock:
            return any(e.event_type == kind and os.fsdecode(e.src_path) == str(path) for e in self.events)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveReloadServer]:
    made = LiveReloadServer(builder=lambda: None, host="127.0.0.1", port=0, root=str(tmp_path))
    try:
        yield made
    finally:
        if made.observer.is_alive():
            made.observer.stop()
            made.observer.join(10)
        made.server_close()


def wanted(server: LiveReloadServer) -> bool:
    with server._rebuild_cond:
        return server._want_rebuild


def test_the_watches_mkdocs_made_move_to_a_native_observer(tmp_path: Path, server: LiveReloadServer) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (tmp_path / "mkdocs.yml").write_text("site_name: x\n")
    server.watch(str(docs))
    server.watch(str(docs))
    server.watch(str(tmp_path / "mkdocs.yml"))
    assert isinstance(server.observer, PollingObserver)
    use_native_observer(server)
    assert isinstance(server.observer, Observer)
    assert server._watched_paths == {str(docs): 2, str(tmp_path / "mkdocs.yml"): 1}
    # What is asked later (mkdocs.yml's `watch:`, other plugins) goes through the filtered watch too.
    (tmp_path / "more").mkdir()
    server.watch(str(tmp_path / "more"), recursive=False)
    assert server._watched_paths[str(tmp_path / "more")] == 1
    server.unwatch(str(docs))
    server.unwatch(str(docs))
    assert str(docs) not in server._watched_paths and str(docs) not in server._watch_refs


@pytest.mark.skipif(sys.platform != "linux", reason="inotify reports reads; other watchers may not")
def test_a_read_wakes_nothing_a_write_wakes_the_build_loop(tmp_path: Path, server: LiveReloadServer) -> None:
    folder = tmp_path / "improvements"
    folder.mkdir()
    record, marker = folder / "01-a.yaml", folder / "marker"
    record.write_text("title: a\n")
    marker.write_text("0")
    use_native_observer(server)
    watch(server, str(folder), ignore=lambda path: path == str(marker))
    # Beside the build loop's handler, on its very watch: dispatched in the same order.
    seen = Seen()
    server.observer.add_handler_for_watch(seen, server._watch_refs[str(folder)])
    server.observer.start()
    # Another observer, unfiltered, shows that the read did reach the platform's watcher.
    everything, unfiltered = Seen(), Observer()
    unfiltered.schedule(everything, str(folder), recursive=True)
    unfiltered.start()
    try:
        record.read_bytes()  # what every build does to every record
        marker.write_text("1")  # ignored, and dispatched after the read's events
        assert until(lambda: everything.saw(record, "opened")), "the watcher reports no reads: the test shows nothing"
        assert until(lambda: seen.saw(marker, "modified")), "the observer reported nothing"
    finally:
        unfiltered.stop()
        unfiltered.join(10)
    assert not wanted(server), "a read (or an ignored file) woke the build loop"

    record.write_text("title: b\n")
    assert until(lambda: wanted(server)), "an edit did not wake the build loop"


def test_a_file_saved_by_rename_wakes_the_loop_every_time(tmp_path: Path, server: LiveReloadServer) -> None:
    config = tmp_path / "mkdocs.yml"
    config.write_text("site_name: a\n")
    server.watch(str(config))
    use_native_observer(server)
    server.observer.start()
    for i in range(2):
        # How many editors save: a new file renamed over the old one (a new inode each time).
        fresh = tmp_path / f".mkdocs.yml.{i}"
        fresh.write_text(f"site_name: {i}\n")
        os.replace(fresh, config)
        assert until(lambda: wanted(server)), f"save {i + 1} did not wake the build loop"
        with server._rebuild_cond:
            server._want_rebuild = False


def _inotify_fds(pid: int) -> int:
    found = 0
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            found += os.readlink(fd) == "anon_inode:inotify"
        except OSError:
            continue
    return found


@pytest.mark.mkdocs
def test_serve_picks_up_an_edit_through_the_native_watcher(tmp_path: Path) -> None:
    root = copy_campaign(tmp_path / "repo", with_docs=True)
    project = require_project(root)
    rec = project.records[-1]
    port = free_port()
    series = project.docs_dir.relative_to(root / "docs").as_posix()
    url = f"http://127.0.0.1:{port}/{series}/{Path(project.output_name(rec)).stem}.html"
    with serving(root, port) as proc:
        ok = wait_for(lambda: rec.record.title in (fetch(url) or "") or proc.poll() is not None, 120)
        assert ok and proc.poll() is None, proc.stdout.read() if proc.stdout else ""
        if sys.platform == "linux":
            assert _inotify_fds(proc.pid) >= 1, "serve watches without inotify"
        text = rec.path.read_text(encoding="utf-8")
        rec.path.write_text(text.replace(f"title: {rec.record.title}", "title: Seen by the native watcher", 1))
        assert wait_for(lambda: "Seen by the native watcher" in (fetch(url) or ""), 60), "the edit never showed"


@pytest.mark.skipif(sys.platform != "linux", reason="the inotify emitter stands in for any native one")
def test_a_native_watcher_that_cannot_start_falls_back_to_polling(
    tmp_path: Path, server: LiveReloadServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from watchdog.observers.inotify import InotifyEmitter

    def full(self: InotifyEmitter) -> None:
        raise OSError(28, "inotify watch limit reached")

    # What inotify says past fs.inotify.max_user_watches.
    monkeypatch.setattr(InotifyEmitter, "on_thread_start", full)
    folder = tmp_path / "improvements"
    folder.mkdir()
    record = folder / "01-a.yaml"
    record.write_text("title: a\n")
    use_native_observer(server)
    server.watch(str(folder))
    server.observer.start()  # what mkdocs' `serve` does
    assert isinstance(server.observer, PollingObserver) and server.observer.is_alive()
    record.write_text("title: b, longer\n")
    assert until(lambda: wanted(server)), "the polling observer did not pick up the edit"
    server.unwatch(str(folder))
    assert str(folder) not in server._watch_refs
