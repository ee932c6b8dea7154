"""A page model's key: the digest of its content, with the figures its texts quote.

A page's text is a function of its model (`views.page_models`), the templates and the code, so
the digest of the model is the page's cache key, and of a listing piece's model the piece's
(`output.listing`). Whatever the page shows is in the model, and whatever is in the model is in
the key: quoted figures (`{{ 01.c64.output_throughput.change }}` in prose) are found in the
model's texts and their filled text kept in its `figures`, so the key covers those numbers too.
"""

from __future__ import annotations

import hashlib
import io
import pickle
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel

from generator.analysis.reuse import WATCHING

if TYPE_CHECKING:
    from _typeshed import DataclassInstance


def _pydantic(*state: Any) -> None:
    """Never called: the digest's pickle names it to mark a pydantic model's state."""


class _Canonical(pickle.Pickler):
    """A pickle of a value by its content alone, the same bytes in every process.

    Pickle, not repr: it is written in C and twice as fast on a page's model. Two things would
    make its bytes differ between processes for the same content, and both are avoided: the
    memo (a value met twice is written once, then referred to, so the bytes depend on which
    objects happen to be shared): `fast` mode keeps none; and a pydantic model's
    `__pydantic_fields_set__`, a set of names in hash order (which differs from process to
    process): a model is written as its fields, extras and private attributes (`Flag`'s form)
    instead. Plain classes and dataclasses are written as their `__dict__`, in insertion order.

    `shared` maps the id of a value every page holds (the campaign) to its own digest, written
    in its place: taken once per build rather than once per page.
    """

    def __init__(self, file: io.BytesIO, shared: Mapping[int, str]) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.fast = True
        self.shared = shared

    def reducer_override(self, obj: Any) -> Any:
        if id(obj) in self.shared:
            return (_shared, (self.shared[id(obj)],))
        if isinstance(obj, BaseModel):
            return (_pydantic, (type(obj), obj.__dict__, obj.__pydantic_extra__, obj.__pydantic_private__))
        if type(obj) in WATCHING:
            # A view that notes reads (`views.page_reuse`) kept in a model: the reads it holds
            # are not the page's content, so no key is taken and the page is rendered afresh.
            raise TypeError("a view of the analysis inside a page model")
        return NotImplemented


def _shared(digest: str) -> None:
    """Never called: marks a shared value's digest in the digest's pickle."""


def canonical(value: object, shared: Mapping[int, str] | None = None) -> bytes:
    """`value`'s content as bytes (see `_Canonical`); `shared`: digests of values held elsewhere too."""
    buffer = io.BytesIO()
    _Canonical(buffer, shared or {}).dump(value)
    return buffer.getvalue()


def shared_digests(*values: object) -> dict[int, str]:
    """The digests of values that many models hold, by id, for `keyed`; the caller keeps the values."""
    return {id(v): hashlib.blake2b(canonical(v), digest_size=16).hexdigest() for v in values}


# What the prose filters fill (analysis.figures.REFERENCE), in a pickle's bytes: every text of
# a model is in its pickle whole, as UTF-8.
_REFERENCE = re.compile(rb"\{\{\s*([^{}]*?)\s*\}\}")


def references(data: bytes) -> list[str]:
    r"""The references quoted in a model's pickle, named as the prose filters read them.

    The bytes pattern's `\s` is ASCII only, where the filters' text pattern also takes Unicode
    spaces (a non-breaking space pasted around a name): `str.strip` removes exactly those.
    """
    return sorted({m.group(1).decode("utf-8", "surrogateescape").strip() for m in _REFERENCE.finditer(data)})


M = TypeVar("M", bound="DataclassInstance")


@dataclass(frozen=True)
class Keyed(Generic[M]):
    """A page's (or a piece's) model with its digest, the cache's key (None: it could not be taken)."""

    model: M
    key: str | None = field(default=None)


def keyed(model: M, fill: Callable[[str], str | None], shared: Mapping[int, str] | None = None) -> Keyed[M]:
    """The model (a dataclass with `figures`) with `figures` filled (`fill`: a reference's text as
    the prose filters fill it), and the digest of the whole of it.

    The model is pickled once: the references are found in its bytes, and the digest is of
    those bytes and the figures, which is the model's content in full.
    """
    try:
        data = canonical(model, shared)
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError, ValueError):
        # A value that cannot be pickled (or a cycle, which `fast` pickling refuses): the page is
        # rendered every time, never a stale one.
        return Keyed(model, None)
    refs = references(data)
    figures = tuple((ref, fill(ref)) for ref in refs)
    h = hashlib.blake2b(data, digest_size=16)
    h.update(repr(figures).encode("utf-8", "surrogatepass"))
    return Keyed(replace(model, figures=figures) if figures else model, h.hexdigest())
