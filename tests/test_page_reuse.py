"""A record page's key from its model's recorded reads is the key its model gives, and no read goes unrecorded.

A build takes a page's key without building its model while every read the model made last
time gives the same answer (`views.page_reuse`). A read that went unrecorded would let an edit
change the model, and the page, under the old key: a stale page. Over seeded random edits of
every kind the incremental property test makes (and a quoted figure), every replayed key must
be the key the model built afresh gives. And the check is not vacuous: with one kind of read
left unrecorded, an edit that reaches a page only through that kind serves a stale key, which
the same check finds.
"""

from __future__ import annotations

import builtins
import random
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest
from test_incremental_property import INLINE_ON_RUNS, edit_campaign_baseline, make_campaign
from test_page_models import EDITS, QUOTING, edit_quoted

from generator.analysis.campaign import analyse
from generator.base import incremental
from generator.base.incremental import BuildCache
from generator.checks.validate import require_project
from generator.output import render
from generator.views import page_reuse
from generator.views.record_page import RecordPages

pytestmark = pytest.mark.slow

# Record 06 quotes record 04's figure and names it in `related`: both reach 06's page only
# through its model's reads (06 is analysed against record 01's runs, never 04's).
RELATED = "related: [flash-decoding-kernels]\n"
SIXTH = QUOTING + RELATED


def keys(root: Path, build_cache: BuildCache) -> dict[str, tuple[str | None, str | None, bool]]:
    """Each page's (replayed key, the key of its model built afresh, whether it was replayed), as a build takes them."""
    build_cache.start()
    analysis = analyse(require_project(root, build_cache), build_cache)
    alts, _svgs = render._charts(analysis, build_cache)
    pages = RecordPages(analysis, alts)
    reuse = page_reuse.PageReuse(pages, build_cache)
    recorded: list[str] = []
    seen_by = reuse.seen.seen_by

    def noting(*args: object) -> RecordPages:
        recorded.append("")  # a model built through the noting views
        return seen_by(*args)  # type: ignore[arg-type]

    reuse.seen.seen_by = noting  # type: ignore[method-assign]
    out = {}
    for rec in analysis.project.records:
        before = len(recorded)
        key, _model = reuse.keyed(rec)
        out[rec.slug] = (key, pages.keyed(rec).key, len(recorded) == before)
    build_cache.save()
    return out


def stale(found: dict[str, tuple[str | None, str | None, bool]]) -> list[str]:
    return sorted(slug for slug, (replayed, fresh, _hit) in found.items() if replayed != fresh)


def test_a_replayed_key_is_the_key_of_the_model(tmp_path: Path) -> None:
    root = make_campaign(tmp_path / "campaign", SIXTH)
    build_cache = BuildCache(root)
    assert not stale(keys(root, build_cache))
    rng = random.Random(35)
    kinds = [*sorted(EDITS), *sorted(EDITS)]
    rng.shuffle(kinds)
    replayed = built = 0
    for step, kind in enumerate(kinds):
        EDITS[kind](root, rng)
        found = keys(root, build_cache)
        assert not stale(found), f"edit {step} ({kind}): stale keys for {stale(found)}"
        replayed += sum(hit for _r, _f, hit in found.values())
        built += sum(not hit for _r, _f, hit in found.values())
    # Not vacuous: pages an edit did not reach were replayed, and those it reached were built.
    assert replayed and built


def _flip_status(slug_file: str, was: str, now: str) -> Callable[[Path], None]:
    def edit(root: Path) -> None:
        path = next((root / "improvements").glob(slug_file))
        path.write_text(path.read_text(encoding="utf-8").replace(was, now, 1), encoding="utf-8")

    return edit


def _retitle_kernels(root: Path) -> None:
    path = next((root / "improvements").glob("04-*.yaml"))
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("title: Flash decoding kernels", "title: Flash decoding kernels, retitled", 1))


# (the kind of read, record 06's text, an edit that reaches some page only through a read of that kind)
ONLY_THROUGH: list[tuple[str, str, Callable[[Path], None]]] = [
    # 02 leaves the stack: 01's page says "step 1 of 1" (its place in the stack, a mark).
    ("mark", INLINE_ON_RUNS, _flip_status("02-*.yaml", "status: adopted", "status: in-progress")),
    # 05 is superseded by 06: 06's page lists it (the records superseding a slug).
    (
        "superseding",
        INLINE_ON_RUNS,
        _flip_status("05-*.yaml", "status: in-progress", "status: superseded\nsuperseded_by: inline-on-runs"),
    ),
    # 04's title, in 06's list of related records (a record by slug).
    ("by_slug", INLINE_ON_RUNS + RELATED, _retitle_kernels),
    # A run of the campaign's baseline: the comparisons of every record measured against it
    # (a record's analysis, read through its fingerprint). Seed 2 edits a run at a load whose
    # figures 01's text does not quote (a quoted figure would be a second path to its page).
    ("@analysis", INLINE_ON_RUNS, lambda root: edit_campaign_baseline(root, random.Random(2))),
    # 04's number, quoted in 06's verdict (a figure; 06 names 04 nowhere else).
    ("figure", QUOTING, lambda root: edit_quoted(root, random.Random(1))),
]


@pytest.mark.parametrize(("kind", "sixth", "edit"), ONLY_THROUGH, ids=[kind for kind, *_rest in ONLY_THROUGH])
def test_a_read_left_unrecorded_serves_a_stale_key(
    kind: str, sixth: str, edit: Callable[[Path], None], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def runs(drop: str | None, folder: str) -> list[str]:
        root = make_campaign(tmp_path / folder, sixth)
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / f"{folder}-cache"))
        build_cache = BuildCache(root)
        with monkeypatch.context() as m:
            if drop is not None:
                # The reads a page's model makes, as the entry keeps them, without those of `drop`.
                def kept(reads: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
                    return [r for r in builtins.sorted(reads) if r[0] != drop]

                m.setattr(incremental, "_ordered", kept)
            assert not stale(keys(root, build_cache))
            edit(root)
            return stale(keys(root, build_cache))

    assert runs(None, "recorded") == []
    assert runs(kind, "unrecorded"), f"an edit reaching a page only through its {kind} reads went unseen"


def test_what_the_pages_find_once_is_read_through_the_views_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The pages' own state (links, the rule, the SLO) is every model's input: were it to read
    # the whole ranking, which no read can answer, no page's key would be replayed.
    init = RecordPages.__init__

    def reading_the_ranking(self: RecordPages, analysis: object, *args: object) -> None:
        init(self, analysis, *args)  # type: ignore[arg-type]
        self.first = analysis.ranked[0].file.slug  # type: ignore[attr-defined]

    def replayed(folder: str) -> int:
        root = make_campaign(tmp_path / folder)
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / f"{folder}-cache"))
        build_cache = BuildCache(root)
        keys(root, build_cache)
        found = keys(root, build_cache)
        assert not stale(found)
        return sum(hit for *_keys, hit in found.values())

    assert replayed("as-is")
    monkeypatch.setattr(RecordPages, "__init__", reading_the_ranking)
    assert replayed("reading-the-ranking") == 0
