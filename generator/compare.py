"""Statistics and deltas: how a result's numbers compare with their baseline.

Everything that turns a record's numbers into "better by x%" goes through here, so the
series pages, the summary and the export agree on every sign. `result_numbers` is the one
place where a result's numbers (typed, or later imported runs) are resolved.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from generator import metrics
from generator.model import Range, Result

if TYPE_CHECKING:
    from generator.load import Project, RecordFile

Kind = Literal["single", "repeated", "range"]
Value = float | list[float] | Range


@dataclass(frozen=True)
class Stat:
    """One quantity: a single number, repeated measurements, or a range."""

    mean: float
    # Sample standard deviation for repeated measurements, half-width for a range, 0 otherwise.
    spread: float
    n: int
    low: float
    high: float
    kind: Kind


def stat(value: Value) -> Stat:
    if isinstance(value, Range):
        return Stat((value.min + value.max) / 2, (value.max - value.min) / 2, 1, value.min, value.max, "range")
    if isinstance(value, list):
        values = [float(v) for v in value]
        if len(values) == 1:
            return Stat(values[0], 0.0, 1, values[0], values[0], "single")
        return Stat(
            statistics.fmean(values), statistics.stdev(values), len(values), min(values), max(values), "repeated"
        )
    v = float(value)
    return Stat(v, 0.0, 1, v, v, "single")


@dataclass(frozen=True)
class Delta:
    metric: str
    value: Stat
    baseline: Stat
    difference: float
    # Relative change of the raw numbers: negative when a latency went down.
    change_percent: float
    # Signed so that positive is better in the metric's own direction.
    gain_percent: float
    # The difference is smaller than the two spreads combined, so it may be noise.
    within_noise: bool


def delta(metric_name: str, value: Value, baseline_value: Value) -> Delta | None:
    """The change from `baseline_value` to `value`, or None when no percentage exists.

    There is none for an unknown metric or a baseline of zero.
    """
    metric = metrics.lookup(metric_name)
    if metric is None:
        return None
    v, b = stat(value), stat(baseline_value)
    if b.mean == 0:
        return None
    difference = v.mean - b.mean
    change = difference / abs(b.mean) * 100
    gain = change if metric.higher_is_better else -change
    # Independent spreads add in quadrature: the spread of a difference of two estimates.
    combined = math.hypot(v.spread, b.spread)
    return Delta(metric_name, v, b, difference, change, gain, abs(difference) < combined)


@dataclass
class ResolvedResult:
    """A result's numbers as rendered: its metrics, what they compare with, and why."""

    result: Result
    metrics: dict[str, Value]
    baseline: dict[str, Value]
    # Said next to the delta: where the baseline came from, what limits the comparison.
    notes: list[str] = field(default_factory=list)
    no_baseline: bool = False

    def deltas(self) -> dict[str, Delta | None]:
        out: dict[str, Delta | None] = {}
        for name, value in self.metrics.items():
            base = self.baseline.get(name)
            out[name] = None if base is None else delta(name, value, base)
        return out


def result_numbers(project: Project, result: Result) -> ResolvedResult:
    """The numbers of one result and of its baseline.

    A result without its own baseline is compared with the campaign baseline result at the
    same concurrency, when there is one, so the baseline's numbers are written once.
    """
    if result.run is not None:
        # An imported run: its numbers, and the baseline run matched by workload and load.
        from generator.results.matching import resolve

        resolved = resolve(project, result)
        assert resolved is not None
        shown, run_values, run_base, run_notes = resolved
        return ResolvedResult(shown, run_values, run_base, run_notes, no_baseline=not run_base)
    values: dict[str, Value] = dict(result.metrics)
    notes: list[str] = []
    base: dict[str, Value] = dict(result.baseline)
    if not base and result.concurrency is not None:
        for candidate in project.campaign.baseline.results:
            if candidate.concurrency != result.concurrency:
                continue
            shared = {k: v for k, v in candidate.metrics.items() if k in values}
            if shared:
                base = shared
                notes.append(f"Compared with the campaign baseline result `{candidate.label}` at the same concurrency.")
                break
    if values and base:
        missing = [k for k in values if k not in base]
        if missing:
            notes.append(f"No baseline for {', '.join(f'`{k}`' for k in missing)}.")
    return ResolvedResult(result, values, base, notes, no_baseline=not base)


def best_gain(project: Project, rec: RecordFile) -> tuple[float, str, int | None, bool] | None:
    """The record's best measured gain: (percent, metric, concurrency, within noise), or None without one.

    A change within noise is not a measured gain: it counts as no change (0%) when gains are
    compared, so any real improvement comes before it, and it carries its flag wherever it is shown.
    """
    best: tuple[float, str, int | None, bool] | None = None
    for result in rec.record.results:
        resolved = result_numbers(project, result)
        for name, d in resolved.deltas().items():
            if d is None:
                continue
            # Ties keep the first result and metric in record order, so the choice is stable.
            if best is None or gain_rank(d.gain_percent, d.within_noise) > gain_rank(best[0], best[3]):
                best = (d.gain_percent, name, resolved.result.concurrency, d.within_noise)
    return best


def gain_rank(percent: float, within_noise: bool) -> tuple[float, float]:
    """How gains compare: what was measured first, a within-noise change as none, its size only to break ties."""
    return (0.0 if within_noise else percent, percent)


# --- formatting, independent of locale ----------------------------------------------------


def fmt_number(x: float) -> str:
    """A number with four significant digits at most, no exponent, no locale."""
    if x == 0 or not math.isfinite(x):
        return "0" if x == 0 else str(x)
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    decimals = max(0, 3 - math.floor(math.log10(abs(x))))
    text = f"{x:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def fmt_stat(s: Stat) -> str:
    if s.kind == "range":
        return f"{fmt_number(s.low)}–{fmt_number(s.high)}"
    if s.kind == "repeated":
        return f"{fmt_number(s.mean)} ± {fmt_number(s.spread)} (n={s.n})"
    return fmt_number(s.mean)


def fmt_value(value: Value) -> str:
    return fmt_stat(stat(value))


def fmt_percent(p: float) -> str:
    text = f"{p:+.1f}%"
    return "0.0%" if text in ("+0.0%", "-0.0%") else text
