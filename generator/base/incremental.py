"""The one incremental core: the build cache and the queries kept in it, in the manner of Salsa.

A rebuild after one record changed should not parse, validate, analyse, render and draw a
thousand records again. Every derived thing a build keeps is an entry here, of one of two kinds:

- `memo` (and `BuildCache.memo`): a value keyed by a digest of everything it is computed from
  (a chart by what it draws, a page by its model's digest, an export entry by its content).
- `BuildCache.query`: a value whose inputs are not known before it is made (a record's
  analysis, a record page's key). It is computed under a frame that notes every read made while
  it runs, as (kind, key) pairs: a view of a table (`Seen`) notes each key asked of it (`ALL`
  when it is walked whole). The entry keeps the reads with a digest of their answers; a later
  build answers the same reads through the answerers its client layers registered for this
  build (`answer_with`: a record file's digest, a run's digest, a chart's alt text, a quoted
  figure's text) and reuses the value only when every answer digests the same. A read of
  another query (`"@" + its kind`) is answered by that query's fingerprint in this build, a
  digest of its key and its reads' answers. A read no answerer can answer (`Unkeyed`) keeps
  nothing: that value is made again every build, never served stale.

The core knows no campaign: the clients (`analysis.reuse`, `views.page_reuse`) say what a read
means. So an entry is either exactly what a fresh build would compute or never used: nothing is
invalidated by time or guesswork, and deleting the folder is always safe. Only `build` (and the
site and `serve`, which call it) use it; `check` reads every file afresh.

Where it lives, and why loading it is safe: entries are pickles, and unpickling runs code, so
the cache must never be a file a checkout can carry. It lives in the user's own cache folder
(platformdirs: $XDG_CACHE_HOME or ~/.cache on Linux, the platform's place elsewhere), in a
folder named by a hash of the repository's resolved path. Nothing in a repository is ever
read as a cache, whatever it contains, and a cache folder that would fall inside the
repository (a cache home pointed into a checkout) is not used at all. Every entry is salted by
the code's digest (`base.stamp`: the package and the libraries that shape its output) and the
campaign's template overrides.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Generic, TypeVar

from generator.base.cachedir import cache_folder as cache_folder
from generator.base.cachedir import digest as digest
from generator.base.stamp import code_digest

# Bump when the layout of the cache files changes.
FORMAT = 3
DATABASE = "entries.sqlite"
# New entries are written once they add up to this many bytes of pickles, and at `save`.
FLUSH_BYTES = 8 << 20
T = TypeVar("T")
K = TypeVar("K")
V = TypeVar("V")
# The key that stands for a read of a whole table.
ALL = "*"
# What a query read while it was made: (kind, key) pairs.
Reads = set[tuple[str, str]]
# What answers a read of one kind in this build: its key to something whose repr is its content.
Answerer = Callable[[str], object]


class Unkeyed(Exception):
    """A read whose answer cannot be taken: whatever made it is made again, never reused."""


class Seen(Mapping[K, V], Generic[K, V]):
    """`inner`, noting each key asked of it (and ALL when iterated) in `reads` under `kind`."""

    def __init__(self, inner: Mapping[K, V], kind: str, reads: Reads) -> None:
        self.inner, self.kind, self.reads = inner, kind, reads

    def __getitem__(self, key: K) -> V:
        self.reads.add((self.kind, str(key)))
        return self.inner[key]

    def __iter__(self) -> Iterator[K]:
        self.reads.add((self.kind, ALL))
        return iter(self.inner)

    def __len__(self) -> int:
        self.reads.add((self.kind, ALL))
        return len(self.inner)


def _ordered(reads: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """A query's reads as its entry keeps them (one place, so a test can drop a kind of read)."""
    return sorted(reads)


def _templates_digest(root: Path) -> str:
    """A campaign's own templates/ (overrides of the shipped ones), which pages are drawn with."""
    folder = root / "templates"
    if not folder.is_dir():
        return ""
    parts: list[Any] = []
    for path in sorted(folder.iterdir()):
        # Only regular files: reading a FIFO waits for a writer forever.
        with contextlib.suppress(OSError):
            if path.is_file():
                parts += [path.name, path.read_bytes()]
    return digest(*parts)


