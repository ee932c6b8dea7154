"""Records to markdown: the series pages, the home page, the summary and the blockers page.

This is the one render path: `improvements build`, the mkdocs plugin and `serve` all call
`build` (or `render_files`). Python prepares what each page shows; the Jinja2 templates only
lay it out. Every string from a record goes through `md_escape` on its way out (the
environment's `finalize`), so record text cannot inject HTML that runs on the site.
"""

from __future__ import annotations

import html
import posixpath
import re
import shlex
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote as url_quote

import jinja2
from jinja2.sandbox import SandboxedEnvironment
from markupsafe import Markup

from generator import compare, metrics
from generator.load import Project, RecordFile, require_project
from generator.model import Attempt, Blocker, Goal, Result
from generator.outputs import WriteResult, header, write_outputs, yaml_header
from generator.problems import Problem, ProblemsFound, Report, rel

PACKAGE_TEMPLATES = Path(__file__).resolve().parent / "templates"
TEMPLATE_NAMES = ("record.md.j2", "home.md.j2", "summary.md.j2", "blockers.md.j2")
MANIFEST_NAME = ".improvements-manifest.json"


# --- markdown safety --------------------------------------------------------------------------

# A code span as Python-Markdown finds one: a run of backticks not after a backslash, content,
# the same run. Markdown shows its content literally and escapes it itself, so it is left as
# written. A span stays on one line: a line inside it could start a heading, a rule, a list or
# an HTML block, and markdown would end the span there and read the rest as raw HTML. Outside
# spans every backtick is escaped too, so markdown cannot pair one with a span's opening run
# and read that span's content as text; when this pattern and markdown disagree, the text is
# escaped, never the other way round.
_CODE_SPAN = re.compile(r"(?<![`\\])(`+)(?!`)([^\n]+?)(?<!`)\1(?!`)")
# `<`, `>`, `&` stop raw HTML and entities; brackets stop links (`[x](javascript:...)`),
# footnotes and abbreviations; braces stop attribute lists (`{: onclick=...}`); a backslash
# cannot then escape a backtick to end a code span early. Entities work in every flavour.
_ENTITIES = {
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;",
    "[": "&#91;",
    "]": "&#93;",
    "{": "&#123;",
    "}": "&#125;",
    "\\": "&#92;",
    "`": "&#96;",
}
_ESCAPE_RE = re.compile("[&<>\\[\\]{}\\\\`]")


def _escape_plain(text: str, *, pipes: bool = False) -> str:
    out = _ESCAPE_RE.sub(lambda m: _ENTITIES[m.group(0)], text)
    return out.replace("|", "&#124;") if pipes else out


def md_escape(text: str, *, pipes: bool = False) -> Markup:
    """User text made safe for markdown: no raw HTML, links or attributes; code spans kept.

    With `pipes`, a `|` outside code spans cannot split a table row either.
    """
    out: list[str] = []
    pos = 0
    for m in _CODE_SPAN.finditer(text):
        out.append(_escape_plain(text[pos : m.start()], pipes=pipes))
        out.append(_span(m.group(0), m.group(2), pipes=pipes))
        pos = m.end()
    out.append(_escape_plain(text[pos:], pipes=pipes))
    return Markup("".join(out))


# What a code span may hold and still be passed to markdown as written. Python-Markdown reads
# raw HTML before it finds code spans, and with some text around a span (an unfinished `&#`)
# it takes a tag inside the span as HTML, moving the span's end; so does a pairing of
# backticks that differs from this module's. A span holding any of these is written as HTML
# instead, its content escaped.
_SPAN_UNSAFE = re.compile(r"[&<>\[\]{}\\|]")
_CODE_ENTITIES = {**_ENTITIES, "|": "&#124;", "*": "&#42;", "_": "&#95;", "~": "&#126;", "^": "&#94;", "=": "&#61;"}
_CODE_ESCAPE_RE = re.compile("[" + re.escape("".join(_CODE_ENTITIES)) + "]")


