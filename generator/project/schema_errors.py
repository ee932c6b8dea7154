"""pydantic's validation errors as positioned problems: the words, the place and the hint.

pydantic reports a location in the data; `Positions` turns it into a line and column, and
the messages here say in the format's words what is wrong (a list where a mapping belongs,
an unknown key and the one it was probably meant to be).
"""

from __future__ import annotations

import datetime as dt
import difflib
import math
from typing import Any

from pydantic import BaseModel, ValidationError

from generator.base.problems import Problem
from generator.base.read import Path_, Positions
from generator.model.result import SLUG_RE


def describe(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"the boolean `{str(value).lower()}`"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, dt.date):
        # Only an explicit `!!timestamp` makes one now (the reader keeps dates as text), but a
        # date is never "text": say what was found.
        return f"the date `{value.isoformat()}`"
    if isinstance(value, str) and len(value) <= 30 and value.isprintable() and "`" not in value:
        return f"the text `{value}`"
    return "text"


def _fields_at(model: type[BaseModel], loc: Path_) -> list[str]:
    """The field names of the model that `loc` points into, for did-you-mean hints."""
    current: Any = model
    for part in loc:
        if isinstance(part, int) or current is None:
            continue
        info = getattr(current, "model_fields", {}).get(part)
        if info is None:
            return []
        current = _inner_model(info.annotation)
    return list(getattr(current, "model_fields", {}))


