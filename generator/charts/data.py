"""What the chart functions take: plain frozen values, no project or record objects."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

# How a comparison was decided; each is drawn with its own fill and named in words beside the
# value, so the chart reads without colour (print, colour-blind readers).
Decision = Literal["better", "worse", "no-change", "inconclusive", "unreplicated"]
DECISIONS: tuple[Decision, ...] = ("better", "worse", "no-change", "inconclusive", "unreplicated")
Interval = tuple[float, float]


def _check(what: str, *numbers: float) -> None:
    """Refuse what cannot be drawn: a NaN or an infinity has no place on an axis."""
    for n in numbers:
        if not isinstance(n, int | float) or isinstance(n, bool) or not math.isfinite(n):
            raise ValueError(f"{what}: {n!r} is not a finite number")


def _check_interval(what: str, interval: Interval | None) -> None:
    if interval is not None:
        _check(what, *interval)
        if interval[0] > interval[1]:
            raise ValueError(f"{what}: interval {interval!r} has its low end above its high end")


@dataclass(frozen=True)
class Bar:
    """One item of a bar chart: a change in percent, its interval, how it was decided."""

    label: str
    value: float
    interval: Interval | None = None
    decision: Decision | None = None
    # A word drawn beside the bar in the warning colour ("worse elsewhere"), never colour alone.
    flag: str | None = None

    def __post_init__(self) -> None:
        _check(self.label, self.value)
        _check_interval(self.label, self.interval)


@dataclass(frozen=True)
class Step:
    """One step of a waterfall: a change in the metric's unit from the previous level.

    `level` is the level after it, as the analysis composed it: the chart prints it and never
    sums the deltas itself. `chain_break` says why this step is not measured from the level
    before it (another workload or load); the chart leaves a gap there with the note instead of
    a connector. `change`, when given, is the step's change as its record estimated it, the
    number printed beside `interval` (the same estimate); the bar still spans the two levels.
    """

    label: str
    delta: float
    level: float
    interval: Interval | None = None
    chain_break: str | None = None
    change: float | None = None

    def __post_init__(self) -> None:
        _check(self.label, self.delta, self.level)
        if self.change is not None:
            _check(self.label, self.change)
        _check_interval(self.label, self.interval)

    @property
    def shown(self) -> float:
        """The number printed for the step: its change when given, else the bar's delta."""
        return self.delta if self.change is None else self.change


@dataclass(frozen=True)
class Goal:
    label: str
    target: float
    # The target minus the current level, from the analysis: said in the description.
    distance: float

    def __post_init__(self) -> None:
        _check(self.label, self.target, self.distance)


@dataclass(frozen=True)
class Point:
    """A point of a frontier series; `label` names its load, for example "c=64"."""

    x: float
    y: float
    label: str = ""
    # What a hover or a tap on the point says (its <title>): configuration, load, n, decision.
    note: str = ""

    def __post_init__(self) -> None:
        _check(self.label or "point", self.x, self.y)


@dataclass(frozen=True)
class Series:
    label: str
    points: tuple[Point, ...]


@dataclass(frozen=True)
class Mark:
    """A point drawn ringed on a frontier (capacity under the SLO), named in the legend by `label`."""

    x: float
    y: float
    note: str

    def __post_init__(self) -> None:
        _check(self.note, self.x, self.y)


@dataclass(frozen=True)
class Limit:
    """A service-level objective drawn as a line: vertical on axis "x", horizontal on "y"."""

    label: str
    value: float
    axis: Literal["x", "y"]

    def __post_init__(self) -> None:
        _check(self.label, self.value)


@dataclass(frozen=True)
class SweepPoint:
    x: str | float
    value: float
    interval: Interval | None = None
    # What the value is when it has no interval to draw ("mean of 3 runs, no spread published").
    note: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.x, str):
            _check("swept value", self.x)
        _check(str(self.x), self.value)
        _check_interval(str(self.x), self.interval)
