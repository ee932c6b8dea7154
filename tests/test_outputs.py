"""Writing generated files: only ours, only when changed, atomically, one build at a time."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from generator.analysis.campaign import analyse
from generator.base import generated as outputs
from generator.base.generated import LOCK_NAME, header, is_generated, svg_header, write_outputs
from generator.base.problems import ProblemsFound
from generator.output import render

from conftest import FIXTURES, REPO, run_cli

SERIES = "docs/improvements"
FAST = f"{SERIES}/testseries-01-fast-flag.md"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(FIXTURES / "render", root)
    return root


def snapshot(root: Path) -> dict[str, bytes]:
    docs = root / "docs"
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(docs.rglob("*")) if p.is_file()}


def test_first_build_writes_everything_and_a_sorted_manifest(repo: Path) -> None:
    result = render.build(repo)
    assert sorted(result.written) == sorted(result.files) and not result.unchanged
    manifest = json.loads((repo / "docs" / ".improvements-manifest.json").read_text())
    assert manifest["files"] == sorted(result.files)
    assert not [p for p in (repo / "docs").rglob("*") if p.name.startswith(".improvements-tmp-")]


def test_a_build_gives_what_it_froze_back_to_the_collector(repo: Path) -> None:
    import gc

    # A build freezes its campaign and analysis while it renders; a process that builds again
    # and again (`serve`) must get them back, or every build's would stay for good.
    gc.unfreeze()
    frozen: list[int] = []
    real = gc.freeze

    def freeze() -> None:
        real()
        frozen.append(gc.get_freeze_count())

    with pytest.MonkeyPatch.context() as m:
        m.setattr(gc, "freeze", freeze)
        render.build(repo)
        assert frozen and frozen[-1] > 0
        assert gc.get_freeze_count() == 0
        # A caller's own freeze is left alone: the build neither adds to it nor gives it back.
        real()
        frozen.clear()
        fast = repo / "improvements" / "01-fast-flag.yaml"
        fast.write_text(fast.read_text() + "\n")
        render.build(repo)
        assert not frozen and gc.get_freeze_count() > 0
    gc.unfreeze()


def test_unchanged_files_are_not_rewritten(repo: Path) -> None:
    render.build(repo)
    # A rewrite replaces the file (a new inode), whatever the clock's resolution: no sleep.
    before = {p: os.stat(repo / p).st_ino for p in snapshot(repo)}
    result = render.build(repo)
    assert result.written == [] and result.removed == []
    assert {p: os.stat(repo / p).st_ino for p in snapshot(repo)} == before


def test_only_the_changed_page_is_rewritten(repo: Path) -> None:
    render.build(repo)
    path = repo / "improvements" / "04-old-idea.yaml"
    path.write_text(path.read_text().replace("Replaced by the fast flag.", "Replaced by the fast flag, for good."))
    result = render.build(repo)
    # Its page, and records.json, which holds every record's text for other tools.
    assert result.written == [f"{SERIES}/testseries-04-old-idea.md", "docs/records.json"]


def test_outputs_of_a_deleted_record_are_removed(repo: Path) -> None:
    render.build(repo)
    (repo / "improvements" / "04-old-idea.yaml").unlink()
    result = run_cli("build", "--root", str(repo))
    assert result.returncode == 0, result.stderr
    assert f"removed {SERIES}/testseries-04-old-idea.md" in result.stdout
    assert not (repo / SERIES / "testseries-04-old-idea.md").exists()
    manifest = json.loads((repo / "docs" / ".improvements-manifest.json").read_text())
    assert f"{SERIES}/testseries-04-old-idea.md" not in manifest["files"]


def test_a_renumbered_record_leaves_no_old_page(repo: Path) -> None:
    render.build(repo)
    (repo / "improvements" / "04-old-idea.yaml").rename(repo / "improvements" / "05-old-idea.yaml")
    result = render.build(repo)
    assert result.removed == [f"{SERIES}/testseries-04-old-idea.md"]
    assert (repo / SERIES / "testseries-05-old-idea.md").is_file()


def test_a_hand_written_file_is_never_touched(repo: Path) -> None:
    render.build(repo)
    mine = repo / SERIES / "notes.md"
    mine.write_text("# My notes\n")
    guide = repo / "docs" / "guide.md"
    guide.write_text("# Guide\n")
    (repo / "improvements" / "04-old-idea.yaml").unlink()
    render.build(repo)
    assert mine.read_text() == "# My notes\n" and guide.read_text() == "# Guide\n"


def test_a_conflicting_hand_written_file_is_refused_and_nothing_is_written(repo: Path) -> None:
    target = repo / FAST
    target.parent.mkdir(parents=True)
    target.write_text("# Written by hand\n")
    result = run_cli("build", "--root", str(repo))
    assert result.returncode == 1
    assert f"{FAST}:1:1: error[output-conflict]" in result.stderr
    assert target.read_text() == "# Written by hand\n"
    assert sorted(p.name for p in (repo / "docs").rglob("*")) == ["improvements", target.name]


def test_a_generated_file_whose_header_was_removed_is_refused(repo: Path) -> None:
    render.build(repo)
    target = repo / FAST
    target.write_text("# Taken over by hand\n")
    with pytest.raises(ProblemsFound) as info:
        render.build(repo)
    assert [p.code for p in info.value.report.problems] == ["output-conflict"]
    assert target.read_text() == "# Taken over by hand\n"


def test_a_stale_page_taken_over_by_hand_is_left_alone(repo: Path) -> None:
    render.build(repo)
    old = repo / SERIES / "testseries-04-old-idea.md"
    old.write_text("# I keep this one\n")
    (repo / "improvements" / "04-old-idea.yaml").unlink()
    result = render.build(repo)
    assert result.released == [f"{SERIES}/testseries-04-old-idea.md"] and result.removed == []
    assert old.read_text() == "# I keep this one\n"


def test_a_manifest_never_leads_outside_the_generated_folders(repo: Path) -> None:
    render.build(repo)
    victim = repo / "results" / "keep.md"
    victim.write_text(header("x") + "\n")
    manifest = repo / "docs" / ".improvements-manifest.json"
    data = json.loads(manifest.read_text())
    data["files"] += ["results/keep.md", "../outside.md", "/etc/hostname"]
    manifest.write_text(json.dumps(data))
    render.build(repo)
    assert victim.exists()


def test_a_docs_folder_linked_outside_the_repository_is_refused(repo: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (repo / "docs").symlink_to(elsewhere)
    with pytest.raises(ProblemsFound) as info:
        render.build(repo)
    assert {p.code for p in info.value.report.errors} == {"path-outside"}
    assert list(elsewhere.iterdir()) == []


def test_a_failed_replace_leaves_the_previous_outputs(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    render.build(repo)
    before = snapshot(repo)
    for name in ("01-fast-flag.yaml", "03-uses-ref.yaml", "04-old-idea.yaml"):
        path = repo / "improvements" / name
        path.write_text(path.read_text().replace("hypothesis: ", "hypothesis: Changed. ", 1))
    real_replace = os.replace
    calls: list[str] = []

    def flaky(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        calls.append(str(dst))
        # The first replace claims the manifest; fail on the second page.
        if len([c for c in calls if c.endswith(".md")]) == 2:
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(outputs.os, "replace", flaky)
    with pytest.raises(OSError):
        render.build(repo)
    monkeypatch.setattr(outputs.os, "replace", real_replace)
    after = snapshot(repo)
    pages = {k: v for k, v in after.items() if k.endswith(".md")}
    assert pages == {k: v for k, v in before.items() if k.endswith(".md")}
    assert not [p for p in (repo / "docs").rglob("*") if p.name.startswith(".improvements-tmp-")]
    # The next build completes the set.
    result = render.build(repo)
    assert sorted(result.written) == sorted(
        [*(f"{SERIES}/testseries-{n}.md" for n in ("01-fast-flag", "03-uses-ref", "04-old-idea")), "docs/records.json"]
    )


def test_a_failed_temp_write_changes_nothing(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    render.build(repo)
    before = snapshot(repo)
    path = repo / "improvements" / "01-fast-flag.yaml"
    path.write_text(path.read_text().replace("title: Fast flag", "title: Faster flag"))
    real_fsync = os.fsync
    count = [0]

    def failing(fd: int) -> None:
        count[0] += 1
        if count[0] == 2:
            raise OSError(5, "Input/output error")
        real_fsync(fd)

    monkeypatch.setattr(outputs.os, "fsync", failing)
    with pytest.raises(OSError):
        render.build(repo)
    assert snapshot(repo) == before


def test_write_outputs_refuses_paths_outside_its_folders(tmp_path: Path) -> None:
    with pytest.raises(ProblemsFound) as info:
        write_outputs(tmp_path, {"../x.md": "x", "docs/ok.md": header("t") + "\n"}, ["docs"])
    assert [p.code for p in info.value.report.problems] == ["path-outside"]
    assert not (tmp_path / "docs").exists()


def test_outputs_written_as_they_come_leave_nothing_when_a_later_one_fails(tmp_path: Path) -> None:
    # A build hands its outputs over one at a time: those before a problem are already in
    # temporaries (and their folders made) when it is found, and none of it may stay.
    from generator.base.problems import Report

    def stream(last: tuple[str, str] | None) -> Iterator[tuple[str, str]]:
        yield "docs/new/a.md", header("a") + "\n"
        yield "docs/new/deeper/b.md", header("b") + "\n"
        if last is None:
            raise ProblemsFound(Report())
        yield last

    with pytest.raises(ProblemsFound):
        write_outputs(tmp_path, stream(None), ["docs"])
    with pytest.raises(ProblemsFound) as info:
        write_outputs(tmp_path, stream(("../x.md", "x")), ["docs"])
    assert [p.code for p in info.value.report.problems] == ["path-outside"]
    assert sorted(p.name for p in tmp_path.rglob("*")) in ([], [LOCK_NAME])
    result = write_outputs(tmp_path, stream(("docs/c.md", header("c") + "\n")), ["docs"])
    assert result.written == ["docs/c.md", "docs/new/a.md", "docs/new/deeper/b.md"]
    assert not [p for p in tmp_path.rglob("*") if p.name.startswith(".improvements-tmp-")]


def test_binary_outputs_are_owned_by_the_manifest(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "chart.png").write_bytes(b"\x89PNG user")
    with pytest.raises(ProblemsFound):
        write_outputs(tmp_path, {"docs/chart.png": b"\x89PNG ours"}, ["docs"])
    (tmp_path / "docs" / "chart.png").unlink()
    assert write_outputs(tmp_path, {"docs/chart.png": b"\x89PNG ours"}, ["docs"]).written == ["docs/chart.png"]
    assert write_outputs(tmp_path, {"docs/chart.png": b"\x89PNG new"}, ["docs"]).written == ["docs/chart.png"]
    # Deleting needs the marker as well as the manifest: a file without it is released, kept.
    result = write_outputs(tmp_path, {}, ["docs"])
    assert (result.removed, result.released) == ([], ["docs/chart.png"])
    assert (tmp_path / "docs" / "chart.png").read_bytes() == b"\x89PNG new"


def test_a_chart_with_the_marker_is_removed_when_no_longer_rendered(tmp_path: Path) -> None:
    chart = f'<?xml version="1.0"?>\n{svg_header()}\n<svg xmlns="http://www.w3.org/2000/svg"/>\n'
    assert write_outputs(tmp_path, {"docs/plots/a.svg": chart}, ["docs"]).written == ["docs/plots/a.svg"]
    assert write_outputs(tmp_path, {}, ["docs"]).removed == ["docs/plots/a.svg"]
    assert not (tmp_path / "docs" / "plots" / "a.svg").exists()


def test_header_detection() -> None:
    assert is_generated(b"<!-- generated by improvements from a.yaml; do not edit -->\n# x\n")
    assert is_generated(b"---\n# generated by improvements from a.yaml; do not edit\ntags: []\n---\n")
    assert not is_generated(b"# x\n<!-- generated by improvements from a.yaml; do not edit -->\n")
    assert not is_generated(b"# My notes\n")


@pytest.mark.slow
def test_a_second_build_waits_for_the_lock(repo: Path) -> None:
    fd = os.open(repo / LOCK_NAME, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "generator", "build", "--root", str(repo)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # No sleep: the build says when it finds the lock held. A build that does not wait
        # ends without saying it, and its stderr closes before the line is seen.
        assert proc.stderr is not None
        seen = []
        for line in proc.stderr:
            seen.append(line)
            if line.startswith("waiting for another build"):
                break
        else:
            pytest.fail(f"the build did not wait for the lock: {seen}")
        assert proc.poll() is None, "build ended while another held the lock"
        assert not (repo / FAST).exists()
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
    assert proc.wait(timeout=120) == 0
    assert (repo / FAST).exists()


@pytest.mark.slow
def test_concurrent_builds_leave_one_consistent_output(repo: Path) -> None:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "generator", "build", "-q", "--root", str(repo)],
            cwd=REPO,
            env=env,
            stderr=subprocess.PIPE,
        )
        for _ in range(3)
    ]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]
    expected = render.render_files(analyse(render.require_project(repo)))
    outputs = (".md", ".svg", ".json", ".csv")
    assert {k: v for k, v in snapshot(repo).items() if k.endswith(outputs) and "/." not in k} == {
        k: v.encode() for k, v in expected.items()
    }
    assert not [p for p in (repo / "docs").rglob("*") if p.name.startswith(".improvements-tmp-")]


@pytest.mark.parametrize(
    ("docs_dir", "series_page", "summary"),
    [
        ("pages/records", "pages/records/testseries-01-fast-flag.md", "pages/summary.md"),
        ("site", "site/testseries-01-fast-flag.md", "site/summary.md"),
    ],
)
def test_a_custom_docs_dir(repo: Path, docs_dir: str, series_page: str, summary: str) -> None:
    campaign = repo / "improvements" / "campaign.yaml"
    campaign.write_text(campaign.read_text() + f"docs_dir: {docs_dir}\n")
    result = render.build(repo)
    assert series_page in result.files and summary in result.files
    assert (repo / series_page).is_file()
    link = "records/testseries-01-fast-flag.md" if "/" in docs_dir else "testseries-01-fast-flag.md"
    assert f"]({link})" in (repo / summary).read_text()


def test_a_docs_dir_outside_the_repository_is_refused(repo: Path) -> None:
    campaign = repo / "improvements" / "campaign.yaml"
    campaign.write_text(campaign.read_text() + "docs_dir: ../elsewhere/docs\n")
    result = run_cli("build", "--root", str(repo))
    assert result.returncode == 1 and "error[path-outside]" in result.stderr
    assert not (repo.parent / "elsewhere").exists()


def test_a_file_in_place_of_the_series_folder_is_a_problem(repo: Path) -> None:
    (repo / "docs").mkdir()
    (repo / "docs" / "improvements").write_text("not a folder\n")
    result = run_cli("build", "--root", str(repo))
    assert result.returncode == 1 and "error[output-conflict]" in result.stderr
    assert "Traceback" not in result.stderr
    assert (repo / "docs" / "improvements").read_text() == "not a folder\n"


def test_a_write_failure_is_an_error_not_a_traceback(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from generator.commands.build import command

    def full(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(outputs.os, "replace", full)
    result = CliRunner().invoke(command, ["--root", str(repo)])
    assert result.exit_code == 1
    assert "cannot write the outputs: [Errno 28] No space left on device" in result.output
    assert not [p for p in repo.rglob("*") if p.name.startswith(".improvements-tmp-")]
