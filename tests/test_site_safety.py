"""Record text that tries to run script in the site: built for real, opened in Chromium, nothing runs.

A record puts a payload into every text field that reaches a page (title, summary, hypothesis,
flags, env, patches, blockers, attempts, results, verdict, caveats, references and upstream
links). Each payload would set `window.__pwned` (or open a dialog) if it ran. The site is
built with `improvements build --site` (strict mkdocs) from a copy of the shipped campaign,
served locally and opened in Debian's Chromium on the record, summary and blockers pages.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import pytest
from playwright.sync_api import Browser

from generator.checks.validate import require_project
from generator.project.load import Project

from conftest import copy_campaign, run_cli, serve_folder

# A real site built with mkdocs: left out of the fast set.
pytestmark = pytest.mark.mkdocs

# Each payload sets window.__pwned to its own number if it runs, so a failure names it.
PAYLOADS = [
    "<script>window.__pwned=1;alert(1)</script>",
    '<img src=x onerror="window.__pwned=2;alert(2)">',
    "[click me](javascript:window.__pwned=3)",
    '<iframe src="javascript:parent.__pwned=4"></iframe>',
    '<svg onload="window.__pwned=5"><circle r=1 /></svg>',
    "<details open ontoggle=window.__pwned=6>x</details>",
    '<a href="javascript:window.__pwned=7">link</a>',
    "text {: onclick=window.__pwned=8 }",
    "<math><mtext><table><mglyph><style><img src=x onerror=window.__pwned=9>",
    "``a`<img src=x onerror=window.__pwned=10>`",
    "&lt;script&gt;window.__pwned=11&lt;/script&gt;",
    '<object data="javascript:window.__pwned=12"></object>',
    "<body onload=window.__pwned=13>",
    "![img](javascript:window.__pwned=14)",
    "<p style=\"background:url('javascript:window.__pwned=15')\">x</p>",
    "[x]: javascript:window.__pwned=16",
]
ONE_LINE = " ".join(PAYLOADS[:10])
# Block text: a code span crossing a heading line and a raw HTML block.
BLOCK = "\n".join(
    [
        *PAYLOADS,
        "`x",
        "# heading",
        "<img src=x onerror=window.__pwned=17>`",
        "",
        "<div>",
        "<script>window.__pwned=18</script>",
        "</div>",
        "````",
        "<script>window.__pwned=19</script>",
        "~~~",
        "<img src=x onerror=window.__pwned=34>",
    ]
)


def _yaml_str(text: str) -> str:
    """A double-quoted YAML scalar holding `text` exactly."""
    out = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{out}"'


def hostile_record() -> str:
    s, b = _yaml_str(ONE_LINE), _yaml_str(BLOCK)
    # The title also travels into <title>, where closing it is the way out.
    title = "Hostile <script>window.__pwned=20</script> <img src=x onerror=window.__pwned=21>"
    title += " </title><script>window.__pwned=35</script>"
    return f"""\
title: {_yaml_str(title)}
tier: 3
status: blocked
tags: [hostile]
summary: {b}
hypothesis: {b}
expected:
  metric: output_throughput
  note: {s}
change:
  flags:
    - flag: --hostile-flag
      value: {_yaml_str('"<script>window.__pwned=22</script>"')}
      note: {s}
  env:
    HOSTILE_ENV: {_yaml_str("<img src=x onerror=window.__pwned=23>")}
  patches:
    - path: {_yaml_str("src/<img src=x onerror=window.__pwned=24>.py")}
      summary: {s}
      upstream: {_yaml_str("javascript:window.__pwned=25")}
blockers:
  - id: hostile-blocker
    title: {_yaml_str("Blocker <svg onload=window.__pwned=26>")}
    error: {b}
    cause: {b}
    status: open
    upstream:
      - {_yaml_str("javascript:window.__pwned=27")}
      - {_yaml_str("javascript&#58;window.__pwned=28")}
      - {_yaml_str("JaVaScRiPt:window.__pwned=29")}
    attempts:
      - action: {s}
        outcome: failed
        detail: {b}
results:
  - label: {_yaml_str("c1 <img src=x onerror=window.__pwned=30>")}
    concurrency: 1
    workload:
      dataset: {_yaml_str("<script>window.__pwned=31</script>")}
    metrics: {{output_throughput: 12.5}}
    baseline: {{output_throughput: 11}}
    note: {b}
