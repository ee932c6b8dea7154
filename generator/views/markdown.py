"""Record text made safe for markdown, and the template filters that lay it out.

Every string from a record goes through `md_escape` on its way out (the template
environment's `finalize`), so record text cannot inject HTML that runs on the site.
"""

from __future__ import annotations

import html
import re
from typing import Any
from urllib.parse import quote as url_quote

from markupsafe import Markup

from generator.base.shell import visible
from generator.model.quantity import fmt_number

# A code span as Python-Markdown finds one: a run of backticks not after a backslash, content,
# the same run. Markdown shows its content literally and escapes it itself, so it is left as
# written. A span stays on one line: a line inside it could start a heading, a rule, a list or
# an HTML block, and markdown would end the span there and read the rest as raw HTML. Outside
# spans every backtick is escaped too, so markdown cannot pair one with a span's opening run
# and read that span's content as text; when this pattern and markdown disagree, the text is
# escaped, never the other way round.
_CODE_SPAN = re.compile(r"(?<![`\\])(`+)(?!`)([^\n]+?)(?<!`)\1(?!`)")
# `<`, `>`, `&` stop raw HTML and entities; brackets stop links (`[x](javascript:...)`),
# footnotes and abbreviations; braces stop attribute lists (`{: onclick=...}`); a backslash
# cannot then escape a backtick to end a code span early. Entities work in every flavour.
_ENTITIES = {
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;",
    "[": "&#91;",
    "]": "&#93;",
    "{": "&#123;",
    "}": "&#125;",
    "\\": "&#92;",
    "`": "&#96;",
}
_ESCAPE_RE = re.compile("[&<>\\[\\]{}\\\\`]")
_PLAIN = re.compile("[^&<>\\[\\]{}\\\\`]*")
_PLAIN_PIPES = re.compile("[^&<>\\[\\]{}\\\\`|]*")


def _escape_plain(text: str, *, pipes: bool = False) -> str:
    out = _ESCAPE_RE.sub(lambda m: _ENTITIES[m.group(0)], text)
    return out.replace("|", "&#124;") if pipes else out


def md_escape(text: str, *, pipes: bool = False) -> Markup:
    """User text made safe for markdown: no raw HTML, links or attributes; code spans kept.

    With `pipes`, a `|` outside code spans cannot split a table row either.
    """
    # Most text has none of the characters escaped here (and a code span needs a backtick):
    # then it is its own escape, found by one search in C instead of the walk below.
    if (_PLAIN_PIPES if pipes else _PLAIN).fullmatch(text):
        return Markup(text)
    return Markup(walk_escape(text, pipes=pipes))


def walk_escape(text: str, *, pipes: bool = False) -> str:
    """`md_escape`'s work: the text between code spans escaped, each span kept or written as HTML."""
    out: list[str] = []
    pos = 0
    for m in _CODE_SPAN.finditer(text):
        out.append(_escape_plain(text[pos : m.start()], pipes=pipes))
        out.append(_span(m.group(0), m.group(2), pipes=pipes))
        pos = m.end()
    out.append(_escape_plain(text[pos:], pipes=pipes))
    return "".join(out)


# What a code span may hold and still be passed to markdown as written. Python-Markdown reads
# raw HTML before it finds code spans, and with some text around a span (an unfinished `&#`)
# it takes a tag inside the span as HTML, moving the span's end; so does a pairing of
# backticks that differs from this module's. A span holding any of these is written as HTML
# instead, its content escaped.
_SPAN_UNSAFE = re.compile(r"[&<>\[\]{}\\|]")
_CODE_ENTITIES = {**_ENTITIES, "|": "&#124;", "*": "&#42;", "_": "&#95;", "~": "&#126;", "^": "&#94;", "=": "&#61;"}
_CODE_ESCAPE_RE = re.compile("[" + re.escape("".join(_CODE_ENTITIES)) + "]")


