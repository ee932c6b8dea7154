"""Property tests: whatever a record file holds, the loader accepts it or reports positioned problems.

Records are generated three ways: random YAML-ish text, text mutations of the shipped records
(lines deleted, duplicated or swapped, tabs and garbage inserted, truncation) and structural
mutations (keys deleted or renamed, values replaced by other types) dumped back to YAML. The
example counts are fixed and derandomized so CI time is bounded and failures reproduce.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.base.problems import CODES, Report
from generator.base.read import parse, read_text
from generator.checks.validate import load_project
from generator.model.campaign import Campaign
from generator.model.record import Record
from generator.project.load import load_file

# Slow: Hypothesis runs many generated campaigns.
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
SHIPPED = sorted((REPO / "improvements").glob("[0-9]*-*.yaml"))
CAMPAIGN = REPO / "improvements" / "campaign.yaml"
SETTINGS = settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

TOKENS = [
    "title",
    "tier",
    "status",
    "hypothesis",
    "results",
    "metrics",
    "baseline",
    "label",
    "source",
    "blockers",
    "change",
    "flags",
    "related",
    "references",
    "url",
    "output_throughput",
    "ttft_p99",
    "proposed",
    "blocked",
    "adopted",
    ":",
    ": ",
    "- ",
    "  ",
    "\n",
    "\t",
    "[",
    "]",
    "{",
    "}",
    ",",
    "&a ",
    "*a",
    "!!str ",
    "!!python/object ",
    "!x ",
    "<<: ",
    "? ",
    "|",
    ">-",
    "#",
    "'",
    '"',
    "\\",
    "---\n",
    "...\n",
    "%YAML 1.1\n",
    "1",
    "-1",
    "1.5",
    ".nan",
    ".inf",
    "~",
    "null",
    "true",
    "2024-02-30",
    "2024-01-01",
    "0x1F",
    "1e309",
    "9" * 60,
    "é",
    "\u202e",
    "\u2028",
    "\x85",
    "\r",
    "\x1b[2J",
    "<script>alert(1)</script>",
    "javascript:alert(1)",
    "../../etc/passwd",
    "results/x.json",
]


@pytest.fixture(scope="module")
def workdir() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="improvements-props-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def assert_positioned(report: Report, text_lines: int | None = None) -> None:
    for p in report.problems:
        assert p.code in CODES, p
        assert p.line >= 1 and p.col >= 1, p
        assert p.message, p
        if text_lines is not None:
            # A position may point one past the last line (the end of the stream), no further.
            assert p.line <= text_lines + 1, p


def check_bytes(data: bytes, folder: Path, model: type = Record) -> Report:
    """Load `data` as one file with every entry point; none may raise."""
    path = folder / "01-fuzz.yaml"
    path.write_bytes(data)
    report = Report()
    loaded = load_file(path, model, "improvements/01-fuzz.yaml", report)
    # YAML also breaks lines at \r, \x85, U+2028 and U+2029; splitlines knows them all (and more).
    lines = len(data.decode("utf-8", "replace").splitlines()) + 1
    assert_positioned(report, lines)
    if loaded.model is None:
        assert not report.ok, "an invalid file must be reported"
    else:
        assert report.ok
    # The two halves on their own agree with load_file.
    try:
        parse(read_text(path))
    except Exception as exc:  # only YamlProblem may escape
        assert type(exc).__name__ == "YamlProblem", exc
    return report


def check_project(files: dict[str, bytes], folder: Path) -> Report:
    """A campaign folder holding `files`; load_project must report, never raise."""
    root = folder / "proj"
    shutil.rmtree(root, ignore_errors=True)
    (root / "improvements").mkdir(parents=True)
    (root / "results").mkdir()
    shutil.copy(CAMPAIGN, root / "improvements" / "campaign.yaml")
    for name, data in files.items():
        (root / "improvements" / name).write_bytes(data)
    report = Report()
    load_project(root, report)
    assert_positioned(report)
    return report


# --- random text ---------------------------------------------------------------------------

yamlish = st.lists(st.sampled_from(TOKENS) | st.text(max_size=4), max_size=60).map("".join)


@SETTINGS
@given(text=yamlish)
def test_random_yamlish_text(text: str, workdir: Path) -> None:
    check_bytes(text.encode("utf-8", "surrogatepass"), workdir)


@SETTINGS
@given(data=st.binary(max_size=300))
def test_random_bytes(data: bytes, workdir: Path) -> None:
    check_bytes(data, workdir)


# --- text mutations of the shipped records -------------------------------------------------


def _mutate_lines(lines: list[bytes], op: str, i: int, j: int, junk: bytes) -> list[bytes]:
    if not lines:
        return [junk]
    i, j = i % len(lines), j % len(lines)
    out = list(lines)
    if op == "delete":
        del out[i]
    elif op == "duplicate":
        out.insert(i, out[i])
    elif op == "swap":
        out[i], out[j] = out[j], out[i]
    elif op == "insert":
        pos = j % (len(out[i]) + 1)
        out[i] = out[i][:pos] + junk + out[i][pos:]
    elif op == "indent":
        out[i] = b"\t" + out[i] if j % 2 else b"   " + out[i]
    elif op == "dedent":
        out[i] = out[i].lstrip(b" ")
    elif op == "truncate":
        return [*out[:i], out[i][: j % (len(out[i]) + 1)]]
    return out


mutation = st.tuples(
    st.sampled_from(["delete", "duplicate", "swap", "insert", "indent", "dedent", "truncate"]),
    st.integers(0, 10_000),
    st.integers(0, 10_000),
    st.sampled_from([t.encode() for t in TOKENS]) | st.binary(min_size=1, max_size=6),
)


@SETTINGS
@given(
    source=st.sampled_from([*SHIPPED, CAMPAIGN]),
    mutations=st.lists(mutation, min_size=1, max_size=6),
)
def test_text_mutations_of_shipped_files(source: Path, mutations: list[Any], workdir: Path) -> None:
    lines = source.read_bytes().splitlines(keepends=True)
    for op, i, j, junk in mutations:
        lines = _mutate_lines(lines, op, i, j, junk)
    model = Campaign if source == CAMPAIGN else Record
    check_bytes(b"".join(lines), workdir, model)


# --- structural mutations ------------------------------------------------------------------

other_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**20), 10**20)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20)
    | st.sampled_from(["adopted", "blocked", "superseded", "open", "output_throughput", "--flag x", "no-such-slug"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


def _paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(data, dict):
        for k, v in data.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            out += _paths(v, (*prefix, i))
    return out


def _apply(data: Any, path: tuple[Any, ...], op: str, value: Any) -> Any:
    if not path:
        return value if op == "replace" else data
    parent = data
    for part in path[:-1]:
        parent = parent[part]
    last = path[-1]
    if op == "replace":
        parent[last] = value
    elif op == "delete":
        del parent[last]
    elif op == "rename" and isinstance(parent, dict):
        parent[f"{last}x"] = parent.pop(last)
    elif op == "wrap":
        parent[last] = [parent[last]]
    return data


@SETTINGS
@given(
    source=st.sampled_from([*SHIPPED, CAMPAIGN]),
    edits=st.lists(
        st.tuples(st.integers(0, 10_000), st.sampled_from(["replace", "delete", "rename", "wrap"]), other_values),
        min_size=1,
        max_size=4,
    ),
)
def test_structural_mutations(source: Path, edits: list[Any], workdir: Path) -> None:
    data = yaml.safe_load(source.read_text(encoding="utf-8"))
    for index, op, value in edits:
        paths = _paths(data)
        data = _apply(data, paths[index % len(paths)], op, value)
    text = yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
    model = Campaign if source == CAMPAIGN else Record
    check_bytes(text.encode("utf-8", "surrogatepass"), workdir, model)


# --- whole campaigns -----------------------------------------------------------------------

file_names = st.sampled_from(
    ["01-a.yaml", "01-b.yaml", "02-a.yaml", "1-short.yaml", "03-Bad.yaml", "04-x.yml", "notes.txt", "05-c.yaml"]
)


@settings(SETTINGS, max_examples=60)
@given(
    files=st.dictionaries(
        file_names,
        st.sampled_from([p.read_bytes() for p in SHIPPED]) | yamlish.map(lambda t: t.encode("utf-8", "surrogatepass")),
        max_size=4,
    )
)
def test_projects_of_shipped_and_random_records(files: dict[str, bytes], workdir: Path) -> None:
    check_project(files, workdir)


@pytest.mark.parametrize("source", SHIPPED, ids=lambda p: p.name)
def test_shipped_records_load_cleanly(source: Path, workdir: Path) -> None:
    # The property tests mutate these; the originals themselves must load without a problem,
    # or the mutations would only ever test the error path.
    report = check_bytes(source.read_bytes(), workdir)
    assert report.ok, [p.text() for p in report.problems]


# --- escaped record text never becomes live HTML --------------------------------------------

HTML_TOKENS = [
    "<script>",
    "</script>",
    "<img src=x onerror=alert(1)>",
    "<svg onload=alert(1)>",
    "<iframe src=javascript:alert(1)>",
    "<div markdown=1>",
    "</div>",
    "<details open ontoggle=alert(1)>",
    "[x](javascript:alert(1))",
    "![x](javascript:alert(1))",
    "[x]: javascript:alert(1)",
    "<javascript:alert(1)>",
    "{: onclick=alert(1)}",
    "*[HTML]: x",
    "[^1]",
    "`",
    "``",
    "```",
    "~~~",
    "\\",
    "&",
    "&lt;",
    "&#60;",
    "|",
    "\n",
    "\n\n",
    "    ",
    "# ",
    "- ",
    "1. ",
    "> ",
    "!!! note ",
    "***",
    "---",
    "===",
    ": ",
    "#!js ",
    "x",
    " ",
]
_LIVE_TAGS = {"script", "img", "svg", "iframe", "object", "embed", "math", "style", "details", "form", "input"}


def _site_markdown() -> Any:
    import markdown

    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    extensions: list[str] = []
    configs: dict[str, Any] = {}
    for ext in config.get("markdown_extensions", []):
        if isinstance(ext, dict):
            ((name, conf),) = ext.items()
            extensions.append(name)
            configs[name] = conf or {}
        else:
            extensions.append(ext)
    return markdown.Markdown(extensions=extensions, extension_configs=configs)


def _live(html: str) -> list[str]:
    from html.parser import HTMLParser

    found: list[str] = []

    class Finder(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            if tag in _LIVE_TAGS:
                found.append(tag)
            for key, value in attrs:
                if key.startswith("on") or (value or "").strip().lower().startswith(("javascript:", "data:")):
                    found.append(f"{tag}[{key}]")

    Finder().feed(html)
    return found


# Text between backticks, so that code spans (kept as written) hold every kind of token too:
# a span that markdown reads differently from the escaper would publish its content raw.
_span = st.tuples(st.sampled_from(["`", "``"]), st.lists(st.sampled_from(HTML_TOKENS), max_size=6)).map(
    lambda t: t[0] + "".join(t[1]) + t[0]
)
html_text = st.lists(st.sampled_from(HTML_TOKENS) | _span, min_size=1, max_size=12).map("".join)


@settings(SETTINGS, max_examples=300)
@given(text=html_text)
def test_escaped_text_renders_no_live_html(text: str) -> None:
    from generator.views.markdown import cell, code, inline, link, paragraphs

    md = _site_markdown()
    for name, shown in [
        ("paragraphs", str(paragraphs(text))),
        ("admonition", "!!! note\n\n" + str(paragraphs(text, 4))),
        ("list item", "- " + str(paragraphs(text, 2)).lstrip()),
        ("heading", "# " + str(inline(text))),
        ("table cell", "| a |\n| --- |\n| " + str(cell(text)) + " |"),
        ("link", "- " + str(link(text, text))),
        ("code", "x " + str(code(text))),
    ]:
        html = md.reset().convert(shown)
        assert _live(html) == [], (name, shown, html)
