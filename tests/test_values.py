"""Values as written: a number in quotes, and the smallest size a measurement may have, at their positions."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_cli

RECORD = """title: X
tier: 1
status: in-progress
hypothesis: H.
results:
  - label: c8
    concurrency: 8
    metrics: {{output_throughput: {value}}}
    baseline: {{output_throughput: 100}}
"""


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (
            "'12'",
            "8:34: error[wrong-type]: `output_throughput` is the text '12', not a number "
            "(hint: write the number without quotes)",
        ),
        ("2.0e-16", "8:34: error[invalid-value]: `results[0].metrics.output_throughput`: 2e-16 is too close to zero"),
        ("1.0e-15", None),
        ("0", None),
    ],
)
def test_a_value_as_written(minimal: Path, value: str, expected: str | None) -> None:
    (minimal / "improvements" / "01-x.yaml").write_text(RECORD.format(value=value), encoding="utf-8")
    out = run_cli("check", "--root", str(minimal))
    if expected is None:
        assert out.returncode == 0, out.stderr
    else:
        assert out.returncode == 1
        assert out.stderr.startswith(f"improvements/01-x.yaml:{expected}"), out.stderr


def test_a_number_no_field_bounds_is_still_refused_when_not_finite() -> None:
    # Every numeric field refuses inf and nan today (`allow_inf_nan=False`); the walk is the guard
    # for one added without it.
    from generator.checks.values import _number

    inf = float("inf")
    assert list(_number(inf, inf, ("slo", "tpot_p99"))) == [
        (("slo", "tpot_p99"), False, "invalid-value", "`tpot_p99` is inf, which is not a finite number", None)
    ]
