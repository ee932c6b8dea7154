"""The site: a thin mkdocs plugin (`site_cli` has the `build --site` and `serve` entry points).

The plugin renders the records into docs/ through the same `render.build` the CLI uses,
groups the series by tier in the navigation, makes `mkdocs serve` watch the records, results
and templates, and supplies what a campaign's site needs beyond its own pages: the Material
theme with its palettes and features, search and tags, the markdown extensions the pages use,
the stylesheet and the tags page (both from package data), strict link checks and a default
navigation. Each default applies only where mkdocs.yml does not say otherwise, so a campaign's
mkdocs.yml can be two lines (`site_name`, `plugins: [improvements]`) and needs no file from
this repository. The generated pages are plain markdown on disk, so a builder without this
plugin (Zensical, or mkdocs with the plugin removed) builds the same pages from the committed
files, with whatever theme settings its mkdocs.yml spells out.

This module, `site_defaults` (what the plugin supplies) and `site_cli` are the only ones that
import mkdocs; the CLI imports them inside `build --site` and `serve`, never at start-up.
"""

from __future__ import annotations

import html
import logging
import posixpath
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from markupsafe import Markup
from mkdocs.config import config_options as opt
from mkdocs.config.base import Config
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.livereload import LiveReloadServer
from mkdocs.plugins import BasePlugin, event_priority
from mkdocs.structure.files import File, Files
from mkdocs.utils.templates import TemplateContext

from generator.analysis.campaign import Analysis
from generator.base.incremental import BuildCache
from generator.base.problems import ProblemsFound, format_report
from generator.project.load import Project, RecordFile
from generator.site.build import mark_site
from generator.site.defaults import SCRIPT, STYLESHEET, TAGS_PAGE, apply_defaults, has_plugin, user_settings

NavItem = str | dict[str, Any]


# mkdocs' Config and BasePlugin set up subclasses in an untyped __init_subclass__.
class ImprovementsConfig(Config):  # type: ignore[no-untyped-call]
    # The nav entry (a page path) after which the tier sections go; at the end if absent.
    nav_after = opt.Type(str, default="summary.md")
    # A tier with more records than this is split into numbered sub-sections, so that no
    # open branch of the sidebar holds more than this many pages.
    section_size = opt.Type(int, default=50)
    # Add the tool's own guide (the record format, the workflow, the commands, how decisions
    # are made) to the site, from the installed package: a campaign made by `init` has no copy.
    guide = opt.Type(bool, default=False)


log = logging.getLogger("mkdocs.plugins.improvements")
_escape = html.escape


