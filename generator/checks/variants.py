"""The rules a record's variants and sweep must keep: one retained at most, each label once,
a sweep's values (one per variant, all numbers or all text) and the result it plots."""

from __future__ import annotations

from generator.base.problems import Problem
from generator.base.read import Positions
from generator.model.record import Record


def variant_problems(record: Record, pos: Positions, shown: str) -> list[Problem]:
    """What a record's variants and sweep must keep: one retained at most, labels once, a sweep's values."""
    out: list[Problem] = []
    kept = [i for i, v in enumerate(record.variants) if v.outcome == "retained"]
    for i in kept[1:]:
        out.append(
            Problem(
                shown,
                *pos.of(("variants", i, "outcome")),
                "invalid-value",
                f"variant `{record.variants[i].label}` is retained, and so is `{record.variants[kept[0]].label}`",
                "a record retains one variant; split the others into records of their own",
            )
        )
    labels: dict[str, int] = {}
    for i, v in enumerate(record.variants):
        if v.label in labels:
            out.append(
                Problem(
                    shown,
                    *pos.of(("variants", i, "label")),
                    "duplicate-label",
                    f"label `{v.label}` is already used by variant {labels[v.label] + 1}",
                )
            )
        labels.setdefault(v.label, i)
    out += _sweep_problems(record, pos, shown)
    if record.status == "adopted" and record.variants and not kept:
        out.append(
            Problem(
                shown,
                *pos.of(("status",)),
                "status-rule",
                "status `adopted` with variants needs one variant with `outcome: retained`",
                "mark the configuration that was adopted as retained",
            )
        )
    return out


def _sweep_problems(record: Record, pos: Positions, shown: str) -> list[Problem]:
    out: list[Problem] = []
    if record.sweep is None:
        return out
    if not record.variants:
        line, col = pos.of(("sweep",), key=True)
        return [
            Problem(
                shown, line, col, "invalid-value", "`sweep` needs `variants`, one per value", "add a variant per value"
            )
        ]
    for i, v in enumerate(record.variants):
        # A diagnostic run (a 2-GPU isolation run) measures beside the sweep, not a value of it.
        if v.value is None and v.outcome != "diagnostic":
            out.append(
                Problem(
                    shown,
                    *pos.of(("variants", i), key=False),
                    "missing-field",
                    f"variant `{v.label}` of a sweep needs `value`: the setting of `{record.sweep.parameter}` it ran",
                )
            )
    wanted = record.sweep.result
    if wanted is not None and not any(r.label == wanted for v in record.variants for r in v.results):
        labels = sorted({r.label for v in record.variants for r in v.results})
        out.append(
            Problem(
                shown,
                *pos.of(("sweep", "result")),
                "unknown-result",
                f"no variant has a result labelled `{wanted}`",
                f"the variants' results are labelled: {', '.join(f'`{x}`' for x in labels) or 'none'}",
            )
        )
    kinds = {isinstance(v.value, float) for v in record.variants if v.value is not None}
    if len(kinds) > 1:
        out.append(
            Problem(
                shown,
                *pos.of(("sweep",), key=True),
                "invalid-value",
                "a sweep's values are all numbers or all text, not both",
                "quote the numbers, or write the text values as numbers",
            )
        )
    return out
