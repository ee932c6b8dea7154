"""How a comparison's repetitions were made, read from where each came from (docs/guide/decisions.md).

The statistics in `stats` assume independent repetitions of each side, made under the same
conditions. Two things the numbers alone never show break that, and both were measured on one
H200 (issue 37): arms run one after the other ("all of A, then all of B") let drift read as an
effect, and runs inside one server or process launch vary together, so five runs of one launch
are nearer one observation than five. This module reads each repetition's `Origin` (its launch,
start time and file, as far as known) and says:

- **the unit**: runs that share a launch are averaged into one observation per launch before the
  comparison, when that launch holds runs of one side only. A side known to come from a single
  launch is then a single shot (n = 1: `unreplicated`, never `better` or `worse`). When one
  launch holds both sides (arms interleaved in one process) it is a block both sides share, not a
  unit: the comparison holds for that launch, and the page says so.
- **blocks**: every run of one side started before every run of the other (`blocked`).
- **a trend**: a side's values move with its start times (Kendall's tau, exact, two-sided at
  alpha / 2 per side, so that a comparison of two sides without any drift is warned about at
  most alpha of the time: at alpha per side it was 8.7-9.4% on iid data, issue 50), on the
  record's primary metric. When the two sides' runs are interleaved in time, drift reaches both
  alike: it widens the interval but cannot bias the change, and the warning says so.
- **unknown launches**: a side whose launches are not recorded and whose runs all come from one
  file may share a launch (`may_share`).

Nothing here changes a number the page prints as a run's value; only what the comparison counts
as an observation.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from generator.model.quantity import Value
from generator.project.matching import Numbers, Origin

# The two sides, as pages name them.
SIDES = ("this record", "baseline")
# Kendall's tau needs this many repetitions before a trend can be significant at 0.05 (n = 4's
# smallest exact two-sided p is 1/12).
TREND_MIN_N = 5


@dataclass(frozen=True)
class Design:
    """What is known about how one result's two sides were run."""

    # Every run of one side started before every run of the other: drift can look like an effect.
    blocked: bool = False
    # The sides (`SIDES`) whose values on `trend_metric` move with their start times.
    trend: tuple[str, ...] = ()
    trend_metric: str | None = None
    # Both sides' start times are known and neither side ran wholly before the other: drift reaches
    # both arms alike, so it widens the interval but cannot bias the change.
    interleaved: bool = False
    # The sides known to come from one launch that holds none of the other side's runs.
    single_launch: tuple[str, ...] = ()
    # Both sides ran inside one launch (interleaved in one process): a block both share.
    shared_launch: str | None = None
    # The sides whose launches are unknown and whose runs all come from one file (n >= 2).
    may_share: tuple[str, ...] = ()
    # (this record's launches, the baseline's) when the comparison counts launches, not runs.
    by_launch: tuple[int, int] | None = None
    # The first and last start time of each side (ISO 8601, UTC), when every run has one.
    spans: tuple[tuple[str, str] | None, tuple[str, str] | None] = (None, None)
    # Each run's start time (ISO 8601, UTC), by side, when every run of that side has one.
    starts: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
    # Paired results: the shortest and longest time between the starts of a pair, in seconds.
    pair_gap_s: tuple[float, float] | None = None
    # A paired result whose runs share launches: launch i of one side is paired with launch i of
    # the other (`improvements run` lists a block's runs together), so the comparison is the
    # block-paired launch means. False when the launches cannot be paired (`unpaired_why`).
    launch_pairs: bool = False
    # A paired result whose launches do not pair up one to one: compared unpaired, and why.
    unpaired_why: str | None = None

    @property
    def warnings(self) -> tuple[str, ...]:
        """The design warnings in words, as the page, the summary and `check` say them."""
        out: list[str] = []
        if self.blocked:
            out.append("run in blocks, not interleaved: drift can look like an effect")
        for side in self.trend:
            out.append(f"{side}: a clear time trend in `{self.trend_metric}`: {self.trend_reading}")
        for side in self.single_launch:
            out.append(f"{side}: one launch: a single shot")
        if self.unpaired_why is not None:
            out.append(f"paired by position, but {self.unpaired_why}: compared unpaired on launch means")
        return tuple(out)

    @property
    def unit(self) -> str:
        """What one observation of the comparison is: a run, or a launch (its runs' mean)."""
        return "launch" if self.by_launch is not None else "run"

    @property
    def trend_reading(self) -> str:
        """What a trend means for the change, by design."""
        if self.interleaved:
            return "the arms are interleaved, so drift widens the interval but cannot bias the change"
        return "drift can look like an effect"