class ImprovementsPlugin(BasePlugin[ImprovementsConfig]):  # type: ignore[no-untyped-call]
    """Render the records before each build; group the series by tier; watch the inputs; supply defaults."""

    analysis: Analysis | None = None
    build_cache: BuildCache | None = None
    # The navigation of the previous build, while `serve` keeps this plugin between rebuilds.
    last_nav: str | None = None
    # Whether mkdocs.yml has no `nav:`, so the plugin lays out the whole navigation.
    default_nav = False
    # How mkdocs was started, for the on_startup of the plugins this one adds (their own came and went).
    startup: dict[str, Any] = {"command": "build", "dirty": False}  # noqa: RUF012

    def on_startup(self, *, command: str, dirty: bool) -> None:
        self.startup = {"command": command, "dirty": dirty}

    # First among the config handlers, so that the search and tags plugins added here have
    # their own on_config run after it (mkdocs runs handlers in priority order, and a handler
    # registered during the event runs only if it sorts after the current one).
    @event_priority(150)
    def on_config(self, config: MkDocsConfig) -> MkDocsConfig:
        user = user_settings(config)
        self.default_nav = "nav" not in user
        apply_defaults(config, user, self.startup)
        if self.startup.get("command") == "serve":
            from generator.site.rebuild import keep_theme

            # Here, not later: Material's search plugin asks for the theme's templates in its on_config.
            keep_theme(config, repo_root(config))
        return config

    # While `serve` runs and a record is invalid: the problem, shown on every page above the last
    # good one (render wrote nothing, so docs/ still holds it); None once the records are valid.
    problem: str | None = None
    shown_problem: str | None = None

    def on_pre_build(self, *, config: MkDocsConfig) -> None:
        root = repo_root(config)
        # Kept between the rebuilds of `serve`, so that each one does not read the whole build
        # cache from disk again (and a one-shot build loads it once, as `improvements build` does).
        if self.build_cache is None or self.build_cache.root != root:
            self.build_cache = BuildCache(root)
        try:
            # A one-shot build keeps its analysis for the next build of the same inputs; `serve`'s
            # rebuilds follow edits, and would only pay for writing it.
            self.analysis = render_for_site(root, self.build_cache, keep=not self.startup.get("dirty"))
            self.problem = None
        except PluginError as exc:
            # A failed rebuild under `serve` leaves mkdocs' server waiting for one that succeeds,
            # so every request hangs; the last good site, with the problem on it, is served instead.
            if self.startup.get("command") != "serve" or self.analysis is None:
                raise
            self.problem = str(exc)
            log.error("%s\nserving the last good site until this is fixed", self.problem)
        if self.default_nav:
            config.nav = base_nav(self.analysis.project, config)
        config.nav = tier_nav(self.analysis.project, config, self.config.nav_after, self.config.section_size)
        if self.config.guide and config.nav is not None:
            config.nav = guide_nav(config.nav)

    def on_files(self, files: Files, /, *, config: MkDocsConfig) -> Files:
        from importlib.resources import files as package_files

        site = package_files("generator").joinpath("templates", "site")
        # A campaign's own docs/stylesheets/improvements.css or docs/tags.md wins over the shipped one.
        if STYLESHEET in config.extra_css and files.get_file_from_path(STYLESHEET) is None:
            files.append(File.generated(config, STYLESHEET, content=site.joinpath("improvements.css").read_bytes()))
        if has_plugin(config, "tags") and files.get_file_from_path(TAGS_PAGE) is None:
            files.append(File.generated(config, TAGS_PAGE, content=site.joinpath("tags.md").read_bytes()))
        if SCRIPT in [str(s) for s in config.extra_javascript] and files.get_file_from_path(SCRIPT) is None:
            files.append(File.generated(config, SCRIPT, content=site.joinpath("improvements.js").read_bytes()))
        if self.config.guide:
            add_guide(files, config)
        if self.analysis is not None:
            publish_raw_files(self.analysis.project, files, config)
            publish_journal_files(self.analysis, files, config)
        if self.default_nav and config.nav is not None:
            # Pages of the campaign's own (notes, a write-up) stay reachable: after the rest, by path.
            listed = set(_paths(config.nav))
            extra = sorted(f.src_uri for f in files.documentation_pages() if f.src_uri not in listed)
            config.nav = [*config.nav, *extra]
        self._rebuild_all_on_nav_change(files, config)
        return files

    def _rebuild_all_on_nav_change(self, files: Files, config: MkDocsConfig) -> None:
        """In a dirty rebuild (`serve`), rebuild every page when the navigation changed.

        mkdocs rebuilds only pages whose markdown is newer than their HTML; a new title or tier
        changes the sidebar of every page, which would otherwise keep the old one.
        """
        shown = repr(config.nav)
        changed = self.last_nav is not None and shown != self.last_nav
        # The problem note goes on, or off, every page at once.
        if self.startup.get("dirty") and (changed or self.problem != self.shown_problem):
            for file in files.documentation_pages():
                file.is_modified = _always  # type: ignore[method-assign]
        self.last_nav = shown
        self.shown_problem = self.problem

    def on_serve(self, server: LiveReloadServer, /, *, config: MkDocsConfig, builder: Any) -> LiveReloadServer:
        from generator.site.watch import use_native_observer, watch_docs, watched_paths

        root = repo_root(config)
        use_native_observer(server)
        watch_docs(server, Path(config.docs_dir), root)
        for path in watched_paths(root):
            server.watch(str(path))
        return server

    def on_page_context(self, context: TemplateContext, /, *, page: Any, config: MkDocsConfig, nav: Any) -> None:
        # The theme writes `page.title | striptags` into <title>, and striptags turns escaped
        # text back into markup: a record titled `</title><script>` would run. A page's meta
        # title is written as it is, so give it the same text, escaped once more.
        if page.title and not page.is_homepage and not page.meta.get("title"):
            page.meta["title"] = html.escape(Markup(page.title).striptags())

    def on_page_content(self, html: str, /, *, page: Any, config: MkDocsConfig, files: Files) -> str:
        if self.problem is not None:
            note = (
                '<div class="admonition danger"><p class="admonition-title">'
                "A record is invalid: this is the last good site</p><pre>"
                f"{_escape(self.problem)}</pre></div>"
            )
            return note + embed_charts(html, page.file.dest_uri, files)
        return embed_charts(html, page.file.dest_uri, files)

    def on_post_build(self, *, config: MkDocsConfig) -> None:
        from generator.base.fsio import atomic_write
        from generator.output.export import SITE_NAME, dump_bytes

        # records.json at the site root: every record with its computed summary, for scripts.
        # Through the build cache, where render.build has just encoded each record's entry for
        # docs/'s copy: without it every record was encoded again (4 s of a rebuild at 1,000).
        if self.analysis is not None:
            Path(config.site_dir).mkdir(parents=True, exist_ok=True)
            atomic_write(Path(config.site_dir) / SITE_NAME, dump_bytes(self.analysis, build_cache=self.build_cache))
        if not config.site_url:
            relative_404(Path(config.site_dir) / "404.html")
        mark_site(Path(config.site_dir))


