"""A measured quantity as one statistic, and numbers as text, independent of locale.

Low in the pipeline so that every stage that shows a number (pages, charts, the summary,
problems) writes it the same way.
"""

from __future__ import annotations

import decimal
import math
import statistics
from dataclasses import dataclass
from typing import Literal

from generator.model.result import About, Range, Statistics

Kind = Literal["single", "repeated", "range", "statistics"]
Value = float | list[float] | Range | Statistics | About


@dataclass(frozen=True)
class Stat:
    """One quantity: a single number, repeated measurements, a range, or summary statistics."""

    mean: float
    # Sample standard deviation for repeated measurements and statistics (0 when a statistics
    # value gives none: see `spread_known`), half-width for a range, 0 otherwise.
    spread: float
    n: int
    low: float
    high: float
    kind: Kind
    spread_known: bool = True
    about: bool = False
    # Repeated measurements as given, in order (empty for the other kinds).
    values: tuple[float, ...] = ()

    @property
    def wide(self) -> bool:
        """Repetitions more than `WIDE` times apart: more spread than one configuration plausibly
        gives (a warm-up, a setting the file does not record), so pages list them and `check` warns."""
        return self.kind == "repeated" and self.low > 0 and self.high > WIDE * self.low


# Repetitions whose largest is more than this many times their smallest are not shown as one
# mean and spread alone: 1841.95 and 9987.78 tok/s are not "5915 ± 5760".
WIDE = 2.0


def stat(value: Value) -> Stat:
    if isinstance(value, Statistics):
        sd = value.sd if value.sd is not None else 0.0
        # The runs' range when the source gives it, else nothing beyond the mean is known.
        low = value.min if value.min is not None else value.mean
        high = value.max if value.max is not None else value.mean
        return Stat(value.mean, sd, value.n, low, high, "statistics", value.sd is not None)
    if isinstance(value, About):
        return Stat(value.value, 0.0, 1, value.value, value.value, "single", about=value.about)
    if isinstance(value, Range):
        return Stat(value.middle, (value.max - value.min) / 2, 1, value.min, value.max, "range")
    if isinstance(value, list):
        values = [float(v) for v in value]
        if len(values) == 1:
            return Stat(values[0], 0.0, 1, values[0], values[0], "single")
        mean, sd = statistics.fmean(values), statistics.stdev(values)
        return Stat(mean, sd, len(values), min(values), max(values), "repeated", values=tuple(values))
    v = float(value)
    return Stat(v, 0.0, 1, v, v, "single")


def fmt_number(x: float) -> str:
    """A number with four significant digits at most, no exponent, no locale."""
    if x == 0 or not math.isfinite(x):
        return "0" if x == 0 else str(x)
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    if abs(x) >= 1e15:
        return fmt_whole(x)
    decimals = max(0, 3 - math.floor(math.log10(abs(x))))
    text = f"{x:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def fmt_whole(x: float) -> str:
    """`x` rounded to a whole number, and past four digits to four significant ones, without the
    binary float's noise: 1e30 is "1000000000000000000000000000000", never "...19884624838656"."""
    if abs(x) < 1e4:
        return f"{x:.0f}"
    return format(decimal.Decimal(f"{x:.4g}"), "f")


def fmt_stat(s: Stat) -> str:
    if s.kind == "statistics":
        span = f", range {fmt_number(s.low)}–{fmt_number(s.high)}" if s.low != s.high else ""
        if not s.spread_known:
            return f"{fmt_number(s.mean)} (mean of n={s.n}{span}, no spread given)"
        return f"{fmt_number(s.mean)} ± {fmt_number(s.spread)} (n={s.n}{span}, as statistics)"
    if s.about:
        return f"~{fmt_number(s.mean)}"
    if s.kind == "range":
        return f"{fmt_number(s.low)}–{fmt_number(s.high)}"
    if s.kind == "repeated" and s.wide:
        return f"{fmt_number(s.mean)} ± {fmt_number(s.spread)} (n={s.n}: {listed(s)}; {s.high / s.low:.1f}x apart)"
    if s.kind == "repeated":
        return f"{fmt_number(s.mean)} ± {fmt_number(s.spread)} (n={s.n})"
    return fmt_number(s.mean)


# Past this many repetitions a page names the smallest and the largest, not each one.
_LISTED = 8


def listed(s: Stat) -> str:
    """Repetitions as a page names them: each value, or past a few the smallest and the largest."""
    if len(s.values) <= _LISTED:
        return ", ".join(fmt_number(v) for v in s.values)
    return f"from {fmt_number(s.low)} to {fmt_number(s.high)}"


def fmt_value(value: Value) -> str:
    return fmt_summarised(value, stat(value))


def fmt_summarised(value: Value, s: Stat) -> str:
    """A value shown from its summary `s` (the analysis' `stat(value)`), so a page computes nothing."""
    text = fmt_stat(s)
    # A range the source gives as approximate ("~8-11 tok/s") keeps its "~" wherever it is shown.
    return f"~{text}" if isinstance(value, Range) and value.about else text


def samples(value: Value) -> list[float]:
    """A value's repetitions as numbers: a list as given; anything else as one sample (its
    midpoint for a range, its mean for statistics, which `analysis` compares as such)."""
    if isinstance(value, list):
        return [float(v) for v in value]
    return [stat(value).mean]


def unreplicated_text(n: int, baseline_n: int, spread_unknown: bool, *, advice: bool = True) -> str:
    """Why a comparison gives no direction, in words: a single shot, or means published without spread.

    Means of several runs without their spread are not single shots, and replicating them is
    not what is missing: the spread is.
    """
    if spread_unknown and max(n, baseline_n) >= 2:
        return f"unreplicated ({n} vs {baseline_n} runs, no spread published)"
    return "unreplicated (single shot: replicate it)" if advice else "unreplicated (single shot)"


def fmt_percent(p: float) -> str:
    """A percent with one decimal; from 10,000% on, four significant digits without the binary
    float's noise ("+100000000000000000000000000000000%", never "...87351763694911488.0%");
    under 0.05% in size but not 0, two significant digits ("+0.042%"), so only 0 reads "0.0%"."""
    if math.isfinite(p) and abs(p) >= 1e4:
        return ("+" if p > 0 else "-") + fmt_whole(abs(p)) + "%"
    text = f"{p:+.1f}%"
    if text in ("+0.0%", "-0.0%") and p != 0 and math.isfinite(p):
        # A change or bound that is not 0 never prints as 0 (a +0.042% bound read "0.0%", issue
        # 51): two significant digits, without an exponent.
        return ("+" if p > 0 else "-") + format(decimal.Decimal(f"{abs(p):.2g}"), "f") + "%"
    return "0.0%" if text in ("+0.0%", "-0.0%") else text
