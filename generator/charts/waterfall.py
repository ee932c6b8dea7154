"""The road to a goal: baseline, each step's change, the current level and the goals."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

from generator.charts.axes import tick_room, y_axis
from generator.charts.data import Goal, Step
from generator.charts.scale import Linear, nice_ticks
from generator.charts.svg import MARGIN, SMALL, Text, chart_width, fitted, frame, heading_top, legend, render, vwhisker
from generator.charts.text import number, one_line, signed, text_width


@dataclass(frozen=True)
class _Column:
    x: float
    w: float
    y0: float  # top edge, px
    y1: float  # bottom edge, px
    cls: str
    whisker: str | None
    value: Text
    label: Text


def _domain(values: list[float]) -> list[float]:
    lo, hi = min(values), max(values)
    # From zero when the levels are far apart anyway; else the axis starts near the data,
    # so a few percent on a large baseline stay visible (the tick labels say where it starts).
    if lo <= 0 or lo <= 0.5 * hi:
        lo = min(lo, 0.0)
    else:
        lo -= (hi - lo) * 0.25 or abs(lo) * 0.05
    return nice_ticks(lo, hi, 5)


def waterfall(
    chart_id: str,
    title: str,
    baseline: float,
    steps: Sequence[Step],
    *,
    axis_label: str,
    goals: Sequence[Goal] = (),
    current: float | None = None,
    current_interval: tuple[float, float] | None = None,
    labels: tuple[str, str] = ("baseline", "current"),
    width: int | None = None,
    height: int = 400,
) -> str:
    """Baseline, one column per step from the level before it, the current level, goal lines.

    `current` defaults to the last step's level; when the caller states another value (measured
    on its own), it is drawn as stated and the description says what the steps add up to.
    `current_interval` (the analysis' interval of the current level) is drawn on its column.

    Over 60 lines: one SVG drawn top to bottom (scale, columns, connectors, goals, labels), each
    part placed by the ones before it; split up, they would pass every coordinate between them.
    """
    width = chart_width(width)
    # One function on purpose: the positions depend on each other (slot width on the number of
    # breaks, bar feet on the axis floor, connectors on the previous column), and split up they
    # would pass a dozen values between the parts.
    levels = [baseline, *(s.level for s in steps)]
    end = levels[-1] if current is None else current
    values = [*levels, end, *(g.target for g in goals)]
    values += [lv + v for lv, s in zip(levels, steps, strict=False) if s.interval for v in s.interval]
    values += list(current_interval or ())
    ticks = _domain(values)
    breaks = [i for i, s in enumerate(steps) if s.chain_break]
    entries = [("level", "level"), ("step-up", "increase"), ("step-down", "decrease")]
    entries += [("whisker", "interval")] if current_interval or any(s.interval for s in steps) else []
    entries += [("goal", "goal")] if goals else []
    legend_items, legend_h = legend(entries, heading_top(title, width), width)

    top = heading_top(title, width) + legend_h + 24
    notes = [
        f"‖{n + 1} chain breaks before {one_line(steps[i].label)}: {one_line(steps[i].chain_break or '')}"
        for n, i in enumerate(breaks)
    ]
    bottom = height - 48 - 16 * len(notes)
    goal_texts = [f"{one_line(g.label)} {number(g.target)}" for g in goals]
    goal_room = min(max((text_width(t, SMALL) for t in goal_texts), default=0.0), width * 0.25)
    left = MARGIN + tick_room(ticks, number)
    right = width - MARGIN - (goal_room + 8 if goals else 0)
    scale = Linear(ticks[0], ticks[-1], bottom, top)
    slot = (right - left) / (len(steps) + 2 + 0.5 * len(breaks))
    floor = scale(ticks[0])

    columns: list[_Column] = []
    connectors: list[tuple[float, float, float]] = []
    gaps: list[tuple[float, Text]] = []
    x = left
    columns.append(_level_column(x, slot, scale(baseline), floor, number(baseline), labels[0], bottom))
    for i, step in enumerate(steps):
        x += slot
        if step.chain_break:
            n = breaks.index(i) + 1
            gaps.append((x + slot / 4, Text(x + slot / 4, top - 8, f"‖{n}", f"‖{n}", "middle", "ink small")))
            x += slot / 2
        else:
            connectors.append((columns[-1].x + columns[-1].w, x + slot * 0.2, scale(levels[i])))
        columns.append(_step_column(x, slot, levels[i], step, scale, bottom))
    x += slot
    if math.isclose(end, levels[-1], rel_tol=1e-9, abs_tol=1e-12):
        connectors.append((columns[-1].x + columns[-1].w, x + slot * 0.2, scale(end)))
    last = _level_column(x, slot, scale(end), floor, number(end), labels[1], bottom)
    if current_interval is not None:
        mid, (lo, hi) = last.x + last.w / 2, (scale(v) for v in current_interval)
        # The value's text above the whisker's top, not inside it.
        value = dataclasses.replace(last.value, y=min(last.value.y, min(lo, hi) - 5))
        last = dataclasses.replace(last, whisker=vwhisker(mid, min(lo, hi), max(lo, hi), 4), value=value)
    columns.append(last)

    goal_lines = [
        (scale(g.target), fitted(t, right + 6, scale(g.target) + 4, goal_room, SMALL, cls="ink small"))
        for g, t in zip(goals, goal_texts, strict=True)
    ]
    axis = y_axis(scale, ticks, (left, top, right, bottom), number, axis_label)
    note_texts = [
        fitted(t, MARGIN, bottom + 40 + 16 * k, width - 2 * MARGIN, SMALL, cls="ink note") for k, t in enumerate(notes)
    ]
    desc = _describe(title, axis_label, baseline, steps, levels, end, goals, labels)
    context = frame(chart_id, title, desc, width)
    return render(
        "waterfall.svg.j2",
        **context,
        height=height,
        legend=legend_items,
        axis=axis,
        columns=columns,
        connectors=connectors,
        gaps=gaps,
        gap_top=top - 4,
        gap_bottom=bottom,
        goals=goal_lines,
        goal_left=left,
        goal_right=right,
        notes=note_texts,
    )


def _level_column(x: float, slot: float, y: float, floor: float, value: str, label: str, bottom: float) -> _Column:
    w = slot * 0.6
    mid = x + slot * 0.2 + w / 2
    return _Column(
        x + slot * 0.2,
        w,
        min(y, floor),
        max(y, floor),
        "level",
        None,
        Text(mid, min(y, floor) - 5, value, value, "middle", "ink small"),
        fitted(label, mid, bottom + 16, slot - 4, SMALL, "middle", "ink small"),
    )


def _step_column(x: float, slot: float, before: float, step: Step, scale: Linear, bottom: float) -> _Column:
    w = slot * 0.6
    mid = x + slot * 0.2 + w / 2
    a, b = scale(before), scale(before + step.delta)
    whisker = None
    reach = min(a, b)
    if step.interval is not None:
        lo, hi = scale(before + step.interval[0]), scale(before + step.interval[1])
        whisker = vwhisker(mid, min(lo, hi), max(lo, hi), 4)
        reach = min(reach, lo, hi)
    delta = signed(step.shown)
    return _Column(
        x + slot * 0.2,
        w,
        min(a, b),
        max(a, b),
        "step-up" if step.delta >= 0 else "step-down",
        whisker,
        Text(mid, reach - 5, delta, delta, "middle", "ink small"),
        fitted(step.label, mid, bottom + 16, slot - 4, SMALL, "middle", "ink small"),
    )


def _describe(
    title: str,
    axis_label: str,
    baseline: float,
    steps: Sequence[Step],
    levels: list[float],
    end: float,
    goals: Sequence[Goal],
    labels: tuple[str, str],
) -> str:
    parts = [f"{title}. {axis_label}: {labels[0]} {number(baseline)}"]
    for step, level in zip(steps, levels[1:], strict=True):
        text = f"{one_line(step.label)} {signed(step.shown)}"
        if step.interval is not None:
            text += f" (interval {signed(step.interval[0])} to {signed(step.interval[1])})"
        if step.chain_break:
            text = f"chain breaks ({one_line(step.chain_break)}), then {text}"
        parts.append(f"{text} to {number(level)}")
    last = f"{labels[1]} {number(end)}"
    if not math.isclose(end, levels[-1], rel_tol=1e-9, abs_tol=1e-12):
        last += f" as stated (the steps add up to {number(levels[-1])})"
    parts.append(last)
    parts += [f"goal {one_line(g.label)} {number(g.target)}, {signed(g.distance)} from {labels[1]}" for g in goals]
    return "; ".join(parts) + "."
