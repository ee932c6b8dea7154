"""Both shipped sites in Chromium at 390 and 1280 px: the frontier on the home
page, the command's caveats beside it, chart text of at least 11 px, the road as cards on a
phone, a cue over what scrolls, folded loads, the tier filter, linked sort, dates and search.

One build per site for every browser module (conftest's built_site) and one browser; each view
visits each page once. Nothing here depends on the colour scheme, so each view is a light one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from conftest import LAYOUT_VIEWS, SIZES, BuiltSite, open_page

pytestmark = [pytest.mark.browser, pytest.mark.mkdocs]

TIMEOUT_MS = 30_000


@dataclass
class Site:
    name: str
    root: Path
    url: str
    record: str  # the first record's page, relative to the site root


@pytest.fixture(scope="module", params=["glm5", "h200-decode"])
def site(request: pytest.FixtureRequest, built_site: Callable[[str], BuiltSite]) -> Site:
    # glm5 is in a git repository of its own, so its undated records take the day of their first commit.
    built = built_site(request.param)
    root = built.root
    record = sorted(
        p.relative_to(root / "site").as_posix() for p in (root / "site" / "improvements").glob("*-01-*.html")
    )
    return Site(built.name, root, built.url, record[0])


@pytest.fixture(params=LAYOUT_VIEWS, ids=lambda p: f"{p[0]}-{p[1]}")
def layout_view(request: pytest.FixtureRequest, browser: Browser) -> Iterator[tuple[Page, str]]:
    """Each size, in the light scheme: what this module checks is where things are and their size."""
    size, scheme = request.param
    with open_page(browser, size, scheme, TIMEOUT_MS) as page:
        yield page, size


# Every text of every inlined chart: its rendered font size in CSS px, and whether a heading
# reaches past its chart's right edge (measured with the browser's own font).
_CHART_TEXT = """() => {
  const out = {sizes: [], cut: [], charts: 0};
  for (const svg of document.querySelectorAll('article a.improvements-chart svg')) {
    out.charts += 1;
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    const right = svg.getBoundingClientRect().right;
    for (const t of svg.querySelectorAll('text')) {
      out.sizes.push([parseFloat(getComputedStyle(t).fontSize) * scale, t.textContent]);
      if (t.classList.contains('heading') && t.getBoundingClientRect().right > right + 1) out.cut.push(t.textContent);
    }
  }
  return out;
}"""

# Each box that scrolls sideways, and whether the line just before it says so.
_SCROLLERS = """() => [...document.querySelectorAll('article .md-typeset__scrollwrap, article a.improvements-chart')]
  .filter(b => b.offsetParent !== null && b.scrollWidth > b.clientWidth + 1)
  .map(b => [b.innerText.slice(0, 40), !!(b.previousElementSibling
    && b.previousElementSibling.classList.contains('improvements-scroll-cue')
    && b.previousElementSibling.getBoundingClientRect().height > 0)])"""


def _charts_read(page: Page, where: str, least: float) -> int:
    found = page.evaluate(_CHART_TEXT)
    small = sorted({(round(s, 1), t) for s, t in found["sizes"] if s < least - 0.05})
    assert small == [], f"{where}: chart text under {least} px: {small[:5]}"
    assert found["cut"] == [], f"{where}: headings cut: {found['cut']}"
    return int(found["charts"])


def test_every_view(site: Site, layout_view: tuple[Page, str]) -> None:
    page, size = layout_view
    height = SIZES[size][1]
    page.goto(site.url)
    # The frontier of every configuration is on the home page, each point named by a title.
    frontier = page.locator("article svg#campaign-frontier-svg")
    expect(frontier).to_be_attached()
    assert frontier.locator("g.point title").count() >= 1
    # A tap on a point (no hover on a phone) writes its title under the chart, and stays on the page.
    here = page.url
    frontier.locator("g.point").first.dispatch_event("click")
    # Its n, or that the source did not state one (GLM-5's baseline is a number typed without it).
    expect(page.locator("article p.improvements-point")).to_contain_text(re.compile(r"n=\d|n not stated"))
    assert page.url == here
    # The caveats come directly after the command, the first of them on a desktop's first screen.
    caveat = page.locator(".improvements-glance pre").first.locator(
        "xpath=ancestor::div[contains(@class,'highlight')][1]/following-sibling::*[1]"
    )
    expect(caveat).to_contain_text("Caveat")
    box = caveat.bounding_box()
    assert box is not None and (size == "phone" or box["y"] < height)
    if site.name == "glm5":
        expect(page.locator(".improvements-glance")).to_contain_text("No measured comparison")
        expect(caveat).to_contain_text("reconstruction")
    else:
        expect(page.locator(".improvements-glance")).to_contain_text("Run it from data/")
    # The road: on a phone a card per step (its empty cells left out), every cell in view.
    road = page.locator(".improvements-road td")
    for i in range(road.count()):
        cell = road.nth(i)
        if cell.is_visible():
            b = cell.bounding_box()
            assert b is not None and b["x"] + b["width"] <= SIZES[size][0] + 0.5
    if size == "phone" and road.count():
        assert page.locator(".improvements-road tbody tr").first.evaluate("e => getComputedStyle(e).display") == "block"
    seen = 0
    for path in ("", "summary.html", site.record):
        page.goto(site.url + path)
        # 11 px on a phone (charts keep their drawn size there); a desktop's column fits the
        # 720 px charts to itself, a little under their drawn size.
        seen += _charts_read(page, f"{site.name} {size} {path or 'index'}", 11 if size == "phone" else 10)
        missing = [text for text, cued in page.evaluate(_SCROLLERS) if not cued]
        assert missing == [], f"{site.name} {path}: scrolls without a cue: {missing}"
    assert seen >= 2


def test_summary_filters_sorts_and_links_its_state(site: Site, browser: Browser) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    try:
        page.goto(site.url + "summary.html")
        rows = page.locator(".improvements-summary tbody tr")
        total = rows.count()
        page.locator(".improvements-filter input").fill("tier 1")
        shown = [r for r in rows.all() if r.is_visible()]
        tiers = [r.locator("td").nth(2).inner_text().rstrip("†") for r in shown]
        assert shown and set(tiers) == {"1"} and len(shown) < total
        page.locator(".improvements-summary th button", has_text="Date").click()
        page.locator(".improvements-summary th button", has_text="Date").click()
        assert "sort=date%3Adesc" in page.url and "q=tier+1" in page.url
        order = [r.locator("td").first.inner_text() for r in rows.all() if r.is_visible()]
        # The address alone brings the same view back.
        page.goto(page.url)
        assert [r.locator("td").first.inner_text() for r in rows.all() if r.is_visible()] == order
        expect(page.locator(".improvements-filter input")).to_have_value("tier 1")
        # Every record has a date: its own, or the day git first committed it.
        dates = [r.locator("td").nth(5).inner_text() for r in rows.all()]
        assert all(d[:4].isdigit() for d in dates), dates
        if site.name == "glm5":
            assert {d for d in dates} == {"2024-03-05 (first committed)"}
    finally:
        context.close()


def test_folded_loads_and_search(site: Site, browser: Browser) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    try:
        if site.name == "h200-decode":
            page.goto(site.url + site.record)
            folded = page.locator("article details.improvements-load")
            assert folded.count() == 5 and all(not d.evaluate("e => e.open") for d in folded.all())
            # The primary comparison's load first, in the open (the goal's load, batch 1: issue 36).
            first = page.locator("article h2#results ~ h3").first
            expect(first).to_contain_text("512/128, batch 1")
            expect(page.locator(".improvements-header")).to_contain_text("Capacity under the SLO")
            word = "sdpa"
        else:
            word = "allreduce"
        page.goto(site.url)
        page.locator("input.md-search__input").click()
        page.keyboard.type(word)
        results = page.locator("a.md-search-result__link")
        expect(results.first).to_be_visible()
        # A record ranks above the guide for a word records hold.
        assert "improvements/" in (results.first.get_attribute("href") or "")
    finally:
        context.close()