def _span(span: str, content: str, *, pipes: bool = False) -> str:
    """A code span as markdown, or as escaped HTML when its content could be read as more."""
    if not _SPAN_UNSAFE.search(content if pipes else content.replace("|", "")):
        return span
    # Markdown drops one space on each side of a span's content when both are there.
    if len(content) > 2 and content.startswith(" ") and content.endswith(" ") and content.strip():
        content = content[1:-1]
    return "<code>" + _CODE_ESCAPE_RE.sub(lambda m: _CODE_ENTITIES[m.group(0)], content) + "</code>"


def _text(value: Any) -> str:
    if isinstance(value, Markup):
        return str(value)
    return str(md_escape(str(value)))


def inline(value: Any) -> Markup:
    """Escaped text on one line, for list items and headings."""
    return Markup(" ".join(_text(value).split()))


def cell(value: Any) -> Markup:
    """Escaped text for a table cell: one line, pipes that do not split the row."""
    if isinstance(value, Markup):
        return Markup(" ".join(str(value).split()))
    return md_escape(" ".join(str(value).split()), pipes=True)


def paragraphs(value: Any, indent: int = 0) -> Markup:
    """Escaped text keeping its paragraphs, indented for an admonition or list item."""
    pad = " " * indent
    lines = _text(value).strip("\n").split("\n")
    return Markup("\n".join((pad + line) if line.strip() else "" for line in lines))