def _when(text: str | None) -> dt.datetime | None:
    return dt.datetime.fromisoformat(text) if text is not None else None


def _starts(origins: Sequence[Origin], n: int) -> list[dt.datetime] | None:
    starts = [_when(o.started) for o in origins[:n]]
    if len(starts) != n or any(s is None for s in starts):
        return None
    return [s for s in starts if s is not None]


def launch_means(values: Sequence[float], origins: Sequence[Origin]) -> list[float]:
    """One observation per launch, in the order launches first appear: the mean of its runs.

    A repetition whose launch is unknown stays an observation of its own.
    """
    return [sum(g) / len(g) for g in launch_groups(values, origins)]


def _launches(origins: Sequence[Origin], n: int) -> set[str] | None:
    """The launches of the first n repetitions, or None when any is unknown."""
    found = [o.launch for o in origins[:n]]
    if len(found) != n or any(x is None for x in found):
        return None
    return {x for x in found if x is not None}


# Up to this many runs without ties, the exact null distribution is counted here, as scipy's
# `kendalltau` counts it; beyond, or with ties, scipy's test is used.
_EXACT_N = 33


def trend_p(values: Sequence[float], starts: Sequence[dt.datetime]) -> float | None:
    """Kendall's tau test of values against start times, two-sided, or None when undefined.

    Exact for small n without ties (the count of discordant pairs under all n! orders), so
    a build does not import scipy.stats for it (the performance guide keeps that import out of
    builds); scipy's `kendalltau` otherwise.
    """
    if len(values) < TREND_MIN_N or len(set(values)) < 2 or len(set(starts)) < 2:
        return None
    seconds = [s.timestamp() for s in starts]
    n = len(values)
    if n <= _EXACT_N and len(set(values)) == n and len(set(seconds)) == n:
        order = [v for _t, v in sorted(zip(seconds, values, strict=True))]
        discordant = sum(1 for i in range(n) for j in range(i + 1, n) if order[i] > order[j])
        return _exact_p(n, discordant)
    from scipy import stats as sp

    p = float(sp.kendalltau(seconds, list(values)).pvalue)
    return p if p == p else None


def _exact_p(n: int, discordant: int) -> float:
    """Two-sided p of `discordant` pairs among n values in random order (Mahonian counts)."""
    # counts[k]: orders of the first m values with k inversions, built up one value at a time.
    counts = [1]
    for m in range(2, n + 1):
        grown = [0] * (len(counts) + m - 1)
        for k, c in enumerate(counts):
            for extra in range(m):
                grown[k + extra] += c
        counts = grown
    total = n * (n - 1) // 2
    tail = sum(counts[: min(discordant, total - discordant) + 1])
    return min(1.0, 2 * tail / math.factorial(n))


def design(
    values: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    origins: tuple[Sequence[Origin], Sequence[Origin]],
    *,
    metric: str | None,
    alpha: float,
    paired: bool = False,
) -> Design:
    """The design of one result: `values` is metric -> (own samples, baseline samples)."""
    if not values:
        return Design()
    name = metric if metric is not None and metric in values else next(iter(values))
    own, base = values[name]
    n = (len(own), len(base))
    both = (origins[0], origins[1])
    starts = (_starts(both[0], n[0]), _starts(both[1], n[1]))
    spans = [(min(s).isoformat(), max(s).isoformat()) if s else None for s in starts]
    gaps = None
    if paired and starts[0] and starts[1] and n[0] == n[1]:
        apart = [abs((a - b).total_seconds()) for a, b in zip(starts[0], starts[1], strict=True)]
        gaps = (min(apart), max(apart))
    blocked = interleaved = False
    if starts[0] and starts[1] and min(n) >= 2:
        blocked = max(starts[0]) < min(starts[1]) or max(starts[1]) < min(starts[0])
        interleaved = not blocked
    # alpha / 2 a side: two sides tested at alpha each warned 2 alpha of the time on iid data.
    trend = tuple(
        SIDES[i]
        for i in (0, 1)
        if (s := starts[i]) is not None and (p := trend_p(values[name][i], s)) is not None and p < alpha / 2
    )
    shared, single, by_launch, may_share = _launch_findings(own, base, both)
    launch_pairs, unpaired_why = False, None
    if paired and by_launch is not None:
        unpaired_why = _launch_pairing(own, base, both)
        launch_pairs = unpaired_why is None
    return Design(
        blocked=blocked,
        trend=trend,
        trend_metric=name if trend else None,
        interleaved=interleaved,
        single_launch=single,
        shared_launch=shared,
        may_share=may_share,
        by_launch=by_launch,
        spans=(spans[0], spans[1]),
        starts=(tuple(t.isoformat() for t in starts[0] or ()), tuple(t.isoformat() for t in starts[1] or ())),
        pair_gap_s=gaps,
        launch_pairs=launch_pairs,
        unpaired_why=unpaired_why,
    )


