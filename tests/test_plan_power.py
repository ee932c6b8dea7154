"""The plan before a run (issue 47): runs per launch, costs, pooled noise and the detectable change,
each pinned to an independent computation: closed forms, scipy's noncentral t, and seeded
simulations of the tool's own decision on real H200 launches replayed."""

from __future__ import annotations

import math

import numpy as np
import pytest

from generator.analysis import sequential as seq
from generator.analysis.noise import components
from generator.analysis.plan_power import Costs, Noise, best_runs, fit_costs, measured_noise, plan, pooled_noise
from generator.base.problems import Report
from generator.checks.validate import load_project

from conftest import REPO

H200 = REPO / "examples" / "h200-runner"


def _noise(launch_var: float, within_var: float) -> Noise:
    return Noise("test", False, 90, launch_var, within_var, None, 4)


@pytest.mark.parametrize("icc", [0.46, 0.48, 0.50])
def test_runs_auto_picks_three_to_five_for_the_h200_costs_and_variances(icc: float) -> None:
    # Issue 47's H200: a launch 15.4 s of which 14.4 s is its fixed part, a timed run about 1 s,
    # launch and within-launch variance about equal (ICC 0.46-0.50), a 25% block spread at m = 1.
    total = 0.25**2 / 2
    noise = _noise(icc * total, (1 - icc) * total)
    m = best_runs(noise, Costs(90, 14.4, 1.0))
    assert m is not None and 3 <= m <= 5
    # The closed form, m* = sqrt(c_launch / c_run * s2_within / s2_launch), lies within 1 of it.
    assert abs(m - math.sqrt(14.4 / 1.0 * (1 - icc) / icc)) < 1


def test_best_runs_is_the_cheapest_integer_for_a_precision() -> None:
    # Brute force over m of (cost of a launch) x (variance of its mean): the product the rule minimises.
    for launch_s, run_s, lv, wv in [(14.4, 1.0, 0.01, 0.012), (3.0, 2.0, 0.02, 0.001), (30, 0.1, 0.001, 0.05)]:
        costs = [(launch_s + m * run_s) * (lv + wv / m) for m in range(1, 13)]
        assert best_runs(_noise(lv, wv), Costs(9, launch_s, run_s)) == 1 + int(np.argmin(costs))
    # The edges: no within-launch spread, one run; no launch spread, the cap.
    assert best_runs(_noise(0.01, 0.0), Costs(9, 10, 1)) == 1
    assert best_runs(_noise(0.0, 0.01), Costs(9, 10, 1), cap=7) == 7
    # Not known: the costs not separable, or the spread inside a launch not measured.
    assert best_runs(_noise(0.01, 0.01), Costs(9, None, None, at_runs=1, mean_s=15)) is None
    assert best_runs(Noise("t", False, 9, None, None, 0.02, 1), Costs(9, 10, 1)) is None


def test_costs_are_the_least_squares_line_of_launch_seconds_on_runs() -> None:
    rng = np.random.default_rng(3)
    m = np.array([6, 1] * 20)
    seconds = 14.4 + 0.9 * m + rng.normal(0, 0.5, m.size)
    costs = fit_costs(list(zip(m.tolist(), seconds.tolist(), strict=True)))
    slope, intercept = np.polyfit(m, seconds, 1)
    assert costs is not None and costs.launch_s == pytest.approx(intercept) and costs.run_s == pytest.approx(slope)
    assert costs.launch_seconds(4) == pytest.approx(intercept + 4 * slope)
    # One run count: the mean launch at that count, and nothing at another.
    one = fit_costs([(1, 15.0), (1, 17.0)])
    assert one is not None and one.launch_seconds(1) == 16.0 and one.launch_seconds(2) is None
    # A slope the noise made negative is held above zero, never a free run.
    flat = fit_costs([(1, 20.0), (6, 19.0)])
    assert flat is not None and flat.run_s is not None and flat.run_s > 0


