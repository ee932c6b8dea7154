"""The one render path: templates to files, and the build that writes them.

`improvements build`, the mkdocs plugin and `serve` all call `build` (or `render_files`).
The analysis is built once per build; the page views (`pages`) and the charts (`plots`)
read it, the Jinja2 templates lay the pages out, and `outputs` writes them atomically.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import jinja2

from generator.analysis.campaign import Analysis, analyse
from generator.analysis.figures import reference_problems
from generator.analysis.quoting import template_quotes
from generator.base import incremental, stamp
from generator.base.generated import WriteResult, header, write_outputs, yaml_header
from generator.base.incremental import BuildCache, memo
from generator.base.problems import ProblemsFound, Report
from generator.charts import NARROW, drawn_at
from generator.checks.validate import require_project
from generator.output import listing
from generator.output.templates import environment, template_problem
from generator.project.load import Project
from generator.views import page_models
from generator.views import variants as experiments
from generator.views.forest import forest_charts
from generator.views.journal import looks_charts
from generator.views.page_models import RecordPage
from generator.views.page_reuse import PageReuse
from generator.views.paths import MANIFEST_NAME, docs_root, record_page_path, series_dir
from generator.views.plots import plots
from generator.views.prose import figures_of, filling
from generator.views.record_page import RecordPages
from generator.views.road import road_plot
from generator.views.strips import strips
from generator.views.sweeps import frontier_charts

# --- rendering ------------------------------------------------------------------------------------


def _front_matter(source: str, tags: list[str]) -> str:
    lines = ["---", yaml_header(source)]
    if tags:
        lines.append("tags:")
        lines += [f"  - {t}" for t in tags]
    else:
        lines.append("tags: []")
    # Records rank above the guide in the site's search for words they hold (mkdocs-material).
    lines += ["search:", "  boost: 2"]
    lines.append("---")
    return "\n".join(lines) + "\n\n"


def _normalise(text: str) -> str:
    # Templates may leave runs of blank lines; markdown does not care, diffs do.
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.strip("\n") + "\n"


def template_figures(analysis: Analysis) -> tuple[tuple[str, str | None], ...]:
    """Every reference the campaign's override templates quote in their own text
    (`quoting.template_quotes`), with the figure the prose filters fill it with.

    No page model holds these: every page's key holds them, so a changed run changes the pages
    that show them, as a clean build would.
    """
    fill = figures_of(analysis)
    found = sorted({quote.inside for quote in template_quotes(analysis.project.root)})
    return tuple((reference, fill(reference)) for reference in found)


def with_figures(env: jinja2.Environment, analysis: Analysis) -> jinja2.Environment:
    """The environment with its prose filters filling quoted numbers from this analysis.

    The filters are looked up when a template runs, so the compiled templates stay shared.
    """
    for name in ("inline", "cell", "paragraphs"):
        env.filters[name] = filling(analysis, env.filters[name])
    return env


def _drawn(analysis: Analysis, build_cache: BuildCache | None) -> list[tuple[str, str, str]]:
    """Every chart of the build as (path, alt text, SVG)."""
    charts = plots(analysis, build_cache)
    drawn = [(p.path, p.alt, p.svg) for p in charts]
    drawn += [(f.path, f.alt, f.svg) for f in frontier_charts(analysis, build_cache)]
    # The road to the goal: a waterfall drawn from the analysis' stack.
    road = road_plot(analysis, build_cache)
    if road is not None:
        drawn.append(road)
    drawn += [(p.path, p.alt, p.svg) for p in experiments.sweep_charts(analysis)]
    drawn += [(s.path, s.alt, s.svg) for s in strips(analysis)]
    drawn += [(c.path, c.alt, c.svg) for c in looks_charts(analysis)]
    drawn += [(c.path, c.alt, c.svg) for c in forest_charts(analysis, build_cache)]
    return drawn


def narrow_path(path: str) -> str:
    """Where a chart's variant for a phone's column goes: beside it, `.narrow.svg` for `.svg`."""
    return path.removesuffix(".svg") + ".narrow.svg"


def _charts(analysis: Analysis, build_cache: BuildCache | None) -> tuple[dict[str, str], dict[str, str]]:
    """Every chart of the build: (path -> alt text, which the pages show; path -> SVG).

    Each is drawn twice: for a page's column, and for a phone's (`charts.NARROW`, its legend and
    labels laid out for that width, its text the same size), which the site swaps in on a
    narrow screen. Both passes are kept in the build cache: every chart's key holds its width.
    """
    drawn = _drawn(analysis, build_cache)
    with drawn_at(NARROW):
        narrow = [(narrow_path(path), alt, svg) for path, alt, svg in _drawn(analysis, build_cache)]
    return {path: alt for path, alt, _svg in drawn}, {path: svg for path, _alt, svg in [*drawn, *narrow]}


def render_files(analysis: Analysis, build_cache: BuildCache | None = None) -> dict[str, str]:
    """Every generated markdown file and chart, keyed by posix path relative to the repository root."""
    return {
        path: data.decode("utf-8") if isinstance(data, bytes) else data
        for path, data in sorted(iter_files(analysis, build_cache))
    }


def iter_files(analysis: Analysis, build_cache: BuildCache | None = None) -> Iterator[tuple[str, str | bytes]]:
    """Every generated file as (posix path relative to the repository root, text or UTF-8 bytes),
    one at a time, in no set order; ProblemsFound, after what came before, on a problem.

    A build writes each as it comes (generator.base.generated.write_outputs), so the outputs of
    a campaign are never all in memory at once.
    """
    project = analysis.project
    found = reference_problems(analysis)
    if found:
        # A number quoted from nowhere: nothing is written, as for any other problem.
        raise ProblemsFound(Report(found))
    env = with_figures(environment(project.root), analysis)
    # The figures the override templates quote (`template_figures`), part of every page's key.
    quoted = template_figures(analysis)
    report = Report()
    alts, svgs = _charts(analysis, build_cache)
    yield from svgs.items()
    del svgs

    def render(name: str, model: object) -> str | None:
        try:
            return env.get_template(name).render(page_models.context(model))
        except Exception as exc:
            # A campaign's own template can raise whatever its expressions do (`{{ 1 // 0 }}`, a
            # filter given a mapping), not only jinja's errors: each is that template's problem,
            # reported at its line, never a traceback.
            report.add(template_problem(project.root, name, exc))
            return None

    # A page's key without its model while what the model read is unchanged (`views.page_reuse`).
    models = PageReuse(RecordPages(analysis, alts), build_cache)
    for rec in project.records:
        key, make = models.keyed(rec)

        # Of the model alone: the cached text is what its key names.
        def page(make: Callable[[], RecordPage] = make) -> str | None:
            model = make()
            body = render("record.md.j2", model)
            if body is None:
                return None
            return _front_matter(model.source, list(model.record.tags)) + _normalise(body)

        # A page's text is a function of its model, the templates and the code (the cache's salt
        # holds the code and the template overrides): kept under its model's digest.
        text = page() if key is None else memo(build_cache, "page", (key, quoted), page)
        if text is None:
            break
        yield record_page_path(project, rec), text
    # The pages that list the records, from pieces kept in the build cache (output.listing); they
    # stop at the first template that fails.
    for filename, body, source in listing.pages(analysis, alts, render, build_cache, quoted) if report.ok else ():
        yield str(docs_root(project) / filename), header(source) + "\n\n" + _normalise(body)
    if not report.ok:
        raise ProblemsFound(report)
    yield from downloads(analysis, build_cache).items()


def downloads(analysis: Analysis, build_cache: BuildCache | None = None) -> dict[str, str | bytes]:
    """The summary's downloads beside it, which it links: records.json and the table as CSV.

    Written with the pages rather than by the site build alone, so every builder (mkdocs with
    or without the plugin, Zensical) publishes them and the links to them are checked.
    """
    from generator.output.export import SITE_NAME, dump_bytes
    from generator.views.summary import summary_csv

    root = docs_root(analysis.project)
    return {
        # Unversioned: this copy is committed (see export_data); the site build replaces it.
        # Bytes: as one str, the export of a campaign with any non-ASCII character took two to
        # four bytes a character (tens of megabytes at 3,000 records).
        str(root / SITE_NAME): dump_bytes(analysis, versioned=False, build_cache=build_cache),
        str(root / "summary.csv"): summary_csv(analysis, build_cache),
    }


@dataclass
class BuildResult:
    analysis: Analysis
    # The outputs' paths, sorted: their text is on disk, and was never held all at once.
    files: list[str]
    written: list[str]
    unchanged: list[str]
    removed: list[str]
    released: list[str]

    @property
    def project(self) -> Project:
        return self.analysis.project

    @property
    def changed(self) -> bool:
        return bool(self.written or self.removed)


def _kept(build_cache: BuildCache, inputs: str) -> str:
    """The key a build's analysis and outputs are kept under for the next build of the same inputs."""
    return f"kept:{incremental.digest(build_cache.salt, inputs)}"


