"""A result's noise model (issue 47): what the analysis reads from its launches, and the example's."""

from __future__ import annotations

import datetime as dt
import math

import numpy as np
import pytest

from generator.analysis.comparison import Comparison
from generator.analysis.noise import components, detectable_change
from generator.analysis.noise_model import drift, of_result
from generator.analysis.stats import compare
from generator.project.matching import Origin

from conftest import REPO

T0 = dt.datetime(2026, 12, 2, 7, 0, tzinfo=dt.UTC)


def _side(rng: np.random.Generator, blocks: int, runs: int, arm: str, shift: float, within: float = 0.05):
    """(values, origins) of one arm: `runs` runs per launch, one launch per block, 40 s a block."""
    values, origins = [], []
    for b in range(blocks):
        level = rng.normal(shift, 0.15)
        for r in range(runs):
            values.append(float(math.exp(2.6 + level + rng.normal(0, within))))
            started = T0 + dt.timedelta(seconds=40 * b + (20 if arm == "base" else 0) + r)
            origins.append(Origin(launch=f"plan/{arm}-b{b}", started=started.isoformat()))
    return values, origins


def test_drift_is_the_least_squares_slope() -> None:
    from scipy import stats

    rng = np.random.default_rng(3)
    means = (0.01 * np.arange(12) + rng.normal(0, 0.02, 12)).tolist()
    d = drift(means, 0.05)
    fit = stats.linregress(np.arange(12), means)
    assert d is not None
    assert d.per_launch_percent == pytest.approx(100 * math.expm1(fit.slope))
    assert d.over_run_percent == pytest.approx(100 * math.expm1(11 * fit.slope))
    assert d.p_value == pytest.approx(fit.pvalue)
    assert d.clear == (fit.pvalue < 0.05)
    half = stats.t.ppf(0.975, 10) * fit.stderr
    assert d.ci_low_percent == pytest.approx(100 * math.expm1(fit.slope - half))
    assert drift(means[:4], 0.05) is None


def test_a_paired_result_with_runs_per_launch() -> None:
    rng = np.random.default_rng(7)
    own, own_o = _side(rng, 12, 3, "arm", 0.0)
    base, base_o = _side(rng, 12, 3, "base", 0.0)
    c = compare(own, base, higher_is_better=True, paired=True)
    noise = of_result(
        {"output_throughput": (own, base)},
        (own_o, base_o),
        {"output_throughput": c},
        {"output_throughput": True},
        paired=True,
        sequential=False,
        alpha=0.05,
    )
    assert noise is not None
    (m,) = noise.metrics
    mine, theirs = m.arms
    assert (mine.side, mine.launches, mine.runs) == ("this record", 12, 36)
    assert mine.components == components([own[i : i + 3] for i in range(0, 36, 3)])
    assert mine.components is not None
    assert mine.launch_sd_percent == pytest.approx(100 * math.sqrt(mine.components.launch_var))
    log_means = [np.log(v).reshape(12, 3).mean(axis=1) for v in (own, base)]
    assert mine.spread == pytest.approx(float(np.std(log_means[0], ddof=1)))
    assert m.pairing is not None
    assert m.pairing.correlation == pytest.approx(float(np.corrcoef(*log_means)[0, 1]))
    assert m.pairing.block_sd == pytest.approx(float(np.std(log_means[0] - log_means[1], ddof=1)))
    assert theirs.drift is not None and theirs.states is not None


