"""Dates from git for records without `date:`: the first commit's day, never the clock; none outside git."""

from __future__ import annotations

import datetime as dt
import subprocess
from pathlib import Path

from generator.base.gitdates import first_committed
from generator.checks.validate import require_project

from conftest import commit_all, copy_campaign, git_campaign, run_cli


def test_first_commit_day_outside_git_none(tmp_path: Path) -> None:
    root = git_campaign(tmp_path / "repo")
    found = first_committed(root, root / "improvements")
    # The day it was first committed, not the later edit's.
    assert {found[p.resolve()] for p in (root / "improvements").glob("0*.yaml")} == {dt.date(2024, 3, 5)}
    assert first_committed(tmp_path / "not-git", tmp_path / "not-git") == {}
    plain = copy_campaign(tmp_path / "plain")
    assert require_project(plain).committed_dates == {}


def test_pages_say_the_git_date_and_only_outside_the_record(tmp_path: Path) -> None:
    root = git_campaign(tmp_path / "repo")
    assert run_cli("build", "--root", str(root)).returncode == 0
    summary = (root / "docs" / "summary.md").read_text()
    assert summary.count('<span class="improvements-date">2024-03-05</span> (first committed)') == 10
    page = next((root / "docs" / "improvements").glob("*-03-*.md")).read_text()
    assert "| Date | 2024-03-05 (first committed) |" in page
    # A record's own date wins.
    record = next((root / "improvements").glob("04-*.yaml"))
    record.write_text(record.read_text() + "date: 2023-07-01\n")
    assert run_cli("build", "--root", str(root)).returncode == 0
    assert "| Date | 2023-07-01 |" in next((root / "docs" / "improvements").glob("*-04-*.md")).read_text()


def test_a_commit_that_adds_a_record_dates_it_at_the_next_build(tmp_path: Path) -> None:
    root = git_campaign(tmp_path / "repo")
    source = next((root / "improvements").glob("10-*.yaml"))
    (root / "improvements" / "11-copy.yaml").write_text(source.read_text())
    assert run_cli("build", "--root", str(root)).returncode == 0
    page = next((root / "docs" / "improvements").glob("*-11-copy.md"))
    assert "| Date | not recorded |" in page.read_text()
    commit_all(root, "2025-06-07T10:00:00+00:00", "add 11")
    # Nothing under improvements/ changed, but the build is not "nothing to do": the date is new.
    assert run_cli("build", "--root", str(root)).returncode == 0
    assert "| Date | 2025-06-07 (first committed) |" in page.read_text()


def test_the_author_date_not_the_committer_date(tmp_path: Path) -> None:
    # A rebase or a squash-merge gives a commit a new committer date; the author's day stays.
    root = copy_campaign(tmp_path / "repo")
    subprocess.run(["git", "init", "-q", str(root)], check=True, capture_output=True)
    commit_all(root, "2024-03-05T10:00:00+00:00", "add", committed="2026-01-01T10:00:00+00:00")
    found = first_committed(root, root / "improvements")
    assert found and set(found.values()) == {dt.date(2024, 3, 5)}
