"""Variants: the configurations a record tried as one unit (the arms of an A/B, a sweep's values).

A record with `variants:` is decided by them: its headline gain, rank and summary row come
from the one variant it retained, a `diagnostic` variant (a run that measures rather than a
candidate) never ranks, and the stack applies the retained variant's change. The rules a
record's variants must keep are in `generator.checks.variants`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

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
