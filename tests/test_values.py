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


def test_a_build_walks_only_the_files_that_changed_and_still_reports_each_problem(
    minimal: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What one file's walk finds is kept under its digest (`base.incremental`): an unchanged file
    # is not walked again, and a problem it holds is reported by every build all the same.
    from generator.base.problems import ProblemsFound
    from generator.checks import values
    from generator.output import render

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    walked: list[object] = []
    walk = values._walk

    def counting(value: object, raw: object, loc: tuple[str | int, ...]) -> list[values.Found]:
        walked.append(raw)
        return walk(value, raw, loc)

    monkeypatch.setattr(values, "_walk", counting)
    folder = minimal / "improvements"
    for n in range(1, 4):
        (folder / f"0{n}-r{n}.yaml").write_text(RECORD.format(value=100 + n), encoding="utf-8")
    render.build(minimal)
    assert len(walked) == 4  # the campaign file and three records
    for name, value in (("02-r2.yaml", "'12'"), ("02-r2.yaml", "7"), ("03-r3.yaml", "9")):
        walked.clear()
        (folder / name).write_text(RECORD.format(value=value), encoding="utf-8")
        if value == "'12'":
            with pytest.raises(ProblemsFound) as found:
                render.build(minimal)
            problems = [(p.path, p.line, p.col, p.code) for p in found.value.report.problems]
            assert problems == [(f"improvements/{name}", 8, 34, "wrong-type")]
        else:
            render.build(minimal)
        # Only the edited file is walked again.
        assert len(walked) == 1, (name, value)
