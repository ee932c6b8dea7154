"""Where the user's cache of a repository lives, and the digest its keys are made with.

Apart from `base.incremental` so that `base.stamp` (which `base.incremental` imports for the code's digest)
can find the folder too, without a cycle between them: see `base.incremental` for why the folder is
the user's own and never inside a repository.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


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


def cache_folder(root: Path) -> Path | None:
    """Where the cache of the repository at `root` lives, or None when it cannot be kept safely."""
    from platformdirs import user_cache_dir

    try:
        repo = root.resolve()
        folder = Path(user_cache_dir("improvements", appauthor=False)).resolve() / "builds" / digest(str(repo))
    except (OSError, RuntimeError):  # no home folder: no cache
        return None
    return None if folder.is_relative_to(repo) else folder
