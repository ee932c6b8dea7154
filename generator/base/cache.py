"""A content-keyed cache for `build`: loaded records, rendered pages and drawn charts.

A rebuild after one record changed should not parse, validate, render and draw a thousand
records again. Each entry here is keyed by a hash of everything its value is computed from
(the bytes of the files it reads, and the generator's own code and library versions), so an
entry is either exactly what a fresh build would compute or never looked up: nothing is
invalidated by time or by guesswork, and deleting the folder is always safe.

Only `build` (and the site and `serve`, which call it) use it; `check` always reads every
file afresh.

Where it lives, and why loading it is safe: entries are pickles, and unpickling runs code, so
the cache must never be a file a checkout can carry. It lives in the user's own cache folder
(platformdirs: $XDG_CACHE_HOME or ~/.cache on Linux, the platform's place elsewhere), in a
folder named by a hash of the repository's resolved path. Nothing in a repository is ever
read as a cache, whatever it contains, and a cache folder that would fall inside the
repository (a cache home pointed into a checkout) is not used at all.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from generator.base.stamp import code_digest

# Bump when the layout of the cache files changes.
FORMAT = 2
DATABASE = "entries.sqlite"
T = TypeVar("T")


def digest(*parts: Any) -> str:
    """A short stable hash of `parts` (bytes, text, or anything whose repr is stable)."""
    import hashlib

    h = hashlib.blake2b(digest_size=16)
    for part in parts:
        if isinstance(part, bytes):
            h.update(part)
        else:
            h.update(repr(part).encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return h.hexdigest()


def _templates_digest(root: Path) -> str:
    """A campaign's own templates/ (overrides of the shipped ones), which pages are drawn with."""
    folder = root / "templates"
    if not folder.is_dir():
        return ""
    parts: list[Any] = []
    for path in sorted(folder.iterdir()):
        with contextlib.suppress(OSError):
            parts += [path.name, path.read_bytes()]
    return digest(*parts)


def cache_folder(root: Path) -> Path | None:
    """Where the cache of the repository at `root` lives, or None when it cannot be kept safely."""
    from platformdirs import user_cache_dir

    try:
        repo = root.resolve()
        folder = Path(user_cache_dir("improvements", appauthor=False)).resolve() / "builds" / digest(str(repo))
    except (OSError, RuntimeError):  # no home folder: no cache
        return None
    return None if folder.is_relative_to(repo) else folder


