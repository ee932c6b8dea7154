"""Both shipped campaigns at a glance, in Chromium: 390 and 1280 px, light and dark.

Every table column is at least 48 px wide, a record's decision is in view without scrolling
sideways on a desktop, chart text has at least 4.5:1 contrast on the page, charts are not white
boxes in dark mode, the home page's first screen holds the goal and the launch command, and the
summary sorts and filters (from a plain file too).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

from conftest import COLOUR_VIEWS, LAYOUT_VIEWS, SIZES, BuiltSite, open_page

pytestmark = [pytest.mark.browser, pytest.mark.mkdocs]

MIN_COLUMN_PX = 48


@dataclass
class Site:
    name: str
    root: Path
    url: str
    records: list[str]  # the record pages, relative to the site root


def _records(site_dir: Path) -> list[str]:
    return sorted(p.relative_to(site_dir).as_posix() for p in (site_dir / "improvements").glob("*.html"))


@pytest.fixture(scope="module", params=["glm5", "h200-decode"])
def site(request: pytest.FixtureRequest, built_site: Callable[[str], BuiltSite]) -> Site:
    built = built_site(request.param)
    return Site(built.name, built.root, built.url, _records(built.root / "site"))


def _context_page(browser: Browser, size: str, scheme: str) -> Iterator[Page]:
    with open_page(browser, size, scheme) as page:
        yield page


@pytest.fixture(params=COLOUR_VIEWS, ids=lambda p: f"{p[0]}-{p[1]}")
def view(request: pytest.FixtureRequest, browser: Browser) -> Iterator[tuple[Page, str, str]]:
    """Each size in the light scheme, and a desktop in the dark one: for tests that check colours."""
    for page in _context_page(browser, *request.param):
        yield page, *request.param


@pytest.fixture(params=LAYOUT_VIEWS, ids=lambda p: f"{p[0]}-{p[1]}")
def layout_view(request: pytest.FixtureRequest, browser: Browser) -> Iterator[tuple[Page, str, str]]:
    """Each size, in the light scheme: for tests of where things are."""
    for page in _context_page(browser, *request.param):
        yield page, *request.param


def _luminance(rgb: str) -> float:
    r, g, b = (int(x) / 255 for x in re.findall(r"\d+", rgb)[:3])
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def _contrast(a: str, b: str) -> float:
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


_COLUMNS = """() => {
  const out = [];
  for (const table of document.querySelectorAll('article table')) {
    if (getComputedStyle(table).display !== 'table') continue;  // a phone's cards have no columns
    const row = table.tHead ? table.tHead.rows[0] : table.rows[0];
    if (!row || getComputedStyle(row).display !== 'table-row') continue;
    for (const cell of row.cells) {
      const style = getComputedStyle(cell);
      if (style.display === 'none' || getComputedStyle(table.tHead || table).display === 'none') continue;
      out.push([cell.innerText.trim(), cell.getBoundingClientRect().width]);
    }
  }
  return out;
}"""

_CHART_TEXT = """() => {
  const svgs = [...document.querySelectorAll('article a.improvements-chart svg')];
  const background = getComputedStyle(document.body).backgroundColor;
  const out = {count: svgs.length, background, texts: [], backs: []};
  for (const svg of svgs) {
    for (const t of svg.querySelectorAll('text')) out.texts.push(getComputedStyle(t).fill);
    let e = svg, back = null;
    while (e && !back) {
      const c = getComputedStyle(e).backgroundColor;
      if (c && c !== 'rgba(0, 0, 0, 0)' && c !== 'transparent') back = c;
      e = e.parentElement;
    }
    out.backs.push(back);
  }
  return out;
}"""


def _pages(site: Site) -> list[str]:
    return ["index.html", "summary.html", "timeline.html", *site.records]


def test_columns_chart_text_and_the_decision_read_in_every_view(site: Site, view: tuple[Page, str, str]) -> None:
    # One visit of each page per view for every check: loading the pages was the whole cost. The
    # columns at both sizes, the chart text's contrast on both palettes, the decision on a desktop.
    page, size, scheme = view
    seen = 0
    for path in _pages(site):
        page.goto(site.url + path)
        narrow = [(text, round(w)) for text, w in page.evaluate(_COLUMNS) if w < MIN_COLUMN_PX]
        assert narrow == [], f"{site.name} {path}: no column may be narrower than {MIN_COLUMN_PX} px: {narrow}"
        if (size, scheme) == ("desktop", "light") and path in site.records:
            _the_decision_is_in_view_without_scrolling_sideways(site, page, path)
        if path == "timeline.html":
            continue  # no charts
        found = page.evaluate(_CHART_TEXT)
        seen += found["count"]
        for fill in set(found["texts"]):
            assert _contrast(fill, found["background"]) >= 4.5, (site.name, path, fill, found["background"])
        for back in found["backs"]:
            assert back is not None
            if scheme == "dark":
                assert _luminance(back) < 0.1, (site.name, path, back)
    assert seen > 0


def _the_decision_is_in_view_without_scrolling_sideways(site: Site, page: Page, path: str) -> None:
    header = page.locator(".improvements-header tr", has_text="Decision").first
    box = header.bounding_box()
    assert box is not None and box["x"] + box["width"] <= 1280, path
    # The tables that hold a decision never scroll sideways: each fits the column.
    scrolls = page.evaluate(
        "() => [...document.querySelectorAll("
        "'article :is(.improvements-header, .improvements-results) .md-typeset__scrollwrap')]"
        ".filter(w => w.scrollWidth > w.clientWidth + 1).map(w => w.innerText.slice(0, 60))"
    )
    assert scrolls == [], f"{site.name} {path}: {scrolls}"
    for cell in page.locator(".improvements-results tbody td:nth-child(2)").all():
        b = cell.bounding_box()
        assert b is not None and b["x"] >= 0 and b["x"] + b["width"] <= 1280, path


def test_the_home_pages_first_screen_holds_the_goal_and_the_command(
    site: Site, layout_view: tuple[Page, str, str]
) -> None:
    page, size, _scheme = layout_view
    page.goto(site.url)
    height = SIZES[size][1]
    goal = page.locator(".improvements-glance table").first.bounding_box()
    command = page.locator(".improvements-glance pre").first.bounding_box()
    assert goal is not None and command is not None
    assert goal["y"] < height, "the goal is below the first screen"
    if size == "desktop":
        # The whole command's first line is on the first screen, with its copy button.
        assert command["y"] + 40 < height, "the launch command is below the first screen"
        # Material's copy button (`content.code.copy`), whichever way this version draws it.
        copy = page.locator('.improvements-glance [data-md-type="copy"], .improvements-glance .md-clipboard')
        assert copy.count() == 1


def test_the_summary_sorts_and_filters_from_a_plain_file(site: Site, browser: Browser) -> None:
    for page in _context_page(browser, "desktop", "light"):
        page.goto((site.root / "site" / "summary.html").as_uri())
        rows = page.locator(".improvements-summary tbody tr")
        ranked = [rows.nth(i).locator("td").first.inner_text() for i in range(rows.count())]
        page.locator(".improvements-summary th button", has_text="#").click()
        assert [rows.nth(i).locator("td").first.inner_text() for i in range(rows.count())] == sorted(ranked)
        page.locator(".improvements-summary th button", has_text="#").click()
        assert [rows.nth(i).locator("td").first.inner_text() for i in range(rows.count())] == sorted(
            ranked, reverse=True
        )
        page.locator(".improvements-summary th button", has_text="#").click()
        assert [rows.nth(i).locator("td").first.inner_text() for i in range(rows.count())] == ranked
        page.locator(".improvements-filter input").fill("rejected")
        shown = [r for r in rows.all() if r.is_visible()]
        assert shown and all("rejected" in r.inner_text() for r in shown)
        assert f"{len(shown)} of {len(ranked)} rows" in page.locator(".improvements-count").inner_text()


def test_the_404_page_is_styled_from_a_plain_file(site: Site, browser: Browser) -> None:
    pages = _context_page(browser, "desktop", "light")
    page = next(pages)
    failed: list[str] = []
    page.on("requestfailed", lambda req: failed.append(req.url))
    page.goto((site.root / "site" / "404.html").as_uri())
    # Material's stylesheet loaded: its header has the palette's colour, not the browser default.
    header = page.evaluate("getComputedStyle(document.querySelector('.md-header')).backgroundColor")
    assert header not in ("rgba(0, 0, 0, 0)", "transparent")
    home = page.locator(".md-nav__link", has_text="Home").first.get_attribute("href") or ""
    # Search needs a web server on every page read from disk; nothing else may fail to load.
    assert not home.startswith("/") and [u for u in failed if "/search/" not in u] == []
    pages.close()
