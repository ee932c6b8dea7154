"""A listing page's piece (a summary row, a timeline line, a blocker) is cached under its model's digest, and no
dependency of its text can be missed.

The summary, the timeline and the blockers page are joined from one piece per record (or per
blocker), each rendered from a model of its own and reused while the digest of that model is
unchanged (`output.listing`), as a record page is (tests/test_page_models.py). A key that stayed the
same while the piece's text changed would serve a stale row. Over seeded random edits of every
kind the incremental property test makes, plus a figure that a record's title quotes, every piece
is rendered without the cache and its key taken as the build takes it: one key must never name
two texts, across every state of the campaign. And the keys must be the same in another process
(a different hash seed), or the cache would never be hit between builds.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from test_incremental_property import INLINE_ON_RUNS, make_campaign
from test_page_models import EDITS

from generator.analysis.campaign import analyse
from generator.checks.validate import require_project
from generator.output import listing, render

from conftest import REPO

pytestmark = pytest.mark.slow

# Record 06's title quotes the kernels' figure: only its filled text shows the number, in the
# summary's row and on the timeline (a metric edit of the kernels' record changes both).
QUOTED_TITLE = INLINE_ON_RUNS.replace(
    "title: Inline numbers on SDPA's runs (a test record)",
    "title: Inline numbers at {{ flash-decoding-kernels.c1.output_throughput.change }} (a test record)",
)
assert QUOTED_TITLE != INLINE_ON_RUNS

Seen = list[tuple[str, str | None, str]]


def campaign(tmp: Path) -> Path:
    return make_campaign(tmp / "campaign", QUOTED_TITLE)


def pieces(root: Path, monkeypatch: pytest.MonkeyPatch) -> Seen:
    """Each piece of the listing pages: (its template, its key as the build takes it, its text afresh)."""
    seen: Seen = []

    def piece(self: object, template: str, key: str | None, make: Callable[[], str | None]) -> str | None:
        text = make()
        assert text is not None
        seen.append((template, key, text))
        return text

    with monkeypatch.context() as m:
        m.setattr(listing.Pieces, "piece", piece)
        render.render_files(analyse(require_project(root, None)))
    return seen


def test_a_piece_key_never_names_two_texts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = campaign(tmp_path)
    before = pieces(root, monkeypatch)
    assert {template for template, _key, _text in before} >= {
        "home.md.j2",
        "_summary_row.md.j2",
        "_timeline_row.md.j2",
        "_blocker_row.md.j2",
        "_blocker_section.md.j2",
    }
    named: dict[tuple[str, str | None], str] = {}

    def note(seen: Seen, where: str) -> None:
        for template, key, text in seen:
            assert key is not None, (template, text)
            assert named.setdefault((template, key), text) == text, f"{where}: a key of {template} names a stale text"

    note(before, "the first build")
    reused = changed = 0
    rng = random.Random(35)
    kinds = [*sorted(EDITS), *sorted(EDITS)]
    rng.shuffle(kinds)
    for step, kind in enumerate(["quoted figure", *kinds]):
        EDITS[kind](root, rng)
        after = pieces(root, monkeypatch)
        note(after, f"edit {step} ({kind})")
        old = {(template, key) for template, key, _text in before}
        reused += sum((template, key) in old for template, key, _text in after)
        changed += len({text for _t, _k, text in after} - {text for _t, _k, text in before})
        before = after
    # Not vacuous: edits changed pieces, and pieces an edit did not reach kept their keys.
    assert changed and reused


def test_a_quoted_figure_is_in_its_row_model(tmp_path: Path) -> None:
    from generator.views.listing_pages import summary_page
    from generator.views.page_keys import keyed
    from generator.views.prose import figures_of

    root = campaign(tmp_path)
    analysis = analyse(require_project(root, None))
    [row] = [r for r in summary_page(analysis, {}).row_models if r.title.startswith("Inline numbers at")]
    found = keyed(row, figures_of(analysis))
    [(reference, text)] = found.model.figures
    assert reference == "flash-decoding-kernels.c1.output_throughput.change"
    assert text is not None and text.endswith("%")


def test_a_piece_is_rendered_again_when_only_its_quoted_figure_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = campaign(tmp_path)
    before = {(t, k): text for t, k, text in pieces(root, monkeypatch) if "Inline numbers at" in text}
    EDITS["quoted figure"](root, random.Random(1))
    after = {(t, k): text for t, k, text in pieces(root, monkeypatch) if "Inline numbers at" in text}
    # The summary's row and the timeline's line show the figure: new keys, new texts.
    assert {t for t, _k in before} >= {"_summary_row.md.j2", "_timeline_row.md.j2"}
    assert not set(before) & set(after)
    assert set(before.values()).isdisjoint(after.values())


KEYS = """
import json, sys
from pathlib import Path
from generator.analysis.campaign import analyse
from generator.checks.validate import require_project
from generator.output import listing, render
seen = []
def piece(self, template, key, make):
    seen.append([template, key])
    return make()
listing.Pieces.piece = piece
render.render_files(analyse(require_project(Path(sys.argv[1]), None)))
print(json.dumps(seen))
"""


def test_a_piece_key_is_the_same_in_every_process(tmp_path: Path) -> None:
    root = campaign(tmp_path)

    def keys(seed: str) -> list[list[str]]:
        env = {"PYTHONHASHSEED": seed, "PATH": ""}
        out = subprocess.run(
            [sys.executable, "-c", KEYS, str(root)], capture_output=True, text=True, env=env, check=True, cwd=REPO
        )
        found: list[list[str]] = json.loads(out.stdout)
        return found

    first = keys("1")
    assert first and all(key for _template, key in first)
    assert keys("2") == first