verdict: {b}
caveats:
  - {b}
references:
  - title: {s}
    url: {_yaml_str('https://example.com/"><img src=x onerror=window.__pwned=32>')}
    note: {s}
  - title: {_yaml_str("entity-encoded scheme")}
    url: {_yaml_str("https://example.com/?q=<script>window.__pwned=33</script>")}
"""


def poison_campaign(path: Path) -> None:
    """campaign.yaml with a payload added to every text field the home page shows."""
    import yaml

    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    tag = "<img src=x onerror=window.__pwned=40>"
    data["name"] += " " + tag
    data["description"] = BLOCK
    for part in ("model", "hardware"):
        data[part]["details"] = {**data[part].get("details", {}), f"key {tag}": f"value {tag}"}
    data["engine"]["note"] = BLOCK
    data["baseline"]["label"] += " " + tag
    data["baseline"]["note"] = BLOCK
    for goal in data.get("goals", []):
        goal["note"] = ONE_LINE
    data["tiers"] = {n: f"{text} {tag}" for n, text in data["tiers"].items()}
    data["context"] = [*data.get("context", []), BLOCK]
    data["references"] = [
        *data.get("references", []),
        {"title": ONE_LINE, "url": "https://example.com/'><svg onload=window.__pwned=41>", "note": ONE_LINE},
    ]
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")


def test_entity_encoded_schemes_are_refused_by_check(tmp_path: Path) -> None:
    # A relative link whose "path" is an entity-encoded javascript: scheme never reaches a page:
    # check resolves relative links as mkdocs does and refuses one that leads to no file.
    root = copy_campaign(tmp_path / "repo")
    record = "title: T\ntier: 1\nstatus: proposed\nhypothesis: H\nreferences:\n"
    record += "  - {title: a, url: 'javascript&#58;window.__pwned=32'}\n"
    record += "  - {title: b, url: 'java&#x73;cript&colon;window.__pwned=33'}\n"
    (root / "improvements" / "90-encoded.yaml").write_text(record, encoding="utf-8")
    res = run_cli("check", cwd=root)
    assert res.returncode == 1
    assert "90-encoded.yaml:6:" in res.stderr + res.stdout and "90-encoded.yaml:7:" in res.stderr + res.stdout


@dataclass
class Site:
    root: Path
    url: str
    project: Project


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    root = copy_campaign(tmp_path_factory.mktemp("hostile-site") / "repo", with_docs=True)
    (root / "improvements" / "90-hostile.yaml").write_text(hostile_record(), encoding="utf-8")
    poison_campaign(root / "improvements" / "campaign.yaml")
    check = run_cli("check", cwd=root)
    assert check.returncode == 0, check.stderr  # the record is valid: it must reach the site
    proc = run_cli("build", "--site", "--quiet", cwd=root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    with serve_folder(root / "site") as url:
        yield Site(root, url, require_project(root))


def _pages(site: Site) -> dict[str, str]:
    rec = next(r for r in site.project.records if r.slug == "hostile")
    series = site.project.docs_dir.relative_to(site.root / "docs").as_posix()
    return {
        "record": f"{series}/{Path(site.project.output_name(rec)).stem}.html",
        "summary": "summary.html",
        "blockers": "blockers.html",
        "home": "index.html",
    }


# --- the generated markdown and HTML, read as text ------------------------------------------

_TAG_WITH_HANDLER = re.compile(r"<[a-z][^>]*\son[a-z]+\s*=", re.I)
# A markdown link or image target, or a URL attribute of a real tag (escaped `&lt;a href=...`
# is text and does not count).
_SCRIPT_LINK = re.compile(
    r"(\]\(\s*<?|<[a-z][^<>]*\b(href|src|data|action)\s*=\s*[\"']?\s*)(javascript|data|vbscript):", re.I
)


def _outside_code(markdown: str) -> str:
    """The markdown without fenced code blocks and code spans, whose content markdown escapes."""
    kept: list[str] = []
    fence: str | None = None
    for line in markdown.split("\n"):
        m = re.match(r"\s*(`{3,}|~{3,})", line)
        if fence is None and m:
            fence = m.group(1)
        elif fence is not None and m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
            fence = None
        elif fence is None:
            kept.append(line)
    return re.sub(r"(`+)(?!`).+?(?<!`)\1(?!`)", "", "\n".join(kept))


def test_generated_markdown_holds_no_live_html(site: Site) -> None:
    docs = site.root / "docs"
    rec = next(r for r in site.project.records if r.slug == "hostile")
    paths = [
        site.project.docs_dir / site.project.output_name(rec),
        docs / "summary.md",
        docs / "blockers.md",
        docs / "index.md",
    ]
    for path in paths:
        # The exact error text and the launch command are shown as code, which is safe.
        text = _outside_code(path.read_text(encoding="utf-8"))
        assert "<script" not in text.lower(), path
        assert not _TAG_WITH_HANDLER.search(text), (path, _TAG_WITH_HANDLER.search(text))
        assert not _SCRIPT_LINK.search(text), (path, _SCRIPT_LINK.search(text))
        for tag in ("<iframe", "<svg", "<object", "<img", "<details", "<math", "<body", "<style"):
            assert tag not in text.lower(), (path, tag)
    # The payloads are still there, as text the reader can see.
    record_md = _outside_code(paths[0].read_text(encoding="utf-8"))
    assert "&lt;script&gt;window.__pwned=1" in record_md


class _Elements(HTMLParser):
    """Every element and attribute inside the page's article."""

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0
        self.svg = 0
        self.found: list[tuple[str, list[tuple[str, str | None]]]] = []
        # Elements inside an inlined chart's <svg> (its own <style> among them), by index in `found`.
        self.in_chart: set[int] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "article":
            self.depth += 1
        if self.depth:
            if self.svg:
                self.in_chart.add(len(self.found))
            self.found.append((tag, attrs))
        if tag == "svg":
            self.svg += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "article":
            self.depth -= 1
        if tag == "svg":
            self.svg -= 1


