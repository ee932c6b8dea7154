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
FORMAT = 1
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
    """The cache of one campaign repository. `save()` writes what this build added."""

    def __init__(self, root: Path) -> None:
        self.folder = cache_folder(root)
        self.salt = digest(FORMAT, code_digest(), _templates_digest(root))
        self._entries: dict[str, Any] | None = None
        self._used: set[str] = set()
        self._dirty = False
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
            self.salt, self._entries, self._dirty = salt, None, False
        self._used = set()
        self.files = {}

    def _table(self) -> dict[str, Any]:
        if self._entries is None:
            import pickle

            self._entries = {}
            if self.folder is None:
                return self._entries
            try:
                # Safe to unpickle: the folder is the user's own, outside every repository
                # (see the module's docstring).
                stored = pickle.loads((self.folder / "entries.pickle").read_bytes())
                if isinstance(stored, dict) and stored.get("salt") == self.salt:
                    self._entries = stored["entries"]
            except Exception:  # a missing, old or damaged cache is an empty one
                self._entries = {}
        return self._entries

    def get(self, key: str) -> Any | None:
        value = self._table().get(key)
        if value is not None:
            self._used.add(key)
        return value

    def put(self, key: str, value: Any) -> None:
        self._table()[key] = value
        self._used.add(key)
        self._dirty = True

    def memo(self, key: str, compute: Callable[[], T]) -> T:
        hit = self.get(key)
        if hit is not None:
            return hit  # type: ignore[no-any-return]
        value = compute()
        if value is not None:
            self.put(key, value)
        return value

    def save(self) -> None:
        """Keep this build's entries only, written atomically; a failure to write is not an error."""
        entries = self._table()
        if not self._dirty and len(entries) == len(self._used):
            return
        import os
        import pickle
        import tempfile

        kept = {k: v for k, v in entries.items() if k in self._used}
        if self.folder is None:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            # Pickled straight into the file: a pickle made in memory first was the largest
            # single object of a clean build (a fifth of its peak memory at 3,000 records).
            fd, tmp = tempfile.mkstemp(prefix=".entries-", dir=self.folder)
            try:
                with os.fdopen(fd, "wb") as fh:
                    pickle.dump({"salt": self.salt, "entries": kept}, fh, protocol=pickle.HIGHEST_PROTOCOL)
                os.replace(tmp, self.folder / "entries.pickle")
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        except OSError:
            return
        self._entries, self._dirty = kept, False


def memo(build_cache: BuildCache | None, kind: str, key_parts: tuple[Any, ...], compute: Callable[[], T]) -> T:
    """`compute()`, or its value from `build_cache` under a key made of `key_parts`.

    The cache is passed in by whoever runs a build (`output.render.build`); with none (`check`,
    tests, library use) this is plain `compute()`.
    """
    if build_cache is None:
        return compute()
    return build_cache.memo(f"{kind}:{digest(build_cache.salt, kind, *key_parts)}", compute)
