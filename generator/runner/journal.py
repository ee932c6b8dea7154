"""The journal of a run plan: JSON lines appended and fsync'd one event at a time.

`results/journal/<slug>-<plan id>.jsonl` starts with the plan (every run, its arm, block and
order) and the provenance of the machine, then one line per thing that happened: a run started
(with the ids of the processes it started), warm-ups, a run's end (state, exit status, times,
output digest, the tail of its log when it failed), each interim look, a done run's output
found changed by a resume (`discarded`: the run is run again), the link to the record.
A line is written whole and synced before the runner goes on, so after `kill -9` at any moment
the journal says which runs ended (and how); a line cut short (by the kill, or a full disk) is
the last one: ignored when read, and cut off before the next line is appended. `--resume`
reads it back and runs what has not ended.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.project.journals import JOURNAL_DIR, journal_events
from generator.runner.plan import Plan

__all__ = [
    "JOURNAL_DIR",
    "PLAN_ID_RE",
    "Journal",
    "State",
    "journal_path",
    "journals",
    "latest",
    "now",
    "read",
    "sync_dir",
]


def now() -> str:
    """The time as ISO 8601 with its UTC offset, to the microsecond."""
    return dt.datetime.now(dt.UTC).isoformat()


def journal_path(root: Path, slug: str, plan_id: str) -> Path:
    return root / JOURNAL_DIR / f"{slug}-{plan_id}.jsonl"


class Journal:
    """Appends events durably: open, cut a torn tail, write one whole line, fsync, for every event."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def append(self, event: str, **data: Any) -> dict[str, Any]:
        line = {"event": event, "at": now(), **data}
        text = json.dumps(line, ensure_ascii=False, sort_keys=True, allow_nan=False) + "\n"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        new = not self.path.exists()
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            size = _cut_torn_tail(fd)
            try:
                # One write of a whole line, O_APPEND putting it after every earlier one; a short
                # write (a full disk) is finished or undone, never left for the next line to join.
                view = memoryview(text.encode("utf-8"))
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            except OSError:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, size)
                    os.fsync(fd)
                raise
        finally:
            os.close(fd)
        if new:
            sync_dir(self.path.parent)  # the new file's name survives a power cut too
        return line


def _cut_torn_tail(fd: int) -> int:
    """Cut what follows the journal's last line break (a line a kill or a full disk cut short).

    Such a tail is no event (it never ended), and a line appended after it would be joined to
    it and lost with it. The journal's size after the cut.
    """
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return size
    end = size
    while end > 0:
        start = max(0, end - 65536)
        chunk = os.pread(fd, end - start, start)
        at = chunk.rfind(b"\n")
        if at >= 0:
            end = start + at + 1
            break
        end = start
    os.ftruncate(fd, end)
    os.fsync(fd)
    return end


def sync_dir(folder: Path) -> None:
    """fsync a folder, so the names created or moved in it are on disk (POSIX; elsewhere nothing)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@dataclass
class State:
    """What the journal says has happened."""

    plan: Plan
    events: list[dict[str, Any]]
    # run key -> the end event of its successful attempt
    done: dict[str, dict[str, Any]] = field(default_factory=dict)
    # run key -> the end event of its last failed attempt (none since succeeded)
    failed: dict[str, dict[str, Any]] = field(default_factory=dict)
    attempts: dict[str, int] = field(default_factory=dict)
    # (role, pid) of every process a run started, for the cleanup after a kill
    processes: list[dict[str, Any]] = field(default_factory=list)
    stopped: dict[str, Any] | None = None
    # linked since the plan was last resumed: the plan is finished
    linked: bool = False


def read(path: Path) -> State:
    """The journal's events; a last line cut short by a kill is left out."""
    events = journal_events(path.read_bytes())
    if not events or events[0].get("event") != "plan":
        raise ValueError(f"{path} does not start with a plan")
    state = State(Plan.from_json(events[0]["plan"]), events)
    for e in events[1:]:
        kind, key = e.get("event"), str(e.get("run"))
        if kind == "start":
            state.attempts[key] = max(state.attempts.get(key, 0), int(e["attempt"]))
        elif kind == "process":
            state.processes.append(e)
        elif kind == "end" and e.get("state") == "done":
            state.done[key] = e
            state.failed.pop(key, None)
        elif kind == "discarded":
            # A done run whose kept output no longer matched its digest: a resume runs it again.
            state.done.pop(key, None)
            state.failed[key] = e
        elif kind == "end":
            state.failed[key] = e
        elif kind == "stopped":
            state.stopped = e
        elif kind == "linked":
            state.linked = True
        elif kind == "resumed":
            state.stopped = None
            state.linked = False  # linked again only once the resumed plan is
    return state


# A plan's id: the UTC time it was made and a random part (`new_plan`).
PLAN_ID_RE = re.compile(r"[0-9]{8}T[0-9]{6}Z-[0-9a-f]{6}")


def journals(root: Path, slug: str) -> list[Path]:
    """Every journal of `slug`, by name (the time in a plan's id, which a clock set back reorders)."""
    folder = root / JOURNAL_DIR
    # Only this slug's: `foo-bar-<id>` is not a plan of `foo`.
    mine = re.compile(re.escape(slug) + "-" + PLAN_ID_RE.pattern + r"\.jsonl")
    return sorted(p for p in folder.glob("*.jsonl") if mine.fullmatch(p.name)) if folder.is_dir() else []


def latest(root: Path, slug: str) -> Path | None:
    """The newest journal of `slug` by the time in its plan id."""
    found = journals(root, slug)
    return found[-1] if found else None