class _InputsChanged(Exception):
    """An input changed while a build read it: its outputs may mix the two states."""


# A build starts again when its inputs change while it reads them (an editor saving a record and
# campaign.yaml one after the other), at most three times: the last writes what it read, with no
# digests, and the next build runs in full.
_ATTEMPTS = (False, False, True)


def build(
    root: Path, inputs: str | None = None, build_cache: BuildCache | None = None, *, keep: bool = False
) -> BuildResult:
    """Load, analyse, render and write the campaign at `root`; ProblemsFound (nothing written) on any error.

    `inputs` is the inputs' digest when the caller has just taken it (generator.base.stamp).
    `build_cache` is one kept from an earlier build of `root` in this process (`serve`), so
    that its entries are not read from disk again; by default the cache is loaded afresh.
    `keep` keeps the analysis and the outputs for the next build of the same inputs (`_kept`):
    a site build renders the docs, then the mkdocs plugin asks for them again.

    A build whose inputs changed while it read them starts again rather than write outputs
    that may show one file as it was and another as it is now.
    """
    # The loaded campaign and its analysis live to the end of the build and hold no cycles of
    # their own: frozen once made (`_build_once`), the collections that rendering's objects set
    # off stop walking them again and again (0.3 to 0.4 s of a rebuild at 1,000 records). Given back
    # to the collector when the build ends, so a process that builds many times (`serve`, the
    # mkdocs plugin) frees each build's as before; a caller's own freeze is left alone.
    freezing = gc.get_freeze_count() == 0
    try:
        for last in _ATTEMPTS:
            try:
                return _build_once(root, inputs, build_cache, keep=keep, last=last, freeze=freezing)
            except _InputsChanged:
                inputs = None
    finally:
        if freezing:
            gc.unfreeze()
    raise AssertionError("unreachable: the last attempt writes what it read")