def test_launches_in_start_order_and_unknown_launches() -> None:
    rng = np.random.default_rng(2)
    own, origins = _side(rng, 6, 1, "arm", 0.0)
    order = [3, 0, 5, 1, 4, 2]  # listed out of order: drift reads them by start time
    shuffled = ([own[i] for i in order], [origins[i] for i in order])
    args = ({}, {"m": True})
    by_time = of_result({"m": (shuffled[0], [])}, (shuffled[1], []), *args, paired=False, sequential=False, alpha=0.05)
    listed = of_result({"m": (own, [])}, (origins, []), *args, paired=False, sequential=False, alpha=0.05)
    assert by_time is not None and by_time == listed
    unknown = [Origin(launch=None, started=o.started) for o in origins]
    assert of_result({"m": (own, [])}, (unknown, []), *args, paired=False, sequential=False, alpha=0.05) is None
    one = [Origin(launch="plan/one", started=o.started) for o in origins]
    assert of_result({"m": (own, [])}, (one, []), *args, paired=False, sequential=False, alpha=0.05) is None


def test_states_that_are_the_arms_are_not_shares() -> None:
    # Every launch of this record's arm fast, every baseline launch slow: the arms' difference,
    # which the comparison reads; no shares of "states".
    rng = np.random.default_rng(4)
    own, own_o = _side(rng, 10, 1, "arm", 0.0)
    base, base_o = _side(rng, 10, 1, "base", -1.5)
    c = compare(own, base, higher_is_better=True, paired=True)
    noise = of_result(
        {"m": (own, base)}, (own_o, base_o), {"m": c}, {"m": True}, paired=True, sequential=False, alpha=0.05
    )
    assert noise is not None
    (m,) = noise.metrics
    assert m.pooled_states is not None and m.pooled_states.flagged
    assert m.shares is None


# --- the shipped example, made by `improvements run` on one H200 ------------------------------------------

EXAMPLE = REPO / "examples" / "h200-runner"


@pytest.fixture(scope="module")
def example():  # type: ignore[no-untyped-def]
    from generator.analysis.campaign import analyse
    from generator.checks.validate import require_project

    return analyse(require_project(EXAMPLE))


@pytest.mark.slow
def test_the_example_says_what_its_design_could_see(example) -> None:  # type: ignore[no-untyped-def]
    from statsmodels.stats.power import TTestPower
    from test_example_runner import log_ratios

    (entry,) = [a for a in example.records if a.file.slug == "static-cache"]
    (resolved,) = entry.results
    assert resolved.noise is not None
    (m,) = [m for m in resolved.noise.metrics if m.metric == "output_throughput"]
    c: Comparison | None = resolved.comparisons["output_throughput"]
    assert c is not None and c.decision == "inconclusive"
    # Independently: the blocks' log ratios from the harness's own outputs, and statsmodels' power.
    diffs = log_ratios("static-cache", "static-cache")
    sd = float(np.std(diffs, ddof=1))
    assert m.pairing is not None and m.pairing.block_sd == pytest.approx(sd)
    effect = TTestPower().solve_power(nobs=len(diffs), alpha=c.alpha / 2, power=0.8, alternative="larger")
    assert m.settle is not None
    assert m.settle.detectable_percent == pytest.approx(100 * math.expm1(effect * sd), rel=1e-3)
    assert m.settle.detectable_percent == pytest.approx(detectable_change(sd, 5, c.alpha, 0.8, False))
    assert [a.launches for a in m.arms] == [5, 5] and all(a.components is None for a in m.arms)


@pytest.mark.slow
def test_the_example_page_says_it(example) -> None:  # type: ignore[no-untyped-def]
    from generator.views.results import result_view

    (entry,) = [a for a in example.records if a.file.slug == "static-cache"]
    (resolved,) = entry.results
    view = result_view(resolved, vocabulary=example.project.campaign.vocabulary())
    (m,) = [m for m in resolved.noise.metrics if m.metric == "output_throughput"]
    (line,) = [x for x in view.noise if x.startswith("**What this design could see** (Output token throughput")]
    assert f"this design (5 blocks) sees +{m.settle.detectable_percent:.1f}% or more at 80% power" in line
    assert "the interval is -31.8% to +46.1%" in line
    assert f"{m.settle.blocks_fixed} blocks fixed" in line and "more than 1,024 sequential" in line
    assert any(row.startswith("| Output token throughput | this record | 5 (5) | 25.0% |") for row in view.noise_table)
