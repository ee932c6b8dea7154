"""Reference links as the site's strict build reads them, checked by `check` against the record.

mkdocs resolves a relative link from the page it is on, and in strict mode (which `build
--site` uses) a link to a page that does not exist, a folder, or a path outside the docs is
an error, reported against the generated page. The same rule here reports it against the
record's own `references[N].url`, before anything is built; an anchor on a relative link is
refused, since whether it exists shows only in the rendered page. A full http(s) URL is never
checked (the site does not either); an absolute path (`/x`) is refused, since the site
cannot tell where it leads.

A result's earlier attempt names a log the site publishes and the page links
(`attempt_problems`): it must be a file inside the campaign's folder.
"""

from __future__ import annotations

import posixpath
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlsplit

from generator.base.problems import Problem, rel
from generator.base.read import Path_, Positions
from generator.model.record import Reference
from generator.model.result import Result
from generator.project.load import Project


def reference_problems(project: Project) -> list[Problem]:
    """Every reference of the campaign and its records whose link the strict site build refuses."""
    series = PurePosixPath(project.campaign.docs_dir)
    docs = series.parent if len(series.parts) > 1 else series
    pages = {str(series / project.output_name(rec)) for rec in project.records}
    pages |= {str(docs / name) for name in ("index.md", "summary.md", "blockers.md")}
    problems: list[Problem] = []
    cf = project.campaign_file
    places: list[tuple[str, Positions, list[Reference], PurePosixPath]] = [
        (rel(cf.path, project.root), cf.positions, list(project.campaign.references), docs)
    ]
    places += [(rel(r.path, project.root), r.positions, list(r.record.references), series) for r in project.records]
    for shown, positions, references, page_dir in places:
        for i, ref in enumerate(references):
            why = _refused(ref.url, page_dir, docs, pages, project)
            if why is not None:
                line, col = positions.of(("references", i, "url"))
                hint = f"link a page under {docs}/ relative to {page_dir}/, or give a full https:// URL"
                problems.append(Problem(shown, line, col, "invalid-value", f"`references[{i}].url` {why}", hint))
    return problems


def _refused(url: str, page_dir: PurePosixPath, docs: PurePosixPath, pages: set[str], project: Project) -> str | None:
    parts = urlsplit(url.strip())
    if parts.scheme or parts.netloc:
        return None
    path = unquote(parts.path)
    if not path:
        return None  # only a fragment or a query: the page itself
    if path.startswith("/"):
        return f"`{url}` is an absolute path, which the site's strict build refuses"
    target = posixpath.normpath(posixpath.join(str(page_dir), path))
    inside = target == str(docs) or target.startswith(str(docs) + "/")
    if not inside:
        return f"`{url}` leads outside {docs}/, which the site's strict build refuses"
    if target not in pages and (path[-1:] == "/" or not (project.root / target).is_file()):
        return f"`{url}` points at `{target}`, which is not a page or file of the site (the strict build refuses it)"
    if parts.fragment:
        # The strict build checks anchors against the page as rendered, which `check` cannot
        # see; a heading's anchor also changes when its words do.
        return f"`{url}` names an anchor (`#{parts.fragment}`), which only the site build can check; link the page"
    return None


def attempt_problems(results: list[Result], root: Path, where: Path_, pos: Positions, shown: str) -> list[Problem]:
    """Each earlier attempt's log is a file inside the campaign's folder: the site publishes it."""
    problems = []
    for i, result in enumerate(results):
        for k, attempt in enumerate(result.earlier_attempts):
            line, col = pos.of((*where, i, "earlier_attempts", k, "log"))
            candidate = Path(attempt.log)
            try:
                full = (root / candidate).resolve()
                inside = full.is_relative_to(root.resolve())
                exists = full.is_file()
            except (OSError, RuntimeError, ValueError):  # a symlink loop, a name too long, a NUL
                inside, exists = True, False
            if candidate.is_absolute() or ".." in candidate.parts or not inside:
                problems.append(
                    Problem(
                        shown,
                        line,
                        col,
                        "path-outside",
                        f"earlier attempt's log `{attempt.log}` leaves the campaign's folder",
                        "keep the log in the campaign's folder, such as attempts/first-run.log",
                    )
                )
            elif not exists:
                problems.append(
                    Problem(
                        shown,
                        line,
                        col,
                        "missing-attempt-log",
                        f"earlier attempt's log `{attempt.log}` does not exist",
                        "give the path of the log, relative to the campaign's folder",
                    )
                )
    return problems
