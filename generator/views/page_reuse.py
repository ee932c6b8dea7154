"""A record page's cache key from the build cache, while everything its model read is unchanged.

A record page's text is cached under the digest of its model (`page_keys.keyed`), so taking
the key meant building the model, for every record of every build: after one edit at 1,000
records, building models only to find their pages unchanged was a seventh of the rebuild.

A model's dependencies are not listed by hand, where a forgotten one would serve a stale page:
the model is built through views of the analysis, of the charts and of the stack's marks that
note every key asked of them, as a record's analysis is built through views of the project
(`analysis.reuse`, whose views and answers this module shares). The model's key is a query of
the incremental core (`base.incremental`, kind `page-key`), kept with those reads and a digest
of their answers. A later build asks its own analysis the same keys; when every answer digests
the same, the model it would build is the same, so the kept key is the page's and its text
comes from the cache under it, the model never built. What the
pages find once for every model (`RecordPages`: links, the rule, the SLO) is found through the
same views, and its reads join every model's. What each read answers:

- a record's analysis (`analysis.record`): the fingerprint of its query (`@analysis`), a digest
  of everything that analysis was made from;
- a record by slug (`by_slug`), a shared blocker and where it is defined, the records that a
  slug supersedes or that point at a blocker: their files' digests;
- the project's tables (runs, records, git dates), as `analysis.reuse` answers them;
- a chart's alt text, a record's place in the stack, a quoted figure's filled text: the value;
- any other attribute of the analysis (its ranking, the stack, the frontier, an index of names):
  no answer, so a model that reads one is built every time and never kept.

Everything else a model holds is of the record's own file, the campaign file or the code, which
the entry's key holds: the salt (the code, the campaign's templates), the repository's root, the
campaign file's digest, and the record's file name and digest.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, cast

from generator.analysis.campaign import Analysis, BlockerIndex, RecordAnalysis
from generator.analysis.reuse import watched
from generator.base import incremental
from generator.base.incremental import ALL, Reads, Seen, Unkeyed
from generator.project.load import RecordFile
from generator.views.page_keys import keyed
from generator.views.page_models import RecordPage
from generator.views.record_page import RecordPages


class _SeenAnalysis:
    """`inner` for one model, noting each record, slug and blocker asked, and any other attribute read."""

    def __init__(self, inner: Analysis, reads: Reads) -> None:
        self._inner, self._reads = inner, reads
        self.project = watched(inner.project, reads)
        self.by_slug = Seen(inner.by_slug, "by_slug", reads)
        b = inner.blockers
        self.blockers = BlockerIndex(
            shared=Seen(b.shared, "shared", reads),
            refs=Seen(b.refs, "refs", reads),
            superseding=Seen(b.superseding, "superseding", reads),
        )
        # The decision rule, of the campaign file alone.
        self.rule = inner.rule

    def record(self, rec: RecordFile) -> RecordAnalysis:
        self._reads.add(("@analysis", str(rec.path)))
        return self._inner.record(rec)

    def by_path(self, path: Path) -> RecordAnalysis | None:
        self._reads.add(("@analysis", str(path)))
        return self._inner.by_path(path)

    def __getattr__(self, name: str) -> Any:
        # Only what is not set above: a table of the whole campaign, which no read can answer.
        self._reads.add(("analysis", name))
        return getattr(self._inner, name)


def _answer_pages(pages: RecordPages, build_cache: incremental.BuildCache) -> None:
    """Register, for this build, what each read of a record page's model answers (see the module's docstring)."""
    analysis = pages.analysis
    b = analysis.blockers

    def file(rec: RecordFile | None) -> tuple[str, str] | None:
        return build_cache.file(None if rec is None else rec.path)

    def refs(value: Any) -> object:
        # Which entry of each record points at the blocker: its place among the record's own.
        return [(file(r), next(i for i, x in enumerate(r.record.blockers) if x is blocker)) for r, blocker in value]

    def unkeyed(key: str) -> object:
        raise Unkeyed

    # A chart's alt text, a stack mark: the value itself, whose repr is its content.
    tables: dict[str, tuple[Mapping[str, Any], Callable[[Any], object]]] = {
        "by_slug": (analysis.by_slug, file),
        "refs": (b.refs, lambda value: refs(value or ())),
        "superseding": (b.superseding, lambda value: [file(r) for r in value or ()]),
        "chart": (pages.charts, lambda value: value),
        "mark": (pages.marks, lambda value: value),
    }

    def table(kind: str) -> incremental.Answerer:
        found, answer = tables[kind]
        return lambda key: [(k, answer(found.get(k))) for k in sorted(found)] if key == ALL else answer(found.get(key))

    build_cache.answer_with({"figure": pages.fill, "analysis": unkeyed, **{kind: table(kind) for kind in tables}})


class PageReuse:
    """The record pages' keys of one build, each a query of the build cache (kind `page-key`)."""

    def __init__(self, pages: RecordPages, build_cache: incremental.BuildCache | None) -> None:
        self.pages, self.build_cache = pages, build_cache
        self.base: tuple[str, str] | None = None
        if build_cache is not None:
            project = pages.analysis.project
            campaign = build_cache.files.get(project.campaign_file.path)
            self.base = None if campaign is None else (str(project.root), campaign)
            _answer_pages(pages, build_cache)
            # What the pages find once for every model (links, the rule, the SLO), found again
            # through the views: its reads are every model's too.
            self.common: Reads = set()
            self.seen = RecordPages(
                cast(Analysis, _SeenAnalysis(pages.analysis, self.common)),
                Seen(pages.charts, "chart", self.common),
                Seen(pages.marks, "mark", self.common),
            )

    def keyed(self, rec: RecordFile) -> tuple[str | None, Callable[[], RecordPage]]:
        """The page's key (None: it could not be taken) and its model, built only when asked for.

        While the kept key's reads all give what they gave, the key is the kept one and no model
        is built unless the page's text is not in the cache; otherwise the model is built
        through noting views, and its key kept with what it read.
        """
        pages, build_cache = self.pages, self.build_cache
        own = build_cache.files.get(rec.path) if build_cache is not None else None
        if build_cache is None or self.base is None or own is None:
            found = pages.keyed(rec)
            return found.key, lambda: found.model
        built: list[RecordPage] = []

        def fresh(seen: Reads) -> str | None:
            seen |= self.common
            model = self.seen.seen_by(
                cast(Analysis, _SeenAnalysis(pages.analysis, seen)),
                Seen(pages.charts, "chart", seen),
                Seen(pages.marks, "mark", seen),
            ).model(rec)
            # The quoted figures are filled from the analysis itself: each one a read of its text.
            found = keyed(model, pages.fill, pages.shared)
            seen.update(("figure", reference) for reference, _text in found.model.figures)
            if found.key is None:
                # A model with no digest: a read nothing answers, so nothing is kept.
                seen.add(("analysis", "unkeyed model"))
            built.append(found.model)
            return found.key

        key = build_cache.query("page-key", str(rec.path), (*self.base, rec.path.name, own), fresh)
        return key, lambda: built[0] if built else pages.keyed(rec).model