# The guide pages a campaign's site carries, in reading order: the tool's own pages about its
# code (architecture, performance) and this repository's campaign are left out.
GUIDE_PAGES = (
    ("Workflow", "workflow.md"),
    ("Record format", "format.md"),
    ("Results from benchmark files", "results.md"),
    ("Running a comparison", "run.md"),
    ("How decisions are made", "decisions.md"),
    ("Reducing noise", "noise.md"),
    ("Capacity under an SLO", "capacity.md"),
    ("Command reference", "cli.md"),
    ("Error catalogue", "errors.md"),
    ("Site", "site.md"),
)
GUIDE_FILES = ("examples/publish.yml",)
GUIDE_DIR = "guide"


def guide_folder() -> Path:
    """Where the guide's pages are: generator/guide/ in an installed package, docs/guide beside it in a checkout.

    pyproject.toml maps the package `generator.guide` to docs/guide, so a wheel holds the pages
    as generator/guide/; an editable install runs the checkout's generator/, which has no guide/
    (setuptools' editable finder does not map a subpackage without an __init__.py).
    """
    package = Path(__file__).resolve().parent.parent
    installed = package / GUIDE_DIR
    return installed if installed.is_dir() else package.parent / "docs" / "guide"


def add_guide(files: Files, config: MkDocsConfig) -> None:
    """The guide's pages under guide/, from the package; a campaign's own guide/ page of a name wins."""
    guide = guide_folder()
    for name in [page for _title, page in GUIDE_PAGES] + list(GUIDE_FILES):
        path = f"{GUIDE_DIR}/{name}"
        source = guide.joinpath(*name.split("/"))
        if files.get_file_from_path(path) is None and source.is_file():
            files.append(File.generated(config, path, content=source.read_bytes()))


def guide_nav(nav: list[NavItem]) -> list[NavItem]:
    """The navigation with a Guide section at the end, unless it lists guide pages already."""
    if any(p.startswith(GUIDE_DIR + "/") for p in _paths(nav)):
        return nav
    return [*nav, {"Guide": [{title: f"{GUIDE_DIR}/{page}"} for title, page in GUIDE_PAGES]}]


_ROOT_ABSOLUTE = re.compile(r'(\s(?:href|src)=")/(?!/)')


def relative_404(path: Path) -> None:
    """The 404 page's links relative to the site root it sits in, as every other page's are.

    Without `site_url`, mkdocs writes them from "/", so the page is unstyled and its links dead
    when the site is opened from disk (file://) or served under a sub-path. With `site_url` set,
    its path is right and the page is left as mkdocs wrote it.
    """
    from generator.base.fsio import atomic_write

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return
    fixed = _ROOT_ABSOLUTE.sub(r"\1./", text).replace('"base": "/"', '"base": "."')
    if fixed != text:
        atomic_write(path, fixed)