@contextlib.contextmanager
def _immediate(db: Any) -> Iterator[None]:
    """One write transaction on the cache's database, taken at once and undone on any failure.

    `BEGIN IMMEDIATE`: the write lock is taken before the first statement, so another build's
    writes cannot come between what this one reads and what it writes.
    """
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


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
        self._new: dict[str, bytes] = {}
        self._pending = 0
        self._used: set[str] = set()
        self._db: Any = None
        self._broken = self._absent = self._made = False
        # The stored entries of each kind read so far in this build, by key (`_stored`).
        self._rows: dict[str, dict[str, bytes]] = {}
        self._written: set[str] = set()
        # File digests seen while loading, by path: page keys are built from them.
        self.files: dict[Path, str] = {}
        self.root = root
        # This build's answerers by kind of read, and its queries' fingerprints by (kind, name):
        # None for one made with a read that could not be answered.
        self._answerers: dict[str, Answerer] = {}
        self.prints: dict[tuple[str, str], str | None] = {}

    def start(self) -> None:
        """Begin another build with this cache (`serve` keeps one between rebuilds, in memory).

        What the last build used is forgotten, so `save()` keeps only what this one uses; a
        changed template override is a new salt, under which no entry of the old one is found.
        """
        salt = digest(FORMAT, code_digest(), _templates_digest(self.root))
        if salt != self.salt:
            self.salt, self._memory, self._new, self._pending = salt, {}, {}, 0
        self._used = set()
        self.files = {}
        self._absent = self._made = False
        self._rows = {}
        self._written = set()
        self._answerers, self.prints = {}, {}

    def _connect(self, create: bool) -> Any:
        """The open database, or None: no folder, no file yet (and `create` is False), or a broken one."""
        if self._db is not None or self._broken or self.folder is None:
            return self._db
        path = self.folder / DATABASE
        if not create and (self._absent or not path.is_file()):
            # Asked once: a clean build asks for thousands of entries that no file holds.
            self._absent = True
            return None
        # Made by this build: it holds only what this build wrote (`_written`).
        self._made = not path.is_file()
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
        self._db, self._absent = db, False
        return db

    def _stored(self, key: str) -> Any | None:
        import sqlite3

        db = self._connect(create=False)
        if db is None or (self._made and key not in self._written):
            return None
        # A kind's entries are read together, on the first ask for one of them: a rebuild after
        # one edit asks for nearly every entry, and a statement for each was a tenth of it at
        # 1,000 records. Each is dropped from here once taken (`get` keeps what it unpickles).
        kind = key.partition(":")[0]
        rows = self._rows.get(kind)
        if rows is None:
            try:
                found = db.execute("SELECT key, value FROM entries WHERE key > ? AND key < ?", (f"{kind}:", f"{kind};"))
                rows = self._rows[kind] = dict(found)
            except sqlite3.Error:
                self._broken = True
                return None
        data = rows.pop(key, None)
        return None if data is None else _unpickled(data)

    def get(self, key: str) -> Any | None:
        value = self._memory.get(key)
        if value is None and key in self._new:
            value = _unpickled(self._new[key])
        if value is None:
            value = self._stored(key)
            if value is not None:
                self._memory[key] = value
        if value is not None:
            self._used.add(key)
        return value

    def put(self, key: str, value: Any) -> None:
        """Keep `value` under `key`: pickled now, and written with others once they add up.

        Not held in memory: a clean build makes thousands of entries (a record's export entry,
        its analysis) that nothing reads again, and holding them to the end was a sixth of its
        peak memory at 3,000 records.
        """
        import pickle

        try:
            data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
            return  # a value that cannot be kept is made again next time
        self._new[key] = data
        self._pending += len(data)
        self._used.add(key)
        if self._pending >= FLUSH_BYTES:
            self._flush()

    def memo(self, key: str, compute: Callable[[], T]) -> T:
        hit = self.get(key)
        if hit is not None:
            return hit  # type: ignore[no-any-return]
        value = compute()
        if value is not None:
            self.put(key, value)
        return value

    def answer_with(self, answerers: Mapping[str, Answerer]) -> None:
        """Answer reads of these kinds, for this build, with these functions (a client's layer)."""
        self._answerers.update(answerers)

    def answer(self, kind: str, key: str) -> object:
        """What the read (`kind`, `key`) gets in this build; Unkeyed when nothing can answer it."""
        if kind.startswith("@"):
            # Another query, by its fingerprint: None where this build has no such query.
            if (kind[1:], key) not in self.prints:
                return None
            found = self.prints[kind[1:], key]
            if found is None:
                raise Unkeyed
            return found
        answerer = self._answerers.get(kind)
        if answerer is None:
            raise Unkeyed
        return answerer(key)

    def file(self, path: Path | None) -> tuple[str, str] | None:
        """A file read by a query, answered by its name and the digest of its bytes as this build
        loaded it (None: no such file); Unkeyed for one read outside the build cache."""
        if path is None:
            return None
        found = self.files.get(path)
        if found is None:
            raise Unkeyed
        return (path.name, found)

    def answers(self, reads: Iterable[tuple[str, str]]) -> str | None:
        """A digest of every read's answer in this build; None when one cannot be answered."""
        try:
            return digest(*[(kind, key, self.answer(kind, key)) for kind, key in reads])
        except Unkeyed:
            return None

    def query(
        self,
        kind: str,
        name: str,
        key_parts: tuple[Any, ...],
        compute: Callable[[Reads], T],
        keep: Callable[[T], Any] = lambda value: value,
        load: Callable[[Any], T | None] = lambda kept: kept,
    ) -> T:
        """`compute(reads)`, or its value kept by an earlier build while every read it noted answers the same.

        `kind` and `name` name the query (a read of `"@" + kind` with `name` is answered by its
        fingerprint); `key_parts` are what it is made from as known beforehand (its own file's
        digest), and `compute` notes in `reads` whatever else it reads. `keep` turns the value
        into what the entry holds and `load` back (None: not usable, made afresh).
        """
        key = f"{kind}:{digest(self.salt, kind, name, *key_parts)}"
        entry = self.get(key)
        if isinstance(entry, tuple) and len(entry) == 3:
            reads, answered, held = entry
            if self.answers(reads) == answered:
                value = load(held)
                if value is not None:
                    self.prints[kind, name] = digest(key, answered)
                    return value
        noted: Reads = set()
        value = compute(noted)
        ordered = _ordered(noted)
        answered = self.answers(ordered)
        self.prints[kind, name] = None if answered is None else digest(key, answered)
        if answered is not None:
            self.put(key, (ordered, answered, keep(value)))
        return value

    def _flush(self) -> None:
        """Write the entries made since the last flush, in one transaction; kept for later if that fails."""
        import sqlite3

        if self.folder is None or not self._new:
            return
        if self._broken:
            self._set_aside()
        db = self._connect(create=True)
        if db is None:
            return
        try:
            with _immediate(db):
                db.executemany("INSERT OR REPLACE INTO entries VALUES (?, ?)", self._new.items())
        except (sqlite3.Error, OSError):
            return
        if self._made:
            self._written |= self._new.keys()
        self._new, self._pending = {}, 0

    def save(self) -> None:
        """Write this build's new entries and drop those it did not use; a failure to write is not an error."""
        import sqlite3

        used = self._used
        self._memory = {k: v for k, v in self._memory.items() if k in used}
        if self.folder is None:
            return
        # The whole table in one pickle, as builds before the database kept it.
        with contextlib.suppress(OSError):
            (self.folder / "entries.pickle").unlink()
        self._flush()
        db = self._connect(create=True)
        if db is None or self._new:
            return
        try:
            with _immediate(db):
                (count,) = db.execute("SELECT count(*) FROM entries").fetchone()
                if count != len(used):
                    # Entries of older builds (or of older code, under another salt): only what
                    # this build used is kept, as a build's outputs are only what it wrote.
                    db.execute("CREATE TEMP TABLE IF NOT EXISTS used (key TEXT PRIMARY KEY) WITHOUT ROWID")
                    db.execute("DELETE FROM used")
                    db.executemany("INSERT OR IGNORE INTO used VALUES (?)", ((k,) for k in used))
                    db.execute("DELETE FROM entries WHERE key NOT IN (SELECT key FROM used)")
        except (sqlite3.Error, OSError):
            return

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


def _unpickled(data: bytes) -> Any | None:
    import pickle

    try:
        # Safe to unpickle: the folder is the user's own, outside every repository (see the
        # module's docstring).
        return pickle.loads(data)
    except Exception:  # an old or damaged entry is a missing one
        return None


def fingerprint(build_cache: BuildCache | None, kind: str, name: str) -> str | None:
    """The fingerprint of the query (`kind`, `name`) in this build: a digest of its key and of its
    reads' answers, which what is made from its value can be kept under. None without one."""
    return None if build_cache is None else build_cache.prints.get((kind, name))


def memo(build_cache: BuildCache | None, kind: str, key_parts: tuple[Any, ...], compute: Callable[[], T]) -> T:
    """`compute()`, or its value from `build_cache` under a key made of `key_parts`.

    The cache is passed in by whoever runs a build (`output.render.build`); with none (`check`,
    tests, library use) this is plain `compute()`.
    """
    if build_cache is None:
        return compute()
    return build_cache.memo(f"{kind}:{digest(build_cache.salt, kind, *key_parts)}", compute)