def _launch_findings(
    own: Sequence[float], base: Sequence[float], both: tuple[Sequence[Origin], Sequence[Origin]]
) -> tuple[str | None, tuple[str, ...], tuple[int, int] | None, tuple[str, ...]]:
    """(the launch both sides ran in, the sides of one launch, the launch counts when runs
    share launches, the sides that may share an unrecorded launch)."""
    n = (len(own), len(base))
    sides = (both[0][: n[0]], both[1][: n[1]])
    launches = (_launches(both[0], n[0]), _launches(both[1], n[1]))
    shared: str | None = None
    if launches[0] and launches[1] and launches[0] & launches[1]:
        shared = ", ".join(sorted(launches[0] & launches[1]))
    single = tuple(
        SIDES[i]
        for i in (0, 1)
        if shared is None and (found := launches[i]) is not None and len(found) == 1 and n[i] >= 2
    )
    named = [[o.launch for o in side if o.launch is not None] for side in sides]
    by_launch = None
    if shared is None and any(len(set(names)) < len(names) for names in named):
        by_launch = (len(launch_means(own, both[0])), len(launch_means(base, both[1])))
    may_share = tuple(
        SIDES[i]
        for i in (0, 1)
        if n[i] >= 2
        and len(sides[i]) == n[i]
        and not named[i]
        and len({o.file for o in sides[i]}) == 1
        and sides[i][0].file is not None
    )
    return shared, single, by_launch, may_share


def launch_groups(values: Sequence[float], origins: Sequence[Origin]) -> list[list[float]]:
    """The runs of each launch, in the order launches first appear (an unknown launch: its own)."""
    groups: dict[object, list[float]] = {}
    for i, value in enumerate(values):
        launch = origins[i].launch if i < len(origins) else None
        groups.setdefault(launch if launch is not None else ("unknown", i), []).append(value)
    return list(groups.values())


def _launch_pairing(
    own: Sequence[float], base: Sequence[float], both: tuple[Sequence[Origin], Sequence[Origin]]
) -> str | None:
    """None when a paired result's launches pair one to one, in order, with as many runs each;
    else why not. Runs are paired by position, so launch i's runs must sit where launch i's
    partner's do: then the launch means pair as the runs do."""
    mine, theirs = launch_groups(own, both[0]), launch_groups(base, both[1])
    if len(mine) != len(theirs):
        return f"{len(mine)} launch(es) against {len(theirs)}"
    if [len(g) for g in mine] != [len(g) for g in theirs]:
        return "the launches hold different numbers of runs"
    for values, origins in ((own, both[0]), (base, both[1])):
        keys = [
            o if (o := origins[i].launch if i < len(origins) else None) is not None else i for i in range(len(values))
        ]
        runs = [k for i, k in enumerate(keys) if i == 0 or k != keys[i - 1]]
        if len(runs) != len(set(runs)):
            return "a launch's runs are not listed together"
    return None


def of_result(
    found: Numbers, shown: Mapping[str, tuple[Sequence[float], Sequence[float]]], metric: str | None, alpha: float
) -> Design:
    """The design of a resolved result (its numbers as `project.matching` found them)."""
    # A result without a baseline (the campaign baseline's own) still has its start times.
    compared = {k: v for k, v in shown.items() if v[1]} or dict(shown)
    origins = (found.origins, found.baseline_origins)
    return design(compared, origins, metric=metric, alpha=alpha, paired=found.result.paired)


def counted(value: Value, base: Value, found: Numbers, chosen: Design, *, paired: bool) -> tuple[Value, Value, bool]:
    """The two sides a comparison counts, and whether it stays paired: launch means when runs
    share launches (unpaired: a launch's runs have no partner of their own), else as given.
    Each side given as repetitions is counted so; one given as a number or statistics stays.
    A paired result whose launches pair one to one (`Design.launch_pairs`: the blocks
    `improvements run` made with several runs per launch) stays paired on its launch means."""
    if chosen.by_launch is None:
        return value, base, paired

    def per_launch(side: Value, origins: Sequence[Origin]) -> Value:
        if not isinstance(side, list):
            return side
        means = launch_means(side, origins)
        return means if len(means) > 1 else means[0]

    own, theirs = per_launch(value, found.origins), per_launch(base, found.baseline_origins)
    # One block is one launch a side: a single shot, compared as one (unpaired) number each.
    both = isinstance(own, list) and isinstance(theirs, list)
    return own, theirs, paired and chosen.launch_pairs and both
