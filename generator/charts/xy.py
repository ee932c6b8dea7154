"""Charts on two axes: the throughput-interactivity frontier, and a metric against a swept setting."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import Any

from generator.charts.axes import fitting_ticks, tick_room, x_axis, y_axis
from generator.charts.data import Limit, Mark, Series, SweepPoint
from generator.charts.scale import Linear, Log2, nice_ticks
from generator.charts.svg import MARGIN, SMALL, Text, chart_width, fitted, frame, heading_top, legend, render, vwhisker
from generator.charts.text import number, one_line, px, text_width

SHAPES = ("circle", "square", "triangle", "diamond", "circle")


def _y(values: list[float], top: float, bottom: float) -> tuple[list[float], Linear]:
    ticks = nice_ticks(min(0.0, *values), max(values), 5)
    return ticks, Linear(ticks[0], ticks[-1], bottom, top)


def frontier(
    chart_id: str,
    title: str,
    series: Sequence[Series],
    *,
    limits: Sequence[Limit] = (),
    marks: Sequence[Mark] = (),
    x_label: str = "interactivity (tokens/s per user)",
    y_label: str = "output throughput per GPU (tokens/s)",
    width: int | None = None,
    height: int = 440,
) -> str:
    """Each series as a line through its points, each point labelled by its load; limits as lines.

    A point's `note` is its <title> (a hover, or a tap, names it); `marks` are drawn ringed
    (capacity under the SLO). A load label that would overlap another label or a point is left
    out: its point's title still names the load.

    Over 60 lines: one SVG drawn in order (axes, limits, lines, points, labels), the labels
    placed by a nested helper that must see every box drawn before it.
    """
    width = chart_width(width)
    points = [p for s in series for p in s.points]
    if not points:
        raise ValueError("a frontier needs at least one point")
    entries = [(f"series {i % 5} {SHAPES[i % 5]}", s.label) for i, s in enumerate(series)]
    entries += [("limit", lim.label) for lim in limits]
    entries += [("retained", "capacity under the SLO")] if marks else []
    legend_items, legend_h = legend(entries, heading_top(title, width), width)
    top, bottom = heading_top(title, width) + legend_h + 24, height - 48
    ys = [p.y for p in points] + [lim.value for lim in limits if lim.axis == "y"] + [m.y for m in marks]
    ticks_y, sy = _y(ys, top, bottom)
    left, right = MARGIN + tick_room(ticks_y, number), width - MARGIN - 30
    xs = [p.x for p in points] + [lim.value for lim in limits if lim.axis == "x"] + [m.x for m in marks]
    ticks_x, d0, d1 = fitting_ticks(min(0.0, *xs), max(xs), right - left, number)
    sx = Linear(d0, d1, left, right)
    placed = [(sx(p.x) - 6, sy(p.y) - 6, sx(p.x) + 6, sy(p.y) + 6) for p in points]
    drawn = []
    for i, s in enumerate(series):
        pts = [(sx(p.x), sy(p.y)) for p in s.points]
        labels = []
        for p, (x, y) in zip(s.points, pts, strict=True):
            label = _point_label(p.label, x, y, (left, top, width - 2, bottom), placed) if p.label else None
            if label is not None:
                labels.append(label)
        drawn.append(
            {
                "k": i % 5,
                "shape": SHAPES[i % 5],
                "points": pts,
                "notes": [one_line(p.note) for p in s.points],
                "labels": labels,
            }
        )
    rings = [{"x": sx(m.x), "y": sy(m.y), "note": one_line(m.note)} for m in marks]
    lines = []
    for lim in limits:
        if lim.axis == "x":
            x = sx(lim.value)
            # At the foot of the line: a frontier runs high on the left, where such a limit usually sits.
            label = fitted(lim.label, x + 4, bottom - 6, max(right - x - 4, 40), SMALL, cls="ink small")
            lines.append((f"M{px(x)} {px(top)}V{px(bottom)}", label))
        else:
            y = sy(lim.value)
            label = fitted(lim.label, right, y - 5, right - left, SMALL, "end", "ink small")
            lines.append((f"M{px(left)} {px(y)}H{px(right)}", label))
    axis_x = x_axis(sx, ticks_x, (left, top, right, bottom), number, x_label, width)
    axis_y = y_axis(sy, ticks_y, (left, top, right, bottom), number, y_label)
    desc = f"{title}. {y_label} against {x_label}: " + "; ".join(
        f"{one_line(s.label)}: "
        + ", ".join(
            f"{number(p.y)} at {number(p.x)}" + (f" ({one_line(p.label)})" if p.label else "") for p in s.points
        )
        for s in series
    )
    desc += "".join(f"; limit {one_line(lim.label)} at {lim.axis} = {number(lim.value)}" for lim in limits)
    desc += "".join(f"; {one_line(m.note)}" for m in marks) + "."
    context = frame(chart_id, title, desc, width)
    return render(
        "frontier.svg.j2",
        **context,
        height=height,
        legend=legend_items,
        axis_x=axis_x,
        axis_y=axis_y,
        series=drawn,
        limits=lines,
        rings=rings,
    )


Box = tuple[float, float, float, float]


def _point_label(label: str, x: float, y: float, room: Box, placed: list[Box]) -> Text | None:
    """A load label beside its point where it overlaps nothing drawn so far, else None.

    Tried up and right, up and left, down and right, down and left; kept inside `room` (the
    plot's left, top, the chart's right edge, the plot's bottom).
    """
    text = one_line(label)
    w = text_width(text, SMALL)
    rise = SMALL * 0.8  # ascent above the baseline
    for dx, dy, anchor in ((6, -6, "start"), (-6, -6, "end"), (6, 6 + rise, "start"), (-6, 6 + rise, "end")):
        x0 = x + dx if anchor == "start" else x + dx - w
        box = (x0, y + dy - rise, x0 + w, y + dy + SMALL * 0.25)
        inside = box[0] >= room[0] and box[1] >= room[1] and box[2] <= room[2] and box[3] <= room[3]
        if inside and not any(_overlaps(box, other) for other in placed):
            placed.append(box)
            return Text(x + dx, y + dy, text, text, anchor, "ink small")
    return None


def _overlaps(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def sweep_chart(
    chart_id: str,
    title: str,
    points: Sequence[SweepPoint],
    *,
    parameter: str,
    axis_label: str,
    retained: str | float | None = None,
    width: int | None = None,
    height: int = 380,
) -> str:
    """The metric at each value of a swept setting, with intervals, and the value retained ringed.

    Longer than most: one SVG drawn in order (axes, intervals, points, the retained ring, labels).
    """
    width = chart_width(width)
    if not points:
        raise ValueError("a sweep chart needs at least one point")
    if retained is not None and all(p.x != retained for p in points):
        raise ValueError(f"the retained value {retained!r} is not among the swept values")
    numeric = not any(isinstance(p.x, str) for p in points)
    entries = [("series 0 circle" if numeric else "dot 0 circle", axis_label)]
    entries += [("whisker", "interval")] if any(p.interval for p in points) else []
    entries += [("retained", "retained value")] if retained is not None else []
    legend_items, legend_h = legend(entries, heading_top(title, width), width)
    top, bottom = heading_top(title, width) + legend_h + 24, height - 48
    values = [p.value for p in points] + [v for p in points if p.interval for v in p.interval]
    ticks_y, sy = _y(values, top, bottom)
    left, right = MARGIN + tick_room(ticks_y, number), width - MARGIN - 20
    ordered, xpos, room = _x_positions(points, left, right)
    names = [x if isinstance(x, str) else number(x) for x in (p.x for p in ordered)]
    drawn: list[dict[str, Any]] = []
    for p, x, name in zip(ordered, xpos, names, strict=True):
        y = sy(p.value)
        whisker = vwhisker(x, sy(max(p.interval)), sy(min(p.interval)), 4) if p.interval else None
        reach = min(y, sy(max(p.interval))) if p.interval else y
        mark = Text(x, reach - 12, "retained", "retained", "middle", "ink small") if p.x == retained else None
        # Centred under its point, so never wider than twice the way to the nearer edge.
        edge = 2 * min(x - MARGIN, width - MARGIN - x)
        tick = fitted(name, x, bottom + 15, min(room, edge), SMALL, "middle", "ink small")
        drawn.append({"x": x, "y": y, "whisker": whisker, "retained": mark, "tick": tick})
    axis_y = y_axis(sy, ticks_y, (left, top, right, bottom), number, axis_label)
    x_title = fitted(parameter, (left + right) / 2, bottom + 32, width - 2 * MARGIN, SMALL, "middle", "ink small")
    desc = f"{title}. {axis_label} against {one_line(parameter)}: " + "; ".join(
        f"{name}: {number(p.value)}"
        + (f" (interval {number(p.interval[0])} to {number(p.interval[1])})" if p.interval else "")
        + (f" ({p.note})" if p.note and not p.interval else "")
        + (", retained" if p.x == retained else "")
        for p, name in zip(ordered, names, strict=True)
    )
    context = frame(chart_id, title, desc + ".", width)
    # A line between categories would suggest values in between: only numbers are joined.
    path = "M" + "L".join(f"{px(d['x'])} {px(d['y'])}" for d in drawn) if numeric and len(drawn) > 1 else None
    return render(
        "sweep.svg.j2",
        **context,
        height=height,
        legend=legend_items,
        axis_y=axis_y,
        x_title=x_title,
        bottom=bottom,
        points=drawn,
        path=path,
    )


def _x_positions(
    points: Sequence[SweepPoint], left: float, right: float
) -> tuple[list[SweepPoint], list[float], float]:
    """Points in axis order, their x in px, and the room for each tick label.

    Categorical values (any text) keep the caller's order, evenly spaced; numbers are placed by
    value, on a log-2 axis when they span 16x or more (concurrency 1 ... 256 doubles).
    """
    inner_left, inner_right = left + 30, right - 30
    if any(isinstance(p.x, str) for p in points):
        slot = (inner_right - inner_left) / max(len(points) - 1, 1)
        xs = [inner_left + i * slot for i in range(len(points))] if len(points) > 1 else [(left + right) / 2]
        return list(points), xs, slot - 4 if len(points) > 1 else right - left
    ordered = sorted(points, key=lambda p: float(p.x))
    lo, hi = float(ordered[0].x), float(ordered[-1].x)
    scale: Linear | Log2
    if lo > 0 and hi / lo >= 16:
        scale = Log2(lo, hi, inner_left, inner_right)
    else:
        scale = Linear(lo, hi, inner_left, inner_right)
    xs = [scale(float(p.x)) for p in ordered]
    gaps = [b - a for a, b in pairwise(xs)]
    return ordered, xs, max(min(gaps, default=right - left) - 4, 24)


def latency_chart(
    chart_id: str,
    title: str,
    series: Sequence[Series],
    *,
    limits: Sequence[Limit] = (),
    x_label: str = "concurrency",
    y_label: str = "latency (ms)",
    width: int | None = None,
    height: int = 400,
) -> str:
    """A latency against the load of a sweep, one line per side; the SLO and capacity as lines.

    The x axis is log-2 when the loads span 16x or more (concurrency 1 ... 256 doubles), its
    ticks at the loads measured. Limits on "y" are latency limits (the SLO), on "x" loads
    (where capacity under the SLO sits); their labels are fitted inside the plot, never cut
    by its edge.

    Over 60 lines: one SVG drawn in order (axis kind, ticks, limits, lines, legend), each part
    placed by the scale and the labels the ones before it chose.
    """
    width = chart_width(width)
    points = [p for s in series for p in s.points]
    if not points:
        raise ValueError("a latency chart needs at least one point")
    entries = [(f"series {i % 5} {SHAPES[i % 5]}", s.label) for i, s in enumerate(series)]
    entries += [("limit", lim.label) for lim in limits if lim.axis == "y"]
    entries += [("goal", lim.label) for lim in limits if lim.axis == "x"]
    legend_items, legend_h = legend(entries, heading_top(title, width), width)
    top, bottom = heading_top(title, width) + legend_h + 24, height - 48
    ys = [p.y for p in points] + [lim.value for lim in limits if lim.axis == "y"]
    ticks_y, sy = _y(ys, top, bottom)
    left, right = MARGIN + tick_room(ticks_y, number), width - MARGIN - 20
    loads = sorted({p.x for p in points} | {lim.value for lim in limits if lim.axis == "x"})
    measured = sorted({p.x for p in points})
    lo, hi = loads[0], loads[-1]
    inner_left, inner_right = left + 20, right - 20
    sx: Linear | Log2
    if lo > 0 and hi / lo >= 16:
        sx = Log2(lo, hi, inner_left, inner_right)
        ticks_x = measured
    else:
        ticks_x, d0, d1 = fitting_ticks(min(0.0, lo), hi, right - left, number)
        sx = Linear(d0, d1, left, right)
    drawn = []
    for i, s in enumerate(series):
        pts = [(sx(p.x), sy(p.y)) for p in sorted(s.points, key=lambda p: p.x)]
        drawn.append({"k": i % 5, "shape": SHAPES[i % 5], "points": pts, "labels": []})
    lines = []
    for lim in limits:
        if lim.axis == "y":
            y = sy(lim.value)
            label = fitted(lim.label, right, y - 5, right - left, SMALL, "end", "ink small")
            lines.append((f"M{px(left)} {px(y)}H{px(right)}", label, "limit"))
        else:
            x = sx(lim.value)
            # Beside the line, on whichever side has the room.
            room_right, room_left = right - x - 4, x - left - 4
            if room_right >= room_left:
                label = fitted(lim.label, x + 4, top + 12, room_right, SMALL, cls="ink small")
            else:
                label = fitted(lim.label, x - 4, top + 12, room_left, SMALL, "end", "ink small")
            lines.append((f"M{px(x)} {px(top)}V{px(bottom)}", label, "goal"))
    axis_x = x_axis(sx, ticks_x, (left, top, right, bottom), number, x_label, width)
    axis_y = y_axis(sy, ticks_y, (left, top, right, bottom), number, y_label)
    desc = f"{title}. {y_label} against {x_label}: " + "; ".join(
        f"{one_line(s.label)}: " + ", ".join(f"{number(p.y)} at {number(p.x)}" for p in s.points) for s in series
    )
    desc += "".join(f"; {one_line(lim.label)}" for lim in limits) + "."
    context = frame(chart_id, title, desc, width)
    return render(
        "latency.svg.j2",
        **context,
        height=height,
        legend=legend_items,
        axis_x=axis_x,
        axis_y=axis_y,
        series=drawn,
        limits=lines,
    )
