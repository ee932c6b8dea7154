"""A record's analysis as a query of the incremental core, and the answers to what it reads.

Analysing one record reads its own file and the campaign's, and a little of the rest of the
campaign: the records that its `baseline_from` and its launch name (by slug), the steps of what
it builds on, the shared blockers it points at, the imported runs its results and the campaign
baseline name. Those reads are not listed by hand, where a forgotten one would serve a stale
analysis: the record is analysed through views of the project that note every key asked of them
(`watched`, the core's `Seen`), and the core keeps its value with those reads
(`base.incremental`). This module says what each read answers in a build (`answer_project`): a
record by its file's digest, a run by its text's digest. A read of a whole table (iterating
every record, every run) is one key whose answer is all of it.

A record page's model is built through the same views (`views.page_reuse`).
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
from generator.base import incremental
from generator.base.incremental import ALL, Reads, Seen
from generator.model.launch import Step
from generator.project.load import Project, RecordFile
from generator.project.runs.store import run_text

K = TypeVar("K")
V = TypeVar("V")


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


def answer_project(
    project: Project,
    build_cache: incremental.BuildCache,
    shared: Mapping[str, SharedBlocker],
    steps: Mapping[str, Step],
) -> None:
    """Register, for this build, what each read of the project's views answers, as something to digest.

    `shared` and `steps` are the tables beside the project that the analysis is given (the
    shared blockers, the launch steps).
    """
    runs: dict[str, str] = {}

    def file(rec: RecordFile | None) -> tuple[str, str] | None:
        return build_cache.file(None if rec is None else rec.path)

    def run(rid: str) -> str | None:
        if rid not in runs:
            found = project.runs.get(rid)
            runs[rid] = incremental.digest(run_text(found)) if found is not None else ""
        return runs[rid] or None

    def dates(key: str) -> object:
        # The project's git dates are one `git log`, run only when a read asks for them.
        found = project.committed_dates
        return sorted((str(k), v) for k, v in found.items()) if key == ALL else found.get(Path(key))

    def blocker(key: str) -> object:
        found = [(k, shared.get(k)) for k in (sorted(shared) if key == ALL else [key])]
        return [(k, None if b is None else (file(b.record), b.index)) for k, b in found]

    build_cache.answer_with(
        {
            "records": lambda key: [file(r) for r in project.records],
            "slug": lambda key: sorted(project.slug_index) if key == ALL else file(project.slug_index.get(key)),
            "run": lambda key: [(k, run(k)) for k in sorted(project.runs)] if key == ALL else run(key),
            "broken": lambda key: sorted(project.broken_runs.items()) if key == ALL else project.broken_runs.get(key),
            "step": lambda key: sorted(steps.items()) if key == ALL else steps.get(key),
            "shared": blocker,
            "dates": dates,
        }
    )


class Reuse:
    """The records' analyses of one build, each a query of the build cache (kind `analysis`)."""

    def __init__(
        self,
        project: Project,
        build_cache: incremental.BuildCache,
        shared: Mapping[str, SharedBlocker],
        steps: Mapping[str, Step],
        rule: object,
    ) -> None:
        self.project, self.build_cache, self.shared, self.steps = project, build_cache, shared, steps
        answer_project(project, build_cache, shared, steps)
        self.base = (str(project.root), build_cache.files.get(project.campaign_file.path), repr(rule))
        self._files = {rec.path.name: rec for rec in project.records}

    def analysis(
        self,
        rec: RecordFile,
        compute: Callable[[Project, RecordFile, Mapping[str, SharedBlocker], Mapping[str, Step]], RecordAnalysis],
    ) -> RecordAnalysis:
        """`compute(project, rec, shared, steps)`, or its value from the cache while its reads hold."""
        own = self.build_cache.files.get(rec.path)
        if own is None or None in self.base:
            # Read outside the build cache: what reads this analysis has nothing to check it by.
            self.build_cache.prints["analysis", str(rec.path)] = None
            return compute(self.project, rec, self.shared, self.steps)

        def fresh(seen: Reads) -> RecordAnalysis:
            return compute(
                watched(self.project, seen), rec, Seen(self.shared, "shared", seen), Seen(self.steps, "step", seen)
            )

        return self.build_cache.query(
            "analysis", str(rec.path), (*self.base, rec.path.name, own), fresh, keep=_dump, load=self._load
        )

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
