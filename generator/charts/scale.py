"""Axis scales and tick positions for the SVG charts."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

_STEPS = (1.0, 2.0, 2.5, 5.0, 10.0)


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values covering [lo, hi], about `count` intervals (1, 2, 2.5, 5 x 10^k apart)."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError("axis bounds must be finite numbers")
    if hi < lo:
        lo, hi = hi, lo
    if hi == lo:
        pad = abs(lo) * 0.1 or 1.0
        lo, hi = lo - pad, hi + pad
    raw = (hi - lo) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in _STEPS if m * magnitude >= raw * (1 - 1e-9))
    start = math.floor(lo / step + 1e-9) * step
    stop = math.ceil(hi / step - 1e-9) * step
    n = round((stop - start) / step)
    # Rounded so that 0.1 + 0.2 style noise never reaches the formatted labels.
    return [round(start + i * step, 12) + 0.0 for i in range(n + 1)]


def bounds(values: Iterable[float], *, zero: bool = False) -> tuple[float, float]:
    data = [float(v) for v in values]
    if zero:
        data.append(0.0)
    if not data:
        return 0.0, 1.0
    return min(data), max(data)


@dataclass(frozen=True)
class Linear:
    """Maps data values in [d0, d1] onto pixels in [r0, r1]."""

    d0: float
    d1: float
    r0: float
    r1: float

    def __call__(self, value: float) -> float:
        if self.d1 == self.d0:
            return (self.r0 + self.r1) / 2
        return self.r0 + (value - self.d0) * (self.r1 - self.r0) / (self.d1 - self.d0)


@dataclass(frozen=True)
class Log2:
    """A log-2 scale, for loads that double (concurrency 1, 2, 4 ... 256)."""

    d0: float
    d1: float
    r0: float
    r1: float

    def __call__(self, value: float) -> float:
        a, b = math.log2(self.d0), math.log2(self.d1)
        if a == b:
            return (self.r0 + self.r1) / 2
        return self.r0 + (math.log2(value) - a) * (self.r1 - self.r0) / (b - a)
