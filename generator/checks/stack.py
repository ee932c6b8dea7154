"""The rules of changes that build on each other: `builds_on`, `baseline_from`, and the stack.

- `builds_on` and `baseline_from` name records (and a result label) that exist (`unknown-slug`,
  `unknown-result`).
- Neither goes round in a circle (`build-cycle`): records that build on each other, or results
  whose baselines are each other's numbers.
- The adopted records' changes fit together (`stack-conflict`): two that set the same flag or
  environment variable to different values, or where one removes what the other sets, are
  reported at both places, unless one builds on the other (then it knowingly overrides it).
  A superseded record is not adopted, so it is not in the stack.
"""

from __future__ import annotations

import difflib
import graphlib
import itertools
from collections.abc import Collection, Mapping

from generator.base.problems import Problem, rel
from generator.base.read import Path_
from generator.model.launch import Conflict, Cycle, Step, apply_steps, order_steps
from generator.model.variants import effective_change, effective_change_path, find_result, located_results
from generator.project.load import Project, RecordFile


def stack_problems(project: Project, known: Collection[str]) -> list[Problem]:
    """Every problem of `builds_on`, `baseline_from` and the adopted records' stack.

    `known` is every record's slug, those that failed to load too (their own errors are reported).
    """
    by_slug = project.by_slug()
    problems: list[Problem] = []
    for rec in project.records:
        problems += _reference_problems(project, rec, by_slug, known)
    problems += _builds_on_cycle(project, by_slug)
    problems += _baseline_cycle(project, by_slug)
    problems += _conflicts(project, by_slug)
    return problems


def _problem(project: Project, rec: RecordFile, loc: Path_, code: str, message: str, hint: str | None) -> Problem:
    line, col = rec.positions.of(loc)
    return Problem(rel(rec.path, project.root), line, col, code, message, hint)


def _near(word: str, choices: list[str], fallback: str) -> str:
    near = difflib.get_close_matches(word, choices, n=1)
    return f"did you mean `{near[0]}`?" if near else fallback


def _reference_problems(
    project: Project, rec: RecordFile, by_slug: Mapping[str, RecordFile], known: Collection[str]
) -> list[Problem]:
    out: list[Problem] = []
    slugs = list(by_slug)
    for i, slug in enumerate(rec.record.builds_on):
        if slug == rec.slug:
            msg = "a record cannot build on itself"
            out.append(_problem(project, rec, ("builds_on", i), "unknown-slug", msg, None))
        elif slug not in known:
            hint = _near(slug, slugs, "name the slug of an adopted record whose change is in this one's baseline")
            out.append(_problem(project, rec, ("builds_on", i), "unknown-slug", f"no record has slug `{slug}`", hint))
        elif slug in rec.record.builds_on[:i]:
            msg = f"`{slug}` is named twice in `builds_on`"
            out.append(_problem(project, rec, ("builds_on", i), "invalid-value", msg, "name each record once"))
        elif slug in by_slug and by_slug[slug].record.status == "rejected":
            msg = f"builds on `{slug}`, which is rejected: its change is in no baseline"
            hint = "build on an adopted record, or leave this entry out"
            out.append(_problem(project, rec, ("builds_on", i), "invalid-value", msg, hint))
    for at, _variant, result in located_results(rec.record):
        ref = result.baseline_from
        if ref is None:
            continue
        loc: Path_ = (*at, "baseline_from")
        if ref.record is None:
            out += _campaign_baseline_ref(project, rec, loc, ref.result)
            continue
        target = by_slug.get(ref.record)
        if target is None:
            if ref.record not in known:
                hint = _near(ref.record, slugs, "slugs are the part of a file name after the number")
                msg = f"no record has slug `{ref.record}`"
                out.append(_problem(project, rec, (*loc, "record"), "unknown-slug", msg, hint))
            continue
        held = next((v for v in target.record.variants if v.label == ref.variant), None)
        if ref.variant is not None and held is None:
            names = [v.label for v in target.record.variants]
            listed = ", ".join(f"`{n}`" for n in names) or "none"
            hint = _near(ref.variant, names, f"its variants are labelled: {listed}")
            msg = f"record `{ref.record}` has no variant labelled `{ref.variant}`"
            out.append(_problem(project, rec, (*loc, "variant"), "unknown-result", msg, hint))
            continue
        labels = [r.label for r in (held.results if held is not None else target.record.results)]
        if ref.result not in labels:
            listed = ", ".join(f"`{label}`" for label in labels) or "none"
            hint = _near(ref.result, labels, f"its results are labelled: {listed}")
            where = (
                f"variant `{ref.variant}` of record `{ref.record}`" if held is not None else f"record `{ref.record}`"
            )
            msg = f"{where} has no result labelled `{ref.result}`"
            out.append(_problem(project, rec, (*loc, "result"), "unknown-result", msg, hint))
        elif target is rec and find_result(rec.record, ref.variant, ref.result) is result:
            msg = "a result cannot be its own baseline"
            out.append(_problem(project, rec, (*loc, "result"), "unknown-result", msg, "name another result"))
    return out


