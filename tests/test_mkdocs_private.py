"""The private mkdocs names the site plugin relies on, pinned to the mkdocs range it supports.

mkdocs offers public hooks for everything the plugin does but three things: a live-reload watch
with a filter (the plugin's own writes into docs/, and every read, must not wake the build
loop), the choice of the file watcher (mkdocs polls; `serve` swaps in the native one) and
loading a plugin from inside another (the theme and search the plugin supplies). All reach
private names; this test fails first when an mkdocs release renames them.
"""

from __future__ import annotations

from importlib.metadata import version

from mkdocs.config.config_options import Plugins
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.livereload import LiveReloadServer


def test_mkdocs_is_in_the_supported_range() -> None:
    major, minor = (int(part) for part in version("mkdocs").split(".")[:2])
    assert (1, 6) <= (major, minor) < (2, 0)


def test_the_live_reload_server_has_the_names_watch_docs_uses() -> None:
    server = LiveReloadServer(builder=lambda: None, host="127.0.0.1", port=0, root="/tmp")
    try:
        for name in ("_rebuild_cond", "_want_rebuild", "_watched_paths", "_watch_refs", "observer"):
            assert hasattr(server, name), name
        with server._rebuild_cond:
            server._want_rebuild = True
            server._rebuild_cond.notify_all()
        assert isinstance(server._watched_paths, dict)
        assert isinstance(server._watch_refs, dict)
    finally:
        server.server_close()


def test_the_server_starts_and_stops_the_observer_it_holds_when_it_serves() -> None:
    # site/watch.py replaces `observer` in on_serve, after mkdocs made it and before `serve`
    # starts it: the server must read the attribute then, not keep the one it made.
    import inspect

    from watchdog.observers.polling import PollingObserver

    server = LiveReloadServer(builder=lambda: None, host="127.0.0.1", port=0, root="/tmp")
    try:
        assert isinstance(server.observer, PollingObserver)
        assert not server.observer.is_alive()
        assert "self.observer.start()" in inspect.getsource(LiveReloadServer.serve)
        assert "self.observer.stop()" in inspect.getsource(LiveReloadServer.shutdown)
        assert "self.observer.unschedule(self._watch_refs.pop(path))" in inspect.getsource(LiveReloadServer.unwatch)
    finally:
        server.server_close()


def test_the_config_schema_holds_the_plugins_option() -> None:
    config = MkDocsConfig()
    option = dict(config._schema)["plugins"]
    assert isinstance(option, Plugins)
    assert callable(option.load_plugin_with_namespace)