def test_pooled_arms_read_the_launch_spread_not_the_difference_between_them() -> None:
    rng = np.random.default_rng(8)

    def launches(centre: float) -> list[list[float]]:
        return [np.exp(centre + rng.normal(0, 0.1) + rng.normal(0, 0.05, 4)).tolist() for _ in range(12)]

    a, b = launches(8.0), launches(9.0)  # the arms 2.7x apart
    noise = pooled_noise({"a": a, "b": b}, "two arms")
    assert noise is not None and noise.launch_var is not None
    # By hand: each arm's logs less its own mean, then the one-way components of all 24 launches.
    logs = [np.log(g) for g in a], [np.log(g) for g in b]
    centred = [np.exp(g - np.mean(np.concatenate(arm))).tolist() for arm in logs for g in arm]
    expected = components(centred)
    assert expected is not None
    assert noise.launch_var == pytest.approx(expected.launch_var) and noise.within_var == pytest.approx(
        expected.within_var
    )
    assert noise.launch_var < 0.05  # not the arms' log distance of 1 read as launch spread
    # One run a launch: only the launch values' spread, pooled within arms (df = launches - arms).
    singles = pooled_noise({"a": [[v[0]] for v in a], "b": [[v[0]] for v in b]}, "one run")
    assert singles is not None and singles.launch_var is None and singles.total_var is not None
    means = np.array([math.log(v[0]) for v in a]), np.array([math.log(v[0]) for v in b])
    pooled = (np.var(means[0], ddof=1) * 11 + np.var(means[1], ddof=1) * 11) / 22
    assert singles.total_var == pytest.approx(pooled)


def test_fixed_design_detects_what_the_noncentral_t_says() -> None:
    from scipy import stats

    noise = _noise(0.012, 0.013)
    pp = plan(
        noise,
        Costs(9, 14.4, 1.0),
        runs_per_launch=4,
        runs_chosen="",
        blocks=12,
        sequential=False,
        launches_per_block=2,
        alpha=0.05,
        effects=[(10.0, "x")],
    )
    sd = math.sqrt(2 * (0.012 + 0.013 / 4))
    assert pp.sd_block == pytest.approx(sd)
    assert pp.block_s == pytest.approx(2 * (14.4 + 4.0))
    # At the printed change, the paired t's power is 80%: scipy's noncentral t, by hand.
    assert pp.detectable is not None
    d = math.log1p(pp.detectable / 100)
    crit = stats.t.ppf(0.975, 11)
    power = stats.nct.sf(crit, 11, d * math.sqrt(12) / sd) + stats.nct.cdf(-crit, 11, d * math.sqrt(12) / sd)
    assert power == pytest.approx(0.8, abs=2e-3)
    (need,) = pp.needs
    assert need.fixed_blocks is not None and need.fixed_s == pytest.approx(need.fixed_blocks * pp.block_s)
    assert pp.short_of == (need,) if need.fixed_blocks > 12 else pp.short_of == ()


def _sequential_power(diffs: np.ndarray, delta: float, alpha: float) -> float:
    """P(the tool's confidence sequence says `better` first), looking after every block of each row."""
    shifted = diffs + delta
    paths, n = shifted.shape
    total = np.zeros(paths)
    squares = np.zeros(paths)
    state = np.zeros(paths)  # 0 going on, 1 better, -1 worse
    for k in range(1, n + 1):
        x = shifted[:, k - 1]
        total += x
        squares += x * x
        r = seq.radius(k, 1.0, alpha)
        if not math.isfinite(r):
            continue
        mean = total / k
        radius = np.sqrt(np.maximum(squares - total * total / k, 0)) * r
        going = state == 0
        state[going & (mean - radius > 0)] = 1
        state[going & (mean + radius < 0)] = -1
    return float(np.mean(state == 1))


def _fixed_power(diffs: np.ndarray, delta: float, alpha: float) -> float:
    from scipy import stats

    shifted = diffs + delta
    test = stats.ttest_1samp(shifted, 0.0, axis=1)
    return float(np.mean((test.pvalue < alpha) & (shifted.mean(axis=1) > 0)))


def _detectable_by_simulation(diffs: np.ndarray, alpha: float, sequential: bool) -> float:
    """The change at which the simulated rule says `better` 80% of the time (bisection in log space)."""
    power = _sequential_power if sequential else _fixed_power
    low, high = 0.0, 3.0
    for _ in range(40):
        mid = (low + high) / 2
        if power(diffs, mid, alpha) >= 0.8:
            high = mid
        else:
            low = mid
    return 100 * math.expm1(high)


@pytest.fixture(scope="module")
def h200() -> object:
    report = Report()
    project = load_project(H200, report)
    assert project is not None
    return project