def test_built_html_holds_no_live_html(site: Site) -> None:
    for name, path in _pages(site).items():
        html = (site.root / "site" / path).read_text(encoding="utf-8")
        parser = _Elements()
        parser.feed(html)
        assert parser.found, name
        for i, (tag, attrs) in enumerate(parser.found):
            if tag == "template":
                # A chart's narrow variant (issue 49), inert until improvements.js swaps it in: only
                # ever the plugin's, right after the wide chart, and holding one generated <svg>.
                assert attrs == [("class", "improvements-narrow")], (name, attrs)
                assert parser.found[i + 1][0] == "svg", (name, parser.found[i + 1])
                continue
            if tag == "svg" and parser.found[i - 1][0] == "template":
                continue  # its elements are checked like the wide chart's (below)
            if tag == "svg":
                # A generated chart inlined by the plugin, in the link that opens it full size; what
                # it holds is checked element by element like the rest (no script, no handler).
                parent, parent_attrs = parser.found[i - 1]
                link = dict(parent_attrs)
                assert parent == "a" and link.get("class") == "improvements-chart", (name, parent, parent_attrs)
                assert re.fullmatch(r"(\.\./)*plots/[a-z0-9-]+\.svg", link.get("href") or ""), (name, link)
                continue
            if tag == "object":
                # The plugin embeds each generated chart as an <object> (its SVG tooltips work there);
                # nothing else may be one. The charts themselves hold no live content (below).
                chart = dict(attrs)
                assert chart.get("class") == "improvements-chart", (name, attrs)
                assert chart.get("type") == "image/svg+xml", (name, attrs)
                assert re.fullmatch(r"(\.\./)*plots/[a-z0-9-]+\.svg", chart.get("data") or ""), (name, attrs)
                continue
            # A chart's own <style> holds its two palettes, scoped to its id (tests/test_charts.py);
            # nowhere else may a style element stand.
            allowed = {"style"} if i in parser.in_chart else set()
            forbidden = {
                "script",
                "iframe",
                "object",
                "embed",
                "svg",
                "math",
                "style",
                "details",
                "body",
                "foreignobject",
            }
            if tag == "details":
                # Our templates fold content themselves: the frontier's table ("??? info", which
                # pymdownx.details writes as <details class="info">) and other loads' results
                # (<details class="improvements-load">). A record's own text never makes one: its
                # HTML is escaped (above), so any other <details> would be live HTML.
                assert dict(attrs).get("class") in ("info", "improvements-load"), (name, attrs)
                continue
            assert tag not in forbidden - allowed, (name, tag)
            if tag == "img":
                # Only the generated charts are images.
                assert re.fullmatch(r"(\.\./)*plots/[a-z0-9-]+\.svg", dict(attrs).get("src") or ""), (name, attrs)
            for key, value in attrs:
                assert not key.startswith("on"), (name, tag, key, value)
                assert not (value or "").strip().lower().startswith(("javascript:", "data:", "vbscript:")), (
                    name,
                    tag,
                    key,
                    value,
                )


