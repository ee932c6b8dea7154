"""The pages that list the records (home, summary, blockers, timeline), joined from pieces kept in the build cache.

A listing page shows something of every record: the summary a row each, the timeline a line
each, the blockers page a row and a section per blocker. Each of those pieces has a model of
its own (`page_models.SummaryRow`, `Entry`, `BlockerEntry`) and its own small template
(`_summary_row.md.j2`, ...), and its text is a function of that model, the templates and the
code. So a piece is kept in the build cache under the digest of its model (`page_keys.keyed`,
the key a record page is kept under), and the page's template is given the pieces' texts to
join: a rebuild after one edit renders the pieces whose models changed and lays the page out
around the rest. Nothing here lists what a piece depends on; the models say it.

The home page names only a few records (what is next, the latest, the steps of the stack): it
is one piece, kept whole under the digest of its model.

Every template goes through the render path's `render` (`output.render.iter_files`), so a
campaign's override of a page or of a piece's template is used, and a failing one reported,
exactly as for any page.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from markupsafe import Markup

from generator.analysis.campaign import Analysis
from generator.base import incremental
from generator.base.incremental import memo
from generator.base.problems import rel
from generator.views import listing_pages
from generator.views.journal import RunEvent
from generator.views.page_keys import keyed, shared_digests
from generator.views.prose import figures_of

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

# A template's name and a model to the rendered text, None when it failed (reported by the caller).
Render = Callable[[str, object], str | None]


class _Unrendered(Exception):
    """A piece's template failed: the page is not made (the render path has reported why)."""


class Pieces:
    """Pieces of the listing pages rendered from their models, each a memo of the build cache
    (whose entries of one kind are read in one statement: `base.incremental`)."""

    def __init__(
        self, analysis: Analysis, render: Render, build_cache: incremental.BuildCache | None, quoted: object = ()
    ) -> None:
        self.render, self.build_cache = render, build_cache
        # The figures the campaign's override templates quote in their own text, filled
        # (`output.render.template_figures`): in no model, so in every piece's key.
        self.quoted = quoted
        self.fill = figures_of(analysis)
        # The home page holds the campaign: its digest is taken once (as for the record pages).
        self.shared = shared_digests(analysis.project.campaign)

    def text(self, template: str, model: DataclassInstance) -> Markup:
        """`template` rendered with `model`, from the cache while the model's digest is unchanged.

        Markup: the page's template prints it as it is (`views.markdown.finalize` escapes text).
        """
        found = keyed(model, self.fill, self.shared)
        text = self.piece(template, found.key, lambda: self.render(template, found.model))
        if text is None:
            raise _Unrendered
        return Markup(text)

    def piece(self, template: str, key: str | None, render: Callable[[], str | None]) -> str | None:
        """The text `render()` gives, kept under `key` (the model's digest) and the template's name
        (one model is two pieces on the blockers page) in the build cache."""
        if key is None:
            return render()
        return memo(self.build_cache, "piece", (template, key, self.quoted), render)


def pages(
    analysis: Analysis,
    charts: Mapping[str, str],
    render: Render,
    build_cache: incremental.BuildCache | None = None,
    quoted: object = (),
) -> Iterator[tuple[str, str, str]]:
    """The listing pages, one at a time: (file name, body, the source its header names). Each
    page's model is made only once the page before it was rendered; a template that fails (which
    `render` reports) ends them."""
    project = analysis.project
    pieces = Pieces(analysis, render, build_cache, quoted)
    records = "the records in improvements/"
    made: list[tuple[str, Callable[[], str | None], str]] = [
        ("index.md", lambda: _home(analysis, charts, pieces), rel(project.campaign_file.path, project.root)),
        ("summary.md", lambda: _summary(analysis, charts, pieces, render), records),
        ("blockers.md", lambda: _blockers(analysis, pieces, render), records),
        ("timeline.md", lambda: _timeline(analysis, pieces, render), records),
    ]
    for filename, make, source in made:
        try:
            body = make()
        except _Unrendered:
            return
        if body is None:
            return
        yield filename, body, source


def _home(analysis: Analysis, charts: Mapping[str, str], pieces: Pieces) -> str:
    return str(pieces.text("home.md.j2", listing_pages.home_page(analysis, charts)))


def _summary(analysis: Analysis, charts: Mapping[str, str], pieces: Pieces, render: Render) -> str | None:
    model = listing_pages.summary_page(analysis, charts)
    lines = [pieces.text("_summary_row.md.j2", row) for row in model.row_models]
    return render("summary.md.j2", replace(model, row_lines=lines))


def _blockers(analysis: Analysis, pieces: Pieces, render: Render) -> str | None:
    model = listing_pages.blockers_page(analysis)
    rows = [pieces.text("_blocker_row.md.j2", entry) for entry in model.entries]
    sections = [pieces.text("_blocker_section.md.j2", entry) for entry in model.entries]
    return render("blockers.md.j2", replace(model, row_lines=rows, sections=sections))


def _timeline(analysis: Analysis, pieces: Pieces, render: Render) -> str | None:
    model = listing_pages.timeline_page(analysis)

    def line(e: DataclassInstance) -> Markup:
        return pieces.text("_timeline_event.md.j2" if isinstance(e, RunEvent) else "_timeline_row.md.j2", e)

    months = [(month, [line(e) for e in entries]) for month, entries in model.months]
    undated = [pieces.text("_timeline_undated.md.j2", e) for e in model.undated]
    return render("timeline.md.j2", replace(model, month_lines=months, undated_lines=undated))
