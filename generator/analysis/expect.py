"""A record's expectations against its results: the expected gain (in percent or in the metric's
unit) and the thresholds other metrics must reach (acceptance length at least 5).

Every verdict reads an interval where there is one: a gain is met when the interval's worse
end reaches the expected gain's lower end, missed when its better end falls short of it (an
expected gain of exactly 0, a control, is met when the rule says `no-change`); a
threshold is met when the mean's (1 - alpha) t interval lies on its side, missed when it lies on
the other. A number without an interval is read at face value and marked so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from generator.analysis.records import ExpectationCheck, Primary, ResolvedResult, Verdict
from generator.analysis.tdist import t_interval
from generator.model.quantity import Value, stat
from generator.model.record import Expected, Threshold
from generator.model.result import Range, Statistics


def _bar(v: float | Range) -> tuple[float, float]:
    return (v.min, v.max) if isinstance(v, Range) else (float(v), float(v))


def _read_gain(low: float, point: float, interval: tuple[float, float] | None) -> tuple[Verdict, bool]:
    if interval is None:
        return ("met" if point >= low else "missed"), True
    if interval[0] >= low:
        return "met", False
    if interval[1] < low:
        return "missed", False
    return "undecided", False


def gain_checks(expected: Expected, primary: Primary | None) -> list[ExpectationCheck]:
    """The expected gain (percent, and in the metric's unit) against the primary comparison."""
    if primary is None or primary.kind != "metric" or primary.metric != expected.metric:
        return []
    c, out = primary.comparison, []
    if expected.gain is not None and c.gain_percent is not None:
        low, high = _bar(expected.gain)
        bounds = (c.gain_low_percent, c.gain_high_percent)
        interval = (bounds[0], bounds[1]) if bounds[0] is not None and bounds[1] is not None else None
        verdict, face = _read_gain(low, c.gain_percent, interval)
        if low == high == 0 and c.decision != "unreplicated":
            # "No change expected" (a control): read by the rule's own equivalence test.
            read: dict[str, Verdict] = {"no-change": "met", "better": "missed", "worse": "missed"}
            verdict = read.get(c.decision, "undecided")
        out.append(
            ExpectationCheck("gain", primary.metric, primary.label, low, high, c.gain_percent, interval, verdict, face)
        )
    if expected.gain_absolute is not None:
        low, high = _bar(expected.gain_absolute)
        sign = 1.0 if c.higher_is_better else -1.0
        point = sign * c.difference
        interval = None
        if c.ci_low is not None and c.ci_high is not None:
            ends = sorted((sign * c.ci_low, sign * c.ci_high))
            interval = (ends[0], ends[1])
        verdict, face = _read_gain(low, point, interval)
        out.append(
            ExpectationCheck("gain_absolute", primary.metric, primary.label, low, high, point, interval, verdict, face)
        )
    return out


def _mean_interval(value: Value, alpha: float) -> tuple[float, tuple[float, float] | None]:
    """The mean and its (1 - alpha) t interval; a range is its own interval; else no interval."""
    s = stat(value)
    if isinstance(value, Range):
        return s.mean, (value.min, value.max)
    sd = s.spread if s.kind == "repeated" else (value.sd if isinstance(value, Statistics) else None)
    if sd is None or s.n < 2:
        return s.mean, None
    return s.mean, t_interval(s.mean, sd / math.sqrt(s.n), s.n - 1.0, alpha)


def _read_threshold(t: Threshold, point: float, interval: tuple[float, float] | None) -> tuple[Verdict, bool]:
    low, high = interval if interval is not None else (point, point)
    lo = -math.inf if t.at_least is None else t.at_least
    hi = math.inf if t.at_most is None else t.at_most
    if lo <= low and high <= hi:
        return "met", interval is None
    if high < lo or low > hi:
        return "missed", interval is None
    return "undecided", False


def threshold_checks(expected: Expected, results: Sequence[ResolvedResult], alpha: float) -> list[ExpectationCheck]:
    """Each threshold on every result that measures its metric (or the one it names)."""
    out = []
    for t in expected.thresholds:
        for res in results:
            if (t.result is not None and res.result.label != t.result) or t.metric not in res.metrics:
                continue
            point, interval = _mean_interval(res.metrics[t.metric], alpha)
            verdict, face = _read_threshold(t, point, interval)
            out.append(
                ExpectationCheck(
                    "threshold", t.metric, res.result.label, t.at_least, t.at_most, point, interval, verdict, face
                )
            )
    return out


def expectation_checks(
    expected: Expected | None, primary: Primary | None, results: Sequence[ResolvedResult], alpha: float
) -> tuple[ExpectationCheck, ...]:
    if expected is None:
        return ()
    return (*gain_checks(expected, primary), *threshold_checks(expected, results, alpha))