def code(value: Any) -> Markup:
    """Inline code, with a backtick fence longer than any run inside."""
    text = " ".join(str(value).split())
    longest = max((len(r) for r in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return Markup(_span(f"{fence}{pad}{text}{pad}{fence}", f"{pad}{text}{pad}", pipes=True))


def code_block(value: Any, lang: str = "", indent: int = 0) -> Markup:
    """A fenced code block whose fence no line of the content can close."""
    text = str(value).rstrip("\n")
    longest = max((len(r) for r in re.findall(r"^\s*(`{3,})", text, re.M)), default=0)
    fence = "`" * max(3, longest + 1)
    pad = " " * indent
    lines = [f"{fence}{lang}", *text.split("\n"), fence]
    return Markup("\n".join((pad + line) if line else "" for line in lines))


# http(s), or relative with no colon at all, so no scheme (javascript:, data:) can hide in it.
_SAFE_URL = re.compile(r"^(https?://[^\s]+|[^:\s]+)$", re.I)


def safe_url(url: str) -> str | None:
    """The URL when it is http(s) or relative; None for javascript:, data: and other schemes."""
    url = url.strip()
    # The browser decodes entities in an href: `javascript&#58;...` has no colon here but one there.
    if not _SAFE_URL.match(url) or not _SAFE_URL.match(html.unescape(url)):
        return None
    return url_quote(url, safe="/:?#[]@!$&'*+,;=%~.-_")


def link(title: Any, url: str | None) -> Markup:
    shown = inline(title)
    target = safe_url(url) if url else None
    if target is None:
        return shown
    return Markup(f"[{shown}]({target})")


class TemplateFailure(Exception):
    """Raised inside a template for a value it must not print."""


def _finalize(value: Any) -> Any:
    if isinstance(value, Markup):
        return str(value)
    if value is None:
        raise TemplateFailure("a template printed a value that is not set (None); test it with `if` first")
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return compare.fmt_number(value)
    if isinstance(value, int):
        return str(value)
    return str(md_escape(str(value)))


# --- templates ----------------------------------------------------------------------------------


class _PathOutside(jinja2.TemplateNotFound):
    pass


class _Loader(jinja2.BaseLoader):
    """A campaign's `templates/NAME` if present (inside the repository), else the shipped one."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def get_source(self, environment: jinja2.Environment, template: str) -> tuple[str, str, Callable[[], bool]]:
        if "/" in template or "\\" in template or template.startswith("."):
            raise jinja2.TemplateNotFound(template)
        override = self.root / "templates" / template
        path = PACKAGE_TEMPLATES / template
        if override.exists() or override.is_symlink():
            real = override.resolve()
            if not real.is_relative_to(self.root.resolve()):
                raise _PathOutside(str(override))
            path = override
        try:
            source = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise jinja2.TemplateNotFound(f"{template}: {exc}") from None
        return source, str(path), lambda: False


def environment(root: Path) -> jinja2.Environment:
    # Sandboxed: a campaign's override template is text from the repository, like a record,
    # and must not reach Python (`cycler.__init__.__globals__.os.system(...)`) at build time.
    env = SandboxedEnvironment(
        loader=_Loader(root),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        finalize=_finalize,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,
    )
    env.filters.update(
        inline=inline,
        cell=cell,
        paragraphs=paragraphs,
        code=code,
        code_block=code_block,
        link=link,
        number=compare.fmt_number,
        percent=compare.fmt_percent,
        value=compare.fmt_value,
    )
    return env


def _shown_template(root: Path, name: str) -> str:
    # Not `rel`: it resolves symlinks, and a template is named where the user put it.
    override = root / "templates" / name
    return f"templates/{name}" if override.exists() or override.is_symlink() else f"generator/templates/{name}"


def _template_problem(root: Path, name: str, exc: BaseException) -> Problem:
    shown = _shown_template(root, name)
    if isinstance(exc, _PathOutside):
        return Problem(
            shown,
            1,
            1,
            "path-outside",
            f"template `{shown}` resolves outside the repository",
            "keep override templates as regular files under templates/",
        )
    line = 1
    if isinstance(exc, jinja2.TemplateSyntaxError) and exc.lineno:
        line = exc.lineno
        if exc.name:
            shown = _shown_template(root, exc.name)
    else:
        # Jinja rewrites tracebacks so that template frames carry the template's own lines.
        for frame in reversed(traceback.extract_tb(exc.__traceback__)):
            frame_name = Path(frame.filename).name
            if frame_name.endswith(".j2") and frame.lineno:
                line = frame.lineno
                shown = _shown_template(root, frame_name)
                break
    message = getattr(exc, "message", None) or str(exc)
    return Problem(
        shown,
        line,
        1,
        "bad-template",
        f"template `{name}`: {message}",
        "the shipped templates in generator/templates/ use every variable a page has",
    )


# --- page contexts --------------------------------------------------------------------------------


def docs_root(project: Project) -> PurePosixPath:
    """The docs folder the home, summary and blockers pages go in: the series folder's parent."""
    series = PurePosixPath(project.campaign.docs_dir)
    return series.parent if len(series.parts) > 1 else series


def series_dir(project: Project) -> PurePosixPath:
    return PurePosixPath(project.campaign.docs_dir)


def _relative(target: PurePosixPath, from_dir: PurePosixPath) -> str:
    return posixpath.relpath(str(target), str(from_dir))


_VAR_RE = re.compile(r"^\$(\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)$")


def _shell_word(token: str) -> str:
    # An environment variable stays unquoted so the shell still expands it.
    return token if _VAR_RE.match(token) else shlex.quote(token)


def shell_command(tokens: list[str], env: dict[str, str]) -> str:
    """A launch command a shell accepts, one option per line, env vars as a prefix."""
    lines: list[list[str]] = [[f"{k}={shlex.quote(v)}" for k, v in env.items()]]
    started = False
    for token in tokens:
        if token.startswith("--") and started:
            lines.append([])
        started = True
        lines[-1].append(_shell_word(token))
    return " \\\n    ".join(" ".join(line) for line in lines)


@dataclass
class MetricRow:
    name: str
    label: str
    unit: str
    higher_is_better: bool
    value: str
    baseline: str | None
    delta: compare.Delta | None
    change: str | None


@dataclass
class ResultView:
    result: Result
    rows: list[MetricRow]
    notes: list[str]
    no_baseline: bool
    concurrency: str
    request_rate: str | None


def _change_text(d: compare.Delta, higher_is_better: bool) -> str:
    word = "better" if d.gain_percent > 0 else ("worse" if d.gain_percent < 0 else "no change")
    text = f"{compare.fmt_percent(d.gain_percent)} {word}" if word != "no change" else "0.0%, no change"
    if not higher_is_better and d.change_percent != 0:
        text += f" (raw {compare.fmt_percent(d.change_percent)})"
    if d.within_noise:
        text += ", within noise"
    return text


def result_view(project: Project, result: Result) -> ResultView:
    resolved = compare.result_numbers(project, result)
    # An imported run fills in the load and workload it recorded.
    result = resolved.result
    deltas = resolved.deltas()
    rows: list[MetricRow] = []
    for name, value in resolved.metrics.items():
        metric = metrics.lookup(name)
        base = resolved.baseline.get(name)
        d = deltas.get(name)
        higher = metric.higher_is_better if metric else True
        rows.append(
            MetricRow(
                name=name,
                label=metric.label if metric else name,
                unit=metric.unit if metric else "",
                higher_is_better=higher,
                value=compare.fmt_value(value),
                baseline=compare.fmt_value(base) if base is not None else None,
                delta=d,
                change=_change_text(d, higher) if d is not None else None,
            )
        )
    rate = result.request_rate
    rate_text = None
    if rate is not None:
        rate_text = {"inf": "unlimited", "trace": "trace replay"}.get(
            str(rate), f"{compare.fmt_number(float(rate))} req/s"
        )
    return ResultView(
        result=result,
        rows=rows,
        notes=list(resolved.notes),
        no_baseline=resolved.no_baseline,
        concurrency=str(result.concurrency) if result.concurrency is not None else "not recorded",
        request_rate=rate_text,
    )


@dataclass
class BlockerView:
    anchor: str
    # The definition: the record's own blocker, or the shared one a `ref` points at.
    blocker: Blocker
    ref: str | None
    defined_in: str | None = None
    defined_link: str | None = None
    blockers_link: str = ""
    # This record's own note and attempts (a `ref` may carry both against a shared blocker).
    note: str | None = None
    attempts: list[Attempt] = field(default_factory=list)


def _blocker_anchor(rec: RecordFile, index: int, blocker: Blocker) -> str:
    # Slugs never hold "--", so an unnamed blocker's anchor cannot collide with a named one.
    return f"blocker-{blocker.id}" if blocker.id else f"blocker-{rec.slug}--{index + 1}"


@dataclass
class _Index:
    """Lookups across records, built once per project so pages render in linear time."""

    records: list[RecordFile]
    by_slug: dict[str, RecordFile]
    shared: dict[str, tuple[RecordFile, int, Blocker]]
    refs: dict[str, list[tuple[RecordFile, Blocker]]]
    superseding: dict[str, list[RecordFile]]


_INDEX_ATTR = "_improvements_render_index"


def _index(project: Project) -> _Index:
    cached: _Index | None = getattr(project, _INDEX_ATTR, None)
    if cached is not None and cached.records is project.records:
        return cached
    shared: dict[str, tuple[RecordFile, int, Blocker]] = {}
    refs: dict[str, list[tuple[RecordFile, Blocker]]] = {}
    superseding: dict[str, list[RecordFile]] = {}
    for rec in project.records:
        for j, b in enumerate(rec.record.blockers):
            if b.id and b.id not in shared:
                shared[b.id] = (rec, j, b)
            if b.ref:
                refs.setdefault(b.ref, []).append((rec, b))
        if rec.record.superseded_by:
            superseding.setdefault(rec.record.superseded_by, []).append(rec)
    index = _Index(project.records, project.by_slug(), shared, refs, superseding)
    setattr(project, _INDEX_ATTR, index)
    return index


def _shared(project: Project) -> dict[str, tuple[RecordFile, int, Blocker]]:
    return _index(project).shared


def open_blockers(project: Project, rec: RecordFile) -> list[Blocker]:
    """The record's open blockers, shared ones resolved, each once."""
    shared = _shared(project)
    out: list[Blocker] = []
    seen: set[int] = set()
    for b in rec.record.blockers:
        definition = shared[b.ref][2] if b.ref and b.ref in shared else b
        if definition.status == "open" and id(definition) not in seen:
            seen.add(id(definition))
            out.append(definition)
    return out


def _record_title(rec: RecordFile) -> str:
    return f"{rec.number:02d}. {rec.record.title}"


def record_context(project: Project, rec: RecordFile) -> dict[str, Any]:
    r = rec.record
    here = series_dir(project)
    root_dir = docs_root(project)
    by_slug = _index(project).by_slug
    shared = _shared(project)
    campaign = project.campaign

    def page_link(slug: str) -> dict[str, str]:
        target = by_slug[slug]
        return {"slug": slug, "title": _record_title(target), "link": project.output_name(target)}

    blockers: list[BlockerView] = []
    for j, b in enumerate(r.blockers):
        if b.ref is not None:
            defining, k, definition = shared[b.ref]
            blockers.append(
                BlockerView(
                    anchor=f"blocker-{b.ref}",
                    blocker=definition,
                    ref=b.ref,
                    defined_in=_record_title(defining),
                    defined_link=f"{project.output_name(defining)}#{_blocker_anchor(defining, k, definition)}",
                    blockers_link=_relative(root_dir / "blockers.md", here)
                    + f"#{_blocker_anchor(defining, k, definition)}",
                    note=b.note,
                    attempts=list(b.attempts),
                )
            )
        else:
            anchor = _blocker_anchor(rec, j, b)
            blockers.append(
                BlockerView(
                    anchor=anchor,
                    blocker=b,
                    ref=None,
                    blockers_link=_relative(root_dir / "blockers.md", here) + f"#{anchor}",
                    note=b.note,
                    attempts=list(b.attempts),
                )
            )

    env = {**campaign.baseline.env, **(r.change.env if r.change else {})}
    tokens = _launch_tokens(project, rec)
    return {
        "campaign": campaign,
        "record": r,
        "number": f"{rec.number:02d}",
        "slug": rec.slug,
        "page_id": f"{campaign.series}-{rec.number:02d}",
        "source": rel(rec.path, project.root),
        "tier_text": campaign.tiers[r.tier],
        "engine_version": campaign.engine.version or "not recorded",
        "command": shell_command(tokens, env),
        "own_base_command": bool(r.change and r.change.base_command),
        "blockers": blockers,
        "results": [result_view(project, res) for res in r.results],
        "plots": _plot_views(project, [record_plot_path(project, rec)], here),
        "related": [page_link(s) for s in r.related if s in by_slug],
        "superseded_by": page_link(r.superseded_by) if r.superseded_by and r.superseded_by in by_slug else None,
        "superseding": [page_link(o.slug) for o in _index(project).superseding.get(rec.slug, [])],
        "home_link": _relative(root_dir / "index.md", here),
        "summary_link": _relative(root_dir / "summary.md", here),
        "blockers_link": _relative(root_dir / "blockers.md", here),
    }


def record_dependencies(project: Project, rec: RecordFile) -> list[RecordFile]:
    """The other records a record's page shows something of; keep in step with `record_context`.

    A rebuild reuses a page only while its own file, these records' files and the campaign
    file are unchanged (see `_record_page`).
    """
    index = _index(project)
    r = rec.record
    slugs = [*r.related, *([r.superseded_by] if r.superseded_by else [])]
    out = [index.by_slug[s] for s in slugs if s in index.by_slug]
    out += [index.shared[b.ref][0] for b in r.blockers if b.ref and b.ref in index.shared]
    out += index.superseding.get(rec.slug, [])
    return out


def _record_page(project: Project, rec: RecordFile, render: Callable[[], str | None]) -> str | None:
    """A record's page, from the build cache when nothing it is made from has changed."""
    from generator import cache

    build_cache = cache.active()
    if build_cache is None:
        return render()
    files = build_cache.files
    deps = sorted({(d.path.name, files.get(d.path)) for d in record_dependencies(project, rec)}, key=str)
    parts = (rec.path.name, files.get(rec.path), files.get(project.campaign_file.path), deps)
    if None in parts[:3] or any(key is None for _name, key in deps):
        return render()  # a file that was not loaded through the cache: no key to trust
    if any(res.run or res.baseline_run for res in rec.record.results):
        parts += (_runs_digest(project),)
    return cache.memo("page", parts, render)


def _runs_digest(project: Project) -> str:
    """The imported runs' files, which results that name a run are computed from."""
    from generator import cache

    cached: str | None = project.__dict__.get("_improvements_runs_digest")
    if cached is None:
        folder = project.results_dir / "runs"
        parts: list[Any] = []
        if folder.is_dir():
            for path in sorted(folder.glob("*.json")):
                parts += [path.name, path.read_bytes()]
        cached = project.__dict__["_improvements_runs_digest"] = cache.digest(*parts)
    return cached


def _launch_tokens(project: Project, rec: RecordFile) -> list[str]:
    from generator.model import apply_change

    return apply_change(project.campaign.baseline.command, rec.record.change)


def _goal_current(project: Project, goal: Goal) -> tuple[str | None, str | None]:
    """The goal's current value and where it comes from: as stated, else the baseline's."""
    if goal.current is not None:
        return compare.fmt_value(goal.current), None
    if goal.concurrency is not None:
        for result in project.campaign.baseline.results:
            if result.concurrency == goal.concurrency and goal.metric in result.metrics:
                return compare.fmt_value(result.metrics[goal.metric]), f"baseline result `{result.label}`"
    return None, None


def home_context(project: Project) -> dict[str, Any]:
    campaign = project.campaign
    root_dir = docs_root(project)
    goals = []
    for g in campaign.goals:
        metric = metrics.lookup(g.metric)
        direction = g.direction or ("above" if metric is None or metric.higher_is_better else "below")
        current, current_from = _goal_current(project, g)
        goals.append(
            {
                "goal": g,
                "label": metric.label if metric else g.metric,
                "unit": metric.unit if metric else "",
                "direction": direction,
                "target": compare.fmt_number(g.target),
                "current": current,
                "current_from": current_from,
                "concurrency": str(g.concurrency) if g.concurrency is not None else "not recorded",
            }
        )
    counts = {t: sum(1 for r in project.records if r.record.tier == t) for t in (1, 2, 3)}
    return {
        "campaign": campaign,
        "engine_version": campaign.engine.version or "not recorded",
        "command": shell_command(shlex.split(campaign.baseline.command), dict(campaign.baseline.env)),
        "baseline_results": [result_view(project, res) for res in campaign.baseline.results],
        "goals": goals,
        "tier_counts": counts,
        "record_count": len(project.records),
        "summary_link": _relative(root_dir / "summary.md", root_dir),
        "blockers_link": _relative(root_dir / "blockers.md", root_dir),
    }


def summary_context(project: Project) -> dict[str, Any]:
    from generator.summary import blockers_text, gain_text, summary_rows

    root_dir = docs_root(project)
    rows = []
    by_slug = project.by_slug()
    for row in summary_rows(project):
        rec = by_slug[row["slug"]]
        rows.append(
            {
                **row,
                "link": _relative(series_dir(project) / project.output_name(rec), root_dir),
                "gain_text": gain_text(row),
                "blockers_text": blockers_text(row),
            }
        )
    from generator.plots import summary_plot_paths

    charts = _plot_views(project, summary_plot_paths(project), root_dir)
    return {"campaign": project.campaign, "rows": rows, "plots": charts}


def record_plot_path(project: Project, rec: RecordFile) -> str:
    from generator.plots import record_plot_path as path

    return path(project, rec)


def _plot_views(project: Project, paths: list[str] | tuple[str, ...], page_dir: PurePosixPath) -> list[dict[str, str]]:
    """The charts among `paths` that the data allows, as image links relative to the page."""
    from generator.plots import plots

    charts = {p.path: p for p in plots(project)}
    return [
        {"src": _relative(PurePosixPath(path), page_dir), "alt": charts[path].alt} for path in paths if path in charts
    ]


def blockers_context(project: Project) -> dict[str, Any]:
    root_dir = docs_root(project)
    here = series_dir(project)
    entries = []
    for rec in project.records:
        for j, b in enumerate(rec.record.blockers):
            if b.ref is not None:
                continue
            anchor = _blocker_anchor(rec, j, b)
            # The defining record and every record that points at it, each once, in series order.
            affects: list[tuple[RecordFile, Blocker]] = [(rec, b)]
            seen = {id(rec)}
            for other, ref in _index(project).refs.get(b.id or "", []):
                if id(other) not in seen:
                    seen.add(id(other))
                    affects.append((other, ref))
            affects.sort(key=lambda pair: pair[0].number)
            entries.append(
                {
                    "anchor": anchor,
                    "blocker": b,
                    "record": _record_title(rec),
                    "record_link": _relative(here / project.output_name(rec), root_dir) + f"#{anchor}",
                    "affects": [
                        {
                            "title": _record_title(o),
                            "link": _relative(here / project.output_name(o), root_dir),
                            "status": o.record.status,
                            "attempts": list(entry.attempts),
                            "note": entry.note if entry is not b else None,
                        }
                        for o, entry in affects
                    ],
                }
            )
    return {"campaign": project.campaign, "entries": entries}


# --- rendering ------------------------------------------------------------------------------------


def _front_matter(source: str, tags: list[str]) -> str:
    lines = ["---", yaml_header(source)]
    if tags:
        lines.append("tags:")
        lines += [f"  - {t}" for t in tags]
    else:
        lines.append("tags: []")
    lines.append("---")
    return "\n".join(lines) + "\n\n"


def _normalise(text: str) -> str:
    # Templates may leave runs of blank lines; markdown does not care, diffs do.
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.strip("\n") + "\n"


def render_files(project: Project) -> dict[str, str]:
    """Every generated markdown file, keyed by posix path relative to the repository root."""
    env = environment(project.root)
    report = Report()
    out: dict[str, str] = {}

    def render(name: str, context: dict[str, Any]) -> str | None:
        try:
            return env.get_template(name).render(context)
        except (jinja2.TemplateError, TemplateFailure) as exc:
            report.add(_template_problem(project.root, name, exc))
            return None

    for rec in project.records:

        def page(rec: RecordFile = rec) -> str | None:
            body = render("record.md.j2", record_context(project, rec))
            if body is None:
                return None
            return _front_matter(rel(rec.path, project.root), list(rec.record.tags)) + _normalise(body)

        text = _record_page(project, rec, page)
        if text is None:
            break
        out[str(series_dir(project) / project.output_name(rec))] = text
    campaign_source = rel(project.campaign_file.path, project.root)
    pages = [
        ("index.md", "home.md.j2", home_context, campaign_source),
        ("summary.md", "summary.md.j2", summary_context, "the records in improvements/"),
        ("blockers.md", "blockers.md.j2", blockers_context, "the records in improvements/"),
    ]
    for filename, template, make_context, source in pages:
        if not report.ok:
            break
        body = render(template, make_context(project))
        if body is not None:
            out[str(docs_root(project) / filename)] = header(source) + "\n\n" + _normalise(body)
    if not report.ok:
        raise ProblemsFound(report)
    from generator.plots import plot_files

    out.update(plot_files(project))
    return dict(sorted(out.items()))


@dataclass
class BuildResult:
    project: Project
    files: dict[str, str]
    written: list[str]
    unchanged: list[str]
    removed: list[str]
    released: list[str]

    @property
    def changed(self) -> bool:
        return bool(self.written or self.removed)


def build(root: Path) -> BuildResult:
    """Load, render and write the campaign at `root`; ProblemsFound (nothing written) on any error."""
    from generator import cache

    # Unchanged records, pages and charts come from .improvements-cache/, keyed by content.
    build_cache = cache.BuildCache(root)
    with cache.activate(build_cache):
        project = require_project(root)
        files = render_files(project)
        managed = sorted({str(docs_root(project)), str(series_dir(project))})
        result: WriteResult = write_outputs(
            project.root, dict(files), managed, manifest=str(docs_root(project) / MANIFEST_NAME)
        )
        build_cache.save()
    return BuildResult(project, files, result.written, result.unchanged, result.removed, result.released)
