"""Where each generated file goes, and links between them.

Posix paths relative to the repository root; the pages link to each other relative to
their own folder, so the series reads the same on the site and on a forge.
"""

from __future__ import annotations

import functools
import posixpath
from dataclasses import dataclass
from pathlib import PurePosixPath
from posixpath import join as pjoin

from generator.project.load import Project, RecordFile

MANIFEST_NAME = ".improvements-manifest.json"

# Each `{{ ... }}` reference a page model's (or a piece's) text quotes, with the text the prose
# filters fill in for it (`page_keys.keyed`). Here, below every view that makes a model.
Figures = tuple[tuple[str, str | None], ...]


@dataclass(frozen=True)
class ChartFile:
    """A chart as a file the build writes: where (posix, relative to the repository root), its alt
    text (the chart's own description) and its text."""

    path: str
    alt: str
    svg: str


def chart_file(path: str, svg: str) -> ChartFile:
    """A drawn chart as its file: the XML declaration, then our marker (an SVG cannot start with a comment)."""
    from generator.base.generated import svg_header
    from generator.charts import description

    return ChartFile(path, description(svg), f'<?xml version="1.0" encoding="utf-8"?>\n{svg_header()}\n{svg}')


@dataclass(frozen=True)
class ChartLink:
    """A chart drawn for a page: its path relative to the page and its alt text."""

    src: str
    alt: str


def docs_root(project: Project) -> PurePosixPath:
    """The docs folder the home, summary and blockers pages go in: the series folder's parent."""
    series = PurePosixPath(project.campaign.docs_dir)
    return series.parent if len(series.parts) > 1 else series


def series_dir(project: Project) -> PurePosixPath:
    return PurePosixPath(project.campaign.docs_dir)


def relative(target: PurePosixPath, from_dir: PurePosixPath) -> str:
    return _relpath(str(target), str(from_dir))


# Every page links to the same few folders: a third of a page model's time was spent here.
@functools.lru_cache(maxsize=4096)
def _relpath(target: str, from_dir: str) -> str:
    return posixpath.relpath(target, from_dir)


def record_link(project: Project, rec: RecordFile, from_dir: PurePosixPath) -> str:
    """A record's page linked from the folder `from_dir`: `relative(series_dir(project) / name, from_dir)`.

    The series folder's link is worked out once and the page's name put after it: the listing
    pages link every record, and a path made and resolved for each was a fifth of their models.
    """
    # `relpath` normalises both, so the folder as configured links as its path would.
    folder = _relpath(project.campaign.docs_dir, str(from_dir))
    name = project.output_name(rec)
    return name if folder == "." else f"{folder}/{name}"


def record_page_path(project: Project, rec: RecordFile) -> str:
    return str(series_dir(project) / project.output_name(rec))


def record_plot_path(project: Project, rec: RecordFile) -> str:
    return pjoin(project.campaign.docs_dir, "plots", f"{rec.slug}.svg")


def strip_path(project: Project, rec: RecordFile, index: int) -> str:
    """The strip chart of a record's result (by its index): every repetition of both sides."""
    return pjoin(project.campaign.docs_dir, "plots", f"{rec.slug}-result-{index + 1}-strip.svg")


def variant_strip_path(project: Project, rec: RecordFile, variant: int, index: int) -> str:
    """The strip chart of a variant's result; "--" keeps it apart from every record's own (slugs never hold it)."""
    return pjoin(project.campaign.docs_dir, "plots", f"{rec.slug}--variant-{variant + 1}-result-{index + 1}-strip.svg")


def summary_plot_paths(project: Project) -> tuple[str, str]:
    root = str(docs_root(project))
    return pjoin(root, "plots", "summary-gains.svg"), pjoin(root, "plots", "frontier.svg")
