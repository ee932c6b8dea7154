"""`decided_by`: when the numbers bear out the change a record states and the status it decided.

The rule behind the page's "the numbers agree" / "they do not" for a record's `decided_by`,
checked case by case on real comparisons (generator.analysis.stats.compare) and reported
changes, each boundary on both sides of the rounding a write-up allows (STATED_TOLERANCE).
"""

from __future__ import annotations

import pytest

from generator.analysis.guards import STATED_TOLERANCE, _agrees
from generator.analysis.stats import compare

UP = compare([110.0, 111.0, 112.0], [100.0, 100.5, 101.0], higher_is_better=True)
DOWN = compare([100.0, 100.5, 101.0], [110.0, 111.0, 112.0], higher_is_better=True)
EVEN = compare([100.0, 103.0, 97.0], [101.0, 96.0, 104.0], higher_is_better=True)
NO_CHANGE_PERCENT = compare([5.0], [0.0], higher_is_better=True)


def test_the_comparisons_are_what_the_cases_need() -> None:
    assert (UP.decision, DOWN.decision, EVEN.decision) == ("better", "worse", "inconclusive")
    assert NO_CHANGE_PERCENT.change_percent is None


@pytest.mark.parametrize(("status", "c"), [("rejected", UP), ("adopted", DOWN)])
def test_a_status_the_deciding_metric_contradicts_never_agrees(status: str, c: object) -> None:
    # Whatever is stated, or nothing: the rule itself went the other way.
    assert _agrees(status, None, c, None) is False  # type: ignore[arg-type]
    assert _agrees(status, c.change_percent, c, None) is False  # type: ignore[attr-defined,arg-type]


def test_a_status_the_metric_bears_out_is_judged_by_the_stated_change() -> None:
    assert UP.change_percent is not None and DOWN.change_percent is not None
    assert _agrees("adopted", None, UP, None) is None  # nothing stated: nothing to check
    assert _agrees("adopted", UP.change_percent + STATED_TOLERANCE, UP, None) is True
    assert _agrees("adopted", UP.change_percent + STATED_TOLERANCE + 0.01, UP, None) is False
    assert _agrees("rejected", DOWN.change_percent - STATED_TOLERANCE, DOWN, None) is True
    assert _agrees("rejected", DOWN.change_percent - STATED_TOLERANCE - 0.01, DOWN, None) is False
    # The measured change is what is read, not a reported one beside it.
    assert _agrees("in-progress", EVEN.change_percent, EVEN, 50.0) is True


def test_without_a_measured_change_the_reported_one_is_read() -> None:
    # A reported range: the stated change within it, give or take the rounding.
    for c in (None, NO_CHANGE_PERCENT):
        assert _agrees("adopted", 12.0, c, (10.0, 14.0)) is True
        assert _agrees("adopted", 10.0 - STATED_TOLERANCE, c, (10.0, 14.0)) is True
        assert _agrees("adopted", 10.0 - STATED_TOLERANCE - 0.01, c, (10.0, 14.0)) is False
        assert _agrees("adopted", 14.0 + STATED_TOLERANCE, c, (10.0, 14.0)) is True
        assert _agrees("adopted", 14.0 + STATED_TOLERANCE + 0.01, c, (10.0, 14.0)) is False
        # One reported number, on either side of it.
        assert _agrees("adopted", -5.0 + STATED_TOLERANCE, c, -5.0) is True
        assert _agrees("adopted", -5.0 - STATED_TOLERANCE - 0.01, c, -5.0) is False
        assert _agrees("adopted", 5.0, c, -5.0) is False
        # Nothing measured or reported: nothing to check.
        assert _agrees("adopted", 5.0, c, None) is None
