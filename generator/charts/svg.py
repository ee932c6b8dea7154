"""The Jinja environment of the chart templates, and layout pieces every chart shares."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import jinja2
from markupsafe import Markup, escape

from generator.charts.text import BOLD, chart_id, fit, one_line, px, text_width

TEMPLATES = Path(__file__).resolve().parent.parent / "templates" / "charts"

SIZE = 12  # font size of labels, px
SMALL = 11  # font size of values, ticks and notes, px
HEADING = 14
MARGIN = 10
HEADING_LINES = 4  # a title longer than this many lines is cut on the last

WIDE = 720  # the width a chart is drawn at for a page's column
NARROW = 340  # for a phone's column (390 px less the page's margins): text stays at its size

# The width the charts drawn inside `drawn_at` take when their caller names none. A context
# variable rather than a parameter through every view that draws one: a build draws each chart
# twice, wide and narrow, through the same views (`output.render`), and the variable is set
# only for the duration of that second pass, never kept between calls.
_WIDTH: ContextVar[int] = ContextVar("chart_width", default=WIDE)


@contextmanager
def drawn_at(width: int) -> Iterator[None]:
    """Charts drawn inside take `width` unless told otherwise."""
    token = _WIDTH.set(width)
    try:
        yield
    finally:
        _WIDTH.reset(token)


def chart_width(width: int | None) -> int:
    return width if width is not None else _WIDTH.get()


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    # Autoescaped: every label comes from a user's record and must come out as text.
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        auto_reload=False,
    )
    env.filters["px"] = px
    env.globals.update(hwhisker=hwhisker, vwhisker=vwhisker)
    return env


def render(template: str, **context: object) -> str:
    return environment().get_template(template).render(**context)


@dataclass(frozen=True)
class Text:
    """A text fitted to its room: `shown` is drawn, `full` goes into a <title> when cut."""

    x: float
    y: float
    shown: str
    full: str
    anchor: str = "start"
    cls: str = "ink"

    @property
    def cut(self) -> bool:
        return self.shown != self.full

    def __html__(self) -> str:
        # Written here rather than in a macro: a chart has dozens of texts, and a Jinja macro
        # call per text made a record chart several times slower. Escaped all the same.
        element = (
            f'<text x="{px(self.x)}" y="{px(self.y)}" text-anchor="{self.anchor}" class="{self.cls}">'
            f"{escape(self.shown)}</text>"
        )
        if self.shown == self.full:
            return element
        return f"<g><title>{escape(self.full)}</title>{element}</g>"


def fitted(text: str, x: float, y: float, room: float, size: float, anchor: str = "start", cls: str = "ink") -> Text:
    full = one_line(text)
    return Text(x, y, fit(full, room, size), full, anchor, cls)


@dataclass(frozen=True)
class LegendItem:
    x: float
    y: float
    symbol: str
    text: Text


def legend(entries: list[tuple[str, str]], top: float, width: float) -> tuple[Markup, float]:
    """Legend entries (symbol, label) in rows of their own above the plot: markup and height."""
    return _legend(tuple(entries), top, width)


# Charts of one kind mostly share a legend; drawing it once per distinct legend saved a fifth
# of a record chart's time (a macro call per symbol).
@lru_cache(maxsize=256)
def _legend(entries: tuple[tuple[str, str], ...], top: float, width: float) -> tuple[Markup, float]:
    items: list[LegendItem] = []
    x, y, row = float(MARGIN), top, 18.0
    for symbol, label in entries:
        room = width - 2 * MARGIN - 22
        shown = fit(one_line(label), room, SMALL)
        w = 22 + text_width(shown, SMALL) + 16
        if x > MARGIN and x + w > width - MARGIN:
            x, y = MARGIN, y + row
        items.append(LegendItem(x, y, symbol, Text(x + 22, y + 4, shown, one_line(label), cls="ink small")))
        x += w
    markup = Markup(environment().get_template("_legend.svg.j2").render(items=items))
    return markup, (y - top + row if items else 0)


def heading_lines(title: str, width: float) -> list[str]:
    """The heading on as many lines as it needs, up to `HEADING_LINES`, broken between words; the
    last cut with an ellipsis only past that (the full title is the <title>). A narrow chart
    (a phone's) takes more lines for the same title rather than cutting it. Measured as bold
    (`BOLD`)."""
    room, size = width - 2 * MARGIN, HEADING * BOLD
    words = one_line(title).split(" ")
    lines: list[str] = []
    while words and len(lines) < HEADING_LINES - 1:
        line: list[str] = []
        while words and text_width(" ".join([*line, words[0]]), size) <= room:
            line.append(words.pop(0))
        if not line:  # one word wider than the chart
            break
        lines.append(" ".join(line))
    if words:
        lines.append(fit(" ".join(words), room, size))
    return lines


def heading_top(title: str, width: float) -> float:
    """Where the legend starts: below the heading's one or two lines."""
    return TOP + (len(heading_lines(title, width)) - 1) * (HEADING + 4)


def frame(cid: str, title: str, desc: str, width: float) -> dict[str, object]:
    """The context every template's frame needs: ids, accessible title and description, heading."""
    # A narrow variant keeps the wide one's ids: the page holds one of the two at a time, the
    # other inert in a <template> (site.plugin), so links and styles find whichever is shown.
    ident = chart_id(cid)
    lines = heading_lines(title, width)
    texts = [
        Text(MARGIN, MARGIN + HEADING + i * (HEADING + 4), line, line, cls="ink heading")
        for i, line in enumerate(lines)
    ]
    markup = "".join(t.__html__() for t in texts)
    if " ".join(lines) != one_line(title):
        markup = f"<g><title>{escape(one_line(title))}</title>{markup}</g>"
    heading = Markup(markup)
    return {
        "id": ident,
        "style": style(ident),
        "title": one_line(title),
        "desc": one_line(desc),
        "heading": heading,
        "width": width,
    }


def style(ident: str) -> Markup:
    """The chart's style sheet, scoped to its id (ids are letters, digits, - and _ only)."""
    # Rendered once and specialised by replacement: a render per chart cost a third of a record chart.
    return Markup(_style_sheet().replace(_PLACEHOLDER, ident))


_PLACEHOLDER = "chart-id-placeholder"


@lru_cache(maxsize=1)
def _style_sheet() -> str:
    return environment().get_template("_style.css.j2").render(id=_PLACEHOLDER)


def hwhisker(x0: float, x1: float, y: float, cap: float = 5) -> str:
    """Path data of a horizontal interval with end caps."""
    a, b, c, d = px(x0), px(x1), px(y - cap), px(y + cap)
    return f"M{a} {px(y)}H{b}M{a} {c}V{d}M{b} {c}V{d}"


def vwhisker(x: float, y0: float, y1: float, cap: float = 5) -> str:
    a, b, c, d = px(x - cap), px(x + cap), px(y0), px(y1)
    return f"M{px(x)} {c}V{d}M{a} {c}H{b}M{a} {d}H{b}"


TOP = MARGIN + HEADING + 10  # where the legend starts, below the heading
