"""Bar charts of changes in percent, and strip charts of two samples."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from generator.charts.axes import Axis, fitting_ticks, x_axis
from generator.charts.data import DECISIONS, Bar
from generator.charts.scale import Linear
from generator.charts.svg import (
    MARGIN,
    SIZE,
    SMALL,
    Text,
    chart_width,
    fitted,
    frame,
    heading_top,
    hwhisker,
    legend,
    render,
)
from generator.charts.text import number, one_line, percent, signed_percent_tick, text_width

ROW = 22
# Narrower than this, a bar chart puts each label on its own line above its bar.
STACK_BELOW = 500

_WORDS = {"better": "better", "worse": "worse", "no-change": "no change", "inconclusive": "inconclusive"}
_WORDS["unreplicated"] = "unreplicated"


@dataclass(frozen=True)
class _Row:
    y: float
    label: Text
    x0: float
    x1: float
    cls: str
    whisker: str | None
    value: Text
    flag: Text | None = None


def _value_text(bar: Bar) -> str:
    text = percent(bar.value)
    return f"{text} {_WORDS[bar.decision]}" if bar.decision else text


def _flag_text(bar: Bar) -> str:
    return f" · {bar.flag}" if bar.flag else ""


# Between a value and its flag: the flag is bold, a little wider than `text_width` measures.
FLAG_GAP = 6


def _beside(bar: Bar) -> float:
    """The width of what is written beside a bar: its value and decision, and its flag."""
    flag = _flag_text(bar)
    return text_width(_value_text(bar), SMALL) + (text_width(flag, SMALL) * 1.1 + FLAG_GAP if flag else 0)


def _describe(bar: Bar) -> str:
    text = f"{one_line(bar.label)}: {percent(bar.value)}"
    if bar.interval is not None:
        text += f" (interval {percent(bar.interval[0])} to {percent(bar.interval[1])})"
    return text + (f", {_WORDS[bar.decision]}" if bar.decision else "") + (f", {bar.flag}" if bar.flag else "")


def _select(bars: Sequence[Bar], keep: int, given: bool = False) -> tuple[list[Bar], list[Bar], list[Bar]]:
    """(top, hidden, bottom): highest first (ties keep the caller's order), or the caller's order."""
    ranked = list(bars) if given else sorted(bars, key=lambda b: -b.value)
    if len(ranked) <= 2 * keep:
        return ranked, [], []
    return ranked[:keep], ranked[keep:-keep], ranked[-keep:]


def bar_chart(
    chart_id: str,
    title: str,
    bars: Sequence[Bar],
    *,
    axis_label: str = "change (%)",
    keep: int = 10,
    width: int | None = None,
    given_order: bool = False,
    label_share: float = 0.3,
) -> str:
    """Horizontal bars of changes in percent, highest first (or in the caller's order), as SVG text.

    With more than 2 x `keep` bars only the `keep` first and last are drawn, with a row that
    says how many are left out and their range: a reader cannot take in more. `given_order`
    keeps the bars in the order passed, so a chart can follow the table beside it. A label
    takes at most `label_share` of the width (a longer one is cut, its full text in a title).

    Over 60 lines: one SVG drawn row by row (the scale from every bar, the zero line, each bar
    with its interval and label, the row for the bars left out), which reads best in one place.
    """
    width = chart_width(width)
    if not bars:
        raise ValueError("a bar chart needs at least one bar")
    top, hidden, bottom = _select(bars, keep, given_order)
    shown = top + bottom
    entries = [(f"d-{d}", _WORDS[d]) for d in DECISIONS if any(b.decision == d for b in shown)]
    if any(b.decision is None for b in shown) and entries:
        entries.append(("d-none", "not decided"))
    if any(b.interval is not None for b in shown):
        entries.append(("whisker", "interval"))
    legend_items, legend_h = legend(entries, heading_top(title, width), width)
    first = heading_top(title, width) + legend_h + 6

    ends = [0.0] + [b.value for b in shown] + [v for b in shown if b.interval for v in b.interval]
    # Narrow (a phone's column): each label on a line of its own above its bar, across the
    # chart, so the bars keep the width and no label is cut to a stub.
    stacked = width < STACK_BELOW
    step = 2 * ROW if stacked else ROW
    label_room = 0.0 if stacked else min(max(text_width(one_line(b.label), SIZE) for b in shown), width * label_share)
    # Stacked, the values are written on the label's line: the bars take the whole width.
    left_pad = 0.0 if stacked else max((_beside(b) for b in shown if b.value < 0), default=0.0)
    right_pad = 0.0 if stacked else max((_beside(b) for b in shown if b.value >= 0), default=0.0)
    plot_left = MARGIN + label_room + 10 + (left_pad + 6 if left_pad else 0)
    plot_right = width - MARGIN - (right_pad + 6 if right_pad else 0)
    if stacked:
        # Room for half a tick label ("-40%", "+600%") at either end of the axis.
        plot_left, plot_right = MARGIN + 20, width - MARGIN - 20
    ticks, d0, d1 = fitting_ticks(min(ends), max(ends), plot_right - plot_left, signed_percent_tick)
    scale = Linear(d0, d1, plot_left, plot_right)

    rows: list[_Row] = []
    y = first
    for bar in top:
        rows.append(_row(bar, y, scale, label_room, width if stacked else None))
        y += step
    more = None
    if hidden:
        values = sorted(b.value for b in hidden)
        span = f"from {percent(values[-1])} to {percent(values[0])}"
        note = f"… and {len(hidden)} more, {span}, not shown"
        more = fitted(note, MARGIN, y + ROW / 2 + 4, width - 2 * MARGIN, SMALL, cls="ink note")
        y += ROW
    for bar in bottom:
        rows.append(_row(bar, y, scale, label_room, width if stacked else None))
        y += step
    axis = x_axis(scale, ticks, (plot_left, first - 4, plot_right, y + 2), signed_percent_tick, axis_label, width)

    order = "in the table's order" if given_order else "highest first"
    desc = f"{title}. {axis_label}, {order}: " + "; ".join(_describe(b) for b in top)
    if hidden:
        desc += f"; {len(hidden)} more not shown, {span}"
        desc += ("; last: " if given_order else "; lowest: ") + "; ".join(_describe(b) for b in bottom)
    desc += "."
    context = frame(chart_id, title, desc, width)
    return render("bar.svg.j2", **context, height=y + 46, legend=legend_items, rows=rows, more=more, axis=axis)


def _row(bar: Bar, y: float, scale: Linear, label_room: float, stacked: float | None = None) -> _Row:
    """One bar; `stacked` (the chart's width): its label on the line above it, across the chart."""
    zero, end = scale(0.0), scale(bar.value)
    ends = (scale(bar.interval[0]), scale(bar.interval[1])) if bar.interval is not None else ()
    reach = [end, *ends]
    shown, flag_text = _value_text(bar), _flag_text(bar)
    flag = None
    if stacked is not None:
        # The label on the left of its line, the value and the flag on the right of it.
        line = y + ROW / 2 + 4
        right = stacked - MARGIN
        value = Text(right, line, shown, shown, "end", "ink small")
        used = text_width(shown, SMALL)
        if flag_text:
            text = flag_text.removeprefix(" · ") + " · "
            flag = Text(right - used - FLAG_GAP, line, text, flag_text, "end", "flag small")
            used += text_width(text, SMALL) * 1.1 + FLAG_GAP
        label = fitted(bar.label, MARGIN, line, max(right - MARGIN - used - 8, 40), SIZE, "start")
        mid = y + ROW + ROW / 2
        cls = f"d-{bar.decision}" if bar.decision else "d-none"
        whisker = hwhisker(*ends, mid) if ends else None
        return _Row(mid, label, min(zero, end), max(zero, end), cls, whisker, value, flag)
    mid = y + ROW / 2
    label = fitted(bar.label, MARGIN + label_room, mid + 4, label_room, SIZE, "end")
    if bar.value >= 0:
        value = Text(max(reach) + 5, mid + 4, shown, shown, "start", "ink small")
        if flag_text:
            x = max(reach) + 5 + text_width(shown, SMALL) + FLAG_GAP
            flag = Text(x, mid + 4, flag_text, flag_text, "start", "flag small")
    else:
        # Right-aligned at the bar's left end: the flag first, then the value, reading left to right.
        value = Text(min(reach) - 5, mid + 4, shown, shown, "end", "ink small")
        if flag_text:
            x = min(reach) - 5 - text_width(shown, SMALL) - FLAG_GAP
            flag = Text(x, mid + 4, flag_text.removeprefix(" · ") + " · ", flag_text, "end", "flag small")
    cls = f"d-{bar.decision}" if bar.decision else "d-none"
    whisker = hwhisker(*ends, mid) if ends else None
    return _Row(mid, label, min(zero, end), max(zero, end), cls, whisker, value, flag)


@dataclass(frozen=True)
class _Dot:
    x: float
    y: float


def _dots(values: Sequence[float], scale: Linear, mid: float) -> list[_Dot]:
    """Dots along a row; ones that would overlap step up and down around the middle line."""
    out: list[_Dot] = []
    placed: list[tuple[float, int]] = []
    offsets = (0, -1, 1, -2, 2, -3, 3)
    for v in sorted(values):
        x = scale(v)
        taken = {level for px_, level in placed if abs(px_ - x) < 7}
        level = next((o for o in offsets if o not in taken), offsets[len(taken) % len(offsets)])
        placed.append((x, level))
        out.append(_Dot(x, mid + level * 6))
    return out


def strip_chart(
    chart_id: str,
    title: str,
    baseline: Sequence[float],
    change: Sequence[float],
    *,
    means: tuple[float, float],
    axis_label: str,
    labels: tuple[str, str] = ("baseline", "change"),
    width: int | None = None,
) -> str:
    """Each repetition of both sides of one comparison as a dot, each side's mean (given, as the
    analysis computed it: baseline's, change's) as a bar."""
    width = chart_width(width)
    if len(baseline) < 2 or len(change) < 2:
        raise ValueError("a strip chart needs at least two repetitions on each side")
    sides = [(labels[0], [float(v) for v in baseline]), (labels[1], [float(v) for v in change])]
    legend_items, legend_h = legend(
        [("dot 0 circle", labels[0]), ("dot 1 square", labels[1]), ("mean", "mean")], heading_top(title, width), width
    )
    first = heading_top(title, width) + legend_h + 6
    names = [f"{name} (n={len(vals)})" for name, vals in sides]
    label_room = min(max(text_width(n, SIZE) for n in names), width * 0.3)
    plot_left, plot_right = MARGIN + label_room + 12, width - MARGIN - 10
    lo, hi = min(min(v) for _n, v in sides), max(max(v) for _n, v in sides)
    ticks, d0, d1 = fitting_ticks(lo, hi, plot_right - plot_left, number)
    scale = Linear(d0, d1, plot_left, plot_right)
    height = 56
    rows = []
    for i, ((_name, vals), name, mean) in enumerate(zip(sides, names, means, strict=True)):
        mid = first + i * height + height / 2
        mean_text = f"mean {number(mean)}"
        rows.append(
            {
                "label": fitted(name, MARGIN + label_room, mid + 4, label_room, SIZE, "end"),
                "dots": _dots(vals, scale, mid),
                "shape": ("circle", "square")[i],
                "cls": f"mark s{i}",
                "mean_x": scale(mean),
                "mid": mid,
                "mean": Text(scale(mean), mid - 22, mean_text, mean_text, "middle", "ink small"),
            }
        )
    bottom = first + 2 * height
    axis: Axis = x_axis(scale, ticks, (plot_left, first, plot_right, bottom), number, axis_label, width)
    desc = f"{title}. {axis_label}: " + "; ".join(
        f"{name}, n={len(vals)}, mean {number(mean)}: {', '.join(number(v) for v in vals)}"
        for (name, vals), mean in zip(sides, means, strict=True)
    )
    context = frame(chart_id, title, desc + ".", width)
    return render("strip.svg.j2", **context, height=bottom + 46, legend=legend_items, rows=rows, axis=axis)