def publish_raw_files(project: Project, files: Files, config: MkDocsConfig) -> None:
    """The kept raw benchmark files, at results/raw/ beside the pages, so each result links its evidence."""
    from generator.views.evidence import published_raw_files
    from generator.views.paths import docs_root

    docs = Path(config.docs_dir).resolve()
    try:
        folder = (project.root / docs_root(project)).resolve().relative_to(docs).as_posix()
    except ValueError:
        return
    prefix = "" if folder == "." else folder + "/"
    for path, data in published_raw_files(project).items():
        # A file of that name in docs/ wins, like the stylesheet; it is the campaign's own.
        if files.get_file_from_path(prefix + path) is None:
            files.append(File.generated(config, prefix + path, content=data))


def publish_journal_files(analysis: Analysis, files: Files, config: MkDocsConfig) -> None:
    """The runner's journals the record pages link, and each plan's kept outputs and logs, at their
    paths under the docs folder (results/journal/...), so "How it was run" links them on the site."""
    from generator.views.journal import published_journal_files
    from generator.views.paths import docs_root

    docs = Path(config.docs_dir).resolve()
    try:
        folder = (analysis.project.root / docs_root(analysis.project)).resolve().relative_to(docs).as_posix()
    except ValueError:
        return
    prefix = "" if folder == "." else folder + "/"
    for path, data in published_journal_files(analysis).items():
        if files.get_file_from_path(prefix + path) is None:
            files.append(File.generated(config, prefix + path, content=data))


# A generated chart as markdown renders it (the link already made relative by mkdocs).
_CHART_IMG = re.compile(
    r'<img alt="(?P<alt>[^"<>]*)" src="(?P<src>(?:\.\./)*(?:[A-Za-z0-9_.-]+/)*plots/[a-z0-9-]+\.svg)" />'
)


def embed_charts(html: str, page_uri: str = "", files: Files | None = None) -> str:
    """Each chart inlined in the page, inside a link that opens it full size.

    Inlined rather than shown as an <img>: the page's palette (Material's toggle) then reaches
    the chart's colours, its <title> tooltips (a cut label's full text) show on hover, and its
    text can be selected and searched. The link opens the SVG file on its own, full size, where
    it follows the reader's system scheme. Done on the built HTML, after mkdocs has made the
    link relative, so the markdown on disk keeps a plain image that every builder and forge
    shows. A chart whose file cannot be read stays an <img>, inside the same link. A chart with
    a narrow variant (`X.narrow.svg`, drawn for a phone's column) carries it in a <template>.
    """

    def inline(m: re.Match[str]) -> str:
        src = m["src"]
        uri = posixpath.normpath(posixpath.join(posixpath.dirname(page_uri), src))
        svg = _chart_svg(uri, files)
        body = svg if svg is not None else m[0]
        # The variant drawn for a phone's column, inert until improvements.js swaps it in on a
        # narrow screen (and back on a wide one): only one of the two is ever in the page.
        narrow = _chart_svg(uri.removesuffix(".svg") + ".narrow.svg", files) if svg is not None else None
        if narrow is not None:
            body += f'<template class="improvements-narrow">{narrow}</template>'
        return f'<a class="improvements-chart" href="{src}" title="Open the chart full size">{body}</a>'

    return _CHART_IMG.sub(inline, html)


def _chart_svg(uri: str, files: Files | None) -> str | None:
    """A generated chart's <svg> element, without its XML declaration and generated-file comment."""
    if files is None:
        return None
    file = files.get_file_from_path(uri)
    if file is None:
        return None
    try:
        text = file.content_string
    except (OSError, UnicodeDecodeError, TypeError, ValueError):
        return None
    start = text.find("<svg")
    return text[start:].strip() if start >= 0 else None


def repo_root(config: MkDocsConfig) -> Path:
    """The campaign repository: the folder of mkdocs.yml, which must hold improvements/campaign.yaml."""
    if not config.config_file_path:
        raise PluginError("the improvements plugin needs an mkdocs.yml in the campaign repository")
    root = Path(config.config_file_path).resolve().parent
    if not (root / "improvements" / "campaign.yaml").is_file():
        raise PluginError(
            f"{root} has no improvements/campaign.yaml; mkdocs.yml must sit at the root of a campaign repository"
        )
    return root