class BuildCache:
    """The cache of one campaign repository. `save()` writes what this build added.

    Entries are rows of one SQLite file, each value a pickle of its own: a build reads only the
    entries it asks for and writes only those it made, where one pickle of the whole table was
    read whole and written whole after any change (a tenth of a rebuild after one edit).
    """

    def __init__(self, root: Path) -> None:
        self.folder = cache_folder(root)
        self.salt = digest(FORMAT, code_digest(), _templates_digest(root))
        # Values read or made in this process (`serve` keeps them between builds), and those
        # made since the last save.
        self._memory: dict[str, Any] = {}
        self._new: dict[str, Any] = {}
        self._used: set[str] = set()
        self._db: Any = None
        self._broken = False
        # File digests seen while loading, by path: page keys are built from them.
        self.files: dict[Path, str] = {}
        self.root = root

    def start(self) -> None:
        """Begin another build with this cache (`serve` keeps one between rebuilds, in memory).

        What the last build used is forgotten, so `save()` keeps only what this one uses; a
        changed template override is a new salt, under which no entry of the old one is found.
        """
        salt = digest(FORMAT, code_digest(), _templates_digest(self.root))
        if salt != self.salt:
            self.salt, self._memory, self._new = salt, {}, {}
        self._used = set()
        self.files = {}

    def _connect(self, create: bool) -> Any:
        """The open database, or None: no folder, no file yet (and `create` is False), or a broken one."""
        if self._db is not None or self._broken or self.folder is None:
            return self._db
        path = self.folder / DATABASE
        if not create and not path.is_file():
            return None
        import sqlite3

        try:
            if create:
                self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            db = sqlite3.connect(path, timeout=10, isolation_level=None)
            db.execute("CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, value BLOB NOT NULL)")
        except (sqlite3.Error, OSError):
            # A damaged file: set aside at the next save (see `save`), never read.
            self._broken = True
            return None
        self._db = db
        return db

    def _stored(self, key: str) -> Any | None:
        import pickle
        import sqlite3

        db = self._connect(create=False)
        if db is None:
            return None
        try:
            row = db.execute("SELECT value FROM entries WHERE key = ?", (key,)).fetchone()
            # Safe to unpickle: the folder is the user's own, outside every repository
            # (see the module's docstring).
            return None if row is None else pickle.loads(row[0])
        except sqlite3.Error:
            self._broken = True
            return None
        except Exception:  # an old or damaged entry is a missing one
            return None

    def get(self, key: str) -> Any | None:
        value = self._memory.get(key)
        if value is None:
            value = self._stored(key)
            if value is not None:
                self._memory[key] = value
        if value is not None:
            self._used.add(key)
        return value

    def put(self, key: str, value: Any) -> None:
        self._memory[key] = value
        self._new[key] = value
        self._used.add(key)

    def memo(self, key: str, compute: Callable[[], T]) -> T:
        hit = self.get(key)
        if hit is not None:
            return hit  # type: ignore[no-any-return]
        value = compute()
        if value is not None:
            self.put(key, value)
        return value

    def save(self) -> None:
        """Write this build's new entries and drop those it did not use; a failure to write is not an error."""
        import pickle
        import sqlite3

        used = self._used
        self._memory = {k: v for k, v in self._memory.items() if k in used}
        if self.folder is None:
            return
        if self._broken:
            self._set_aside()
        # The whole table in one pickle, as builds before the database kept it.
        with contextlib.suppress(OSError):
            (self.folder / "entries.pickle").unlink()
        db = self._connect(create=True)
        if db is None:
            return
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                db.executemany(
                    "INSERT OR REPLACE INTO entries VALUES (?, ?)",
                    ((k, pickle.dumps(v, protocol=pickle.HIGHEST_PROTOCOL)) for k, v in self._new.items()),
                )
                (count,) = db.execute("SELECT count(*) FROM entries").fetchone()
                if count != len(used):
                    # Entries of older builds (or of older code, under another salt): only what
                    # this build used is kept, as a build's outputs are only what it wrote.
                    db.execute("CREATE TEMP TABLE IF NOT EXISTS used (key TEXT PRIMARY KEY) WITHOUT ROWID")
                    db.execute("DELETE FROM used")
                    db.executemany("INSERT OR IGNORE INTO used VALUES (?)", ((k,) for k in used))
                    db.execute("DELETE FROM entries WHERE key NOT IN (SELECT key FROM used)")
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        except (sqlite3.Error, OSError, pickle.PicklingError, TypeError, AttributeError):
            return
        self._new = {}

    def _set_aside(self) -> None:
        """Remove a damaged database, so that the next connection starts an empty one."""
        assert self.folder is not None
        if self._db is not None:
            with contextlib.suppress(Exception):
                self._db.close()
        self._db, self._broken = None, False
        for name in (DATABASE, f"{DATABASE}-journal"):
            with contextlib.suppress(OSError):
                (self.folder / name).unlink()


def memo(build_cache: BuildCache | None, kind: str, key_parts: tuple[Any, ...], compute: Callable[[], T]) -> T:
    """`compute()`, or its value from `build_cache` under a key made of `key_parts`.

    The cache is passed in by whoever runs a build (`output.render.build`); with none (`check`,
    tests, library use) this is plain `compute()`.
    """
    if build_cache is None:
        return compute()
    return build_cache.memo(f"{kind}:{digest(build_cache.salt, kind, *key_parts)}", compute)
