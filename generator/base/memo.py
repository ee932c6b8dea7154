"""The build cache as the stages use it: a value computed once per content, or just computed.

The cache is passed in by whoever runs a build (`render.build`); with none (`check`, tests,
library use) `memo` is plain `compute()`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from generator.base.cache import BuildCache, digest

T = TypeVar("T")


def memo(build_cache: BuildCache | None, kind: str, key_parts: tuple[Any, ...], compute: Callable[[], T]) -> T:
    """`compute()`, or its value from `build_cache` under a key made of `key_parts`."""
    if build_cache is None:
        return compute()
    return build_cache.memo(f"{kind}:{digest(build_cache.salt, kind, *key_parts)}", compute)
