"""A plan's journal as `improvements run` wrote it (results/journal/<slug>-<plan id>.jsonl), read back.

What a record page shows of how its comparison was run: the plan (arms, loads, the seed, the
order drawn for each block), which blocks ran, the sequential looks the runner took after each
block (its change and the confidence sequence's bounds, as it computed them then), why it
stopped, and the files it kept (each launch's output and logs). Read only: the runner writes
journals (`runner.journal`), and nothing here computes a number from them.

A journal that is missing, unreadable or not the runner's shape reads as None: a page then
says nothing of the plan rather than something wrong, and `check` is where a broken link to a
journal is reported.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from generator.base.fsio import read_regular

# Where the runner keeps its journals (`runner/` reads and writes them there, a layer above).
JOURNAL_DIR = "results/journal"


@dataclass(frozen=True)
class Block:
    """One block of the plan: its load, its seed, and the arms in the order drawn for it."""

    number: int
    load: float
    seed: int | None
    order: tuple[str, ...]  # arm names, first launched first
    ran: bool  # every launch of it ended (a sequential plan stops before its last blocks)


@dataclass(frozen=True)
class JournalLook:
    """The runner's look after a block, on one arm: the change and the sequence's bounds (percent)."""

    after_block: int
    arm: str
    change_percent: float | None
    low_percent: float | None  # None: the sequence has no finite bound yet
    high_percent: float | None
    call: str


@dataclass(frozen=True)
class JournalEvent:
    """A moment of the plan's run that the journal timed (its `at`): the plan started, the run
    interrupted or resumed, or stopped (with why)."""

    kind: str  # "started", "interrupted", "resumed", "stopped"
    # The time as the journal wrote it: in UTC when it named a zone; None where it named none
    # (then only `day`, as written, is known: no time is made up for it).
    at: datetime | None
    day: str  # YYYY-MM-DD, in UTC when `at` is set
    detail: str | None  # stopped: the reason ("decided after block 6"); interrupted: the signal


@dataclass(frozen=True)
class Journal:
    path: str  # relative to the campaign's root
    plan_id: str
    seed: int | None
    loads: tuple[float, ...]
    # arm name -> its label ("the campaign baseline (eager attention, DynamicCache)").
    arms: Mapping[str, str]
    blocks: tuple[Block, ...]
    looks: tuple[JournalLook, ...]
    # The sequential rule's words, metric and bounds, when the plan had one.
    rule: str | None
    metric: str | None
    max_blocks: int | None
    stopped: str | None  # "decided after block 6"
    # Files the runner kept for its launches, relative to the root: outputs, then logs.
    outputs: tuple[str, ...]
    logs: tuple[str, ...]
    # The timed moments of the run, in the journal's order.
    events: tuple[JournalEvent, ...] = ()


# A journal's events that the timeline shows, with the field that says more of each.
_TIMED = {
    "plan": ("started", None),
    "interrupted": ("interrupted", "signal"),
    "resumed": ("resumed", None),
    "stopped": ("stopped", "reason"),
}


def _timed(rows: Iterable[Mapping[str, Any]]) -> tuple[JournalEvent, ...]:
    out = []
    for r in rows:
        found = _TIMED.get(str(r.get("event")))
        at = r.get("at")
        if found is None or not isinstance(at, str):
            continue
        try:
            when = datetime.fromisoformat(at)
        except ValueError:
            continue  # a time that does not read is left out, never guessed
        kind, field = found
        detail = str(r[field]) if field and r.get(field) not in (None, "") else None
        if when.tzinfo is None:
            out.append(JournalEvent(kind, None, when.date().isoformat(), detail))
        else:
            utc = when.astimezone(UTC)
            out.append(JournalEvent(kind, utc, utc.date().isoformat(), detail))
    return tuple(out)


def journal_events(data: bytes) -> list[dict[str, Any]]:
    """A journal's events, one JSON object a line, as the pages and `--resume` both read them: a
    line that does not read (the one being written when the runner was killed) is left out."""
    events: list[dict[str, Any]] = []
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
        except ValueError:  # UnicodeDecodeError too
            continue
        if isinstance(row, dict):
            events.append(row)
    return events


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _blocks(plan: Mapping[str, Any], ended: set[str]) -> tuple[Block, ...]:
    found: dict[tuple[float, int], list[tuple[int, str, int | None]]] = {}
    for run in plan.get("runs") or ():
        load, block, index = _number(run.get("load")), run.get("block"), run.get("index")
        if load is None or not isinstance(block, int) or not isinstance(index, int):
            continue
        seed = run.get("seed") if isinstance(run.get("seed"), int) else None
        found.setdefault((load, block), []).append((index, str(run.get("arm")), seed))
    out = []
    for (load, block), runs in sorted(found.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        runs.sort()
        names = tuple(arm for _, arm, _ in runs)
        prefix = f"c{load:g}-b{block:02d}-"
        out.append(Block(block, load, runs[0][2], names, all(prefix + arm in ended for arm in names)))
    return tuple(out)


def _looks(rows: Iterable[Mapping[str, Any]]) -> tuple[JournalLook, ...]:
    out = []
    for r in rows:
        if r.get("event") != "look" or not isinstance(r.get("after_block"), int):
            continue
        for arm, seen in (r.get("arms") or {}).items():
            if isinstance(seen, dict):
                out.append(
                    JournalLook(
                        r["after_block"],
                        str(arm),
                        _number(seen.get("change_percent")),
                        _number(seen.get("low_percent")),
                        _number(seen.get("high_percent")),
                        str(seen.get("call") or "inconclusive"),
                    )
                )
    return tuple(out)


def read_journal(root: Path, path: str) -> Journal | None:
    """The journal at `path` (relative to `root`), or None when it is not a runner's journal there."""
    rel = PurePosixPath(path)
    if rel.is_absolute() or ".." in rel.parts or not path.startswith(JOURNAL_DIR + "/"):
        return None
    data = read_regular(root, path)
    rows = journal_events(data) if data is not None else None
    if not rows or rows[0].get("event") != "plan" or not isinstance(rows[0].get("plan"), dict):
        return None
    plan: dict[str, Any] = rows[0]["plan"]
    ended = {str(r.get("run")) for r in rows if r.get("event") == "end" and r.get("state") == "done"}
    outputs = [o["path"] for r in rows if r.get("event") == "end" for o in r.get("outputs") or () if "path" in o]
    workdir = root / str(plan.get("workdir") or "")
    logs = []
    if str(plan.get("workdir") or "").startswith(JOURNAL_DIR + "/") and (workdir / "logs").is_dir():
        logs = sorted(f"{plan['workdir']}/logs/{p.name}" for p in (workdir / "logs").iterdir() if p.is_file())
    found = plan.get("sequential")
    sequential: dict[str, Any] = found if isinstance(found, dict) else {}
    stopped = next((str(r.get("reason")) for r in rows if r.get("event") == "stopped"), None)
    return Journal(
        path=path,
        plan_id=str(plan.get("id") or ""),
        seed=plan.get("seed") if isinstance(plan.get("seed"), int) else None,
        loads=tuple(x for x in (_number(v) for v in plan.get("loads") or ()) if x is not None),
        arms={str(a.get("name")): str(a.get("label")) for a in plan.get("arms") or () if isinstance(a, dict)},
        blocks=_blocks(plan, ended),
        looks=_looks(rows),
        rule=str(sequential["rule"]) if sequential.get("rule") else None,
        metric=str(sequential["metric"]) if sequential.get("metric") else None,
        max_blocks=sequential.get("max_blocks") if isinstance(sequential.get("max_blocks"), int) else None,
        stopped=stopped,
        outputs=tuple(outputs),
        logs=tuple(logs),
        events=_timed(rows),
    )


def journal_of(root: Path, slug: str, launches: Iterable[str]) -> str | None:
    """The journal a result's runs came from: named by their launches (`<plan id>/<run>`), the
    first plan id that has a journal of this record; None for runs no runner made."""
    for launch in launches:
        plan_id = launch.split("/", 1)[0]
        path = f"{JOURNAL_DIR}/{slug}-{plan_id}.jsonl"
        if plan_id and (root / path).is_file():
            return path
    return None
