"""Several runs of one comparison in one record, and which one the record's headline reads.

Each `improvements run` of a record links one result per arm and load, labelled with the
comparison and its plan: "faster against speed 200, load 2 (improvements run 20261202T073711Z-243074)".
Running the record again adds a result with the same comparison and a later plan. The rule
(docs/guide/decisions.md, "Several runs of one comparison"): the record's headline, its
summary row, its primary comparison and a `{{ }}` reference by load read **the latest plan**
of each comparison; the earlier ones stay on the page, each marked with the result that
replaces it, and `check` warns that they are not used (`rerun-unused`). The choice never looks
at the numbers: picking whichever run reads best would be a best-of-k pick.

A sequential plan (`--until-decided`) is different: its guarantee (a wrong call with probability
at most alpha, however it stops) holds for one sequence. Starting a new one because the last
ended undecided spends alpha again, so `improvements run` refuses it unless asked
(`--new-sequence`), and the new result's page names every earlier undecided sequence of its
comparison and what the guarantee then covers (`restart_notes`).

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


def comparison_label(arm: str, baseline: str, load: int | None) -> str:
    """The comparison of a plan's arm with its baseline arm at one load, as its result's label starts."""
    where = f", load {load}" if load is not None else ""
    return f"{arm} against {baseline}{where}"


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


def undecided_sequence(result: Result) -> bool:
    """A result of a sequential plan that stopped without the rule settled (all its blocks run,
    or a failure): a new sequence of its comparison would spend alpha again."""
    seq = result.sequential
    return seq is not None and not (seq.stopped or "").startswith("decided")


def earlier_sequences(results: Sequence[Result], comparison: str, before: str | None = None) -> list[Result]:
    """The undecided sequences of `comparison` among `results`, of plans before `before` (all when None)."""
    out = []
    for result in results:
        found = comparison_of(result)
        if found is None or found[0] != comparison or not undecided_sequence(result):
            continue
        if before is None or found[1] < before:
            out.append(result)
    return out


def restart_notes(results: Sequence[Result], alpha: float) -> dict[int, str]:
    """The note of each sequential result that follows undecided sequences of its comparison."""
    out: dict[int, str] = {}
    for i, result in enumerate(results):
        found = comparison_of(result)
        if found is None or result.sequential is None:
            continue
        earlier = earlier_sequences(results, found[0], before=found[1])
        if not earlier:
            continue
        k = len(earlier) + 1
        listed = "; ".join(
            f"`{r.label}`, {r.sequential.blocks_run} of at most {r.sequential.max_blocks} blocks"
            + (f" (journal {r.sequential.journal})" if r.sequential.journal else "")
            for r in earlier
            if r.sequential is not None
        )
        out[i] = (
            f"A new sequence (`--new-sequence`): {k - 1} earlier sequence(s) of this comparison ended undecided "
            f"({listed}). Each sequence's guarantee holds for that sequence alone: a wrong call with probability "
            f"at most alpha = {alpha:g}. Read together, the chance that one of the {k} makes a wrong call is "
            f"up to {k} x alpha = {min(1.0, k * alpha):g}, not alpha."
        )
    return out