def _replayed_blocks(groups: list[list[float]], blocks: int, seed: int) -> np.ndarray:
    """Blocks of two real launches each, drawn with replacement from the pooled launches of both
    arms (each arm's logs less its own mean): a block's log difference of their launch means.

    The launches' spread is scaled up by sqrt(L / (L - arms)), the usual correction for residuals
    about estimated means, so that the replay's variance is the unbiased one the planner reads.
    """
    rng = np.random.default_rng(seed)
    means = np.array([math.log(sum(g) / len(g)) for g in groups])
    draws = rng.integers(0, len(means), size=(4000, blocks, 2))
    scale = math.sqrt(len(means) / (len(means) - 2))
    return (means[draws[..., 0]] - means[draws[..., 1]]) * scale


def _centred_launches(project: object, slug: str, metric: str) -> list[list[float]]:
    rec = next(r for r in project.records if r.slug == slug)  # type: ignore[attr-defined]
    (result,) = rec.record.results
    out: list[list[float]] = []
    for ids in (result.run, result.baseline_run):
        by_launch: dict[str, list[float]] = {}
        for rid in ids:
            run = project.runs[rid]  # type: ignore[attr-defined]
            by_launch.setdefault(run.launch, []).append(run.metrics[metric])
        logs = [math.log(v) for g in by_launch.values() for v in g]
        centre = sum(logs) / len(logs)
        # Each launch's runs over the arm's geometric mean: the arm's own level taken out.
        out += [[v / math.exp(centre) for v in g] for g in by_launch.values()]
    return out


@pytest.mark.slow
@pytest.mark.parametrize(
    ("slug", "runs", "blocks", "sequential"),
    [
        ("sdpa-batch64", 6, 16, False),  # record 04's own design, run on the H200: 6 runs a launch
        ("sdpa-batch64", 6, 40, True),  # and its sequential plan of at most 40 blocks
        ("null-control", 1, 5, False),  # record 03's: one run a launch, five blocks
        ("null-control", 1, 20, True),
    ],
)
def test_replayed_h200_launches_detect_what_the_plan_prints(
    h200: object, slug: str, runs: int, blocks: int, sequential: bool
) -> None:
    """Done when (issue 47): on replays of real launch data the printed change is within 10% of a simulation's."""
    rec = next(r for r in h200.records if r.slug == slug)  # type: ignore[attr-defined]
    noise = measured_noise(h200, rec, "output_throughput", 64)  # type: ignore[arg-type]
    assert not noise.assumed and noise.runs_measured == runs
    pp = plan(
        noise,
        None,
        runs_per_launch=runs,
        runs_chosen="",
        blocks=blocks,
        sequential=sequential,
        launches_per_block=2,
        alpha=0.05,
        effects=[],
    )
    assert pp.detectable is not None
    diffs = _replayed_blocks(_centred_launches(h200, slug, "output_throughput"), blocks, seed=blocks)
    simulated = _detectable_by_simulation(diffs, 0.05, sequential)
    assert pp.detectable == pytest.approx(simulated, rel=0.10)


@pytest.mark.slow
@pytest.mark.parametrize(("runs", "blocks"), [(4, 30), (1, 12)])
def test_sequential_plan_detects_what_a_simulation_of_launches_and_runs_gives(runs: int, blocks: int) -> None:
    """The whole model, simulated: each block two launches (a launch effect, then `runs` runs with
    their own noise), the block's log ratio of the launch means, the tool's sequence after every block."""
    lv, wv = 0.012, 0.013
    pp = plan(
        _noise(lv, wv),
        None,
        runs_per_launch=runs,
        runs_chosen="",
        blocks=blocks,
        sequential=True,
        launches_per_block=2,
        alpha=0.05,
        effects=[],
    )
    assert pp.detectable is not None
    rng = np.random.default_rng(runs * 100 + blocks)

    def launch_means() -> np.ndarray:
        values = rng.normal(0, math.sqrt(lv), (4000, blocks, 1)) + rng.normal(0, math.sqrt(wv), (4000, blocks, runs))
        return np.log(np.exp(values).mean(axis=2))

    diffs = launch_means() - launch_means()
    power = _sequential_power(diffs, math.log1p(pp.detectable / 100), 0.05)
    assert power == pytest.approx(0.8, abs=0.03)
