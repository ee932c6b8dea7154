"""The built site in a real browser: Debian's Chromium driven by Playwright, never a downloaded one.

The README's picture (docs/assets/screenshot.png) is the H200 example's summary, taken by
`tools/screenshot.py`; the test here photographs the shipped campaign's summary into its
temporary folder only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from generator.analysis.campaign import analyse
from generator.checks.validate import require_project
from generator.project.load import Project
from generator.views.summary import summary_rows

from conftest import BuiltSite

# A real site built with mkdocs and driven in Chromium: left out of the fast set.
pytestmark = [pytest.mark.browser, pytest.mark.mkdocs]

# Generous waits: CI runs the suite on 2 busy cores, and a wait only costs time when it fails.
TIMEOUT_MS = 30_000
expect.set_options(timeout=TIMEOUT_MS)


@dataclass
class Site:
    root: Path
    url: str
    project: Project

    def record_path(self, number: int) -> str:
        rec = next(r for r in self.project.records if r.number == number)
        series = self.project.docs_dir.relative_to(self.root / "docs").as_posix()
        return f"{series}/{Path(self.project.output_name(rec)).stem}.html"


@dataclass
class Tab:
    page: Page
    errors: list[str] = field(default_factory=list)


@pytest.fixture(scope="module", params=["glm5"])
def site(request: pytest.FixtureRequest, built_site: Callable[[str], BuiltSite]) -> Site:
    """The shipped campaign built with `improvements build --site`, served on a free local port."""
    built = built_site(request.param)
    return Site(built.root, built.url, require_project(built.root))


@pytest.fixture
def tab(browser: Browser) -> Iterator[Tab]:
    """A fresh page that records console errors, failed requests and uncaught exceptions."""
    context = browser.new_context(viewport={"width": 1280, "height": 860}, color_scheme="light")
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    t = Tab(page)
    page.on("console", lambda msg: t.errors.append(f"console: {msg.text}") if msg.type == "error" else None)
    page.on("pageerror", lambda exc: t.errors.append(f"page error: {exc}"))
    # A request cut short by leaving the page (the search index, when a test clicks away) is
    # not a failure of the site; anything else that fails to load is.
    page.on(
        "requestfailed",
        lambda req: (
            t.errors.append(f"request failed: {req.url} {req.failure}") if req.failure != "net::ERR_ABORTED" else None
        ),
    )
    try:
        yield t
    finally:
        context.close()


def _summary_table(page: Page) -> tuple[list[str], list[list[str]]]:
    table = page.locator("article table").first
    headers = [h.strip() for h in table.locator("thead th").all_inner_texts()]
    rows = [[c.strip() for c in row.locator("td").all_inner_texts()] for row in table.locator("tbody tr").all()]
    return headers, rows


def test_summary_lists_every_record_in_tier_order(site: Site, tab: Tab) -> None:
    tab.page.goto(site.url + "summary.html")
    headers, rows = _summary_table(tab.page)
    assert len(rows) == len(site.project.records) > 0
    number_col, tier_col = headers.index("#"), headers.index("Tier")
    # A tier the sources do not give reads "1†" (the legend under the table says why).
    tiers = [int(row[tier_col].rstrip("†")) for row in rows]
    assert tiers == sorted(tiers)
    assert [int(row[number_col]) for row in rows] == [r.number for r in summary_rows(analyse(site.project))]
    assert tab.errors == []


def test_a_click_on_a_row_reaches_the_record(site: Site, tab: Tab) -> None:
    tab.page.goto(site.url + "summary.html")
    first = summary_rows(analyse(site.project))[0]
    tab.page.locator("article table tbody tr").first.get_by_role("link").first.click()
    tab.page.wait_for_url(site.url + site.record_path(first.number))
    expect(tab.page.locator("article h1")).to_contain_text(first.title)
    assert tab.errors == []


def test_search_finds_fullgraph(site: Site, tab: Tab) -> None:
    tab.page.goto(site.url)
    tab.page.locator("input.md-search__input").click()
    tab.page.keyboard.type("fullgraph")
    results = tab.page.locator("a.md-search-result__link")
    expect(results.first).to_be_visible()
    hrefs = [results.nth(i).get_attribute("href") or "" for i in range(results.count())]
    piecewise = next(r for r in site.project.records if r.slug == "piecewise-cuda-graphs")
    target = Path(site.project.output_name(piecewise)).stem
    assert any(target in href for href in hrefs), hrefs
    assert tab.errors == []


def test_palette_toggle_switches_to_dark_and_back(site: Site, tab: Tab) -> None:
    page = tab.page
    page.goto(site.url + site.record_path(site.project.records[0].number))
    body = page.locator("body")
    expect(body).to_have_attribute("data-md-color-scheme", "default")
    page.get_by_title("Switch to dark mode").click()
    expect(body).to_have_attribute("data-md-color-scheme", "slate")
    page.get_by_title("Switch to light mode").click()
    expect(body).to_have_attribute("data-md-color-scheme", "default")
    assert tab.errors == []


def test_navigation_groups_records_by_tier(site: Site, tab: Tab) -> None:
    page = tab.page
    page.goto(site.url)
    sidebar = page.locator("nav.md-nav--primary")
    labels = [t.strip() for t in sidebar.locator("> ul > li > label, > ul > li > a").all_inner_texts()]
    tiers = [t for t in labels if re.fullmatch(r"Tier [123]", t)]
    assert tiers == [f"Tier {t}" for t in sorted({r.record.tier for r in site.project.records})]
    assert labels.index(tiers[0]) == labels.index("Summary") + 1
    assert tab.errors == []


def test_the_site_reads_from_disk(site: Site, tab: Tab) -> None:
    """`build --site` says to open site/index.html: the links must work from file:// too.

    Console errors are not checked here: search needs a web server, and says so on file://.
    """
    page = tab.page
    page.goto((site.root / "site" / "index.html").as_uri())
    page.locator("nav.md-nav--primary").get_by_role("link", name="Summary").click()
    expect(page.locator("article h1")).to_contain_text("Summary")
    first = summary_rows(analyse(site.project))[0]
    page.locator("article table tbody tr").first.get_by_role("link").first.click()
    expect(page.locator("article h1")).to_contain_text(first.title)
    assert page.url == (site.root / "site" / site.record_path(first.number)).as_uri()


def test_screenshot_for_the_readme(site: Site, tab: Tab, tmp_path: Path) -> None:
    page = tab.page
    page.goto(site.url + "summary.html")
    page.wait_for_load_state("networkidle")
    shot = tmp_path / "screenshot.png"
    page.screenshot(path=str(shot))
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000
    assert tab.errors == []