def render_for_site(root: Path, build_cache: BuildCache | None = None, *, keep: bool = False) -> Analysis:
    """Render every generated page into docs/ (the one render path) and return the analysis.

    Invalid records fail the mkdocs build with the same positioned lines `improvements check`
    prints, and no traceback: mkdocs prints a PluginError's text as an error and aborts.
    """
    from generator.output import render

    try:
        result = render.build(root, build_cache=build_cache, keep=keep)
    except ProblemsFound as exc:
        raise PluginError("invalid records, nothing rendered:\n" + format_report(exc.report, "text").rstrip()) from None
    return result.analysis


def base_nav(project: Project, config: MkDocsConfig) -> list[NavItem]:
    """The navigation when mkdocs.yml has none: home, summary, blockers and tags (the tier sections follow)."""
    from generator.views.paths import docs_root

    docs = Path(config.docs_dir).resolve()
    try:
        folder = (project.root / docs_root(project)).resolve().relative_to(docs).as_posix()
    except ValueError:
        folder = "."
    prefix = "" if folder == "." else folder + "/"
    pages = [("Home", "index.md"), ("Summary", "summary.md"), ("Blockers", "blockers.md"), ("Timeline", "timeline.md")]
    nav: list[NavItem] = [{title: prefix + page} for title, page in pages]
    if has_plugin(config, "tags"):
        nav.append({"Tags": TAGS_PAGE})
    return nav


def tier_nav(project: Project, config: MkDocsConfig, nav_after: str, section_size: int) -> list[NavItem] | None:
    """mkdocs.yml's nav with a "Tier N" section per tier inserted after `nav_after`.

    Records already listed in mkdocs.yml's nav by hand keep their place and are not repeated.
    With no nav in mkdocs.yml, mkdocs lays the pages out from the folders and this does nothing.
    """
    nav: list[NavItem] | None = config.nav
    if nav is None:
        return None
    docs = Path(config.docs_dir).resolve()
    try:
        series_dir = project.docs_dir.resolve().relative_to(docs).as_posix()
    except ValueError:
        raise PluginError(
            f"the series folder {project.docs_dir} (docs_dir in campaign.yaml) is not inside "
            f"mkdocs' docs_dir {docs}; the site cannot show it"
        ) from None
    listed = set(_paths(nav))
    sections: list[NavItem] = []
    for tier in (1, 2, 3):
        recs = [r for r in project.records if r.record.tier == tier]
        entries = [_entry(project, r, series_dir) for r in sorted(recs, key=lambda r: (r.number, r.slug))]
        entries = [e for e in entries if next(iter(e.values())) not in listed]
        if entries:
            sections.append({f"Tier {tier}": _chunk(entries, section_size)})
    at = next((i + 1 for i, item in enumerate(nav) if nav_after in _paths([item])), len(nav))
    return [*nav[:at], *sections, *nav[at:]]


def _entry(project: Project, rec: RecordFile, series_dir: str) -> dict[str, str]:
    path = f"{series_dir}/{project.output_name(rec)}" if series_dir != "." else project.output_name(rec)
    # The theme prints nav titles as HTML, unescaped: a title with `<img onerror=...>` would run.
    return {f"{rec.number:02d} · {html.escape(rec.record.title)}": path}


def _chunk(entries: list[dict[str, str]], size: int) -> list[NavItem]:
    if size < 1 or len(entries) <= size:
        return list(entries)
    out: list[NavItem] = []
    for start in range(0, len(entries), size):
        part = entries[start : start + size]
        first, last = (next(iter(e)).split(" ", 1)[0] for e in (part[0], part[-1]))
        out.append({first if first == last else f"{first}–{last}": list(part)})
    return out


def _paths(items: list[NavItem]) -> Iterator[str]:
    for item in items:
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            for value in item.values():
                if isinstance(value, str):
                    yield value
                elif isinstance(value, list):
                    yield from _paths(value)


def _always() -> bool:
    return True
