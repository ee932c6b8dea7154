"""Values the models accept in lax form that no later stage can use: checked against the file as written.

The models convert what they are given: pydantic turns `true` into 1.0 and `"8"` into 8, and a
unit conversion can carry a value past the bounds its field allowed before it. Each of these
passed `check` and then broke a build (`slo: {tpot_p99: 1e-320}` became an infinite ratio), or
worse, built a page from a number nobody wrote. So every value a model holds as a number is
compared here with the YAML it came from, one walk over both for every file:

- a number written as text (`"50"`) or as a boolean (`true`): `wrong-type`;
- a number that is not finite, or outside 1e-15..1e15 in size (after any unit conversion):
  `invalid-value`, since every ratio and chart of it would overflow or print noise;
- a built-in metric's measured value below zero (no throughput, latency or count is negative);
- an environment name that is not a shell identifier: printed before a command it would run as
  code (`A;touch x;B=2`);
- two candidate variants with the same `value` (a diagnostic one, or one with its own setup,
  may share it), and a sweep's `metric` that no variant measures.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

from generator.base.incremental import BuildCache, memo
from generator.base.problems import Problem, rel
from generator.base.read import Path_, Positions
from generator.model import metrics
from generator.model.launch import ENV_NAME
from generator.model.result import Result, may_be_negative, measurable
from generator.model.variants import all_results, beside
from generator.project.load import Loaded, Project, RecordFile

# Free-form facts (`details:` of the model, hardware, engine): shown as written, never computed
# with, so `.inf` or `true` there is what the source said.
FREE_FORM = frozenset({"details"})


def value_problems(project: Project, build_cache: BuildCache | None = None) -> list[Problem]:
    """Every value of the campaign file and the records that a later stage could not use."""
    out: list[Problem] = []
    files: list[Loaded] = [project.campaign_file, *project.records]
    for loaded in files:
        if loaded.model is None:
            continue
        shown = rel(loaded.path, project.root)
        out += [_problem(shown, loaded.positions, *found) for found in _found(loaded, build_cache)]
    for rec in project.records:
        out += _variant_problems(project, rec)
    out += _own_guardrails(project)
    return out


def _found(loaded: Loaded, build_cache: BuildCache | None) -> list[Found]:
    """What one file's walk finds: a function of its bytes and the code alone, so a build keeps it
    under the file's digest (a tenth of a rebuild after one edit at 1,000 records was this walk)."""

    def walk() -> list[Found]:
        return [*_walk(loaded.model, loaded.data, ()), *_metric_signs(loaded.model, loaded.data)]

    own = build_cache.files.get(loaded.path) if build_cache is not None else None
    return walk() if own is None else memo(build_cache, "values", (own,), walk)


def _own_guardrails(project: Project) -> list[Problem]:
    """A primary metric named among its own guardrails: a win cannot be held back by itself, so
    the analysis would pass over it without a word."""
    places: list[tuple[Loaded, str | None, dict[str, float] | None, Path_]] = []
    decision = project.campaign.decision
    if decision is not None:
        places.append((project.campaign_file, decision.primary_metric, decision.guardrails, ("decision",)))
    for rec in project.records:
        expected = rec.record.expected
        if expected is not None:
            places.append((rec, expected.metric, expected.guardrails, ("expected",)))
    out: list[Problem] = []
    for loaded, primary, guardrails, loc in places:
        if primary is None or not guardrails or primary not in guardrails:
            continue
        out.append(
            Problem(
                rel(loaded.path, project.root),
                *loaded.positions.of((*loc, "guardrails", primary), key=True),
                "invalid-value",
                f"`{primary}` is the primary metric and one of its own guardrails",
                "a guardrail is another metric a win must not make worse; remove this one",
            )
        )
    return out


Found = tuple[Path_, bool, str, str, str | None]


def _problem(shown: str, pos: Positions, loc: Path_, key: bool, code: str, msg: str, hint: str | None) -> Problem:
    line, col = pos.of(loc, key=key)
    return Problem(shown, line, col, code, msg, hint)


def _walk(value: Any, raw: Any, loc: Path_) -> list[Found]:
    """The model's value beside the YAML it was read from, all the way down."""
    out: list[Found] = []
    _walk_into(value, raw, list(loc), out)
    return out


def _walk_into(value: Any, raw: Any, path: list[str | int], out: list[Found]) -> None:
    # Into one list, not generators within generators: a record holds some sixty values, and
    # the chain of `yield from` down to each was a quarter of this walk's time. The place is one
    # list grown and shrunk as the walk goes, made a tuple only where something is found; text
    # and nothing, most values, are passed over before a call.
    if isinstance(value, BaseModel):
        if not isinstance(raw, dict):
            return
        # The class's own table: `model_fields` is a property that costs a call each time.
        fields = type(value).__pydantic_fields__
        for key, raw_child in raw.items():
            if key not in fields or key in FREE_FORM:
                continue
            path.append(key)
            if key == "env" and isinstance(raw_child, dict):
                out.extend(_env_names(raw_child, tuple(path)))
            child = getattr(value, key)
            if child is not None and type(child) is not str:
                _walk_into(child, raw_child, path, out)
            path.pop()
    elif isinstance(value, list) and isinstance(raw, list) and len(value) == len(raw):
        for i, (v, r) in enumerate(zip(value, raw, strict=True)):
            if v is not None and type(v) is not str:
                path.append(i)
                _walk_into(v, r, path, out)
                path.pop()
    elif isinstance(value, dict) and isinstance(raw, dict):
        for key, raw_child in raw.items():
            child = value.get(key)
            if child is not None and type(child) is not str:
                path.append(key)
                _walk_into(child, raw_child, path, out)
                path.pop()
    elif isinstance(value, bool):
        if not isinstance(raw, bool):
            # pydantic reads `'yes'`, `"true"`, `1` and `on` as true: a slip, never what was meant.
            name = str(path[-1])
            shown = repr(raw) if isinstance(raw, str) else str(raw)
            found = f"`{name}` is {shown}, not true or false"
            out.append((tuple(path), False, "wrong-type", found, "write true or false"))
    # Most numbers are written as numbers and within bounds: `_number` finds nothing in them.
    elif isinstance(value, int | float) and (isinstance(raw, bool | str) or not measurable(value)):
        out.extend(_number(value, raw, tuple(path)))


