"""Capacity under an SLO, pinned by hand-computed interpolations, and the frontier."""

from __future__ import annotations

import math

import numpy as np
import pytest

from generator.analysis.capacity import (
    Capacity,
    Point,
    Repetition,
    aggregate,
    capacity,
    capacity_change,
    frontier,
    log_capacity,
)


def sweep(rows: list[tuple[float, float, dict[str, float]]]) -> list[Point]:
    return [Point(load, thr, lat) for load, thr, lat in rows]


# tpot_p99 at loads 16, 32, 64, 128: 30, 40, 60, 90 ms; output tok/s 600, 1000, 1600, 2000.
BASIC = sweep(
    [
        (16, 600, {"tpot_p99": 30}),
        (32, 1000, {"tpot_p99": 40}),
        (64, 1600, {"tpot_p99": 60}),
        (128, 2000, {"tpot_p99": 90}),
    ]
)


def test_interpolated_on_the_first_breaking_segment() -> None:
    c = capacity(BASIC, {"tpot_p99": 50})
    # 64 is the first load over 50 ms: segment 32 -> 64, tpot 40 -> 60, t = (50 - 40) / (60 - 40) = 0.5;
    # throughput 1000 + 0.5 * (1600 - 1000) = 1300; load 32 + 0.5 * (64 - 32) = 48.
    assert c.kind == "interpolated"
    assert (c.throughput, c.load) == (1300, 48)
    assert (c.limit_throughput, c.limit_load) == (1300, 48)
    assert c.limiting == ("tpot_p99",)
    assert c.segment == (32, 64)
    assert c.lower_bound is None and c.meets_again == ()
    assert c.reason == "1300 at load 48; tpot_p99 reaches its limit between loads 32 and 64"


def test_input_order_does_not_matter() -> None:
    assert capacity(list(reversed(BASIC)), {"tpot_p99": 50}) == capacity(BASIC, {"tpot_p99": 50})


def test_never_meets_gives_no_number() -> None:
    c = capacity(BASIC, {"tpot_p99": 25})
    # 30, 40, 60, 90 are all over 25.
    assert c.kind == "breaks-all"
    assert c.throughput is None and c.load is None and c.lower_bound is None
    assert c.reason == "breaks the SLO at every measured load"


def test_always_meets_gives_only_a_lower_bound() -> None:
    c = capacity(BASIC, {"tpot_p99": 100})
    # 90 <= 100 at the highest load: the best measured throughput, 2000, bounds capacity from below.
    assert c.kind == "meets-all"
    assert c.throughput is None
    assert c.lower_bound == 2000
    assert "at least 2000" in c.reason and "every measured load" in c.reason


def test_the_second_slo_metric_reaching_its_limit_first_wins() -> None:
    points = sweep(
        [
            (32, 1000, {"ttft_p99": 1000, "tpot_p99": 45}),
            (64, 1600, {"ttft_p99": 3000, "tpot_p99": 65}),
        ]
    )
    c = capacity(points, {"ttft_p99": 2000, "tpot_p99": 50})
    # ttft: t = (2000 - 1000) / (3000 - 1000) = 0.5; tpot: t = (50 - 45) / (65 - 45) = 0.25 -> tpot first.
    # throughput 1000 + 0.25 * 600 = 1150; load 32 + 0.25 * 32 = 40.
    assert c.limiting == ("tpot_p99",)
    assert (c.throughput, c.load) == (1150, 40)


def test_metrics_reaching_their_limits_together_are_both_named() -> None:
    points = sweep([(1, 100, {"ttft_p99": 100, "tpot_p99": 40}), (2, 200, {"ttft_p99": 300, "tpot_p99": 60})])
    c = capacity(points, {"tpot_p99": 50, "ttft_p99": 200})
    # Both at t = 0.5: throughput 150 at load 1.5.
    assert c.limiting == ("tpot_p99", "ttft_p99")
    assert (c.throughput, c.load) == (150, 1.5)


def test_a_point_exactly_at_the_limit_meets() -> None:
    points = sweep([(32, 1000, {"tpot_p99": 40}), (64, 1600, {"tpot_p99": 50}), (128, 2000, {"tpot_p99": 70})])
    c = capacity(points, {"tpot_p99": 50})
    # 50 <= 50 meets, so the segment is 64 -> 128 and t = (50 - 50) / (70 - 50) = 0: the measured 1600 at 64.
    assert c.segment == (64, 128)
    assert (c.throughput, c.load) == (1600, 64)