def _span(span: str, content: str, *, pipes: bool = False) -> str:
    """A code span as markdown, or as escaped HTML when its content could be read as more."""
    if not _SPAN_UNSAFE.search(content if pipes else content.replace("|", "")):
        return span
    # Markdown drops one space on each side of a span's content when both are there.
    if len(content) > 2 and content.startswith(" ") and content.endswith(" ") and content.strip():
        content = content[1:-1]
    return "<code>" + _CODE_ESCAPE_RE.sub(lambda m: _CODE_ENTITIES[m.group(0)], content) + "</code>"


def _text(value: Any) -> str:
    if isinstance(value, Markup):
        return str(value)
    return str(md_escape(str(value)))


def inline(value: Any) -> Markup:
    """Escaped text on one line, for list items and headings."""
    return Markup(" ".join(_text(value).split()))


def cell(value: Any) -> Markup:
    """Escaped text for a table cell: one line, pipes that do not split the row."""
    if isinstance(value, Markup):
        return Markup(" ".join(str(value).split()))
    return md_escape(" ".join(str(value).split()), pipes=True)


def paragraphs(value: Any, indent: int = 0) -> Markup:
    """Escaped text keeping its paragraphs, indented for an admonition or list item."""
    pad = " " * indent
    lines = _text(value).strip("\n").split("\n")
    return Markup("\n".join((pad + line) if line.strip() else "" for line in lines))


def code(value: Any) -> Markup:
    """Inline code, with a backtick fence longer than any run inside.

    Code is what a reader copies: a character they cannot see (a bidi override, a zero-width
    space) is written as its escape (`\\u202e`), so what they see is what they copy.
    """
    text = visible(" ".join(str(value).split()))
    longest = max((len(r) for r in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return Markup(_span(f"{fence}{pad}{text}{pad}{fence}", f"{pad}{text}{pad}", pipes=True))


def code_block(value: Any, lang: str = "", indent: int = 0) -> Markup:
    """A fenced code block whose fence no line of the content can close; characters a reader
    cannot see written as escapes, as in `code`."""
    text = visible(str(value).rstrip("\n"), "\t\n")
    longest = max((len(r) for r in re.findall(r"^\s*(`{3,})", text, re.M)), default=0)
    fence = "`" * max(3, longest + 1)
    pad = " " * indent
    lines = [f"{fence}{lang}", *text.split("\n"), fence]
    return Markup("\n".join((pad + line) if line else "" for line in lines))


# http(s), or relative with no colon at all, so no scheme (javascript:, data:) can hide in it.
_SAFE_URL = re.compile(r"^(https?://[^\s]+|[^:\s]+)$", re.I)


def safe_url(url: str) -> str | None:
    """The URL when it is http(s) or relative; None for javascript:, data: and other schemes."""
    url = url.strip()
    # The browser decodes entities in an href: `javascript&#58;...` has no colon here but one there.
    if not _SAFE_URL.match(url) or not _SAFE_URL.match(html.unescape(url)):
        return None
    return url_quote(url, safe="/:?#[]@!$&'*+,;=%~.-_")


def link(title: Any, url: str | None) -> Markup:
    shown = inline(title)
    target = safe_url(url) if url else None
    if target is None:
        return shown
    return Markup(f"[{shown}]({target})")


def linked(text: Any, links: Any) -> Markup:
    """Escaped prose (the `inline` filter's output) with each named file's path made a link:
    `links` holds (path, link) pairs, such as an earlier attempt's log a caveat names. A path in
    a code span is linked as the span; a bare one as the text shows it."""
    out = str(text)
    for path, url in links:
        target = safe_url(url)
        if target is None:
            continue
        span = str(code(path))
        if span in out:
            out = out.replace(span, f"[{span}]({target})")
        else:
            shown = str(inline(path))
            out = out.replace(shown, f"[{shown}]({target})")
    return Markup(out)


class TemplateFailure(Exception):
    """Raised inside a template for a value it must not print."""


def finalize(value: Any) -> Any:
    if isinstance(value, Markup):
        return str(value)
    if value is None:
        raise TemplateFailure("a template printed a value that is not set (None); test it with `if` first")
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return fmt_number(value)
    if isinstance(value, int):
        return str(value)
    return str(md_escape(str(value)))
