"""Axes with their ticks, grid lines and labels, in pixels, for the templates to draw."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from generator.charts.scale import Linear, Log2, nice_ticks
from generator.charts.svg import SMALL, Text, fitted
from generator.charts.text import text_width


@dataclass(frozen=True)
class Tick:
    x: float
    y: float
    zero: bool
    text: Text


@dataclass(frozen=True)
class Axis:
    ticks: tuple[Tick, ...]
    left: float
    right: float
    top: float
    bottom: float
    label: Text


def x_axis(
    scale: Linear | Log2,
    ticks: Sequence[float],
    box: tuple[float, float, float, float],
    fmt: Callable[[float], str],
    label: str,
    width: float,
) -> Axis:
    """A bottom axis under the box (left, top, right, bottom), vertical grid lines across it."""
    left, top, right, bottom = box
    out = tuple(Tick(scale(t), bottom, t == 0, _plain(fmt(t), scale(t), bottom + 15, "middle")) for t in ticks)
    title = fitted(label, (left + right) / 2, bottom + 32, width - 20, SMALL, "middle", "ink small")
    return Axis(out, left, right, top, bottom, title)


def y_axis(
    scale: Linear,
    ticks: Sequence[float],
    box: tuple[float, float, float, float],
    fmt: Callable[[float], str],
    label: str,
) -> Axis:
    """A left axis beside the box, horizontal grid lines across it; its label above the box."""
    left, top, right, bottom = box
    out = tuple(Tick(left, scale(t), t == 0, _plain(fmt(t), left - 5, scale(t) + 4, "end")) for t in ticks)
    title = fitted(label, left, top - 10, right - left, SMALL, "start", "ink small")
    return Axis(out, left, right, top, bottom, title)


def _plain(text: str, x: float, y: float, anchor: str) -> Text:
    # Tick labels are never cut: `fitting_ticks` chooses fewer ticks instead.
    return Text(x, y, text, text, anchor, "ink small")


def fitting_ticks(lo: float, hi: float, room: float, fmt: Callable[[float], str]) -> tuple[list[float], float, float]:
    """Round ticks inside [lo, hi] whose labels fit side by side in `room` px, and the axis domain.

    The domain is the data's own range (a little padded), not the outer ticks, so a chart of
    -52..+52 spends its width on the data rather than on an axis out to -100.
    """
    if hi == lo:
        pad = abs(lo) * 0.1 or 1.0
        lo, hi = lo - pad, hi + pad
    pad = (hi - lo) * 0.03
    d0, d1 = lo - (pad if lo != 0 else 0), hi + (pad if hi != 0 else 0)
    best: list[float] = []
    for count in (6, 5, 4, 3, 2):
        ticks = [t for t in nice_ticks(lo, hi, count) if d0 - 1e-9 <= t <= d1 + 1e-9]
        widest = max((text_width(fmt(t), SMALL) for t in ticks), default=0.0)
        if len(ticks) >= 2 and (widest + 8) * len(ticks) <= room:
            return ticks, d0, d1
        best = best or ticks
    return (best if len(best) <= 2 else [best[0], best[-1]]), d0, d1


def tick_room(ticks: Sequence[float], fmt: Callable[[float], str]) -> float:
    """Pixels the widest tick label of a left axis needs."""
    return max((text_width(fmt(t), SMALL) for t in ticks), default=0.0) + 12
