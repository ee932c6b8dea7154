"""Where a campaign's files are, and each file read and checked against its model.

A `Project` is what was found and loaded: the campaign, the records that loaded, and the
imported runs under results/runs/ (read once here and passed along, so every later stage
sees the same runs). Rules that look across files live in `validate`, one stage up.
"""

from __future__ import annotations

import datetime as dt
import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel, ValidationError

from generator.base import incremental
from generator.base.problems import Problem, Report, rel
from generator.base.read import Positions, YamlProblem, check_text, parse, read_text

# Re-exported: found before anything heavy is imported, so it lives with the build's fast path.
from generator.base.stamp import find_root as find_root
from generator.model.campaign import Campaign
from generator.model.record import FILENAME_RE, Record
from generator.model.result import metric_context
from generator.project.cuttext import cut_text_problems
from generator.project.runs.run import Run
from generator.project.runs.store import load_runs
from generator.project.schema_errors import describe, validation_problems

RecordName = tuple[Path, int, str]


@dataclass(frozen=True)
class Loaded:
    """One file's model (None when invalid), its raw data and positions, and the text of a valid one."""

    path: Path
    model: Any
    data: Any
    positions: Positions
    # The text the model was read from (None for a file that did not load): a rule may look in
    # it before walking the data (`analysis.quoting.file_quotes`).
    text: str | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class RecordFile(Loaded):
    number: int = 0
    slug: str = ""

    @property
    def record(self) -> Record:
        record: Record = self.model
        return record


@dataclass(frozen=True)
class Project:
    """A campaign repository: where things are, and what was loaded from it."""

    root: Path
    campaign: Campaign
    campaign_file: Loaded
    records: list[RecordFile]
    # Blocker ids declared in records that failed to load: references to them are not errors
    # of their own (the broken record already has its problems), nor evidence of a closed blocker.
    unloaded_blocker_ids: set[str] = field(default_factory=set)
    # The imported runs by id, and the run files that cannot be read (id -> why).
    runs: Mapping[str, Run] = field(default_factory=dict)
    broken_runs: Mapping[str, str] = field(default_factory=dict)

    @property
    def improvements_dir(self) -> Path:
        return self.root / "improvements"

    @property
    def results_dir(self) -> Path:
        return self.root / "results"

    @property
    def docs_dir(self) -> Path:
        return self.root / self.campaign.docs_dir

    def by_slug(self) -> dict[str, RecordFile]:
        return {r.slug: r for r in self.records}

    @functools.cached_property
    def slug_index(self) -> Mapping[str, RecordFile]:
        """`by_slug()` built once per project (the last record of a slug), for lookups in loops."""
        return MappingProxyType(self.by_slug())

    @functools.cached_property
    def committed_dates(self) -> Mapping[Path, dt.date]:
        """Each record file's first commit date, from git (`base.gitdates`); empty outside git."""
        from generator.base.gitdates import first_committed

        return MappingProxyType(dict(first_committed(self.root, self.improvements_dir)))

    def output_name(self, rec: RecordFile) -> str:
        return f"{self.campaign.series}-{rec.number:02d}-{rec.slug}.md"


def load_file(
    path: Path,
    model: type[BaseModel],
    shown: str,
    report: Report,
    build_cache: incremental.BuildCache | None = None,
    context: dict[str, Any] | None = None,
) -> Loaded:
    """`path` read, parsed and validated as `model`; with `build_cache`, a file seen before is not parsed again.

    `context` is a record's validation context: the campaign's own metrics (`metric_context`).
    """
    key = ""
    try:
        text = read_text(path)
        if build_cache is not None:
            # A file whose bytes were valid before is valid again: only cross-file rules can change.
            extra = () if not context else (repr(sorted(context.items())),)
            key = f"load:{incremental.digest(build_cache.salt, model.__name__, text, *extra)}"
            hit = build_cache.get(key)
            if hit is not None:
                build_cache.files[path] = key
                positions = Positions(text=text)
                report.extend(cut_text_problems(text, hit[0], positions, shown))
                return Loaded(path, hit[1], hit[0], positions, text)
    except YamlProblem as exc:
        report.add(Problem(shown, exc.line, exc.col, exc.code, exc.message, exc.hint))
        return Loaded(path, None, None, Positions())
    except OSError as exc:
        report.add(
            Problem(
                shown,
                1,
                1,
                "not-utf8" if isinstance(exc, UnicodeError) else "yaml-syntax",
                f"cannot read file: {exc.strerror or exc}",
            )
        )
        return Loaded(path, None, None, Positions())
    loaded = load_text(path, text, model, shown, report, context)
    if build_cache is not None and loaded.model is not None:
        build_cache.put(key, (loaded.data, loaded.model))
        build_cache.files[path] = key
    return loaded