def _campaign_baseline_ref(project: Project, rec: RecordFile, loc: Path_, label: str) -> list[Problem]:
    """`baseline_from` without `record` names one of the campaign baseline's results."""
    labels = [r.label for r in project.campaign.baseline.results]
    if label in labels:
        return []
    listed = ", ".join(f"`{x}`" for x in labels) or "none"
    hint = _near(label, labels, f"the campaign baseline's results are labelled: {listed}")
    msg = f"the campaign baseline has no result labelled `{label}`"
    return [_problem(project, rec, (*loc, "result"), "unknown-result", msg, hint)]


def _builds_on_cycle(project: Project, by_slug: Mapping[str, RecordFile]) -> list[Problem]:
    steps = [Step(r.slug, r.number, tuple(s for s in r.record.builds_on if s != r.slug)) for r in _unique(project)]
    found = order_steps(steps)
    if not isinstance(found, Cycle):
        return []
    ring = [*found.slugs, found.slugs[0]]
    shown = " -> ".join(ring)
    out = []
    # Reported at every record of the circle, each at the entry that leads to the next.
    for here, nxt in itertools.pairwise(ring):
        rec = by_slug[here]
        out.append(
            _problem(
                project,
                rec,
                ("builds_on", rec.record.builds_on.index(nxt)),
                "build-cycle",
                f"records build on each other in a circle: {shown}",
                "a record builds on changes adopted before it; remove one of these entries",
            )
        )
    return out


def _baseline_cycle(project: Project, by_slug: Mapping[str, RecordFile]) -> list[Problem]:
    # Results, not records: two records may each measure one result on top of the other's.
    # A node is (record, variant or "", result label).
    graph: dict[tuple[str, str, str], list[tuple[str, str, str]]] = {}
    where: dict[tuple[str, str, str], tuple[RecordFile, Path_]] = {}
    for rec in project.records:
        for at, variant, result in located_results(rec.record):
            node = (rec.slug, variant.label if variant is not None else "", result.label)
            where.setdefault(node, (rec, at))
            ref = result.baseline_from
            graph.setdefault(node, [])
            # The campaign baseline's results (no `record`) have no baseline of their own: no circle.
            target = (ref.record, ref.variant or "", ref.result) if ref is not None and ref.record else None
            if ref is not None and target is not None and ref.record in by_slug and target != node:
                graph[node].append(target)
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as err:
        ring: list[tuple[str, str, str]] = list(err.args[1])
        shown = " -> ".join(
            f"{slug} {f'variant `{variant}` ' if variant else ''}`{label}`" for slug, variant, label in reversed(ring)
        )
        out = []
        for node in ring[:-1]:
            rec, at = where[node]
            out.append(
                _problem(
                    project,
                    rec,
                    (*at, "baseline_from"),
                    "build-cycle",
                    f"results are each other's baseline in a circle: {shown}",
                    "a baseline is a result measured before this one; name another",
                )
            )
        return sorted(out, key=lambda p: (p.path, p.line))
    return []


def adopted_steps(project: Project) -> list[Step]:
    """The adopted records' changes, as the stack applies them (superseded records are not adopted)."""
    return [
        Step.from_change(rec.slug, rec.number, rec.record.builds_on, effective_change(rec.record))
        for rec in _unique(project)
        if rec.record.status == "adopted"
    ]


def _unique(project: Project) -> list[RecordFile]:
    # Two files with one slug are a `duplicate-slug` error; the stack keeps the first.
    first: dict[str, RecordFile] = {}
    for rec in project.records:
        first.setdefault(rec.slug, rec)
    return list(first.values())


def _conflicts(project: Project, by_slug: Mapping[str, RecordFile]) -> list[Problem]:
    campaign = project.campaign.baseline
    stack = apply_steps(campaign.command, campaign.env, adopted_steps(project))
    if isinstance(stack, Cycle):
        return []  # reported as `build-cycle`
    out: list[Problem] = []
    for c in stack.conflicts:
        a, b = by_slug[c.slug_a], by_slug[c.slug_b]
        out.append(_conflict(project, a, b, c, c.value_a, c.value_b))
        out.append(_conflict(project, b, a, c, c.value_b, c.value_a))
    return out


def _conflict(
    project: Project, here: RecordFile, other: RecordFile, c: Conflict, mine: str | None, theirs: str | None
) -> Problem:
    # The retained variant's change, when it has one, is what the stack applied.
    change = effective_change(here.record)
    assert change is not None
    at = effective_change_path(here.record)
    loc: Path_
    if c.kind == "env":
        loc = (*at, "env", c.name)
        what = f"`{c.name}={mine}` here, `{c.name}={theirs}` in"
    elif c.kind == "base-command":
        loc = (*at, "base_command")
        what = "a different `base_command` from"
    elif mine is None:
        loc = (*at, "remove_flags", change.remove_flags.index(c.name))
        what = f"`{c.name}` removed here, set to `{theirs}` in"
    else:
        loc = (*at, "flags", next(i for i, f in enumerate(change.flags) if f.flag == c.name))
        what = f"`{mine}` here, " + (f"`{theirs}` in" if theirs is not None else "removed in")
    label = f"{other.number:02d}-{other.slug}"
    return _problem(
        project,
        here,
        loc,
        "stack-conflict",
        f"adopted changes conflict: {what} {label}",
        "say which wins: let the later record build on the other (`builds_on`), or supersede one",
    )
