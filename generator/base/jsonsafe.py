"""JSON that is JSON: the non-finite numbers Python would write as `NaN` or `Infinity` (which
no JSON parser must accept) written as the strings "nan", "inf" and "-inf" instead, with the
place of each, so an output can say where it had to.

A record's measurements cannot be non-finite (`result_model.Finite`), but a campaign's free-form
`details` can hold `.nan`, and an imported run's request rate is infinite when unlimited.
"""

from __future__ import annotations

import json
import math
from typing import Any


def finite(data: Any, path: str = "") -> tuple[Any, list[str]]:
    """`data` with each non-finite float replaced by its name, and where (`a.b[2]`) each was."""
    if isinstance(data, float) and not math.isfinite(data):
        return ("nan" if math.isnan(data) else "inf" if data > 0 else "-inf"), [path or "(document)"]
    places: list[str] = []
    if isinstance(data, dict):
        out: dict[Any, Any] = {}
        for key, value in data.items():
            out[key], found = finite(value, f"{path}.{key}" if path else str(key))
            places += found
        return out, places
    if isinstance(data, list | tuple):
        items = []
        for i, value in enumerate(data):
            item, found = finite(value, f"{path}[{i}]")
            items.append(item)
            places += found
        return items, places
    return data, places


def dumps(data: Any, **options: Any) -> str:
    """`json.dumps` of `data` with non-finite numbers as strings; never `NaN` in the output."""
    clean, _places = finite(data)
    return json.dumps(clean, allow_nan=False, **options)