def _number(value: float, raw: Any, loc: Path_) -> Iterator[Found]:
    # Never at the top: a document is a mapping, so every number has a key or an index.
    name = str(loc[-1])
    if isinstance(raw, bool):
        yield loc, False, "wrong-type", f"`{name}` is {str(raw).lower()}, which is not a number", "write the number"
        return
    if isinstance(raw, str):
        yield (
            loc,
            False,
            "wrong-type",
            f"`{name}` is the text {raw!r}, not a number",
            "write the number without quotes",
        )
        return
    if isinstance(value, float) and not math.isfinite(value):
        yield loc, False, "invalid-value", f"`{name}` is {value}, which is not a finite number", None
    elif not measurable(value):
        converted = "" if isinstance(raw, int | float) and float(raw) == float(value) else f" (written {raw!r})"
        yield (
            loc,
            False,
            "invalid-value",
            f"`{name}` is {value:g}{converted}, outside the sizes a number may have (1e-15 to 1e15)",
            "check the number and its unit",
        )


def _env_names(env: dict[Any, Any], loc: Path_) -> Iterator[Found]:
    for name in env:
        if not ENV_NAME.fullmatch(str(name)):
            yield (
                (*loc, name),
                True,
                "invalid-value",
                f"environment name {str(name)!r} is not a shell identifier",
                "a name is letters, digits and underscores, not starting with a digit; "
                "printed before the command, any other would run as shell code",
            )


def _results(model: Any, raw: Any) -> Iterator[tuple[Result, Any, Path_]]:
    """Every result of a record or of the campaign baseline, with its YAML and place."""
    places: list[tuple[list[Result], Any, Path_]] = []
    # The model's field table, not `hasattr`: a missing attribute of a pydantic model costs an exception.
    fields = type(model).__pydantic_fields__
    if "baseline" in fields and hasattr(model.baseline, "results"):
        places.append((model.baseline.results, _get(raw, "baseline", "results"), ("baseline", "results")))
    if "results" in fields:
        places.append((model.results, _get(raw, "results"), ("results",)))
    for i, variant in enumerate(model.variants if "variants" in fields else []):
        places.append((variant.results, _get(raw, "variants", i, "results"), ("variants", i, "results")))
    for results, raw_results, loc in places:
        for i, result in enumerate(results):
            yield result, _get(raw_results, i), (*loc, i)


def _get(raw: Any, *keys: Any) -> Any:
    for key in keys:
        if isinstance(raw, dict):
            raw = raw.get(key)
        elif isinstance(raw, list) and isinstance(key, int) and 0 <= key < len(raw):
            raw = raw[key]
        else:
            return None
    return raw


def _metric_signs(model: Any, raw: Any) -> Iterator[Found]:
    for result, _raw_result, loc in _results(model, raw):
        for part in ("metrics", "baseline"):
            for name, value in getattr(result, part, {}).items():
                if may_be_negative(name):
                    continue
                if any(v < 0 for v in _numbers(value)):
                    yield (
                        (*loc, part, name),
                        False,
                        "invalid-value",
                        f"`{name}` is negative; a {metrics.lookup(name).unit} value cannot be",  # type: ignore[union-attr]
                        "check the sign, or define a metric of your own in campaign.yaml",
                    )


def _numbers(value: Any) -> list[float]:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return [float(value)]
    if isinstance(value, list):
        return [n for v in value for n in _numbers(v)]
    if isinstance(value, BaseModel):
        return [float(v) for v in value.model_dump().values() if isinstance(v, int | float) and not isinstance(v, bool)]
    return []


def _variant_problems(project: Project, rec: RecordFile) -> list[Problem]:
    record = rec.record
    shown = rel(rec.path, project.root)
    out: list[Problem] = []
    seen: dict[Any, int] = {}
    for i, variant in enumerate(record.variants):
        if variant.value is None or beside(variant):
            continue
        if variant.value in seen:
            first = record.variants[seen[variant.value]]
            out.append(
                Problem(
                    shown,
                    *rec.positions.of(("variants", i, "value")),
                    "invalid-value",
                    f"variant `{variant.label}` has the value of variant `{first.label}`",
                    "each candidate variant is one value of the setting: merge the two, or correct the value; "
                    "a run beside the values (an isolation run at the retained value) is `outcome: diagnostic` "
                    "or has its own `setup`, and may share the value or leave `value` out",
                )
            )
        seen.setdefault(variant.value, i)
    sweep = record.sweep
    if sweep is not None and sweep.metric is not None and record.variants:
        # A change the source stated counts: its points are drawn as stated (`views.variants`).
        measured = {name for result in all_results(record) for name in (*result.metrics, *result.reported_change)}
        if sweep.metric not in measured:
            listed = ", ".join(f"`{n}`" for n in sorted(measured)) or "none"
            out.append(
                Problem(
                    shown,
                    *rec.positions.of(("sweep", "metric")),
                    "invalid-value",
                    f"no variant measures `{sweep.metric}`, the metric the sweep's chart plots",
                    f"the variants measure: {listed}",
                )
            )
    return out
