"""No chart text is cut off or drawn over another: extents computed from the SVG itself.

Each <text>'s box comes from its position, anchor and class (heading 14 px bold, small and
note 11 px, else 12) and the width `charts.text` measures; every box must lie inside the chart and
apart from every other. Read from the committed charts of both shipped campaigns and the
golden render (`test_render` keeps them fresh), so no build runs here.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from generator import charts
from generator.charts.text import BOLD, text_width

from conftest import REPO

SVG = "{http://www.w3.org/2000/svg}"
FOLDERS = (REPO / "docs", REPO / "examples" / "h200-decode" / "docs", REPO / "tests" / "golden")
Box = tuple[float, float, float, float]


def _size(cls: str) -> float:
    """The size a text is measured at: its font size, a bold heading's widened (`BOLD`)."""
    words = cls.split()
    return 14 * BOLD if "heading" in words else 11 if {"small", "note"} & set(words) else 12


def text_boxes(svg: str) -> tuple[float, float, list[tuple[str, Box]]]:
    root = ET.fromstring(svg)
    out = []
    for t in root.iter(f"{SVG}text"):
        size, text = _size(t.get("class", "")), t.text or ""
        w, x, y = text_width(text, size), float(t.get("x", 0)), float(t.get("y", 0))
        anchor = t.get("text-anchor", "start")
        x0 = x if anchor == "start" else x - w / 2 if anchor == "middle" else x - w
        out.append((text, (x0, y - 0.8 * size, x0 + w, y + 0.25 * size)))
    return float(root.get("width", 0)), float(root.get("height", 0)), out


def problems(svg: str) -> list[str]:
    width, height, boxes = text_boxes(svg)
    found = [
        f"{text!r} outside the chart"
        for text, (a, b, c, d) in boxes
        if a < -0.5 or b < -0.5 or c > width + 0.5 or d > height + 0.5
    ]
    for i, (t1, p) in enumerate(boxes):
        for t2, q in boxes[i + 1 :]:
            if p[0] < q[2] - 0.5 and q[0] < p[2] - 0.5 and p[1] < q[3] - 0.5 and q[1] < p[3] - 0.5:
                found.append(f"{t1!r} over {t2!r}")
    return found


def _charts() -> list[Path]:
    return sorted(p for folder in FOLDERS for p in folder.rglob("*.svg"))


def test_there_are_charts_to_check() -> None:
    assert len(_charts()) > 30


@pytest.mark.parametrize("path", _charts(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_no_text_is_cut_off_or_overlaps(path: Path) -> None:
    svg = path.read_text(encoding="utf-8")
    assert problems(svg) == []
    # A heading is never cut: it wraps onto a second line instead.
    root = ET.fromstring(svg)
    for t in root.iter(f"{SVG}text"):
        if "heading" in t.get("class", "").split():
            assert not (t.text or "").endswith("…"), t.text


def test_the_check_finds_collisions_and_long_titles_wrap() -> None:
    # Two load labels placed at one spot (what "c=256" over "c=1" was) are found.
    clash = (
        '<svg xmlns="http://www.w3.org/2000/svg" width="100" height="50">'
        '<text x="10" y="20" class="ink small">c=256</text><text x="14" y="22" class="ink small">c=1</text>'
        '<text x="90" y="40" class="ink small">cut off</text></svg>'
    )
    assert problems(clash) == ["'cut off' outside the chart", "'c=256' over 'c=1'"]
    # Points at one spot on a frontier: one label is drawn, the other left to its point's title.
    title = "A title long enough to need two lines in a chart of this width, " * 2
    svg = charts.frontier(
        "x", title, [charts.Series("s", (charts.Point(1, 1, "c=1", "one"), charts.Point(1.01, 1.01, "c=256", "two")))]
    )
    assert problems(svg) == []
    headings = [t.text for t in ET.fromstring(svg).iter(f"{SVG}text") if "heading" in (t.get("class") or "")]
    assert len(headings) == 2
