"""`generator.base.jsontext` writes json's own bytes: the shipped exports and generated values, to the byte."""

from __future__ import annotations

import json
from collections import OrderedDict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.base import jsontext

from conftest import REPO

OPTIONS = {"indent": 2, "sort_keys": True, "ensure_ascii": False, "allow_nan": False}


def _json(value: object, margin: str = "") -> str:
    return json.dumps(value, **OPTIONS).replace("\n", "\n" + margin)  # type: ignore[arg-type]


@pytest.mark.parametrize("root", [".", "examples/h200-decode", "examples/h200-runner"])
def test_the_shipped_exports_to_the_byte(root: str) -> None:
    [path] = (REPO / root / "docs").glob("records.json")
    doc = json.loads(path.read_bytes())
    assert jsontext.dumps(doc) == _json(doc)
    for entry in doc["records"]:
        assert jsontext.dumps(entry, "    ") == _json(entry, "    ")


_keys = st.text(max_size=6)
_leaves = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)  # any code point: control characters, quotes, lone surrogates
)
_values = st.recursive(
    _leaves,
    lambda inner: (
        st.lists(inner, max_size=4) | st.lists(inner, max_size=3).map(tuple) | st.dictionaries(_keys, inner, max_size=4)
    ),
    max_leaves=30,
)


@pytest.mark.slow  # Hypothesis
@settings(max_examples=300, deadline=None)
@given(_values, st.sampled_from(["", "  ", "    "]))
def test_generated_values_to_the_byte(value: object, margin: str) -> None:
    assert jsontext.dumps(value, margin) == _json(value, margin)


class _Text(str):
    pass


class _Number(float):
    pass


@pytest.mark.parametrize(
    "value",
    [
        {"a": float("nan")},
        [1, float("inf")],
        {1: "a key json turns into text", "b": 2},
        {None: 1},
        {"x": object()},
        {"a": {2.5: [1]}},
    ],
    ids=["nan", "infinity", "int-key", "none-key", "unknown", "float-key"],
)
def test_what_json_lays_out_or_refuses_its_own_way_is_json_s(value: object) -> None:
    try:
        expected: object = _json(value)
    except (ValueError, TypeError) as exc:
        with pytest.raises(type(exc), match=str(exc)[:20]):
            jsontext.dumps(value)
        return
    assert jsontext.dumps(value) == expected


def test_subclasses_are_written_as_json_writes_them() -> None:
    value = OrderedDict([("b", _Text("t")), ("a", [_Number(1.5), True, 2])])
    assert jsontext.dumps(value) == _json(value)
    assert jsontext.dumps(value, "  ") == _json(value, "  ")


def test_a_cycle_is_json_s_error() -> None:
    looped: list[object] = []
    looped.append(looped)
    with pytest.raises(ValueError, match="Circular reference"):
        jsontext.dumps(looped)
