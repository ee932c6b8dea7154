"""Template-written SVG charts: deterministic, escaped, readable, accessible, arithmetic right."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable

import pytest

from generator.charts import (
    Bar,
    Goal,
    Limit,
    Point,
    Series,
    Step,
    SweepPoint,
    bar_chart,
    description,
    frontier,
    strip_chart,
    sweep_chart,
    waterfall,
)
from generator.charts.svg import SIZE
from generator.charts.text import fit, text_width

NS = "{http://www.w3.org/2000/svg}"
HOSTILE = "<script>alert(1)</script> & $x$ \"quoted\" 'single' <img src=x onerror=alert(2)>"


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def texts(root: ET.Element) -> list[str]:
    return ["".join(t.itertext()) for t in root.iter(f"{NS}text")]


def by_class(root: ET.Element, cls: str) -> list[ET.Element]:
    return [e for e in root.iter() if cls in (e.get("class") or "").split()]


def frontier_series() -> list[Series]:
    base = [(80, 400, 1), (60, 1100, 8), (45, 2100, 32), (30, 2900, 64)]
    rec = [(110, 450, 1), (85, 1250, 8), (60, 2400, 32), (40, 3100, 64)]
    return [
        Series("baseline", tuple(Point(x, y, f"c={c}") for x, y, c in base)),
        Series("07 MTP", tuple(Point(x, y, f"c={c}") for x, y, c in rec)),
    ]


def every_chart(label: str = "label", title: str = "title") -> dict[str, Callable[[], str]]:
    """One call of each chart type, with `label` as every user-supplied text."""
    return {
        "bar": lambda: bar_chart(
            "bar", title, [Bar(label, 12.5, (8.0, 17.0), "better"), Bar(label, -3.0, None, "worse")]
        ),
        "strip": lambda: strip_chart(
            "strip",
            title,
            [100.0, 102.0, 101.0],
            [110.0, 111.0],
            means=(101.0, 110.5),
            axis_label=label,
            labels=(label, label),
        ),
        "waterfall": lambda: waterfall(
            "road",
            title,
            1000.0,
            [Step(label, 120.0, 1120.0, (80.0, 160.0)), Step(label, -35.0, 1085.0, None, chain_break=label)],
            axis_label=label,
            goals=[Goal(label, 1500.0, 415.0)],
        ),
        "frontier": lambda: frontier(
            "front",
            title,
            [Series(label, (Point(10, 100, label), Point(20, 80, label))), *frontier_series()],
            limits=[Limit(label, 20.0, "x"), Limit(label, 500.0, "y")],
            x_label=label,
            y_label=label,
        ),
        "sweep": lambda: sweep_chart(
            "sweep",
            title,
            [SweepPoint(label, 10.0, (9.0, 11.0)), SweepPoint("b", 12.0)],
            parameter=label,
            axis_label=label,
            retained=label,
        ),
    }


@pytest.mark.parametrize("kind", sorted(every_chart()))
def test_same_input_same_bytes_and_valid_xml(kind: str) -> None:
    make = every_chart()[kind]
    first, second = make(), make()
    assert first == second
    root = parse(first)
    assert root.tag == f"{NS}svg"
    # Nothing that varies between runs or machines.
    assert not re.search(r"\d{4}-\d\d-\d\d|random|uuid", first)


@pytest.mark.parametrize("kind", sorted(every_chart()))
def test_hostile_labels_come_out_as_text(kind: str) -> None:
    svg = every_chart(label=HOSTILE, title=HOSTILE)[kind]()
    root = parse(svg)
    for element in root.iter():
        assert element.tag.split("}")[-1] not in ("script", "foreignObject", "img", "a", "iframe")
        for name, value in element.attrib.items():
            assert not name.lower().startswith("on"), name
            assert "javascript:" not in value
    assert root.find(f"{NS}title") is not None
    assert root.find(f"{NS}title").text == HOSTILE
    assert HOSTILE in root.find(f"{NS}desc").text
    # On the chart itself the payload is text, whole or cut with the full text in a <title>.
    shown = [t for t in texts(root) if t.startswith("<script>")]
    assert shown


@pytest.mark.parametrize("kind", sorted(every_chart()))
def test_accessible_name_and_description(kind: str) -> None:
    root = parse(every_chart()[kind]())
    assert root.get("role") == "img"
    ids = root.get("aria-labelledby", "").split()
    assert len(ids) == 2
    found = {e.get("id"): e for e in root.iter() if e.get("id")}
    assert found[ids[0]].tag == f"{NS}title" and found[ids[0]].text
    assert found[ids[1]].tag == f"{NS}desc" and found[ids[1]].text


def test_ids_derive_from_the_chart_id() -> None:
    one = bar_chart("record 07/mtp", "t", [Bar("a", 1.0)])
    ids = {e.get("id") for e in parse(one).iter() if e.get("id")}
    assert ids and all(i.startswith("record-07-mtp") for i in ids)
    assert bar_chart("2", "t", [Bar("a", 1.0)]).count('id="chart-2-title"') == 1


def test_description_states_the_data() -> None:
    root = parse(bar_chart("b", "Gains", [Bar("CUDA graphs", 12.34, (8.0, 17.0), "better"), Bar("x", -3.0)]))
    desc = root.find(f"{NS}desc").text
    assert "CUDA graphs: +12.3% (interval +8.0% to +17.0%), better" in desc
    assert "x: -3.0%" in desc


def test_long_labels_are_cut_with_an_ellipsis_and_kept_whole_in_a_title() -> None:
    long = "Continuous decode steps with a much longer explanation " * 4
    root = parse(bar_chart("b", "t", [Bar(long, 5.0), Bar("short", 1.0)], width=600))
    groups = [g for g in root.iter(f"{NS}g") if g.find(f"{NS}title") is not None and g.find(f"{NS}text") is not None]
    (cut,) = [g for g in groups if g.find(f"{NS}title").text == " ".join(long.split())]
    shown = cut.find(f"{NS}text").text
    assert shown.endswith("…") and long.startswith(shown[:-1])
    assert text_width(shown, SIZE) <= 600 * 0.3 + 0.01
    assert "short" in texts(root)


def test_fit_measures_wide_characters() -> None:
    assert fit("性能" * 20, 60, 12).endswith("…")
    assert text_width(fit("性能" * 20, 60, 12), 12) <= 60
    assert fit("abc", 100, 12) == "abc"


def test_summary_shows_top_and_bottom_with_the_count_of_the_rest() -> None:
    bars = [Bar(f"record {i:04d}", (i - 500) / 10) for i in range(1000)]
    root = parse(bar_chart("summary", "Best gain", bars, keep=10))
    drawn = by_class(root, "d-none")
    assert len(drawn) == 20
    labels = [t for t in texts(root) if t.startswith("record ")]
    assert labels[:10] == [f"record {i:04d}" for i in range(999, 989, -1)]
    assert labels[10:] == [f"record {i:04d}" for i in range(9, -1, -1)]
    assert any(t.startswith("… and 980 more") for t in texts(root))
    assert "980 more not shown" in root.find(f"{NS}desc").text


def test_all_bars_drawn_when_they_fit_and_no_more_row() -> None:
    bars = [Bar(f"r{i}", float(i)) for i in range(20)]
    root = parse(bar_chart("s", "t", bars, keep=10))
    assert len(by_class(root, "d-none")) == 20
    assert not any("more" in t for t in texts(root))


def test_decisions_differ_without_colour() -> None:
    decisions = ["better", "worse", "no-change", "inconclusive", "unreplicated"]
    root = parse(bar_chart("d", "t", [Bar(d, 1.0 + i, None, d) for i, d in enumerate(decisions)]))  # type: ignore[arg-type]
    for d in decisions:
        assert len(by_class(root, f"d-{d}")) == 2  # the bar and its legend swatch
    # Each value says its decision in words, so print and colour-blind readers get it too.
    assert "+1.0% better" in texts(root) and "+5.0% unreplicated" in texts(root)
    style = root.find(f"{NS}style").text
    assert "hatch" in style and "stroke-dasharray" in style


def test_legend_sits_above_the_bars() -> None:
    root = parse(bar_chart("l", "t", [Bar("a", 3.0, (1.0, 4.0), "better"), Bar("b", -2.0, None, "worse")]))
    legend_y = max(float(t.get("y")) for t in root.iter(f"{NS}text") if "".join(t.itertext()) == "interval")
    bars = [r for r in by_class(root, "d-better") + by_class(root, "d-worse") if r.get("height") == "12"]
    assert len(bars) == 2
    bar_top = min(float(r.get("y")) for r in bars)
    assert legend_y < bar_top


def test_intervals_drawn_only_when_given() -> None:
    def whiskers(svg: str) -> int:
        return len([e for e in by_class(parse(svg), "whisker") if e.tag == f"{NS}path"])

    with_interval = bar_chart("w", "t", [Bar("a", 3.0, (1.0, 4.0)), Bar("b", 2.0)])
    without = bar_chart("w", "t", [Bar("a", 3.0), Bar("b", 2.0)])
    assert whiskers(with_interval) == 2  # the bar's and the legend's
    assert whiskers(without) == 0
    sweep_with = sweep_chart(
        "s", "t", [SweepPoint(1, 5.0, (4.0, 6.0)), SweepPoint(2, 6.0)], parameter="p", axis_label="m"
    )
    sweep_without = sweep_chart("s", "t", [SweepPoint(1, 5.0), SweepPoint(2, 6.0)], parameter="p", axis_label="m")
    assert whiskers(sweep_with) == 2 and whiskers(sweep_without) == 0
    road = waterfall("r", "t", 100.0, [Step("a", 10.0, 110.0, (5.0, 15.0)), Step("b", 5.0, 115.0)], axis_label="m")
    assert whiskers(road) == 2


def test_whisker_spans_the_interval() -> None:
    root = parse(bar_chart("w", "t", [Bar("a", 10.0, (5.0, 20.0)), Bar("b", 0.0)]))
    bar = by_class(root, "d-none")[0]
    x0, width = float(bar.get("x")), float(bar.get("width"))  # 0 to 10 percent
    per_percent = width / 10
    whisker = [e for e in by_class(root, "whisker") if e.tag == f"{NS}path"][-1]
    start, end = (float(v) for v in re.match(r"M([\d.]+) [\d.]+H([\d.]+)", whisker.get("d")).groups())
    assert start == pytest.approx(x0 + 5 * per_percent, abs=0.2)
    assert end == pytest.approx(x0 + 20 * per_percent, abs=0.2)


def test_waterfall_steps_start_where_the_previous_level_ended() -> None:
    # The levels are the analysis' (RoadStep.level_after), given with each step.
    steps = [Step("a", 120.0, 1120.0, (80.0, 160.0)), Step("b", -35.0, 1085.0), Step("c", 210.0, 1295.0)]
    steps.append(Step("d", 45.0, 1340.0))
    goals = [Goal("goal", 1500.0, 160.0)]
    root = parse(waterfall("r", "t", 1000.0, steps, axis_label="tok/s", goals=goals))
    columns = [r for r in root.iter(f"{NS}rect") if (r.get("class") in ("level", "step-up", "step-down"))]
    columns = [r for r in columns if float(r.get("width")) > 16]  # not the legend swatches
    assert [c.get("class") for c in columns] == ["level", "step-up", "step-down", "step-up", "step-up", "level"]
    edges = [(float(c.get("y")), float(c.get("y")) + float(c.get("height"))) for c in columns]
    # Pixel rows of the levels 1000, 1120, 1085, 1295, 1340 follow one linear scale.
    levels = [1000.0, 1120.0, 1085.0, 1295.0, 1340.0]
    tops = [edges[0][0], edges[1][0], edges[2][1], edges[3][0], edges[4][0]]
    per_unit = (tops[0] - tops[1]) / 120.0
    for level, top in zip(levels, tops, strict=True):
        assert top == pytest.approx(tops[0] - (level - 1000.0) * per_unit, abs=0.2)
    # Each step starts at the level the one before it ended on.
    assert edges[1][1] == pytest.approx(edges[0][0], abs=0.2)  # up from the baseline
    assert edges[2][0] == pytest.approx(edges[1][0], abs=0.2)  # down from the top of the first step
    assert edges[3][1] == pytest.approx(edges[2][1], abs=0.2)  # up from the bottom of the decrease
    assert edges[5][0] == pytest.approx(edges[4][0], abs=0.2)  # current = baseline + all steps
    assert "current 1340" in root.find(f"{NS}desc").text
    assert {"+120", "-35", "+210", "+45", "1000", "1340"} <= set(texts(root))
    assert "goal goal 1500, +160 from current" in root.find(f"{NS}desc").text


def test_waterfall_marks_a_chain_break_and_a_stated_current() -> None:
    steps = [Step("a", 100.0, 1100.0), Step("b", 50.0, 1150.0, chain_break="measured at concurrency 64")]
    root = parse(waterfall("r", "t", 1000.0, steps, axis_label="m", current=1200.0))
    assert len(by_class(root, "chain-break")) == 1
    assert any("chain breaks before b: measured at concurrency 64" in t for t in texts(root))
    desc = root.find(f"{NS}desc").text
    assert "current 1200 as stated (the steps add up to 1150)" in desc
    # No connector drawn across the break.
    connectors = by_class(root, "sep")
    assert len(connectors) == 2  # baseline -> a, and the break line itself


def test_frontier_axes_come_from_the_data() -> None:
    series = [Series("big", (Point(400, 9000, "c=1"), Point(120, 52000, "c=256")))]
    root = parse(frontier("f", "t", series, limits=[Limit("TPOT ≤ 50 ms", 20.0, "x")]))
    x_ticks = [float(t) for t in (e.text for e in by_class(root, "axis-x")[0].iter(f"{NS}text")) if t[0].isdigit()]
    y_ticks = [float(t) for t in (e.text for e in by_class(root, "axis-y")[0].iter(f"{NS}text")) if t[0].isdigit()]
    assert x_ticks[0] == 0 and 300 <= x_ticks[-1] <= 400
    assert y_ticks[0] == 0 and y_ticks[-1] >= 52000
    labels = texts(root)
    assert "c=1" in labels and "c=256" in labels and "TPOT ≤ 50 ms" in labels
    assert len(by_class(root, "limit")) == 2  # the line and its legend sample
    assert "big: 9000 at 400 (c=1), 52000 at 120 (c=256)" in root.find(f"{NS}desc").text


def test_frontier_series_differ_in_marker_and_line() -> None:
    root = parse(frontier("f", "t", frontier_series()))
    assert len(by_class(root, "l0")) == 2 and len(by_class(root, "l1")) == 2
    # Circles for the first series, squares for the second: they differ in black and white too.
    assert {e.tag for e in by_class(root, "s0")} == {f"{NS}circle"}
    assert {e.tag for e in by_class(root, "s1")} == {f"{NS}rect"}


def test_strip_chart_marks_each_mean() -> None:
    # The means are the analysis' (ResolvedResult.sample_means): the chart draws them, never computes them.
    chart = strip_chart("s", "t", [1200, 1210, 1205, 1190], [1260, 1255, 1270], means=(1201.25, 1261.7), axis_label="m")
    root = parse(chart)
    assert "mean 1201" in texts(root) and "mean 1262" in texts(root)
    assert len(by_class(root, "mean")) == 3  # one per side and the legend's
    assert len(by_class(root, "s0")) == 4 + 1 and len(by_class(root, "s1")) == 3 + 1
    with pytest.raises(ValueError):
        strip_chart("s", "t", [1.0], [1.0, 2.0], means=(1.0, 1.5), axis_label="m")


def test_sweep_marks_the_retained_value() -> None:
    points = [SweepPoint(x, v) for x, v in [(2048, 980.0), (8192, 1180.0), (32768, 1020.0)]]
    root = parse(sweep_chart("s", "t", points, parameter="--chunked-prefill-size", axis_label="tok/s", retained=8192))
    rings = [c for c in by_class(root, "retained") if c.tag == f"{NS}circle" and c.get("r") == "8"]
    assert len(rings) == 1
    marks = [c for c in root.iter(f"{NS}circle") if "s0" in (c.get("class") or "")]
    assert rings[0].get("cx") == marks[2].get("cx")  # 8192 is the second point; marks[0] is the legend's
    assert "8192: 1180, retained" in root.find(f"{NS}desc").text
    with pytest.raises(ValueError):
        sweep_chart("s", "t", points, parameter="p", axis_label="m", retained=4096)


def test_sweep_categories_are_not_joined_by_a_line() -> None:
    points = [SweepPoint("flashinfer", 1000.0), SweepPoint("triton", 900.0)]
    root = parse(sweep_chart("s", "t", points, parameter="backend", axis_label="tok/s"))
    assert not [e for e in by_class(root, "l0") if e.tag == f"{NS}path" and "L" in e.get("d")]
    assert {"flashinfer", "triton"} <= set(texts(root))


@pytest.mark.parametrize(
    "make",
    [
        lambda: Bar("a", float("nan")),
        lambda: Bar("a", 1.0, (2.0, 1.0)),
        lambda: Step("a", float("inf"), 1.0),
        lambda: Step("a", 1.0, float("nan")),
        lambda: Point(1.0, float("nan")),
        lambda: SweepPoint(float("nan"), 1.0),
        lambda: Goal("g", float("-inf"), 1.0),
        lambda: Goal("g", 1.0, float("inf")),
    ],
)
def test_numbers_that_cannot_be_drawn_are_refused(make: Callable[[], object]) -> None:
    with pytest.raises(ValueError):
        make()


def test_point_labels_stay_inside_the_chart() -> None:
    series = [Series("s", (Point(1, 1, "c=1"), Point(100, 50, "a long load label at the edge")))]
    root = parse(frontier("f", "t", series, width=500))
    for t in root.iter(f"{NS}text"):
        shown = "".join(t.itertext())
        x = float(t.get("x"))
        anchor = t.get("text-anchor")
        w = text_width(shown, 11 if "small" in t.get("class") else 12)
        right = x + w if anchor == "start" else x + w / 2 if anchor == "middle" else x
        assert right <= 500, shown


def test_description_is_the_alt_text() -> None:
    svg = bar_chart("b", "Gains & <losses>", [Bar("a", 1.0)])
    assert description(svg) == "Gains & <losses>. change (%), highest first: a: +1.0%."


def _luminance(colour: str) -> float:
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def _contrast(a: str, b: str) -> float:
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_both_palettes_reach_4_5_to_1_on_their_background_and_follow_the_site_toggle() -> None:
    svg = bar_chart("palette", "Palette", [Bar("a", 5.0, (1.0, 9.0), decision="better")])
    style = re.search(r"<style>(.*?)</style>", svg, re.S)
    assert style is not None
    css = style.group(1)
    # The light palette twice (default and the site's light scheme), the dark one twice.
    blocks = re.findall(r"^(\S*?) ?#palette-svg\{([^}]*)\}", css, re.M)
    palettes = {sel: dict(re.findall(r"--([a-z0-9]+):(#[0-9a-f]{6})", body)) for sel, body in blocks}
    light = palettes[""]
    site_light = palettes["[data-md-color-scheme=default]"]
    site_dark = palettes["[data-md-color-scheme=slate]"]
    media = re.search(r"@media \(prefers-color-scheme:dark\)\{ #palette-svg\{([^}]*)\}", css)
    assert media is not None
    dark = dict(re.findall(r"--([a-z0-9]+):(#[0-9a-f]{6})", media.group(1)))
    assert light == site_light and dark == site_dark and set(light) == set(dark)
    # Every colour, text and lines alike, at least 4.5:1 (WCAG AA for text) on its background.
    for name in light:
        assert _contrast(light[name], "#ffffff") >= 4.5, name
        assert _contrast(dark[name], "#1e2129") >= 4.5, name
    assert "color-scheme:light dark" in css and 'id="palette-svg"' in svg
    # No colour is written outside the two palettes.
    outside = re.sub(r"--[a-z0-9]+:#[0-9a-f]{6}", "", svg)
    assert not re.search(r"#[0-9a-fA-F]{6}\b", outside)