def _build_once(
    root: Path, inputs: str | None, build_cache: BuildCache | None, *, keep: bool, last: bool, freeze: bool
) -> BuildResult:
    # Before anything is read: a file changed while the build runs leaves a digest that no
    # longer matches, so the build starts again (or, the last time, writes no digests).
    if inputs is None:
        inputs = stamp.inputs_digest(root)
    # Unchanged records, pages and charts come from the user's cache folder, keyed by content.
    if build_cache is None:
        build_cache = BuildCache(root)
    else:
        build_cache.start()
    # The last kept build of these very inputs, while the outputs on disk are still the ones it
    # wrote: the inputs' digest covers every input and the code, the salt the template
    # overrides, and the outputs are hashed again from disk, so a build would write nothing else.
    found = build_cache.get(_kept(build_cache, inputs))
    if isinstance(found, tuple) and isinstance(found[0], Analysis) and stamp.outputs_current(root, inputs):
        return BuildResult(found[0], found[1], [], list(found[1]), [], [])
    project = require_project(root, build_cache)
    if freeze:
        gc.freeze()
    analysis = analyse(project, build_cache)
    if freeze:
        gc.freeze()
    managed = sorted({str(docs_root(project)), str(series_dir(project))})
    manifest = str(docs_root(project) / MANIFEST_NAME)
    paths: list[str] = []

    def rendered() -> Iterator[tuple[str, str | bytes]]:
        for path, data in iter_files(analysis, build_cache):
            paths.append(path)
            yield path, data

    checked: list[str | None] = []

    def still_inputs() -> str | None:
        # Asked by the writer (under the build lock) once every output is rendered and before
        # any is moved into place: raising here leaves the outputs as they were.
        if stamp.inputs_digest(root) != inputs:
            if not last:
                raise _InputsChanged
            checked.append(None)
        else:
            checked.append(inputs)
        return checked[-1]

    result: WriteResult = write_outputs(project.root, rendered(), managed, manifest=manifest, inputs=still_inputs)
    files = sorted(paths)
    # Still changing on the last attempt: these outputs may be of either state, so the manifest
    # got no digests and the next build runs in full.
    inputs = checked[-1] if checked else None
    if keep and inputs is not None:
        build_cache.put(_kept(build_cache, inputs), (analysis, files))
    build_cache.save()
    if inputs is not None:
        stamp.remember_outputs(project.root, manifest)
    return BuildResult(analysis, files, result.written, result.unchanged, result.removed, result.released)
