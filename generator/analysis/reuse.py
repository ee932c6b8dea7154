"""A record's analysis from the build cache, while everything it read is unchanged.

Analysing one record reads its own file and the campaign's, and a little of the rest of the
campaign: the records that its `baseline_from` and its launch name (by slug), the steps of what
it builds on, the shared blockers it points at, the imported runs its results and the campaign
baseline name. Those reads are not listed by hand, where a forgotten one would serve a stale
analysis: the record is analysed through views of the project that note every key asked of them
(`Seen`), and the entry keeps the keys with a digest of what each one held. A later build asks
its own project the same keys, and uses the entry only when every answer digests the same. A
read of a whole table (iterating every record, every run) is one key whose answer is all of it.

The views (`Seen`, `watched`) and the answers (`Answers`) are the views layer's too: a record
page's model is built through the same kind of views, and its key kept with its reads
(`views.page_reuse`).
"""

from __future__ import annotations

import contextvars
import copyreg
import dataclasses
import io
import pickle
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

from generator.analysis.records import RecordAnalysis, SharedBlocker
from generator.base import cache
from generator.model.launch import Step
from generator.project.load import Project, RecordFile
from generator.project.runs.store import run_text

K = TypeVar("K")
V = TypeVar("V")
# The key that stands for a read of a whole table.
ALL = "*"

Reads = set[tuple[str, str]]


class Seen(Mapping[K, V]):
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


class _SeenRecords(list[RecordFile]):
    """The project's records: any look at the list is a read of all of them (`by_slug()` included)."""

    def __init__(self, records: list[RecordFile], reads: Reads) -> None:
        super().__init__(records)
        self.reads = reads

    def __iter__(self) -> Iterator[RecordFile]:
        self.reads.add(("records", ALL))
        return super().__iter__()

    def __getitem__(self, index: Any) -> Any:
        self.reads.add(("records", ALL))
        return super().__getitem__(index)

    def __len__(self) -> int:
        self.reads.add(("records", ALL))
        return super().__len__()

    def __contains__(self, item: object) -> bool:
        self.reads.add(("records", ALL))
        return super().__contains__(item)


class _Lazy(Mapping[K, V]):
    """A mapping made on first use (the project's git dates: one `git log`, only if read)."""

    def __init__(self, make: Callable[[], Mapping[K, V]]) -> None:
        self.make = make
        self._inner: Mapping[K, V] | None = None

    @property
    def inner(self) -> Mapping[K, V]:
        if self._inner is None:
            self._inner = self.make()
        return self._inner

    def __getitem__(self, key: K) -> V:
        return self.inner[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self.inner)

    def __len__(self) -> int:
        return len(self.inner)


# What a pickle of content must never hold: a view that notes reads holds the reads noted so far.
WATCHING: frozenset[type] = frozenset({Seen, _SeenRecords})


def watched(project: Project, reads: Reads) -> Project:
    """`project` with every table a record's analysis may read noting what it was asked."""
    seen = dataclasses.replace(
        project,
        records=_SeenRecords(project.records, reads),
        runs=Seen(project.runs, "run", reads),
        broken_runs=Seen(project.broken_runs, "broken", reads),
    )
    # Cached properties live in the instance's dict: set here, they are never computed from
    # the watched list (which would read every record) but answered by watched tables.
    # Both made on first read: a cached property made here would be kept on `project` itself,
    # and the page models are built through these views on every build (`views.page_reuse`).
    object.__setattr__(seen, "slug_index", Seen(_Lazy(lambda: project.slug_index), "slug", reads))
    dates = _Lazy(lambda: project.committed_dates)
    object.__setattr__(seen, "committed_dates", Seen(dates, "dates", reads))
    return seen


class Unkeyed(Exception):
    """A read whose answer cannot be taken: whatever made it is made again, never reused."""


