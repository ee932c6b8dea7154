"""A rebuild after one change writes the bytes a clean build of the changed campaign writes,
and renders only the pages that depend on the change.

The campaign is the benchmark's synthetic one (benchmarks/synth.py, seeded), small: adopted
records that stack, shared blockers, related records and charted results, so an edit reaches
other records' pages in every way a page depends on another record.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from generator.output import render

from conftest import REPO, run_cli

sys.path.insert(0, str(REPO / "benchmarks"))
from synth import chart_record, make_campaign, retitle, touch_metric, touch_record

# Slow: every test builds a campaign, edits it and builds it again beside a clean build.
pytestmark = pytest.mark.slow


def outputs(root: Path) -> dict[str, bytes]:
    """Every file a build wrote, by path: pages, charts and the manifest."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted((root / "docs").rglob("*")) if p.is_file()}


def build(root: Path) -> None:
    res = run_cli("build", "--root", str(root))
    assert res.returncode == 0, res.stderr


def clean_build(root: Path, scratch: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, bytes]:
    """What a build of a copy of `root`'s inputs writes, with no outputs and an empty cache."""
    copy = scratch / "clean"
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(root / "improvements", copy / "improvements")
    shutil.copytree(root / "results", copy / "results")
    if (root / "templates").is_dir():
        shutil.copytree(root / "templates", copy / "templates")
    cache_home = scratch / "clean-cache"
    shutil.rmtree(cache_home, ignore_errors=True)
    with monkeypatch.context() as m:
        m.setenv("XDG_CACHE_HOME", str(cache_home))
        build(copy)
    return outputs(copy)


def adopted(records: list[Path]) -> list[Path]:
    return [p for p in records if "\nstatus: adopted\n" in p.read_text(encoding="utf-8")]


@pytest.fixture
def synthetic(tmp_path: Path) -> tuple[Path, list[Path]]:
    root = tmp_path / "campaign"
    records = make_campaign(root, 30)
    build(root)
    return root, records


