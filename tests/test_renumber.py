"""`improvements renumber`: rename record files, rebuild the series, keep slug references intact."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from generator.authoring.edit import Document, set_key
from generator.model.record import Record

from conftest import run_cli


def snapshot(root: Path) -> dict[str, str]:
    """Every file under improvements/ and docs/, by path, with a hash of its bytes."""
    out = {}
    for folder in ("improvements", "docs"):
        for path in sorted((root / folder).rglob("*")):
            if path.is_file():
                out[path.relative_to(root).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


@pytest.fixture
def built(campaign: Path) -> Path:
    run = run_cli("build", "-q", cwd=campaign)
    assert run.returncode == 0, run.stderr
    return campaign


def names(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "improvements").glob("[0-9]*.yaml"))


def pages(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "docs" / "improvements").glob("*.md"))


def last(root: Path) -> tuple[int, str]:
    name = names(root)[-1]
    number, slug = name.removesuffix(".yaml").split("-", 1)
    return int(number), slug


def test_move_to_a_free_number_renames_and_rebuilds(built: Path) -> None:
    number, slug = last(built)
    target = number + 3
    record = (built / "improvements" / f"{number:02d}-{slug}.yaml").read_bytes()
    run = run_cli("renumber", slug, str(target), cwd=built)
    assert run.returncode == 0, run.stderr
    assert f"renamed improvements/{number:02d}-{slug}.yaml -> improvements/{target:02d}-{slug}.yaml" in run.stdout
    assert (built / "improvements" / f"{target:02d}-{slug}.yaml").read_bytes() == record  # renamed, not rewritten
    assert f"glb5improvement-{target:02d}-{slug}.md" in pages(built)
    assert f"glb5improvement-{number:02d}-{slug}.md" not in pages(built)
    summary = (built / "docs" / "summary.md").read_text()
    assert f"glb5improvement-{target:02d}-{slug}.md" in summary
    assert f"glb5improvement-{number:02d}-{slug}.md" not in summary
    assert run_cli("check", cwd=built).returncode == 0
    # And back by number: the tree is as it was.
    assert run_cli("renumber", str(target), str(number), cwd=built).returncode == 0
    fresh = run_cli("build", cwd=built)
    assert "0 written" in fresh.stdout


def test_references_by_slug_survive(built: Path) -> None:
    first = names(built)[0]
    slug = first.removesuffix(".yaml").split("-", 1)[1]
    number, other = last(built)
    path = built / "improvements" / f"{number:02d}-{other}.yaml"
    doc = Document.from_path(path)
    related = [str(s) for s in doc.data.get("related", []) if s != slug]
    set_key(doc.data, "related", [*related, slug], list(Record.model_fields))
    path.write_text(doc.text())
    assert run_cli("renumber", slug, str(number + 1), cwd=built).returncode == 0
    assert run_cli("check", cwd=built).returncode == 0
    page = (built / "docs" / "improvements" / f"glb5improvement-{number:02d}-{other}.md").read_text()
    assert f"glb5improvement-{number + 1:02d}-{slug}.md" in page


def test_taken_number_is_refused_with_a_hint(built: Path) -> None:
    before = snapshot(built)
    _number, slug = last(built)
    run = run_cli("renumber", slug, "1", cwd=built)
    assert run.returncode == 2
    assert "number 01 is taken by 01-" in run.stderr and "--compact" in run.stderr
    assert snapshot(built) == before


def test_dry_run_changes_nothing(built: Path) -> None:
    before = snapshot(built)
    number, slug = last(built)
    run = run_cli("renumber", slug, str(number + 5), "--dry-run", cwd=built)
    assert run.returncode == 0 and "would rename" in run.stdout
    assert f"glb5improvement-{number + 5:02d}-{slug}.md" in run.stdout
    (built / "improvements" / f"{number:02d}-{slug}.yaml").rename(
        built / "improvements" / f"{number + 5:02d}-{slug}.yaml"
    )
    assert run_cli("build", "-q", cwd=built).returncode == 0
    moved = snapshot(built)
    assert run_cli("renumber", "--compact", "--dry-run", cwd=built).returncode == 0
    assert snapshot(built) == moved
    assert before != moved


def test_compact_closes_gaps_and_ends_duplicates(built: Path) -> None:
    files = names(built)
    assert len(files) >= 3, "the shipped campaign has the three records this needs"
    # Make a gap and a duplicate: the last record jumps to 40, the second takes the first's number.
    _number, slug = last(built)
    (built / "improvements" / files[-1]).rename(built / "improvements" / f"40-{slug}.yaml")
    second = files[1].split("-", 1)[1]
    (built / "improvements" / files[1]).rename(built / "improvements" / f"01-{second}")
    check = run_cli("check", cwd=built)
    assert check.returncode == 1 and "duplicate-number" in check.stderr and "renumber" in check.stderr
    run = run_cli("renumber", "--compact", cwd=built)
    assert run.returncode == 0, run.stderr
    numbers = [int(n.split("-", 1)[0]) for n in names(built)]
    assert numbers == list(range(1, len(files) + 1))
    assert run_cli("check", cwd=built).returncode == 0
    assert len(pages(built)) == len(files)
    assert "nothing to renumber" in run_cli("renumber", "--compact", cwd=built).stdout


def test_other_errors_block_renumbering(built: Path) -> None:
    number, slug = last(built)
    path = built / "improvements" / f"{number:02d}-{slug}.yaml"
    path.write_text(path.read_text().replace("tier:", "tier: 9\nold_tier:", 1))
    before = snapshot(built)
    run = run_cli("renumber", "--compact", cwd=built)
    assert run.returncode == 1 and "unknown-key" in run.stderr
    assert snapshot(built) == before


@pytest.mark.parametrize(
    "args",
    [(), ("x",), ("x", "2", "--compact"), ("no-such-record", "3"), ("x", "0")],
)
def test_usage_errors(campaign: Path, args: tuple[str, ...]) -> None:
    run = run_cli("renumber", *args, cwd=campaign)
    assert run.returncode == 2 and "Traceback" not in run.stderr
