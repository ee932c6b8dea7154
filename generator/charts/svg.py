"""The Jinja environment of the chart templates, and layout pieces every chart shares."""

from __future__ import annotations

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
    """The heading on one line, or two when it is wider than the chart: words never cut on the
    first, the second cut with an ellipsis only past two lines (the full title is the <title>).
    Measured as bold (`BOLD`)."""
    room, size = width - 2 * MARGIN, HEADING * BOLD
    words = one_line(title).split(" ")
    first: list[str] = []
    while words and text_width(" ".join([*first, words[0]]), size) <= room:
        first.append(words.pop(0))
    if not words:
        return [" ".join(first)]
    if not first:  # one word wider than the chart
        return [fit(" ".join(words), room, size)]
    return [" ".join(first), fit(" ".join(words), room, size)]


def heading_top(title: str, width: float) -> float:
    """Where the legend starts: below the heading's one or two lines."""
    return TOP + (len(heading_lines(title, width)) - 1) * (HEADING + 4)


def frame(cid: str, title: str, desc: str, width: float) -> dict[str, object]:
    """The context every template's frame needs: ids, accessible title and description, heading."""
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
