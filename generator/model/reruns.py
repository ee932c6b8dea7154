"""Several runs of one comparison in one record, and which one the record's headline reads.

Each `improvements run` of a record links one result per arm and load, labelled with the
comparison and its plan: "faster against speed 200, load 2 (improvements run 20261202T073711Z-243074)".
Running the record again adds a result with the same comparison and a later plan. The rule
(docs/guide/decisions.md, "Several runs of one comparison"): the record's headline, its
summary row, its primary comparison and a `{{ }}` reference by load read **the latest plan**
of each comparison; the earlier ones stay on the page, each marked with the result that
replaces it, and `check` warns that they are not used (`rerun-unused`). The choice never looks
at the numbers: picking whichever run reads best would be a best-of-k pick.

Plans are compared by their id, which starts with the UTC time the plan was made
(`20261202T073711Z`), so the latest plan sorts last; two results of one plan cannot share a
comparison (the runner replaces its own result when it links again).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from generator.model.result import Result

# The label `improvements run` gives a result: the comparison, then the plan that made it.
_PLANNED = re.compile(r"^(?P<comparison>.+) \(improvements run (?P<plan>[^()\s]+)\)$")


def planned_label(comparison: str, plan: str) -> str:
    """The label of a result a plan made (`runner/link.py`); `comparison_of` reads it back."""
    return f"{comparison} (improvements run {plan})"


def comparison_of(result: Result) -> tuple[str, str] | None:
    """(the comparison, the plan) of a result `improvements run` linked; None for any other."""
    m = _PLANNED.match(result.label)
    return (m.group("comparison"), m.group("plan")) if m else None


def replaced(results: Sequence[Result]) -> dict[int, int]:
    """Each result that a later plan of its comparison replaces, by position: the position of
    the one the record reads (the latest plan). Results not made by a plan are never replaced."""
    latest: dict[str, tuple[str, int]] = {}
    for i, result in enumerate(results):
        found = comparison_of(result)
        if found is None:
            continue
        comparison, plan = found
        if comparison not in latest or plan >= latest[comparison][0]:
            latest[comparison] = (plan, i)
    out: dict[int, int] = {}
    for i, result in enumerate(results):
        found = comparison_of(result)
        if found is not None and latest[found[0]][1] != i:
            out[i] = latest[found[0]][1]
    return out


def replaced_notes(results: Sequence[Result]) -> dict[int, str]:
    """The note each replaced result carries on the page: which result the record reads instead."""
    return {
        i: f"An earlier run of this comparison: the record's headline and references by load read "
        f"`{results[j].label}`, the latest plan (docs/guide/decisions.md, several runs of one comparison)."
        for i, j in replaced(results).items()
    }
