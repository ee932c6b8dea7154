"""Indented JSON at the C encoder's speed: the bytes of `json.dumps(indent=2, sort_keys=True, ensure_ascii=False)`.

Written by hand because nothing else writes those bytes fast: Python (before 3.13) lays out
indented JSON with its pure-Python encoder, a generator per nesting level and a string per
token, which was a fifth of a clean build at 1,000 records (`records.json`). orjson and
python-rapidjson indent at C speed but write floats their own way (`1e16` where Python writes
`1e+16`), and the export promises Python's bytes. Here the layout is one recursive function and
every string goes through `json`'s own C escaper; whatever is not plain JSON data (a key that is
not a string, an object `json` would refuse, a NaN, a cycle) is left to `json.dumps` itself, so
the result and the errors are always json's. tests/test_jsontext.py compares the two on the
shipped exports and on generated values.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring  # the C escaper where Python has it
from typing import Any

_OPTIONS: dict[str, Any] = {"indent": 2, "sort_keys": True, "ensure_ascii": False, "allow_nan": False}
_INF = float("inf")


class _NotPlain(Exception):
    """A value json lays out or refuses in its own way: the whole document goes to json.dumps."""


def dumps(value: object, margin: str = "") -> str:
    """`json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)`, the same
    text, with every line after the first starting with `margin` (a value nested in a document)."""
    try:
        return _encode(value, "\n" + margin)
    except (_NotPlain, RecursionError):
        text = json.dumps(value, **_OPTIONS)
        return text.replace("\n", "\n" + margin) if margin else text


def _encode(value: object, newline: str) -> str:
    # The checks in json's own order (str, None, True, False, int, float, list, dict): a bool
    # is an int, and a str or float subclass is written as its base type, as json does.
    if isinstance(value, str):
        return _escape(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return _float(value)
    inner = newline + "  "
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        return "[" + inner + ("," + inner).join([_member(v, inner) for v in value]) + newline + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        if type(value) is not dict:
            value = dict(value.items())  # the items json reads, whatever the subclass's lookup does
        keys = list(value)
        for key in keys:
            if type(key) is not str:
                raise _NotPlain  # json converts or refuses keys that are not strings
        keys.sort()
        parts = [_escape(k) + ": " + _member(value[k], inner) for k in keys]
        return "{" + inner + ("," + inner).join(parts) + newline + "}"
    raise _NotPlain


def _member(value: object, newline: str) -> str:
    """`_encode` with the common exact types first: nine values in ten are a string, a number or null."""
    # Exact types only (a subclass takes `_encode`'s isinstance checks); isinstance narrows
    # for the type checker, type() is what is fast.
    kind = type(value)
    if kind is str and isinstance(value, str):
        return _escape(value)
    if value is None:
        return "null"
    if kind is float and isinstance(value, float):
        return _float(value)
    if kind is int and isinstance(value, int):
        return int.__repr__(value)
    return _encode(value, newline)


def _float(value: float) -> str:
    if value != value or value == _INF or value == -_INF:
        raise _NotPlain  # json raises its ValueError
    return float.__repr__(value)


_escape = encode_basestring
