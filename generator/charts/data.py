"""What the chart functions take: plain frozen values, no project or record objects."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# How a comparison was decided; each is drawn with its own fill and named in words beside the
# value, so the chart reads without colour (print, colour-blind readers).
Decision = Literal["better", "worse", "no-change", "inconclusive", "unreplicated"]
DECISIONS: tuple[Decision, ...] = ("better", "worse", "no-change", "inconclusive", "unreplicated")
Interval = tuple[float, float]


@dataclass(frozen=True)
class Bar:
    """One item of a bar chart: a change in percent, its interval, how it was decided."""

    label: str
    value: float
    interval: Interval | None = None
    decision: Decision | None = None


@dataclass(frozen=True)
class Step:
    """One step of a waterfall: a change in the metric's unit from the previous level.

    `chain_break` says why this step is not measured from the level before it (another
    workload or load); the chart leaves a gap there with the note instead of a connector.
    """

    label: str
    delta: float
    interval: Interval | None = None
    chain_break: str | None = None


@dataclass(frozen=True)
class Goal:
    label: str
    target: float


@dataclass(frozen=True)
class Point:
    """A point of a frontier series; `label` names its load, for example "c=64"."""

    x: float
    y: float
    label: str = ""


@dataclass(frozen=True)
class Series:
    label: str
    points: tuple[Point, ...]


@dataclass(frozen=True)
class Limit:
    """A service-level objective drawn as a line: vertical on axis "x", horizontal on "y"."""

    label: str
    value: float
    axis: Literal["x", "y"]


@dataclass(frozen=True)
class SweepPoint:
    x: str | float
    value: float
    interval: Interval | None = None
