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


def stat(value: Value) -> Stat:
    if isinstance(value, Statistics):
        sd = value.sd if value.sd is not None else 0.0
        return Stat(value.mean, sd, value.n, value.mean, value.mean, "statistics", value.sd is not None)
    if isinstance(value, About):
        return Stat(value.value, 0.0, 1, value.value, value.value, "single", about=value.about)
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
        if not s.spread_known:
            return f"{fmt_number(s.mean)} (mean of n={s.n}, no spread given)"
        return f"{fmt_number(s.mean)} ± {fmt_number(s.spread)} (n={s.n}, as statistics)"
    if s.about:
        return f"~{fmt_number(s.mean)}"
    if s.kind == "range":
        return f"{fmt_number(s.low)}–{fmt_number(s.high)}"
    if s.kind == "repeated":
        return f"{fmt_number(s.mean)} ± {fmt_number(s.spread)} (n={s.n})"
    return fmt_number(s.mean)


def fmt_value(value: Value) -> str:
    text = fmt_stat(stat(value))
    # A range the source gives as approximate ("~8-11 tok/s") keeps its "~" wherever it is shown.
    return f"~{text}" if isinstance(value, Range) and value.about else text


def samples(value: Value) -> list[float]:
    """A value's repetitions as numbers: a list as given; anything else as one sample (its
    midpoint for a range, its mean for statistics, which `analysis` compares as such)."""
    if isinstance(value, list):
        return [float(v) for v in value]
    return [stat(value).mean]


def fmt_percent(p: float) -> str:
    """A percent with one decimal; from 10,000% on, four significant digits without the binary
    float's noise ("+100000000000000000000000000000000%", never "...87351763694911488.0%")."""
    if math.isfinite(p) and abs(p) >= 1e4:
        return ("+" if p > 0 else "-") + fmt_whole(abs(p)) + "%"
    text = f"{p:+.1f}%"
    return "0.0%" if text in ("+0.0%", "-0.0%") else text
