"""When each record was first committed, for the records that give no `date:` of their own.

Read from git's history, never from the clock or a file's modification time, so a build gives
the same dates on every machine with the same history. Outside a git work tree, in a shallow
clone (its oldest commit would look like the one that added everything), or where git is not
installed, there are none: the pages then say nothing rather than guess.
"""

from __future__ import annotations

import datetime as dt
import subprocess
from collections.abc import Mapping
from pathlib import Path


def _git(root: Path, *args: str) -> str | None:
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), "-c", "core.quotepath=off", *args],
            capture_output=True,
            text=True,
            check=False,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout if proc.returncode == 0 else None


def first_committed(root: Path, folder: Path) -> Mapping[Path, dt.date]:
    """Each file under `folder` that git has a commit of, with the author date of its oldest commit
    (a rebase or a squash-merge gives commits new committer dates; the author date stays)."""
    # One process for both answers: each git process costs some milliseconds of every build.
    shallow, _, top = (_git(root, "rev-parse", "--is-shallow-repository", "--show-toplevel") or "").partition("\n")
    top = top.strip()
    if shallow.strip() != "false":
        return {}
    # Newest first: each file's last entry read is its oldest commit. Renames start a file anew
    # at its new path (--no-renames), so a renumbered record is dated by its renumbering.
    log = _git(root, "log", "--no-renames", "--format=%x00%as", "--name-only", "--", str(folder))
    if not top or log is None:
        return {}
    # The top resolved once: git never names a path through a link, so only a name that is a
    # link itself resolves elsewhere (resolving every name was a tenth of a no-op build).
    real = Path(top).resolve()
    out: dict[Path, dt.date] = {}
    for entry in log.split("\x00")[1:]:
        day, *names = entry.strip("\n").split("\n")
        try:
            date = dt.date.fromisoformat(day.strip())
        except ValueError:
            continue
        for name in names:
            if name:
                path = real / name
                out[path.resolve() if path.is_symlink() else path] = date
    return out