def load_text(
    path: Path, text: str, model: type[BaseModel], shown: str, report: Report, context: dict[str, Any] | None = None
) -> Loaded:
    """`text` (the contents of `path`, read or about to be written) parsed and validated as `model`.

    The commands that edit a file check the edited text through this before writing it. A
    campaign is its own context (its `metrics:`); a record's is the campaign's (`context`).
    """
    try:
        check_text(text)
        data, pos = parse(text)
    except YamlProblem as exc:
        hint = exc.hint
        if exc.code == "empty-file" and model is Campaign:
            # The reader cannot know which file it read; an empty campaign.yaml is made by `init`.
            hint = "start it with `improvements init`, or copy another campaign's campaign.yaml"
        report.add(Problem(shown, exc.line, exc.col, exc.code, exc.message, hint))
        return Loaded(path, None, None, Positions())
    if not isinstance(data, dict):
        line, col = pos.of(())
        report.add(
            Problem(
                shown,
                line,
                col,
                "wrong-type",
                f"the document must be a mapping, not {describe(data)}",
                "a record starts with `title:`",
            )
        )
        return Loaded(path, None, data, pos)
    report.extend(cut_text_problems(text, data, pos, shown))
    try:
        if model is Campaign:
            context = metric_context(data)
        obj = model.model_validate(data, context=context)
    except ValidationError as exc:
        report.extend(validation_problems(exc, model, data, pos, shown))
        return Loaded(path, None, data, pos)
    return Loaded(path, obj, data, pos, text)


def record_files(improvements: Path) -> tuple[list[RecordName], list[Path]]:
    """Record files sorted by number then slug, and the files that do not belong."""
    good: list[RecordName] = []
    bad: list[Path] = []
    for entry in sorted(os.scandir(improvements), key=lambda e: e.name):
        if entry.name.startswith(".") or entry.name == "campaign.yaml":
            continue
        m = FILENAME_RE.match(entry.name)
        if m is None or not entry.is_file():
            bad.append(Path(entry.path))
            continue
        good.append((Path(entry.path), int(m["number"]), m["slug"]))
    good.sort(key=lambda t: (t[1], t[2]))
    return good, bad


def read_project(
    root: Path, report: Report, build_cache: incremental.BuildCache | None = None
) -> tuple[Project | None, list[RecordName]]:
    """Every file of the campaign at `root` loaded on its own, and the record files found.

    Each file's own problems go to `report`; the rules across files are `validate`'s. The
    project is None when campaign.yaml is missing or invalid.
    """
    improvements = root / "improvements"
    campaign_path = improvements / "campaign.yaml"
    if not campaign_path.is_file():
        report.add(
            Problem(
                rel(campaign_path, root),
                1,
                1,
                "missing-campaign",
                "improvements/campaign.yaml is missing",
                "a campaign needs one campaign.yaml beside its records",
            )
        )
        return None, []
    campaign_file = load_file(campaign_path, Campaign, rel(campaign_path, root), report, build_cache)
    files, strays = record_files(improvements)
    for stray in strays:
        if FILENAME_RE.match(stray.name):
            message = f"`{stray.name}` has a record's name but is not a regular file (a folder or a broken link?)"
            hint = "a record is a plain YAML file"
        else:
            message = f"`{stray.name}` is neither campaign.yaml nor a record named NN-slug.yaml"
            hint = "name records like 12-my-idea.yaml (two or more digits, lowercase slug)"
        report.add(Problem(rel(stray, root), 1, 1, "bad-filename", message, hint))
    context = metric_context(campaign_file.data)
    records: list[RecordFile] = []
    unloaded_ids: set[str] = set()
    for path, number, slug in files:
        loaded = load_file(path, Record, rel(path, root), report, build_cache, context)
        if loaded.model is not None:
            records.append(
                RecordFile(
                    loaded.path, loaded.model, loaded.data, loaded.positions, loaded.text, number=number, slug=slug
                )
            )
        elif isinstance(loaded.data, dict) and isinstance(loaded.data.get("blockers"), list):
            unloaded_ids |= {
                b["id"] for b in loaded.data["blockers"] if isinstance(b, dict) and isinstance(b.get("id"), str)
            }
    if campaign_file.model is None:
        return None, files
    runs, broken = load_runs(root)
    return Project(root, campaign_file.model, campaign_file, records, unloaded_ids, runs, broken), files