def test_each_rebuild_writes_what_a_clean_build_writes(
    synthetic: tuple[Path, list[Path]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, records = synthetic
    stacked = adopted(records)
    assert len(stacked) >= 3
    edits = [
        # One record's text: its page only.
        ("text", lambda: touch_record(stacked[1], 1)),
        # One measured number: the record's page, its chart, the summary and its chart.
        ("metric", lambda: touch_metric(chart_record(records), 2)),
        # A title: every page that links the record (related, the stack's labels do not show it).
        ("title", lambda: retitle(stacked[0], "A new title for the first adopted record")),
        # Out of the stack: every other adopted record's place in it changes.
        ("status", lambda: _replace(stacked[0], "\nstatus: adopted\n", "\nstatus: rejected\n")),
    ]
    for what, change in edits:
        before = outputs(root)
        change()
        build(root)
        after = outputs(root)
        assert after != before, what
        assert after == clean_build(root, tmp_path, monkeypatch), f"after the {what} edit"


def test_one_record_text_change_renders_only_its_page(
    synthetic: tuple[Path, list[Path]], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, records = synthetic
    rendered: list[str] = []
    real = render._front_matter

    # Called once for each record page rendered rather than taken from the cache.
    def counting(source: str, tags: list[str]) -> str:
        rendered.append(Path(source).stem.split("-", 1)[1])
        return real(source, tags)

    monkeypatch.setattr(render, "_front_matter", counting)
    stacked = adopted(records)
    slug = stacked[1].stem.split("-", 1)[1]
    naming = {slug} | {p.stem.split("-", 1)[1] for p in records if slug in p.read_text(encoding="utf-8")}
    touch_record(stacked[1], 1)
    build(root)
    # Its page and those of the records that name it (they show its title); not the other
    # adopted records (their places in the stack are the same), nor any other.
    assert slug in rendered
    assert set(rendered) <= naming
    assert len(rendered) < len(stacked)


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_a_cache_kept_between_builds_writes_what_a_clean_build_writes(
    synthetic: tuple[Path, list[Path]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `serve` keeps one BuildCache in memory from one rebuild to the next.
    from generator.base.incremental import BuildCache

    root, records = synthetic
    kept = BuildCache(root)
    render.build(root, build_cache=kept)
    stacked = adopted(records)
    template = (REPO / "generator" / "templates" / "record.md.j2").read_text(encoding="utf-8")
    edits = [
        ("text", lambda: touch_record(stacked[2], 3)),
        ("metric", lambda: touch_metric(chart_record(records), 4)),
        # An override template is a new salt: nothing cached under the old one may be used.
        ("override", lambda: _write(root / "templates" / "record.md.j2", template + "\nOverridden.\n")),
        ("text again", lambda: touch_record(stacked[2], 5)),
    ]
    for what, change in edits:
        change()
        render.build(root, build_cache=kept)
        assert outputs(root) == clean_build(root, tmp_path, monkeypatch), f"after the {what} edit"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_a_second_build_of_the_same_inputs_reuses_the_kept_analysis(
    synthetic: tuple[Path, list[Path]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `build --site` renders the docs, then the mkdocs plugin asks for the same analysis again.
    from generator.output import export

    root, records = synthetic
    first = render.build(root, keep=True)
    with monkeypatch.context() as m:
        m.setattr(render, "require_project", _no_loading)
        second = render.build(root)
    assert second.written == [] and second.removed == [] and second.files == first.files
    assert export.dumps(second.analysis) == export.dumps(first.analysis)
    # The kept analysis renders the very files the first build wrote (a build keeps their paths).
    on_disk = {path: (root / path).read_bytes().decode("utf-8") for path in first.files}
    assert render.render_files(second.analysis) == on_disk
    # An output changed by hand, or an input edited: the build runs, and writes a clean build's bytes.
    summary = root / "docs" / "summary.md"
    summary.write_text(summary.read_text(encoding="utf-8") + "\nhand edit\n", encoding="utf-8")
    assert render.build(root, keep=True).written == ["docs/summary.md"]
    touch_record(records[3], 6)
    with monkeypatch.context() as m:
        m.setattr(render, "require_project", _no_loading)
        with pytest.raises(AssertionError, match="loaded"):
            render.build(root, keep=True)
    render.build(root, keep=True)
    assert outputs(root) == clean_build(root, tmp_path, monkeypatch)


def _no_loading(*args: object, **kwargs: object) -> None:
    raise AssertionError("the campaign was loaded")


def test_a_figure_quoted_in_an_override_template_follows_its_run(
    synthetic: tuple[Path, list[Path]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The override template's own text quotes a figure that no page model holds: every record
    # page shows it, and a changed measurement must reach the pages of the records not edited.
    root, records = synthetic
    charted = chart_record(records)
    number = charted.name.split("-", 1)[0]
    template = (REPO / "generator" / "templates" / "record.md.j2").read_text(encoding="utf-8")
    quote = f'{{{{ "Campaign gain: {{{{ {number}.c1.input_throughput.mean }}}}" | inline }}}}'
    _write(root / "templates" / "record.md.j2", template + "\n" + quote + "\n")
    build(root)
    slug = charted.stem.split("-", 1)[1]
    shown = [p for p in sorted((root / "docs").rglob("*.md")) if "Campaign gain: " in p.read_text(encoding="utf-8")]
    other = next(p for p in shown if slug not in p.name)
    before = other.read_text(encoding="utf-8")
    assert "{{" not in before.split("Campaign gain: ")[1][:10]
    touch_metric(charted, 70)  # the first throughput, 7 higher: a number the page shows differently
    build(root)
    after = outputs(root)
    assert after == clean_build(root, tmp_path, monkeypatch)
    assert other.read_text(encoding="utf-8") != before
