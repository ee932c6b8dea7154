"""Capacity under an SLO, pinned by hand-computed interpolations, and the frontier."""

from __future__ import annotations

import math

import numpy as np
import pytest

from generator.analysis.capacity import (
    BOOTSTRAP,
    Capacity,
    Point,
    Repetition,
    aggregate,
    bootstrap,
    capacity,
    capacity_change,
    frontier,
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


def test_a_load_meets_when_every_repetition_does() -> None:
    points = [reps(32, 1000, [40, 42, 38]), reps(64, 1600, [60, 52, 70])]
    # The worst repetitions, 42 and 70 (not the means 40 and 60.67): t = (50 - 42) / (70 - 42).
    assert [p.latencies["tpot_p99"] for p in points] == [42, 70]
    c = capacity(points, {"tpot_p99": 50})
    assert c.throughput == pytest.approx(1000 + 600 * 8 / 28)
    assert c.repetitions == 3 and c.repetitions_note is None
    # One repetition over the limit at 32 makes 32 break: nothing meets below it.
    assert capacity([reps(32, 1000, [40, 55]), reps(64, 1600, [60, 70])], {"tpot_p99": 50}).kind == "breaks-all"


def test_the_bootstrap_resamples_each_load_on_its_own() -> None:
    from scipy import stats

    points = [
        aggregate(16, [Repetition(t, {"tpot_p99": 30}) for t in (1000, 1040, 980)]),
        aggregate(32, [Repetition(t, {"tpot_p99": v}) for t, v in ((1800, 44), (1750, 46), (1850, 41))]),
        aggregate(64, [Repetition(t, {"tpot_p99": v}) for t, v in ((2600, 60), (2500, 58), (2700, 66))]),
    ]
    slo = {"tpot_p99": 50}
    found = bootstrap(points, slo)
    assert found is not None and len(found) == BOOTSTRAP
    assert found == bootstrap(points, slo)  # seeded: the same bytes every build
    ours = np.quantile(found, [0.025, 0.975])

    # The same statistic through scipy's own bootstrap (each sample resampled independently).
    def statistic(*idx: np.ndarray) -> float:
        drawn = [aggregate(p.load, [p.repetitions[int(i)] for i in k]) for p, k in zip(points, idx, strict=True)]
        value = capacity(drawn, slo).throughput
        return math.nan if value is None else value

    res = stats.bootstrap(
        tuple(np.arange(len(p.repetitions)) for p in points),
        statistic,
        paired=False,
        vectorized=False,
        method="percentile",
        n_resamples=2000,
        rng=np.random.default_rng(7),
    )
    # Two Monte-Carlo estimates of the same percentiles: within 1% of the capacity.
    assert ours[0] == pytest.approx(res.confidence_interval.low, rel=0.01)
    assert ours[1] == pytest.approx(res.confidence_interval.high, rel=0.01)
    assert bootstrap([reps(32, 1000, [40]), reps(64, 1600, [60, 70])], slo) is None


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


def _looped(points: list[Point], slo: dict[str, float], seed: int) -> list[float]:
    """The bootstrap one resample at a time through `aggregate` and `capacity`: the rule as written."""
    rng = np.random.default_rng(seed)
    draws = [rng.integers(0, len(p.repetitions), (BOOTSTRAP, len(p.repetitions))) for p in points]
    out = []
    for k in range(BOOTSTRAP):
        resampled = [
            aggregate(p.load, [p.repetitions[int(i)] for i in idx[k]]) for p, idx in zip(points, draws, strict=True)
        ]
        c = capacity(resampled, slo)
        out.append(c.throughput if c.throughput is not None else math.nan)
    return out


@pytest.mark.slow  # the loop resamples 2,000 times a case
def test_the_vectorised_bootstrap_is_the_loop_bit_for_bit() -> None:
    # Random sweeps with what the rules branch on: ties at the limit, loads out of order, a
    # repeated load, a metric some repetitions lack, integer throughputs, 2 to 9 repetitions.
    gen = np.random.default_rng(7)
    cases = 0
    for case in range(24):
        loads = sorted(gen.choice([1, 2, 4, 8, 16, 32, 64], size=int(gen.integers(2, 6)), replace=False).tolist())
        if case % 7 == 0:
            loads.append(loads[0])  # a repeated load: insufficient
        if case % 3 == 0:
            loads.reverse()
        points = []
        for load in loads:
            reps_ = []
            for j in range(int(gen.integers(2, 10))):
                lat = {"ttft_p99": float(gen.choice([40.0, 50.0, float(gen.uniform(10, 30 * load**0.5))]))}
                if not (case % 11 == 0 and j == 0):
                    lat["tpot_p99"] = float(gen.uniform(5, 12 * load**0.4))
                thr = int(gen.integers(100, 5000)) if case % 5 == 0 else float(gen.uniform(100, 400 * load**0.8))
                reps_.append(Repetition(thr, lat))
            points.append(aggregate(float(load), reps_))
        slo = {"ttft_p99": 50.0, "tpot_p99": 30.0} if case % 2 else {"ttft_p99": 50.0}
        found = bootstrap(points, slo, seed=case)
        assert found is not None
        expected = _looped(points, slo, case)
        assert np.array_equal(np.array(found), np.array(expected), equal_nan=True), case
        cases += not all(math.isnan(x) for x in expected)
    assert cases >= 8  # most cases have a number to compare, not only NaN