class Answers:
    """What each read of a record's work gets from one build's project, as something to digest.

    `shared` and `steps` are the tables beside the project that the work was given (the shared
    blockers, the launch steps); `answer` raises `Unkeyed` for a read it cannot answer.
    """

    def __init__(
        self,
        project: Project,
        build_cache: cache.BuildCache,
        shared: Mapping[str, SharedBlocker],
        steps: Mapping[str, Step],
    ) -> None:
        self.project, self.build_cache, self.shared, self.steps = project, build_cache, shared, steps
        self._runs: dict[str, str] = {}

    def file(self, rec: RecordFile | None) -> tuple[str, str] | None:
        """A record file by its name and the digest of its bytes (None: no such record)."""
        if rec is None:
            return None
        key = self.build_cache.files.get(rec.path)
        if key is None:
            # Read outside the build cache: no digest to check an entry by.
            raise Unkeyed
        return (rec.path.name, key)

    def _run(self, rid: str) -> str | None:
        if rid not in self._runs:
            run = self.project.runs.get(rid)
            self._runs[rid] = cache.digest(run_text(run)) if run is not None else ""
        return self._runs[rid] or None

    def answer(self, kind: str, key: str) -> object:
        """What the read (`kind`, `key`) gets from this build's project, as something to digest."""
        project = self.project
        if kind == "records":
            return [self.file(r) for r in project.records]
        if kind == "slug":
            return sorted(project.slug_index) if key == ALL else self.file(project.slug_index.get(key))
        if kind == "run":
            return [(k, self._run(k)) for k in sorted(project.runs)] if key == ALL else self._run(key)
        if kind == "broken":
            return sorted(project.broken_runs.items()) if key == ALL else project.broken_runs.get(key)
        if kind == "step":
            return sorted(self.steps.items()) if key == ALL else self.steps.get(key)
        if kind == "shared":
            keys = sorted(self.shared) if key == ALL else [key]
            found = [(k, self.shared.get(k)) for k in keys]
            return [(k, None if b is None else (self.file(b.record), b.index)) for k, b in found]
        if kind == "dates":
            if key == ALL:
                return sorted((str(k), v) for k, v in project.committed_dates.items())
            return project.committed_dates.get(Path(key))
        raise AssertionError(kind)

    def digest(self, reads: list[tuple[str, str]]) -> str | None:
        """The digest of every read's answer; None when one cannot be answered."""
        try:
            return cache.digest(*[(kind, key, self.answer(kind, key)) for kind, key in reads])
        except Unkeyed:
            return None


class Reuse:
    """The records' analyses of one build, from the build cache where their reads are unchanged."""

    def __init__(
        self,
        project: Project,
        build_cache: cache.BuildCache,
        shared: Mapping[str, SharedBlocker],
        steps: Mapping[str, Step],
        rule: object,
    ) -> None:
        # The project, cache and tables are the answers' own: one place holds them.
        self.answers = Answers(project, build_cache, shared, steps)
        files = build_cache.files
        self.base = (str(project.root), files.get(project.campaign_file.path), repr(rule))
        self._files = {rec.path.name: rec for rec in project.records}
        # A digest of everything each record's analysis was made from, by file: the views key
        # what they make of one record by it (`Analysis.fingerprints`).
        self.fingerprints: dict[Path, str] = {}

    def analysis(
        self,
        rec: RecordFile,
        compute: Callable[[Project, RecordFile, Mapping[str, SharedBlocker], Mapping[str, Step]], RecordAnalysis],
    ) -> RecordAnalysis:
        """`compute(project, rec, shared, steps)`, or its value from the cache while its reads hold."""
        a = self.answers
        own = a.build_cache.files.get(rec.path)
        if own is None or None in self.base:
            return compute(a.project, rec, a.shared, a.steps)
        key = f"analysis:{cache.digest(a.build_cache.salt, *self.base, rec.path.name, own)}"
        entry = a.build_cache.get(key)
        if entry is not None:
            reads, digest, payload = entry
            if a.digest(reads) == digest:
                hit = self._load(payload)
                if hit is not None:
                    self.fingerprints[rec.path] = cache.digest(key, digest)
                    return hit
        seen: Reads = set()
        value = compute(
            watched(a.project, seen),
            rec,
            Seen(a.shared, "shared", seen),
            Seen(a.steps, "step", seen),
        )
        reads = sorted(seen)
        digest = a.digest(reads)
        if digest is not None:
            a.build_cache.put(key, (reads, digest, _dump(value)))
            self.fingerprints[rec.path] = cache.digest(key, digest)
        return value

    def _load(self, payload: bytes) -> RecordAnalysis | None:
        token = _FILES.set(self._files)
        try:
            value = pickle.loads(payload)
        except Exception:  # an entry that names a file this build lacks: analysed afresh
            return None
        finally:
            _FILES.reset(token)
        return value if isinstance(value, RecordAnalysis) else None


# The record files of the build that is loading an entry, by file name. An entry names the files
# it holds (its own, those its launch builds on) rather than keeping copies: a copy would carry a
# file's whole text and positions, and be another object than the project's own.
_FILES: contextvars.ContextVar[Mapping[str, RecordFile]] = contextvars.ContextVar("files")


def _file_named(name: str) -> RecordFile:
    return _FILES.get()[name]


def _reduce_file(rec: RecordFile) -> tuple[Callable[[str], RecordFile], tuple[str]]:
    return _file_named, (rec.path.name,)


_TABLE = {**copyreg.dispatch_table, RecordFile: _reduce_file}


def _dump(value: RecordAnalysis) -> bytes:
    out = io.BytesIO()
    pickler = pickle.Pickler(out, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = _TABLE
    pickler.dump(value)
    return out.getvalue()