def _inner_model(annotation: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _inner_model(arg)
        if found is not None:
            return found
    return None


_TYPE_WORDS = {
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "list_type": "a list",
    "string_type": "text",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "date_type": "a date (YYYY-MM-DD)",
    "date_parsing": "a date (YYYY-MM-DD)",
    "date_from_datetime_parsing": "a date (YYYY-MM-DD)",
    "int_from_float": "a whole number",
}


_TYPE_KINDS = {*_TYPE_WORDS, "list_type", "dict_type", "model_attributes_type"}


def _clean_loc(err: Any, data: Any) -> Path_:
    """The error's location in the data: pydantic's union-member tags ("float", "list[float]")
    dropped. A missing field's own name is not in the data either, but it is the point of the
    message, so it stays."""
    return _walk_loc(err, data)[0]


def _union_member(err: Any, data: Any) -> tuple[Path_, str] | None:
    """Where a union was tried and the member this error is from (its first tag in pydantic's
    location), or None when the error is not from a member of a union."""
    return _walk_loc(err, data)[1]


def _walk_loc(err: Any, data: Any) -> tuple[Path_, tuple[Path_, str] | None]:
    """The error's location in the data, and the first union-member tag with where it stands.

    One step per part of the location, each a lookup in the mapping it names: collecting every
    key along the path instead made a file with thousands of unknown keys quadratic."""
    loc, out, current = err["loc"], [], data
    member: tuple[Path_, str] | None = None
    last = len(loc) - 1
    for i, part in enumerate(loc):
        if isinstance(part, int):
            out.append(part)
            current = current[part] if isinstance(current, list) and 0 <= part < len(current) else None
        elif isinstance(current, dict) and part in current:
            out.append(part)
            current = current[part]
        elif err["type"] == "missing" and i == last:
            out.append(part)
        elif member is None:
            member = (tuple(out), str(part))
    return tuple(out), member


def _other_members(raw: list[Any], data: Any) -> set[int]:
    """The errors of the union members a value was plainly not meant as.

    `{mean: 1000, sd: 10, n: 0}` is summary statistics with a bad `n`; that it is not a range
    (no `min`, an unknown `mean`) nor an approximate number is true of every statistics value and
    says nothing. The member meant is the one that knows the most of the keys written (then
    misses the fewest); when one member is that, the others' errors are dropped."""
    members: dict[Path_, dict[str, list[int]]] = {}
    for i, err in enumerate(raw):
        found = _union_member(err, data)
        if found is not None:
            members.setdefault(found[0], {}).setdefault(found[1], []).append(i)
    drop: set[int] = set()
    for by_member in members.values():

        def misfit(idx: list[int]) -> tuple[bool, int, int]:
            kinds = [raw[i]["type"] for i in idx]
            return any(k in _TYPE_KINDS for k in kinds), kinds.count("extra_forbidden"), kinds.count("missing")

        ranked = sorted(by_member.items(), key=lambda item: misfit(item[1]))
        if len(ranked) > 1 and misfit(ranked[0][1]) < misfit(ranked[1][1]) and not misfit(ranked[0][1])[0]:
            drop.update(i for _, idx in ranked[1:] for i in idx)
    return drop


def _noise(errors: list[tuple[Any, Path_]]) -> set[Path_]:
    """Type errors at a place where something more specific was found: at a deeper place, or
    another kind of error at the same place. In one pass over the errors (comparing each pair
    was quadratic in their number)."""
    deeper: set[Path_] = set()
    specific: set[Path_] = set()
    for err, loc in errors:
        deeper.update(loc[:n] for n in range(len(loc)))
        if err["type"] not in _TYPE_KINDS:
            specific.add(loc)
    return {loc for err, loc in errors if err["type"] in _TYPE_KINDS and (loc in deeper or loc in specific)}


def validation_problems(
    exc: ValidationError, model: type[BaseModel], data: Any, pos: Positions, path: str
) -> list[Problem]:
    """pydantic's errors as problems, one per place.

    Over 60 lines: one branch per kind of pydantic error, and the kinds read best side by side.
    """
    problems: list[Problem] = []
    seen: set[tuple[Path_, str]] = set()
    raw = exc.errors()
    other = _other_members(raw, data)
    errors = [(err, _clean_loc(err, data)) for i, err in enumerate(raw) if i not in other]
    # A value checked against a union (a number, a list of numbers or a range) gets a type error
    # from each member it is not. When one member took it and found something more specific
    # (`.nan` is not finite, a range misses `max`), the other members' type errors are noise.
    noise = _noise(errors)
    for err, loc in errors:
        kind = err["type"]
        if kind in _TYPE_KINDS and loc in noise:
            continue
        if kind == "extra_forbidden":
            key = loc[-1]
            line, col = pos.of(loc, key=True)
            choices = _fields_at(model, loc[:-1])
            close = difflib.get_close_matches(str(key), choices, n=1, cutoff=0.6)
            hint = (
                f"did you mean `{close[0]}`?" if close else (f"known keys: {', '.join(choices)}" if choices else None)
            )
            problems.append(Problem(path, line, col, "unknown-key", f"unknown key `{key}`", hint))
            continue
        if kind == "missing":
            line, col = pos.of(loc[:-1], key=True)
            where = f" in `{dotted(loc[:-1])}`" if loc[:-1] else ""
            problems.append(Problem(path, line, col, "missing-field", f"required field `{loc[-1]}` is missing{where}"))
            continue
        line, col = pos.of(loc)
        value = _value_at(data, loc)
        name = dotted(loc) or "document"
        hint = None
        if kind in ("date_parsing", "date_from_datetime_parsing") and isinstance(value, str):
            # The reader keeps a date as the text written (YAML 1.2); pydantic reads it here.
            reason = str(err.get("ctx", {}).get("error", "")) or None
            code, msg = "invalid-value", f"`{_shown(value)}` is not a valid date"
            hint = reason and f"{reason}; write YYYY-MM-DD"
        elif kind in _TYPE_WORDS or kind in ("list_type", "dict_type", "model_attributes_type"):
            want = _TYPE_WORDS.get(kind, "a mapping")
            code, msg = "wrong-type", f"`{name}` must be {want}, not {describe(value)}"
        elif kind == "literal_error":
            expected = err.get("ctx", {}).get("expected", "")
            close = difflib.get_close_matches(
                str(value), [s.strip("'") for s in expected.replace(" or ", ", ").split(", ")], n=1
            )
            code, msg = "invalid-value", f"`{name}` is {value!r}; expected {expected}"
            hint = f"did you mean `{close[0]}`?" if close else None
        elif kind == "string_pattern_mismatch":
            code, msg = "invalid-value", f"`{name}` is {value!r}, which is not of the allowed form"
            hint = "use lowercase letters, digits and hyphens" if err.get("ctx", {}).get("pattern") == SLUG_RE else None
        elif kind == "unknown_metric":
            near = err.get("ctx", {}).get("suggestion")
            key_line, key_col = pos.of(loc, key=True)
            problems.append(
                Problem(
                    path,
                    key_line,
                    key_col,
                    "unknown-metric",
                    err["msg"],
                    f"did you mean `{near}`?" if near else "see the metric vocabulary in the docs",
                )
            )
            continue
        elif kind == "boolean_number":
            expected = "1, 2 or 3" if "tier" in loc else "a number"
            code, msg = "wrong-type", f"`{name}` must be {expected}, not {describe(value)}"
        elif kind == "finite_number" or (kind in _BOUNDS and isinstance(value, float) and not math.isfinite(value)):
            code, msg = "invalid-value", f"`{name}` is {value!r}; a measurement is a finite number"
        elif kind in _BOUNDS:
            word, key = _BOUNDS[kind]
            limit = err.get("ctx", {}).get(key)
            code, msg = "invalid-value", f"`{name}` is {_shown(value)}; expected a number {word} {_shown(limit)}"
        elif kind == "value_error":
            code, msg = "invalid-value", f"`{name}`: {str(err['msg']).removeprefix('Value error, ')}"
        else:
            code, msg = "invalid-value", f"`{name}`: {err['msg']}"
        # A union reports each member's failure; one line per place is enough.
        if (loc, code) in seen:
            continue
        seen.add((loc, code))
        problems.append(Problem(path, line, col, code, msg, hint))
    return problems


_BOUNDS = {
    "greater_than": ("greater than", "gt"),
    "greater_than_equal": ("of at least", "ge"),
    "less_than": ("less than", "lt"),
    "less_than_equal": ("of at most", "le"),
}


def _shown(value: Any) -> str:
    """A number as the user reads it: 1e15 rather than 1000000000000000, a long one cut short."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**6:
        digits = len(str(abs(value)))
        return f"{value:.3g}" if digits <= 300 else f"a number of {digits:,} digits"
    text = f"{value:g}" if isinstance(value, float) else str(value)
    return text if len(text) <= 40 else text[:40] + "..."


def _value_at(data: Any, loc: Path_) -> Any:
    current = data
    for part in loc:
        if isinstance(current, dict):
            current = current.get(part)
        elif isinstance(current, list) and isinstance(part, int) and part < len(current):
            current = current[part]
        else:
            return None
    return current


def dotted(loc: Path_) -> str:
    """A location as a reader writes it: `change.before[0]`."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out