def test_request_rate_loads() -> None:
    points = sweep([(0.5, 200, {"ttft_p99": 800}), (1.0, 400, {"ttft_p99": 1500}), (2.0, 700, {"ttft_p99": 3500})])
    c = capacity(points, {"ttft_p99": 2000})
    # Segment 1.0 -> 2.0 req/s: t = (2000 - 1500) / (3500 - 1500) = 0.25;
    # throughput 400 + 0.25 * 300 = 475; rate 1.0 + 0.25 * 1.0 = 1.25.
    assert (c.throughput, c.load) == (475, 1.25)
    assert c.segment == (1.0, 2.0)


def test_a_missing_slo_metric_makes_it_insufficient_and_says_where() -> None:
    points = sweep([(32, 1000, {"tpot_p99": 40, "ttft_p99": 1}), (64, 1600, {"ttft_p99": 2})])
    c = capacity(points, {"tpot_p99": 50, "ttft_p99": 2000})
    assert c.kind == "insufficient"
    assert c.throughput is None
    assert c.missing == ((64, "tpot_p99"),)
    assert c.reason == "no value for tpot_p99 at 64"


@pytest.mark.parametrize(
    ("points", "slo", "reason"),
    [
        (BASIC[:1], {"tpot_p99": 50}, "1 measured load(s); a sweep needs at least 2"),
        ([], {"tpot_p99": 50}, "0 measured load(s); a sweep needs at least 2"),
        ([*BASIC, Point(32, 999, {"tpot_p99": 41})], {"tpot_p99": 50}, "more than one point at load 32"),
        (BASIC, {}, "the campaign sets no SLO"),
    ],
)
def test_other_insufficient_sweeps(points: list[Point], slo: dict[str, float], reason: str) -> None:
    c = capacity(points, slo)
    assert (c.kind, c.reason, c.throughput, c.lower_bound) == ("insufficient", reason, None, None)


def test_non_monotone_the_first_break_ends_the_search() -> None:
    points = sweep(
        [
            (16, 600, {"tpot_p99": 30}),
            (32, 1000, {"tpot_p99": 60}),
            (64, 1600, {"tpot_p99": 45}),
            (128, 2000, {"tpot_p99": 80}),
        ]
    )
    c = capacity(points, {"tpot_p99": 50})
    # Segment 16 -> 32: t = (50 - 30) / (60 - 30) = 2/3; throughput 600 + 2/3 * 400 = 866.67; load 16 + 2/3 * 16.
    assert c.segment == (16, 32)
    assert c.throughput == pytest.approx(600 + 400 * 2 / 3)
    assert c.load == pytest.approx(16 + 16 * 2 / 3)
    assert c.meets_again == (64,)


def test_breaking_at_the_lowest_load_only_gives_no_number() -> None:
    points = sweep([(16, 600, {"tpot_p99": 60}), (32, 1000, {"tpot_p99": 40}), (64, 1600, {"tpot_p99": 70})])
    c = capacity(points, {"tpot_p99": 50})
    assert c.kind == "breaks-lowest"
    assert c.throughput is None and c.meets_again == (32,)
    assert c.reason == "breaks the SLO at the lowest measured load (16) but meets it at 32"


def test_throughput_falling_with_load_keeps_the_measured_best() -> None:
    points = sweep([(32, 1000, {"tpot_p99": 40}), (64, 1600, {"tpot_p99": 45}), (128, 1500, {"tpot_p99": 55})])
    c = capacity(points, {"tpot_p99": 50})
    # Segment 64 -> 128: t = (50 - 45) / (55 - 45) = 0.5; at the limit 1600 - 0.5 * 100 = 1550 at load 96,
    # below the 1600 measured at 64 within the SLO: capacity is 1600 at 64.
    assert (c.limit_throughput, c.limit_load) == (1550, 96)
    assert (c.throughput, c.load) == (1600, 64)


def reps(load: float, thr: float, tpots: list[float]) -> Point:
    return aggregate(load, [Repetition(thr, {"tpot_p99": t}) for t in tpots])


def test_a_load_is_the_mean_of_its_repetitions() -> None:
    points = [reps(32, 1000, [40, 42, 38]), reps(64, 1600, [60, 52, 70])]
    # The means, 40 and 60.67 (not the worst repetitions 42 and 70): t = (50 - 40) / (60.67 - 40).
    assert [p.latencies["tpot_p99"] for p in points] == pytest.approx([40, 182 / 3])
    c = capacity(points, {"tpot_p99": 50})
    assert c.throughput == pytest.approx(1000 + 600 * 10 / (182 / 3 - 40))
    assert c.repetitions == 3 and c.repetitions_note is None
    # One repetition over the limit at 32 no longer breaks it: its mean, 47.5, meets.
    assert capacity([reps(32, 1000, [40, 55]), reps(64, 1600, [60, 70])], {"tpot_p99": 50}).kind == "interpolated"


