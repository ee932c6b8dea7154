"""Variants: the configurations a record tried as one unit (the arms of an A/B, a sweep's values).

A record with `variants:` is decided by them: its headline gain, rank and summary row come
from the one variant it retained, a `diagnostic` variant (a run that measures rather than a
candidate) never ranks, and the stack applies the retained variant's change. The rules a
record's variants must keep are here too, so `validate` asks one place.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from generator.base.problems import Problem
from generator.base.read import Positions
from generator.model.quantity import fmt_number
from generator.model.record import Change, Record, Setup, Variant
from generator.model.result import Result

T = TypeVar("T")


def retained(record: Record) -> Variant | None:
    """The variant the record kept, or None (no variants, or none retained)."""
    return next((v for v in record.variants if v.outcome == "retained"), None)


def effective_change(record: Record) -> Change | None:
    """The change the record stands for: its retained variant's (else the record's own).

    A retained variant without a `change` of its own is the record's change as written.
    The stack and the page's launch command apply this.
    """
    kept = retained(record)
    if kept is not None and kept.change is not None:
        return kept.change
    return record.change


def effective_setup(record: Record) -> Setup | None:
    """The setup the record's launch ran on: its retained variant's own, else the record's."""
    kept = retained(record)
    if kept is not None and kept.setup is not None:
        return kept.setup
    return record.setup


def effective_change_path(record: Record) -> tuple[str | int, ...]:
    """Where `effective_change(record)` is written: the retained variant's `change`, else the record's."""
    for i, v in enumerate(record.variants):
        if v.outcome == "retained" and v.change is not None:
            return ("variants", i, "change")
    return ("change",)


def change_for(record: Record, result: Result) -> Change | None:
    """The change `result` measures: that of the variant holding it, when it has its own, else the record's."""
    for v in record.variants:
        if v.change is not None and any(r is result for r in v.results):
            return v.change
    return record.change


def all_results(record: Record) -> list[Result]:
    """The record's own results, then each variant's, in order."""
    return [*record.results, *(r for v in record.variants for r in v.results)]


def located_results(record: Record) -> list[tuple[tuple[str | int, ...], Variant | None, Result]]:
    """Every result with where it is written and the variant holding it (None: the record's own)."""
    out: list[tuple[tuple[str | int, ...], Variant | None, Result]] = [
        (("results", i), None, r) for i, r in enumerate(record.results)
    ]
    for j, v in enumerate(record.variants):
        out += [(("variants", j, "results", i), v, r) for i, r in enumerate(v.results)]
    return out


def find_result(record: Record, variant: str | None, label: str) -> Result | None:
    """The result labelled `label`: the record's own, or of the variant labelled `variant`."""
    if variant is None:
        return next((r for r in record.results if r.label == label), None)
    held = next((v for v in record.variants if v.label == variant), None)
    return next((r for r in held.results if r.label == label), None) if held is not None else None


def headline(record: Record, own: Sequence[T], by_variant: Sequence[Sequence[T]]) -> list[T]:
    """The results a record's best gain (and so its rank and summary row) is taken from.

    Without variants, the record's own results. With variants, the retained variant's only:
    a rejected, superseded or diagnostic configuration never gives the record its headline,
    however large its change, and a record that retained none has no headline gain.
    `by_variant` is each variant's results, in the order of `record.variants`.
    """
    if not record.variants:
        return list(own)
    pairs = zip(record.variants, by_variant, strict=True)
    return [r for v, results in pairs if v.outcome == "retained" for r in results]


def beside(variant: Variant) -> bool:
    """Whether a variant measures beside the setting's values rather than being one of them: a
    diagnostic run, or a run on its own setup (an isolation run at the retained cap). Such a
    variant may share its `value` with another, and a sweep's chart draws the other."""
    return variant.outcome == "diagnostic" or variant.setup is not None


def value_text(variant: Variant) -> str:
    """A variant's swept value as pages write it, else its label."""
    if variant.value is None:
        return variant.label
    return fmt_number(variant.value) if isinstance(variant.value, float) else str(variant.value)


def variants_cell(record: Record) -> str | None:
    """The record's variants in a few words: "retained 8192; 4 of 5 rejected" (None without variants)."""
    if not record.variants:
        return None
    kept = retained(record)
    candidates = [v for v in record.variants if v.outcome != "diagnostic"]
    rejected = sum(1 for v in candidates if v.outcome == "rejected")
    head = f"retained {value_text(kept)}" if kept is not None else "none retained"
    return f"{head}; {rejected} of {len(candidates)} rejected"


def has_results(record: Record) -> bool:
    """Whether the record holds any result, its own or a variant's (the status rules ask)."""
    return bool(record.results) or any(v.results for v in record.variants)


def problems(record: Record, pos: Positions, shown: str) -> list[Problem]:
    """What a record's variants and sweep must keep: one retained at most, labels once, a sweep's values."""
    out: list[Problem] = []
    kept = [i for i, v in enumerate(record.variants) if v.outcome == "retained"]
    for i in kept[1:]:
        line, col = pos.of(("variants", i, "outcome"))
        out.append(
            Problem(
                shown,
                line,
                col,
                "invalid-value",
                f"variant `{record.variants[i].label}` is retained, and so is `{record.variants[kept[0]].label}`",
                "a record retains one variant; split the others into records of their own",
            )
        )
    labels: dict[str, int] = {}
    for i, v in enumerate(record.variants):
        if v.label in labels:
            line, col = pos.of(("variants", i, "label"))
            out.append(
                Problem(
                    shown,
                    line,
                    col,
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
            line, col = pos.of(("variants", i), key=False)
            out.append(
                Problem(
                    shown,
                    line,
                    col,
                    "missing-field",
                    f"variant `{v.label}` of a sweep needs `value`: the setting of `{record.sweep.parameter}` it ran",
                )
            )
    wanted = record.sweep.result
    if wanted is not None and not any(r.label == wanted for v in record.variants for r in v.results):
        line, col = pos.of(("sweep", "result"))
        labels = sorted({r.label for v in record.variants for r in v.results})
        out.append(
            Problem(
                shown,
                line,
                col,
                "unknown-result",
                f"no variant has a result labelled `{wanted}`",
                f"the variants' results are labelled: {', '.join(f'`{x}`' for x in labels) or 'none'}",
            )
        )
    kinds = {isinstance(v.value, float) for v in record.variants if v.value is not None}
    if len(kinds) > 1:
        line, col = pos.of(("sweep",), key=True)
        out.append(
            Problem(
                shown,
                line,
                col,
                "invalid-value",
                "a sweep's values are all numbers or all text, not both",
                "quote the numbers, or write the text values as numbers",
            )
        )
    return out
