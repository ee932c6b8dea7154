"""Renumbering records: the plan, its check, the renames and the rebuild, undone together on failure.

Records refer to each other by slug, never by number, so a renumbering only renames files:
the record files here, and the generated series pages (rebuilt by the one render path).
Moving onto a number another record holds is refused rather than shifting the others: a
shift silently renames records the user did not name, and `--compact` exists for that.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from generator.base.problems import CommandError, UsageProblem

if TYPE_CHECKING:
    from generator.output.render import BuildResult


@dataclass(frozen=True)
class Move:
    old: Path
    new: Path
    slug: str
    old_number: int
    new_number: int


def file_name(number: int, slug: str, width: int = 2) -> str:
    return f"{number:0{width}d}-{slug}.yaml"


def number_width(paths: Iterable[Path]) -> int:
    """The digits a campaign pads its record numbers to: that of its zero-padded names (a
    campaign numbered 001-200 keeps 3 digits after a renumbering), else 2."""
    padded = [len(m.group(0)) for p in paths if (m := re.match(r"0[0-9]+", p.name)) is not None]
    return max(padded, default=2)


def plan_move(files: list[tuple[Path, int, str]], path: Path, number: int) -> list[Move]:
    """The one rename that moves `path` to `number`; a usage error when another record holds it."""
    current = next((n, s) for p, n, s in files if p == path)
    if current[0] == number:
        return []
    holders = [p for p, n, _s in files if n == number and p != path]
    if holders:
        used = {n for _p, n, _s in files}
        free = next(n for n in range(1, len(files) + 2) if n not in used)
        raise UsageProblem(
            f"number {number:02d} is taken by {holders[0].name}; pick a free number (such as {free:02d}), "
            "or run `improvements renumber --compact` to close the gaps"
        )
    width = number_width(p for p, _n, _s in files)
    return [Move(path, path.with_name(file_name(number, current[1], width)), current[1], current[0], number)]


def plan_compact(files: list[tuple[Path, int, str]]) -> list[Move]:
    """Numbers 1, 2, 3... in the current order (number, then slug), which also ends any duplicates."""
    moves = []
    width = number_width(p for p, _n, _s in files)
    for new_number, (path, number, slug) in enumerate(sorted(files, key=lambda f: (f[1], f[2])), 1):
        new = path.with_name(file_name(new_number, slug, width))
        if new != path:
            moves.append(Move(path, new, slug, number, new_number))
    return moves


def _name_max(folder: Path) -> int:
    try:
        return os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError):
        return 255


def validate(moves: list[Move], repo: Path, docs: Path, series: str) -> None:
    """Every new name fits the file system and is free, before anything is renamed."""
    from generator.base.problems import rel

    for m in moves:
        names = ((m.new.parent, m.new.name), (docs, f"{series}-{m.new_number:02d}-{m.slug}.md"))
        for folder, name in names:
            limit = _name_max(folder if folder.is_dir() else repo)
            if len(name.encode("utf-8")) > limit:
                raise UsageProblem(
                    f"the new number makes {name[:40]}... {len(name.encode('utf-8'))} bytes long, over the "
                    f"file system's {limit}; pick a smaller number; nothing was renamed"
                )
        if os.path.lexists(m.new):
            raise UsageProblem(f"{rel(m.new, repo)} exists already; nothing was renamed") from None


def rename_all(moves: list[Move], repo: Path) -> None:
    """Rename every record file, or none: a failed rename puts back the ones already done."""
    from generator.base.problems import rel

    done: list[Move] = []
    try:
        for m in moves:
            os.rename(m.old, m.new)
            done.append(m)
    except OSError as exc:
        undo(done)
        why = exc.strerror or exc
        raise CommandError(f"cannot rename {rel(m.old, repo)}: {why}; nothing was renamed") from None


def undo(done: list[Move]) -> None:
    for m in reversed(done):
        with contextlib.suppress(OSError):
            os.rename(m.new, m.old)


def rebuild_or_undo(moves: list[Move], repo: Path) -> BuildResult | None:
    """The rebuilt series; None when only duplicate numbers remain (the renames stay: they are
    steps toward ending them). Any other problem, or a failed write, puts the names back.
    """
    from generator.base.problems import ProblemsFound, Report
    from generator.checks.validate import load_project
    from generator.output.render import build

    after = Report()
    load_project(repo, after)
    blocking = [p for p in after.errors if p.code != "duplicate-number"]
    if not after.ok and not blocking:
        return None
    try:
        if blocking:
            raise ProblemsFound(Report(blocking))
        return build(repo)
    except ProblemsFound as exc:
        undo(moves)
        sys.stderr.write("nothing was renamed: the renumbered series would have these problems:\n")
        raise ProblemsFound(exc.report) from None
    except OSError as exc:
        undo(moves)
        raise CommandError(f"cannot write the outputs: {exc}; nothing was renamed") from None
