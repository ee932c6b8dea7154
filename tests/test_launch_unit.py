"""Several runs per launch: the unit is the launch, paired by block, and a sequential result reads
the confidence sequence the runner stopped on (issue 46)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from generator.analysis import design
from generator.analysis.campaign import compare_counted
from generator.analysis.sequential import block_difference, look
from generator.model.result import Result
from generator.project.matching import Numbers, Origin

METRIC = "output_throughput"
RUNS = 4


def _page(
    blocks: list[tuple[list[float], list[float]]], *, sequential: bool, alpha: float = 0.05
) -> tuple[design.Design, object]:
    """The record page's analysis of blocks as `improvements run` links them: each block's runs
    listed together, a launch each side, paired by position."""
    own = [v for mine, _ in blocks for v in mine]
    base = [v for _, theirs in blocks for v in theirs]
    oo = tuple(Origin(launch=f"plan/b{i:02d}-arm") for i, (mine, _) in enumerate(blocks) for _ in mine)
    bo = tuple(Origin(launch=f"plan/b{i:02d}-base") for i, (_, theirs) in enumerate(blocks) for _ in theirs)
    seq = {"max_blocks": 40, "blocks_run": len(blocks)} if sequential else None
    result = Result.model_validate(
        {"label": "l", "metrics": {METRIC: own}, "baseline": {METRIC: base}, "paired": True, "sequential": seq}
    )
    found = Numbers(result, {METRIC: own}, {METRIC: base}, origins=oo, baseline_origins=bo)
    made = design.design({METRIC: (own, base)}, (oo, bo), metric=METRIC, alpha=alpha, paired=True)
    return made, compare_counted(METRIC, own, base, found, made, alpha, 1.0)


def _block(
    rng: np.random.Generator, launch_sd: float, run_sd: float, effect: float = 0.0
) -> tuple[list[float], list[float]]:
    """One block: a launch of each arm, RUNS runs each; launches vary as much as runs within them."""

    def launch(shift: float) -> list[float]:
        level = shift + rng.normal(0.0, launch_sd)
        return [float(1000 * math.exp(level + e)) for e in rng.normal(0.0, run_sd, RUNS)]

    return launch(effect), launch(0.0)


def test_runs_of_a_launch_are_paired_by_block_as_launch_means() -> None:
    rng = np.random.default_rng(46)
    blocks = [_block(rng, 0.08, 0.05, effect=0.05) for _ in range(6)]
    made, c = _page(blocks, sequential=False)
    assert made.launch_pairs and made.by_launch == (6, 6) and made.unpaired_why is None
    assert c is not None and (c.test, c.n, c.baseline_n) == ("paired", 6, 6)
    # Independently: the paired t on the logs of the launches' means, with scipy.
    mine = [math.log(np.mean(m)) for m, _ in blocks]
    theirs = [math.log(np.mean(t)) for _, t in blocks]
    ci = stats.ttest_rel(mine, theirs).confidence_interval(0.95)
    assert (c.ci_low_percent, c.ci_high_percent) == pytest.approx((math.expm1(ci.low) * 100, math.expm1(ci.high) * 100))


def test_one_block_of_several_runs_is_a_single_shot() -> None:
    made, c = _page([_block(np.random.default_rng(1), 0.05, 0.05)], sequential=True)
    assert made.launch_pairs and c is not None and (c.n, c.baseline_n, c.decision) == (1, 1, "unreplicated")


def test_a_sequential_result_reads_the_sequence_the_runner_looked_at() -> None:
    rng = np.random.default_rng(4601)
    blocks = [_block(rng, 0.05, 0.05, effect=0.3) for _ in range(5)]
    _made, c = _page(blocks, sequential=True)
    # The runner's look, made from each block's raw runs as `interim_looks` makes it.
    runner = look(
        [d for m, t in blocks if (d := block_difference(m, t)) is not None],
        alpha=0.05,
        min_effect=1.0,
        higher_is_better=True,
    )
    assert c is not None and c.test == "sequence" and c.n == 5
    mid, low, high = runner.percent()
    assert (c.ci_low_percent, c.ci_high_percent) == pytest.approx((low, high), rel=1e-12)
    assert c.change_percent == pytest.approx(mid, rel=1e-12) and c.decision == runner.call == "better"


def test_launches_that_do_not_pair_are_compared_unpaired_and_said_so() -> None:
    from generator.analysis.design_warnings import findings
    from generator.analysis.records import ResolvedResult

    rng = np.random.default_rng(3)
    blocks = [_block(rng, 0.05, 0.05) for _ in range(4)]
    # The third block's arm launch wrote one run fewer: paired by position, the launches no longer line up.
    blocks[2] = (blocks[2][0][:3], blocks[2][1])
    blocks[3] = (blocks[3][0] + [blocks[3][0][0]], blocks[3][1])
    made, c = _page(blocks, sequential=True)
    assert not made.launch_pairs and made.unpaired_why == "the launches hold different numbers of runs"
    assert c is not None and c.test == "welch"
    res = ResolvedResult(
        Result.model_validate(
            {"label": "l", "metrics": {METRIC: [1.0]}, "paired": True, "sequential": {"max_blocks": 9, "blocks_run": 4}}
        ),
        {},
        {},
        (),
        False,
        {METRIC: c},
        {},
        None,
        made,
    )
    ((code, text),) = findings(res)
    assert code == "design-unpaired" and "not the confidence sequence" in text
    assert any("compared unpaired" in w for w in made.warnings)


@pytest.mark.slow
def test_identical_arms_with_four_runs_a_launch_keep_alpha_under_sequential_looks() -> None:
    # Launches vary as much as the runs within them (ICC about 0.5, as measured on the H200).
    rng = np.random.default_rng(20261203)
    sims, most, alpha = 1500, 30, 0.05
    false = covered = 0
    for _ in range(sims):
        blocks: list[tuple[list[float], list[float]]] = []
        call = "inconclusive"
        while len(blocks) < most and call == "inconclusive":
            blocks.append(_block(rng, 0.1, 0.2))
            if len(blocks) >= 2:
                diffs = [d for m, t in blocks if (d := block_difference(m, t)) is not None]
                call = look(diffs, alpha=alpha, min_effect=1.0, higher_is_better=True).call
        _made, c = _page(blocks, sequential=True)
        assert c is not None and c.test == "sequence" and c.decision == call
        false += c.decision in ("better", "worse")
        covered += c.ci_low_percent is None or (c.ci_low_percent <= 0 <= (c.ci_high_percent or 0))
    # The binomial's 99.9% bounds: the rate itself under alpha, the coverage not under 1 - alpha.
    assert stats.binom.ppf(0.999, sims, false / sims) / sims <= alpha, false / sims
    assert stats.binom.ppf(0.999, sims, covered / sims) / sims >= 1 - alpha, covered / sims


@pytest.mark.slow
def test_identical_arms_with_four_runs_a_launch_keep_alpha_in_a_fixed_design() -> None:
    rng = np.random.default_rng(20261204)
    sims, alpha = 1000, 0.05
    false = covered = 0
    for _ in range(sims):
        _made, c = _page([_block(rng, 0.1, 0.2) for _ in range(8)], sequential=False)
        assert c is not None and c.test == "paired" and c.n == 8
        false += c.decision in ("better", "worse")
        assert c.ci_low_percent is not None and c.ci_high_percent is not None
        covered += c.ci_low_percent <= 0 <= c.ci_high_percent
    # Pooled as 32 runs a side (Welch, what the analysis did before) this rate was about 0.08.
    assert stats.binom.ppf(0.001, sims, false / sims) / sims <= alpha, false / sims
    assert (
        stats.binom.ppf(0.001, sims, covered / sims) / sims
        <= 1 - alpha
        <= stats.binom.ppf(0.999, sims, covered / sims) / sims
    ), covered / sims
