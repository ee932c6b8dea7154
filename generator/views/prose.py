"""Prose with its quoted numbers filled in: each `{{ record.result.metric.field }}` replaced by
the figure the analysis holds (analysis.figures), formatted as the pages format numbers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from generator.analysis.campaign import Analysis
from generator.analysis.figures import REFERENCE, Figure, lookup
from generator.model.quantity import fmt_number, fmt_percent


def figure_text(figure: Figure) -> str:
    v = figure.value
    if figure.kind == "word":
        return str(v)
    if figure.kind == "interval":
        assert isinstance(v, tuple)
        return f"{fmt_percent(v[0])} to {fmt_percent(v[1])}"
    assert isinstance(v, float | int)
    if figure.kind == "percent":
        return fmt_percent(v)
    if figure.kind == "share":
        return f"{v:.1f}%"
    if figure.kind == "ratio":
        return f"{v:.2f}x"
    if figure.kind == "count":
        return str(int(v))
    if figure.kind == "p":
        return f"{v:.2g}"
    return fmt_number(v)


def filled(text: str, analysis: Analysis) -> str:
    """`text` with every reference replaced; one that names nothing stays as written (`check`
    and the build refuse it before anything is rendered)."""
    if "{{" not in text:
        return text

    def one(m: Any) -> str:
        found = lookup(analysis, m.group(1))
        return m.group(0) if isinstance(found, str) else figure_text(found)

    return REFERENCE.sub(one, text)


def figures_of(analysis: Analysis) -> Callable[[str], str | None]:
    """A reference's text as the prose filters fill it (None where it names nothing): what a
    model keeps in its `figures` (`page_keys.keyed`)."""

    def fill(reference: str) -> str | None:
        found = lookup(analysis, reference)
        return None if isinstance(found, str) else figure_text(found)

    return fill


def filling(analysis: Analysis, inner: Callable[..., Any]) -> Callable[..., Any]:
    """A template filter that fills a text's references before `inner` escapes it."""

    def wrapped(value: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(value, str) and "{{" in value:
            value = filled(value, analysis)
        return inner(value, *args, **kwargs)

    return wrapped