def test_the_delta_method_matches_a_hand_gradient() -> None:
    # Throughput and latency vary at the breaking load only: capacity = ta + t (tb - ta), with
    # t = (L - v0) / (v1 - v0); d log C / d tb = t / C, d log C / d v1 = -(tb - ta) t / ((v1 - v0) C).
    slo = {"tpot_p99": 50}
    low = aggregate(32, [Repetition(1000, {"tpot_p99": 40}) for _ in range(3)])
    rows = [(1580.0, 58.0), (1620.0, 61.0), (1600.0, 63.0)]
    high = aggregate(64, [Repetition(t, {"tpot_p99": v}) for t, v in rows])
    found = log_capacity([low, high], slo)
    assert found is not None
    ta, tb = 1000.0, float(np.mean([r[0] for r in rows]))
    v0, v1 = 40.0, float(np.mean([r[1] for r in rows]))
    t = (50 - v0) / (v1 - v0)
    cap_ = ta + t * (tb - ta)
    assert found.log == pytest.approx(math.log(cap_))
    g = np.array([t / cap_, -(tb - ta) * t / ((v1 - v0) * cap_)])
    cov = np.cov(np.array(rows), rowvar=False, ddof=1) / 3
    assert found.var == pytest.approx(float(g @ cov @ g), rel=1e-5)
    assert found.df == pytest.approx(2.0)
    assert log_capacity([reps(32, 1000, [40]), reps(64, 1600, [60, 70])], slo) is None


def test_a_coarse_grid_is_warned_about() -> None:
    slo = {"tpot_p99": 50}
    coarse = capacity([Point(16, 1000, {"tpot_p99": 30}), Point(256, 4000, {"tpot_p99": 90})], slo)
    assert coarse.grid_warning is not None and "16 and 256" in coarse.grid_warning
    assert capacity(BASIC, slo).grid_warning is None  # 32 -> 64 is 2x: not more


def test_capacity_change() -> None:
    slo = {"tpot_p99": 50}
    base = capacity(BASIC, slo)  # 1300
    faster = capacity([Point(p.load, p.throughput * 1.3, p.latencies) for p in BASIC], slo)  # 1690
    change = capacity_change(faster, base)
    # 1690 / 1300 - 1 = +30%.
    assert change.percent == pytest.approx(30)
    assert change.bound is None and change.words == "+30.0% capacity under the SLO"
    roomy = capacity(BASIC, {"tpot_p99": 100})  # meets everywhere, at least 2000
    # 2000 / 1300 - 1 = +53.8%, and only a lower bound.
    at_least = capacity_change(roomy, base)
    assert (at_least.bound, round(at_least.percent or 0, 1)) == ("at least", 53.8)
    at_most = capacity_change(base, roomy)
    # 1300 / 2000 - 1 = -35%, an upper bound.
    assert (at_most.bound, at_most.percent) == ("at most", pytest.approx(-35))
    never = capacity(BASIC, {"tpot_p99": 25})
    words = capacity_change(never, base)
    assert words.percent is None and words.bound is None
    assert words.words == f"record: breaks the SLO at every measured load; baseline: {base.reason}"
    assert capacity_change(roomy, roomy).percent is None


def test_frontier() -> None:
    points = [
        Point(1, 40, {"tpot_median": 20, "tpot_mean": 25}),
        Point(64, 1600, {"tpot_median": 0, "tpot_mean": 40}),
        Point(8, 400, {"itl_median": 10}),
    ]
    f = frontier(points, 8)
    assert [p.load for p in f] == [1, 8, 64]
    # 1000 / 20 ms = 50 tok/s per user from the median; 40 / 8 GPUs = 5 tok/s per GPU.
    assert (f[0].interactivity, f[0].tpot_metric, f[0].throughput_per_gpu) == (50, "tpot_median", 5)
    # No TPOT: ITL is not used.
    assert (f[1].interactivity, f[1].tpot_metric, f[1].throughput_per_gpu) == (None, None, 50)
    # A zero median falls back to the mean: 1000 / 40 = 25; 1600 / 8 = 200.
    assert (f[2].interactivity, f[2].tpot_metric, f[2].throughput_per_gpu) == (25, "tpot_mean", 200)
    assert all(p.throughput_per_gpu is None for p in frontier(points, None))


def test_capacity_is_plain_data() -> None:
    # Frozen, comparable values: the analysis computes them once and pages only read them.
    c = capacity(BASIC, {"tpot_p99": 50})
    with pytest.raises(AttributeError):
        c.throughput = 1.0  # type: ignore[misc]
    assert isinstance(c, Capacity)
