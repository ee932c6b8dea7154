"""The site from the command line: `build --site` and `serve`, and the marker every site we build holds.

`build_site` builds <root>/mkdocs.yml in strict mode and `serve_site` runs mkdocs' live-reloading
server; the `improvements` plugin (`site`) does the rendering inside both. mkdocs empties the site
folder before it builds, so a folder is built into only when it is new, empty or marked as ours.
Imported by the CLI inside those commands only, never at start-up: it imports mkdocs.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
from mkdocs.exceptions import Abort, ConfigurationError


class _Formatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return f"{record.levelname:<8}-  {super().format(record)}"


@contextlib.contextmanager
def mkdocs_logging(level: int) -> Iterator[None]:
    """Show mkdocs' (and the theme's) log lines at `level` and above on stderr while building."""
    logger = logging.getLogger("mkdocs")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Formatter("%(message)s"))
    handler.setLevel(level)
    # `serve` asks for dirty rebuilds on purpose (and rebuilds every page when the navigation
    # changes), so mkdocs' warning about them would only be noise on every edit.
    handler.addFilter(lambda record: not record.getMessage().startswith("A 'dirty' build is being performed"))
    old_level, old_propagate = logger.level, logger.propagate
    logger.addHandler(handler)
    logger.setLevel(min(level, logging.INFO))
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
        logger.propagate = old_propagate


def _config_file(root: Path) -> Path:
    path = root / "mkdocs.yml"
    if not path.is_file():
        raise click.ClickException(
            f"{root} has no mkdocs.yml; write one with these two lines (the improvements plugin "
            "supplies the rest):\n  site_name: My campaign\n  plugins: [improvements]"
        )
    return path


def _ensure_docs_dir(config_file: Path) -> None:
    """Create the docs folder when it does not exist yet, inside the repository only.

    mkdocs refuses a docs_dir that does not exist, and a campaign has none until the first
    render: just after `improvements init`, or in a clone whose generated pages are not committed.
    """
    from mkdocs.utils.yaml import yaml_load

    try:
        with config_file.open("rb") as fd:
            docs = yaml_load(fd).get("docs_dir", "docs")
    except Exception:  # mkdocs' own load reports a broken mkdocs.yml, with its position
        return
    root = config_file.parent.resolve()
    if isinstance(docs, str) and not (root / docs).exists() and (root / docs).resolve().is_relative_to(root):
        (root / docs).mkdir(parents=True)


def refuse_foreign_site(root: Path, site_dir: Path | None) -> None:
    """Before anything is written: refuse a site folder (--site-dir or mkdocs.yml's) we did not build."""
    if site_dir is not None:
        refuse_foreign_site_dir(root, site_dir)
        return
    from mkdocs.utils.yaml import yaml_load

    config_file = _config_file(root)
    # Only the one key, read as mkdocs reads it: validating the whole config needs docs/, which the
    # build has not written yet. A file mkdocs cannot read is reported by build_site, which checks
    # the folder again before mkdocs empties it.
    try:
        with open(config_file, "rb") as fh:
            data = yaml_load(fh)
    except Exception:
        return
    value = data.get("site_dir", "site") if isinstance(data, dict) else "site"
    if isinstance(value, str):
        target = root / value
        refuse_foreign_site_dir(root, target, shown=f"site_dir {target.resolve()} (mkdocs.yml)")


def build_site(root: Path, site_dir: Path | None = None) -> Path:
    """Build the site from <root>/mkdocs.yml in strict mode (any warning fails it); return its folder.

    `site_dir` overrides mkdocs.yml's site_dir (which defaults to <root>/site).
    """
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    config_file = _config_file(root)
    _ensure_docs_dir(config_file)
    if site_dir is not None:
        refuse_foreign_site_dir(root, site_dir)
    # Without --site-dir, mkdocs.yml's site_dir (relative to mkdocs.yml) decides.
    overrides = {"site_dir": str(site_dir.resolve())} if site_dir is not None else {}
    with mkdocs_logging(logging.WARNING):
        try:
            config = load_config(config_file=str(config_file), strict=True, **overrides)
            if site_dir is None:
                # mkdocs.yml's site_dir is emptied just the same: the same rule holds for it.
                refuse_foreign_site_dir(root, Path(config.site_dir), shown=f"site_dir {config.site_dir} (mkdocs.yml)")
            # Marked before mkdocs writes (it keeps dot-files when it empties the folder), so a
            # build killed or out of disk mid-way leaves a folder the next build knows as ours.
            Path(config.site_dir).mkdir(parents=True, exist_ok=True)
            mark_site(Path(config.site_dir))
            build(config)
        except ConfigurationError as exc:
            raise click.ClickException(f"{config_file}: {exc}") from None
        except Abort as exc:
            raise click.ClickException(f"site not built: {exc}") from None
        except OSError as exc:
            where = exc.filename or config.site_dir
            raise click.ClickException(f"site not built: cannot write {where}: {exc.strerror or exc}") from None
    return Path(config.site_dir)


# The file every site this tool builds holds at its root. mkdocs empties the site folder before
# it builds (keeping only dot-files), so a folder is built into only when this says an earlier
# build of ours made it: a folder that merely looks like a site (an index.html beside the user's
# notes) is never emptied.
SITE_MARKER = ".improvements-site"
_SITE_MARKER_TEXT = (
    "generated by improvements; do not edit\n"
    "This folder is a site built by `improvements build --site`; the next build replaces everything in it.\n"
)


def mark_site(folder: Path) -> None:
    """Write the site marker into a site just built."""
    from generator.base.fsio import atomic_write

    atomic_write(folder / SITE_MARKER, _SITE_MARKER_TEXT)


def is_marked_site(folder: Path) -> bool:
    """True when `folder` holds our site marker: a regular file (not a link) with our text."""
    from generator.base.fsio import read_regular

    data = read_regular(folder, SITE_MARKER)
    return data is not None and data.startswith(b"generated by improvements; do not edit\n")


def refuse_foreign_site_dir(root: Path, site_dir: Path, shown: str | None = None) -> None:
    """mkdocs empties the site folder before it builds: refuse one that is not a site we built."""
    from generator.model.launch import quote

    shown = shown or f"--site-dir {site_dir}"
    target, repo = site_dir.resolve(), root.resolve()
    if target == repo or repo.is_relative_to(target):
        raise click.UsageError(f"{shown} would hold the repository itself; choose a folder of its own")
    for own in ("improvements", "results", "docs", "templates", ".git"):
        if target.is_relative_to(repo / own):
            raise click.UsageError(f"{shown} is inside the campaign's {own}/; choose a folder of its own")
    if target.is_dir() and any(target.iterdir()) and not is_marked_site(target):
        raise click.UsageError(
            f"{shown} is not empty and holds no site improvements built (no {SITE_MARKER} file); the build "
            "would delete everything in it. Choose a new or empty folder, or one an earlier build wrote; "
            f"if it holds only an old site (a build interrupted before sites were marked), "
            f"`rm -rf -- {quote(str(target))} && improvements build --site` rebuilds it"
        )


def serve_site(root: Path, dev_addr: str, *, open_browser: bool = False) -> None:
    """Preview the site with mkdocs' live-reloading server until interrupted."""
    from mkdocs.commands.serve import serve

    from generator.output import render

    config_file = _config_file(root)
    _ensure_docs_dir(config_file)
    # Render once up front so invalid records stop here with the usual report and exit 1;
    # the plugin renders again on each rebuild (writing nothing when nothing changed).
    render.build(root, keep=True)
    with mkdocs_logging(logging.INFO), _malformed_paths_refused():
        try:
            # Dirty rebuilds: only pages whose markdown changed are rebuilt (the plugin rebuilds
            # them all when the navigation changed), so an edit shows in seconds at 1,000 records.
            serve(config_file=str(config_file), dev_addr=dev_addr, open_in_browser=open_browser, build_type="dirty")
        except ConfigurationError as exc:
            raise click.UsageError(f"{config_file}: {exc}") from None
        except Abort as exc:
            raise click.ClickException(f"site not built: {exc}") from None
        except OSError as exc:
            raise click.ClickException(f"cannot serve on {dev_addr}: {exc.strerror or exc}") from None


# A path no file can have: a NUL (`GET /%00`) made mkdocs' server fail inside `open` with a 500
# and a traceback in the log; any other control character is no page's name either.
_MALFORMED = frozenset(chr(c) for c in (*range(0x20), 0x7F))


@contextlib.contextmanager
def _malformed_paths_refused() -> Iterator[None]:
    """mkdocs' live-reload server answering a malformed path with 400, without a traceback."""
    from mkdocs.livereload import LiveReloadServer

    serve_request = LiveReloadServer.serve_request

    def checked(self: LiveReloadServer, environ: dict[str, Any], start_response: Any) -> Any:
        path = str(environ.get("PATH_INFO", ""))
        if any(c in _MALFORMED for c in path):
            start_response("400 Bad Request", [("Content-Type", "text/plain; charset=utf-8")])
            return [b"400 Bad Request: the path holds a control character, which no page's name has\n"]
        return serve_request(self, environ, start_response)

    # The server binds its request handler when it is made, inside `serve`: patched around it.
    LiveReloadServer.serve_request = checked  # type: ignore[method-assign]
    try:
        yield
    finally:
        LiveReloadServer.serve_request = serve_request  # type: ignore[method-assign]
