"""The site readable everywhere: a phone (390 px) and a desktop (1280 px), light and dark, in Chromium.

The summary's columns stay in view without scrolling sideways, text has contrast on both
palettes, a record's evidence links reach the raw file and the run's section, and a chart is
inlined so its SVG tooltips work, and opens full size on a click.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from conftest import COLOUR_VIEWS, BuiltSite, open_page

pytestmark = [pytest.mark.browser, pytest.mark.mkdocs]


@dataclass
class Site:
    root: Path
    url: str


@pytest.fixture(scope="module", params=["glm5-imported"])
def site(request: pytest.FixtureRequest, built_site: Callable[[str], BuiltSite]) -> Site:
    """The shipped campaign with imported runs (one into record 02, two into the baseline), built."""
    built = built_site(request.param)
    return Site(built.root, built.url)


def _page(browser: Browser, size: str, scheme: str) -> Iterator[Page]:
    with open_page(browser, size, scheme) as page:
        yield page


@pytest.fixture(params=COLOUR_VIEWS, ids=lambda p: f"{p[0]}-{p[1]}")
def page(request: pytest.FixtureRequest, browser: Browser) -> Iterator[Page]:
    """Each size in the light scheme, and a desktop in the dark one (the text's contrast)."""
    yield from _page(browser, *request.param)


def _luminance(rgb: str) -> float:
    r, g, b = (int(x) / 255 for x in re.findall(r"\d+", rgb)[:3])
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def _contrast(a: str, b: str) -> float:
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


_BOXES = """() => {
  const table = document.querySelector('article table');
  const head = [...table.querySelectorAll('thead th')].map(th => th.innerText.trim());
  const rows = [...table.querySelectorAll('tbody tr')].map(tr =>
    [...tr.querySelectorAll('td')].map(td => { const r = td.getBoundingClientRect(); return [r.left, r.right]; }));
  const main = getComputedStyle(document.querySelector('.md-main'));
  return {head, rows, width: window.innerWidth, scroll: document.documentElement.scrollWidth,
          color: getComputedStyle(table.querySelector('td')).color,
          background: getComputedStyle(document.body).backgroundColor || main.backgroundColor};
}"""


def test_summary_columns_that_matter_stay_in_view(site: Site, page: Page) -> None:
    page.goto(site.url + "summary.html")
    expect(page.locator("article table").first).to_be_visible()
    seen = page.evaluate(_BOXES)
    assert seen["head"] == ["#", "Title", "Tier", "Status", "Decision", "Date", "Open blockers"]
    assert seen["rows"]
    # Nothing scrolls sideways: not the page, and every cell (status, gain, blockers included) is in view.
    assert seen["scroll"] <= seen["width"]
    for cells in seen["rows"]:
        for left, right in cells:
            assert left >= 0 and right <= seen["width"] + 0.5, (left, right, seen["width"])
    assert _contrast(seen["color"], seen["background"]) >= 4.5


def test_dark_palette_is_dark_and_light_is_light(site: Site, browser: Browser) -> None:
    for scheme, dark in (("light", False), ("dark", True)):
        for p in _page(browser, "phone", scheme):
            p.goto(site.url + "summary.html")
            background = p.evaluate("getComputedStyle(document.body).backgroundColor")
            assert (_luminance(background) < 0.2) is dark, (scheme, background)


def test_record_evidence_links_reach_the_raw_file_and_the_runs_section(site: Site, browser: Browser) -> None:
    for p in _page(browser, "phone", "light"):
        page_path = next((site.root / "site" / "improvements").glob("*-02-*.html"))
        p.goto(site.url + f"improvements/{page_path.name}")
        raw = p.locator("article a[href*='results/raw/']").first
        href = raw.get_attribute("href") or ""
        response = p.request.get(site.url + "improvements/" + href)
        assert response.ok and b"sk-prov-SYNTHETIC" not in response.body()
        run_link = p.locator("article a[href^='#run-']").first
        anchor = (run_link.get_attribute("href") or "")[1:]
        run_link.click()
        # The run's section is scrolled to (the URL then follows the headings: navigation.tracking).
        target = p.locator(f"[id='{anchor}']")
        expect(target).to_be_attached()
        p.wait_for_function(
            "id => { const t = document.getElementById(id).getBoundingClientRect().top;"
            " return t >= 0 && t < window.innerHeight; }",
            arg=anchor,
        )
        # A hash wraps instead of widening the phone's page.
        assert p.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def test_charts_are_inlined_with_tooltips_and_open_full_size(site: Site, browser: Browser) -> None:
    for p in _page(browser, "desktop", "light"):
        p.goto(site.url + "summary.html")
        link = p.locator("article a.improvements-chart").first
        expect(link).to_be_visible()
        # Inlined: the SVG's <title> tooltips are in the page, and the palette reaches its colours.
        assert link.locator("svg title").count() > 0
        box = link.bounding_box()
        assert box is not None and box["width"] <= 1280
        # A click opens the chart's own file, full size.
        href = link.get_attribute("href") or ""
        assert href.endswith(".svg")
        link.click()
        p.wait_for_url(re.compile(re.escape(href.split("/")[-1]) + "$"))
        assert p.locator("svg").first.get_attribute("viewBox")
