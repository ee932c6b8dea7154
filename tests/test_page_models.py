"""A record page's cache key is the digest of its model, and no dependency of the page can be missed.

The page cache reuses a page's text while its key is unchanged, so a key that stayed the same
while the page's text changed would serve a stale page. Over seeded random edits of every kind
the incremental property test makes (a record's text, an inline metric, runs, `baseline_from`,
a shared blocker, campaign.yaml, renames, deletions, new records) plus a quoted figure, every
record page is rendered without the cache and its key taken as the build takes it: one key must
never name two texts, across every state of the campaign. And the key must be the same in
another process (a different hash seed), or the cache would never be hit between builds.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from test_incremental_property import EDIT_KINDS, INLINE_ON_RUNS, make_campaign

from generator.analysis.campaign import analyse
from generator.checks.validate import require_project
from generator.output import render

from conftest import REPO

pytestmark = pytest.mark.slow

# A figure another record's prose quotes: a metric edit of the blocked record changes its page.
QUOTING = INLINE_ON_RUNS + (
    "verdict: The kernels' record changed batch 1 by {{ flash-decoding-kernels.c1.output_throughput.change }}.\n"
)


def edit_quoted(root: Path, rng: random.Random) -> None:
    """The number the quoting record's prose quotes: only its filled text shows it there."""
    path = next((root / "improvements").glob("*-flash-decoding-kernels.yaml"))
    text = path.read_text(encoding="utf-8")
    line = next(x for x in text.split("\n") if x.strip().startswith("output_throughput:"))
    path.write_text(text.replace(line, f"      output_throughput: {rng.uniform(50, 70):.2f}", 1), encoding="utf-8")


# Less the edits of the templates and the libraries' versions: those change the cache's salt, under
# which every key is taken, not a page's key.
EDITS: dict[str, Callable[[Path, random.Random], None]] = {
    **{kind: edit for kind, edit in EDIT_KINDS.items() if kind not in ("template", "versions")},
    "quoted figure": edit_quoted,
}


def campaign(tmp: Path) -> Path:
    return make_campaign(tmp / "campaign", QUOTING)


def keys_and_pages(root: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, tuple[str | None, str | None]]:
    """Each record page's key, as `render_files` gives it to the cache, and its text rendered afresh."""
    seen: dict[str, tuple[str | None, str | None]] = {}

    def memo(build_cache: object, kind: str, parts: tuple[str, object], make: Callable[[], str | None]) -> str | None:
        text = make()
        assert kind == "page" and text is not None
        seen[text.split("\n", 3)[1]] = (parts[0], text)  # by the front matter's source line
        return text

    with monkeypatch.context() as m:
        m.setattr(render, "memo", memo)
        render.render_files(analyse(require_project(root, None)))
    return seen


def test_a_page_key_never_names_two_texts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = campaign(tmp_path)
    before = keys_and_pages(root, monkeypatch)
    named: dict[str, str] = {key: text for key, text in before.values() if key is not None and text is not None}
    reused = changed = 0
    rng = random.Random(35)
    kinds = [*sorted(EDITS), *sorted(EDITS)]
    rng.shuffle(kinds)
    for step, kind in enumerate(["quoted figure", *kinds]):
        EDITS[kind](root, rng)
        after = keys_and_pages(root, monkeypatch)
        for source, (key, text) in after.items():
            assert key is not None, source
            assert text is not None
            assert named.setdefault(key, text) == text, f"edit {step} ({kind}): {source}'s key names a stale page"
            old = before.get(source)
            if old is not None and old[1] != text:
                changed += 1
            elif old is not None and old[0] == key:
                reused += 1
        before = after
    # Not vacuous: edits changed pages, and pages an edit did not reach kept their keys.
    assert changed and reused


def test_a_quoted_figure_is_in_its_quoting_page_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from generator.views.record_page import RecordPages

    root = campaign(tmp_path)
    analysis = analyse(require_project(root, None))
    rec = analysis.by_slug["inline-on-runs"]
    keyed = RecordPages(analysis, {}).keyed(rec)
    [(reference, text)] = keyed.model.figures
    assert reference == "flash-decoding-kernels.c1.output_throughput.change"
    assert text is not None and text.endswith("%")


KEYS = """
import json, sys
from pathlib import Path
from generator.analysis.campaign import analyse
from generator.checks.validate import require_project
from generator.views.record_page import RecordPages
analysis = analyse(require_project(Path(sys.argv[1]), None))
pages = RecordPages(analysis, {})
print(json.dumps({r.slug: pages.keyed(r).key for r in analysis.project.records}))
"""


def test_a_page_key_is_the_same_in_every_process(tmp_path: Path) -> None:
    root = campaign(tmp_path)

    def keys(seed: str) -> dict[str, str]:
        env = {"PYTHONHASHSEED": seed, "PATH": ""}
        out = subprocess.run(
            [sys.executable, "-c", KEYS, str(root)], capture_output=True, text=True, env=env, check=True, cwd=REPO
        )
        found: dict[str, str] = json.loads(out.stdout)
        return found

    first = keys("1")
    assert first and all(first.values())
    assert keys("2") == first


def test_a_reference_padded_with_unicode_spaces_is_named_as_the_filters_name_it() -> None:
    # A non-breaking space pasted around a name: the prose filters (a text pattern) read the
    # name without it, so the key must name the same figure, or its change would go unseen.
    import pickle

    from generator.analysis.quoting import REFERENCE
    from generator.views.page_keys import references

    text = "read {{\u00a001.c64.output_throughput.change\u3000}} and {{ 02.c8.ttft_median.p }}"
    assert references(pickle.dumps(text)) == sorted(m.group(1) for m in REFERENCE.finditer(text))
    assert references(pickle.dumps(text)) == ["01.c64.output_throughput.change", "02.c8.ttft_median.p"]