# --- the site in Chromium ------------------------------------------------------------------


# What the page itself can tell: script elements whose text holds a payload, elements with
# an event handler attribute, links and frames with a script URL, and the flag a payload sets.
PROBE = """() => {
  const all = [...document.querySelectorAll('*')];
  const handlers = all.flatMap(el => [...el.attributes].filter(a => /^on/i.test(a.name))
      .map(a => el.tagName + '[' + a.name + ']'));
  const scriptUrls = all.flatMap(el => ['href', 'src', 'data', 'action', 'formaction']
      .map(k => el.getAttribute(k)).filter(v => v && /^\\s*(javascript|data|vbscript):/i.test(v)));
  const scripts = [...document.scripts].filter(s => s.textContent.includes('__pwned')).length;
  // A generated chart is the one object allowed: class improvements-chart, an SVG under plots/.
  const charts = [...document.querySelectorAll('article object.improvements-chart')]
      .filter(o => o.type === 'image/svg+xml' && /^(\\.\\.\\/)*plots\\/[a-z0-9-]+\\.svg$/.test(o.getAttribute('data')));
  // And a generated chart inlined by the plugin: an <svg> as the only child of its full-size link.
  const inlined = [...document.querySelectorAll('article a.improvements-chart > svg')]
      .filter(s => /^(\\.\\.\\/)*plots\\/[a-z0-9-]+\\.svg$/.test(s.parentElement.getAttribute('href')));
  const frames = document.querySelectorAll('article iframe, article object, article embed, article svg').length
      - charts.length - inlined.length;
  return {pwned: window.__pwned, handlers, scriptUrls, scripts, frames};
}"""


@pytest.mark.browser
@pytest.mark.parametrize("page_name", ["record", "summary", "blockers", "home"])
def test_no_script_runs_in_chromium(site: Site, browser: Browser, page_name: str) -> None:
    context = browser.new_context(java_script_enabled=True)
    page = context.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    try:
        page.goto(site.url + _pages(site)[page_name])
        page.wait_for_load_state("networkidle")
        article = page.locator("article")
        if page_name == "record":
            # The payloads are shown as text, not dropped.
            assert "<script>window.__pwned=1" in article.inner_text()
        if page_name == "home":
            assert "<img src=x onerror=window.__pwned=40>" in article.inner_text()
        # Click every link in the article that stays on the page or the site: a link made from
        # a payload would run its script on click.
        for link in article.locator("a[href]").all():
            href = link.get_attribute("href") or ""
            assert not re.match(r"\s*(javascript|data|vbscript):", href, re.I), href
        for details in article.locator("details").all():
            details.click()
        page.mouse.move(5, 5)
        page.wait_for_timeout(200)
        state = page.evaluate(PROBE)
        assert state["pwned"] is None, state
        assert state["handlers"] == [], state
        assert state["scriptUrls"] == [], state
        assert state["scripts"] == 0, state
        assert state["frames"] == 0, state
        assert dialogs == []
    finally:
        context.close()


def test_charts_hold_no_live_content(site: Site) -> None:
    # Chart labels come from record titles and result labels; an SVG opened on its own would
    # run a script inside it.
    charts = sorted((site.root / "site").rglob("*.svg"))
    assert charts
    for chart in charts:
        parser = _Elements()
        parser.depth = 1  # every element of the file counts
        parser.feed(chart.read_text(encoding="utf-8"))
        for tag, attrs in parser.found:
            assert tag not in {"script", "foreignobject", "iframe", "object", "embed"}, (chart, tag)
            for key, value in attrs:
                assert not key.startswith("on"), (chart, tag, key)
                assert not (value or "").strip().lower().startswith(("javascript:", "data:text")), (chart, tag, key)
