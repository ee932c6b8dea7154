"""An `import_formats:` mapping, and what it reads outside a row: a value at a dotted path, and
the facts (`provenance:`, a `launch`) read from a JSON file beside the rows."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from generator.base.problems import Problem
from generator.model import metrics as vocabulary
from generator.model.import_format import ImportFormat, ProvenanceFile

if TYPE_CHECKING:
    from pathlib import Path

    from generator.base.read import Positions

# What `lookup` returns for a path the object does not have (None is a value a row may hold).
MISSING = object()
# The key the launch read from a file beside the rows goes by among the file's facts.
FILE_LAUNCH = " launch"
# A list index in a path: ASCII digits only (`str.isdigit` is true of `²`, which `int` refuses).
_INDEX = re.compile(r"[0-9]+")


@dataclass(frozen=True)
class Mapping:
    """One `import_formats` entry, with where it is written (for problems in campaign.yaml)."""

    name: str
    spec: ImportFormat
    vocabulary: vocabulary.Vocabulary
    campaign_shown: str
    positions: Positions
    # The campaign folder, where the files `provenance:` names are read (None: no such file read).
    root: Path | None = None

    def where(self, *loc: str | int) -> tuple[int, int]:
        return self.positions.of(("import_formats", self.name, *loc))


def lookup(obj: Any, path: str) -> Any:
    """The value at a dotted path, or `MISSING`. A key that holds a dot itself is found whole."""
    parts = path.split(".")
    current = obj
    i = 0
    while i < len(parts):
        if isinstance(current, dict):
            # The longest run of parts that is a key: `p99.9_ttft_ms` before `p99` then `9_ttft_ms`.
            for j in range(len(parts), i, -1):
                key = ".".join(parts[i:j])
                if key in current:
                    current, i = current[key], j
                    break
            else:
                return MISSING
        elif isinstance(current, list) and _INDEX.fullmatch(parts[i]) and int(parts[i]) < len(current):
            current, i = current[int(parts[i])], i + 1
        else:
            return MISSING
    return current


def file_facts(mapping: Mapping) -> tuple[dict[str, tuple[str, str]], list[Problem]]:
    """name -> (value, where it was read) for each `provenance:` fact read from a file beside the rows."""
    facts: dict[str, tuple[str, str]] = {}
    problems: list[Problem] = []
    documents: dict[str, Any] = {}
    wanted = [("provenance", name, target) for name, target in mapping.spec.provenance.items()]
    wanted += [("settings", FILE_LAUNCH, t) for s, t in mapping.spec.settings.items() if s == "launch"]
    for section, name, target in wanted:
        if not isinstance(target, ProvenanceFile):
            continue
        shown_name = "launch" if name == FILE_LAUNCH else name
        if target.file not in documents:
            documents[target.file] = _read_json(mapping, target.file)
        doc = documents[target.file]
        if isinstance(doc, str):
            problems.append(
                Problem(
                    mapping.campaign_shown,
                    *mapping.where(section, shown_name, "file"),
                    "import-missing-key",
                    f"import_formats `{mapping.name}` reads `{shown_name}` from {target.file}, which {doc}",
                    "name a JSON file inside the campaign folder, relative to it (`data/provenance.json`)",
                )
            )
            continue
        value = fact_text(lookup(doc, target.path))
        if value is None:
            problems.append(
                Problem(
                    mapping.campaign_shown,
                    *mapping.where(section, shown_name, "path"),
                    "import-missing-key",
                    f"{target.file} has no text or number at `{target.path}` for {section} `{shown_name}`",
                    "write the key as the file spells it, levels joined by `.`",
                )
            )
            continue
        facts[name] = (value, f"{target.file}: {target.path}")
    return facts, problems


def _read_json(mapping: Mapping, name: str) -> Any:
    """The JSON document at `name` under the campaign folder, or why it cannot be read (text)."""
    from pathlib import PurePosixPath

    from generator.base.fsio import read_regular

    if mapping.root is None:
        return "is not read here"
    where = PurePosixPath(name)
    if where.is_absolute() or ".." in where.parts:
        return "is outside the campaign folder"
    data = read_regular(mapping.root, where.as_posix())
    if data is None:
        return "does not exist (or is not a regular file)"
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return "is not JSON"


def fact_text(value: Any) -> str | None:
    """A fact as text: a string or a finite number, else None."""
    if value is MISSING or isinstance(value, bool) or value is None or isinstance(value, dict | list):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    text = str(value).strip()
    return text or None
