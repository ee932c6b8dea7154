"""Where imported runs live: results/runs/<id>.json, and the raw files under results/raw/.

Run files are written by the importer with sorted keys, so the same input gives the same
bytes; the raw file is kept as evidence under a name that starts with its hash, with secrets
redacted (the run's `source` records the hash of the original and of the stored copy).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from generator.base import jsontext
from generator.project.runs.run import Run

if TYPE_CHECKING:
    # Types only: reading the runs back (every command, `check` too) needs no importer.
    from generator.project.runs.parse import ParsedFile

RUNS_DIR = "runs"
RAW_DIR = "raw"


def runs_dir(root: Path) -> Path:
    return root / "results" / RUNS_DIR


def raw_dir(root: Path) -> Path:
    return root / "results" / RAW_DIR


def raw_name(parsed: ParsedFile) -> str:
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", parsed.path.name).strip("-.") or "benchmark"
    return f"{parsed.stored_sha256[:12]}-{safe[:80]}"


def run_text(run: Run) -> str:
    # The bytes of json.dumps(sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False), laid
    # out at the C encoder's speed: json's own indented layout was most of a 100,000-run import.
    return jsontext.dumps(run.to_json()) + "\n"


def attach_sources(parsed: ParsedFile) -> None:
    """Fill each run's `source`: the kept copy, the line, and the hashes that tie them to the original."""
    kept = {
        "file": f"results/{RAW_DIR}/{raw_name(parsed)}",
        "name": parsed.path.name,
        "sha256": parsed.original_sha256,
        "stored_sha256": parsed.stored_sha256,
        "redacted": bool(parsed.redacted),
    }
    for run in parsed.runs:
        run.source.update(kept)


@dataclass(frozen=True)
class Write:
    path: Path
    data: bytes


def planned_writes(root: Path, files: list[ParsedFile]) -> Iterator[Write]:
    """Every file the import will write, in the order of their paths, skipping those that already
    hold the same bytes. Each file's bytes are made as it is taken: the run files of a large
    import, made all at once, were held in memory together."""
    # By folder and name: a path object for each of 100,000 runs cost more than its file's bytes.
    made: dict[tuple[Path, str], Run | ParsedFile] = {}
    for parsed in files:
        made[raw_dir(root), raw_name(parsed)] = parsed
        for run in parsed.runs:
            made[runs_dir(root), f"{run.id}.json"] = run
    # Each folder listed once: trying to read each of 100,000 new run files took longer than
    # writing them.
    present = {folder: _names(folder) for folder, _name in made}
    for folder, name in sorted(made):
        what = made[folder, name]
        data = run_text(what).encode("utf-8") if isinstance(what, Run) else what.stored_bytes
        try:
            if name in present[folder] and (folder / name).read_bytes() == data:
                continue
        except OSError:
            pass
        yield Write(folder / name, data)


def _names(folder: Path) -> frozenset[str]:
    try:
        return frozenset(entry.name for entry in os.scandir(folder))
    except OSError:
        return frozenset()


def write_bytes(path: Path, data: bytes) -> None:
    """Atomic: readers see the old file or the new one, never a part."""
    from generator.base.fsio import atomic_write

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, data)


# --- reading ------------------------------------------------------------------------------------


def load_runs(root: Path) -> tuple[dict[str, Run], dict[str, str]]:
    """The imported runs by id, and the run files that cannot be read (id -> why).

    Read once per run of a command (the project holds them), so nothing is cached here.
    """
    folder = runs_dir(root)
    try:
        entries = {e.name: e.is_file() for e in os.scandir(folder)}
        names = sorted(n for n in entries if n.endswith(".json") and not n.startswith("."))
    except OSError:
        return {}, {}
    if not names:
        return {}, {}
    # The import's own bounds, and with them every format's importer: only for a campaign with runs.
    from generator.project.runs import intake

    runs: dict[str, Run] = {}
    broken: dict[str, str] = {}
    for name in names:
        rid = name[: -len(".json")]
        if not entries[name]:
            # A folder or a FIFO: opening a FIFO waits for a writer that never comes.
            broken[rid] = f"results/{RUNS_DIR}/{name} is not a regular file"
            continue
        try:
            data = json.loads((folder / name).read_text(encoding="utf-8"))
            run = Run.from_json(data)
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            broken[rid] = f"cannot read results/{RUNS_DIR}/{name}: {exc}"
            continue
        if run.id != rid:
            broken[rid] = f"results/{RUNS_DIR}/{name} holds run `{run.id}`, not `{rid}`"
            continue
        # A run file changed by hand after import is held to import's own bounds.
        if (out_of_range := intake.count_out_of_range(run)) is not None:
            broken[rid] = f"results/{RUNS_DIR}/{name} has {out_of_range[0]} out of range for a count"
            continue
        line = found if isinstance(found := run.source.get("line"), int) else 1
        if (impossible := intake.impossible(f"results/{RUNS_DIR}/{name}", line, 1, run)) is not None:
            broken[rid] = f"results/{RUNS_DIR}/{name}: {impossible.message}"
            continue
        runs[rid] = run
    return runs, broken
