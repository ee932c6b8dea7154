"""The incremental core (`base.incremental`): a query is reused exactly while every read it noted
answers the same, across builds and processes, and never when a read cannot be answered.

The clients (a record's analysis, a record page's key) are held by the property test
(`test_incremental_property.py`) and `test_page_reuse.py`; these tests hold the core alone, with
answerers made here, so that a rule of the core broken shows here first.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from generator.base import incremental, stamp
from generator.base.incremental import ALL, BuildCache, Reads, Seen


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    campaign = tmp_path / "campaign"
    campaign.mkdir()
    yield campaign
    stamp.code_digest.cache_clear()


class Inputs:
    """A table the queries read through `Seen`, answered by its values, counting what is computed."""

    def __init__(self, **values: int) -> None:
        self.values = dict(values)
        self.made: list[str] = []

    def start(self, store: BuildCache) -> None:
        store.start()
        store.answer_with({"in": lambda key: sorted(self.values.items()) if key == ALL else self.values.get(key)})

    def total(self, store: BuildCache, name: str, keys: tuple[str, ...]) -> int:
        def compute(reads: Reads) -> int:
            self.made.append(name)
            seen = Seen(self.values, "in", reads)
            return sum(seen[k] for k in keys)

        return store.query("total", name, (), compute)


def test_a_query_is_reused_while_its_reads_answer_the_same(root: Path) -> None:
    inputs = Inputs(a=1, b=2, c=3)
    store = BuildCache(root)
    inputs.start(store)
    assert inputs.total(store, "ab", ("a", "b")) == 3
    assert inputs.total(store, "bc", ("b", "c")) == 5
    store.save()
    # Another process: read back from the folder, nothing made again.
    again = BuildCache(root)
    inputs.start(again)
    assert (inputs.total(again, "ab", ("a", "b")), inputs.total(again, "bc", ("b", "c"))) == (3, 5)
    assert inputs.made == ["ab", "bc"]
    # `c` changed: only the query that read it is made again, with the new value.
    inputs.values["c"] = 30
    inputs.start(again)
    assert (inputs.total(again, "ab", ("a", "b")), inputs.total(again, "bc", ("b", "c"))) == (3, 32)
    assert inputs.made == ["ab", "bc", "bc"]


def test_a_read_of_a_whole_table_is_answered_by_all_of_it(root: Path) -> None:
    inputs = Inputs(a=1, b=2)
    store = BuildCache(root)

    def count(reads: Reads) -> int:
        inputs.made.append("count")
        return len(Seen(inputs.values, "in", reads))

    inputs.start(store)
    assert store.query("count", "all", (), count) == 2
    inputs.values["z"] = 0  # a key no query asked for by name
    inputs.start(store)
    assert store.query("count", "all", (), count) == 3
    assert inputs.made == ["count", "count"]


def test_a_read_nothing_answers_keeps_nothing(root: Path) -> None:
    store = BuildCache(root)
    made: list[int] = []

    def compute(reads: Reads) -> int:
        reads.add(("unanswered", "x"))
        made.append(1)
        return 7

    for _build in range(2):
        store.start()
        assert store.query("q", "one", (), compute) == 7
    assert len(made) == 2
    assert store.prints["q", "one"] is None


def test_a_query_that_reads_another_follows_its_fingerprint(root: Path) -> None:
    inputs = Inputs(a=1, b=2)
    store = BuildCache(root)
    outer_made: list[int] = []

    def outer(reads: Reads) -> int:
        outer_made.append(1)
        reads.add(("@total", "ab"))
        return 10 * inputs.total(store, "ab", ("a", "b"))

    def build() -> int:
        inputs.start(store)
        inputs.total(store, "ab", ("a", "b"))
        return store.query("outer", "x", (), outer)

    assert build() == 30
    assert build() == 30
    assert outer_made == [1]
    inputs.values["a"] = 5
    assert build() == 70
    assert outer_made == [1, 1]
    # A query this build does not have answers None, and one made unanswered cannot be checked.
    assert store.answer("@total", "missing") is None
    store.prints["total", "ab"] = None
    with pytest.raises(incremental.Unkeyed):
        store.answer("@total", "ab")


def test_a_numpy_or_scipy_upgrade_salts_every_entry_anew(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inputs = Inputs(a=1)
    store = BuildCache(root)
    inputs.start(store)
    inputs.total(store, "a", ("a",))
    assert incremental.memo(store, "chart", ("k",), lambda: "drawn") == "drawn"
    store.save()
    for library in ("numpy", "scipy"):
        assert library in stamp.SHAPING
        real = stamp._versions
        with monkeypatch.context() as m:
            m.setattr(stamp, "_versions", lambda real=real, library=library: [*real(), f"{library}-99.0"])
            stamp.code_digest.cache_clear()
            upgraded = BuildCache(root)
            assert upgraded.salt != store.salt
            inputs.start(upgraded)
            inputs.total(upgraded, "a", ("a",))
            assert incremental.memo(upgraded, "chart", ("k",), lambda: "drawn again") == "drawn again"
        stamp.code_digest.cache_clear()
    assert inputs.made == ["a", "a", "a"]
