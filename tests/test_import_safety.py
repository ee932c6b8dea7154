"""Import and renumber on hostile input: a positioned problem or a whole result, never a traceback or a part.

Each case was first reproduced as a crash or a partial write (see docs/guide/safety-report.md).
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from generator.project.runs.parse import MAX_BYTES, parse_file

from conftest import FIXTURES, run_cli

BASE = json.loads((FIXTURES / "import" / "sglang-bench-serving-2025.jsonl").read_text().splitlines()[0])


def tree(root: Path) -> dict[str, bytes]:
    """Every file with its bytes, but the build's lock file, which every build leaves (empty)."""
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.name != ".improvements.lock")
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in files}


def bench(tmp_path: Path, name: str = "bench.jsonl", **changes: object) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({**BASE, **changes}) + "\n")
    return path


def import_(root: Path, *args: str):
    return run_cli("import", "--root", str(root), *args)


def no_traceback(r) -> None:
    assert "Traceback" not in r.stderr, r.stderr


def test_a_huge_concurrency_is_refused_and_the_largest_allowed_builds(campaign: Path, tmp_path: Path) -> None:
    # Was: the 4,000-digit concurrency went into results/runs/<id>.json, the file system refused
    # the name after the raw copy was written, and import crashed with a part written. Then,
    # with a short id, it imported and `build` crashed: a chart cannot place a number that
    # overflows a float. A count is now bounded as a record's is (result_model.MAX_COUNT).
    before = tree(campaign)
    r = import_(campaign, str(bench(tmp_path, max_concurrency=10**4000)), "--record", "02")
    no_traceback(r)
    assert r.returncode == 1 and "max_concurrency of 4,001 digits; a count is 1 or more, and at most 1e+15" in r.stderr
    assert tree(campaign) == before
    r = import_(campaign, str(bench(tmp_path, max_concurrency=10**15)), "--record", "02")
    assert r.returncode == 0, r.stderr
    names = [p.name for p in (campaign / "results").rglob("*") if p.is_file()]
    assert names and all(len(n) <= 120 for n in names)
    [run_file] = (campaign / "results" / "runs").glob("*.json")
    assert json.loads(run_file.read_text())["settings"]["max_concurrency"] == 10**15  # the value is kept
    for args in (("check",), ("build",), ("export", "-o", "x.json")):
        res = run_cli(*args, cwd=campaign)
        no_traceback(res)
        assert res.returncode == 0, (args, res.stderr[-2000:])


def test_a_lone_surrogate_is_a_positioned_problem(campaign: Path, tmp_path: Path) -> None:
    path = tmp_path / "sur.jsonl"
    line = json.dumps({**BASE, "tag": "\ud800"})  # json.dumps writes the escape \ud800
    path.write_text(json.dumps(BASE) + "\n" + line + "\n")
    before = tree(campaign)
    r = import_(campaign, str(path), "--record", "02")
    no_traceback(r)
    assert r.returncode == 1
    col = line.index("\\ud800") + 1
    assert f"sur.jsonl:2:{col}: error[import-unrecognised]: the JSON holds a lone surrogate escape" in r.stderr
    assert tree(campaign) == before


def test_a_surrogate_pair_is_a_character(tmp_path: Path) -> None:
    path = bench(tmp_path, tag="\U0001f680 launch")
    parsed, problems = parse_file(path, path.name)
    assert problems == [] and parsed is not None
    assert parsed.runs[0].settings["tag"] == "\U0001f680 launch"


@pytest.mark.parametrize(
    ("changes", "what"),
    [
        ({"random_input_len": -5}, "input_len -5; a count is 0 or more"),
        ({"random_output_len": -1}, "output_len -1; a count is 0 or more"),
        ({"max_concurrency": 0}, "max_concurrency 0; a count is 1 or more"),
        ({"max_concurrency": -64}, "max_concurrency -64; a count is 1 or more"),
    ],
)
def test_an_impossible_count_is_refused(campaign: Path, tmp_path: Path, changes: dict, what: str) -> None:
    # Was: the negative length passed import's parse, then crashed the record check (pydantic) with a traceback.
    before = tree(campaign)
    r = import_(campaign, str(bench(tmp_path, **changes)), "--record", "02")
    no_traceback(r)
    assert r.returncode == 1
    assert "bench.jsonl:1:1: error[invalid-value]:" in r.stderr and what in r.stderr
    assert tree(campaign) == before


def test_a_device_is_refused_unread(campaign: Path) -> None:
    # Was: /dev/zero was read whole (forever) before the size check.
    r = import_(campaign, "/dev/zero", "--record", "02")
    no_traceback(r)
    assert r.returncode == 1
    assert "/dev/zero:1:1: error[import-unrecognised]: a device is not a benchmark file" in r.stderr


def test_a_fifo_is_refused_without_waiting(campaign: Path, tmp_path: Path) -> None:
    # Was: opening the FIFO for reading waited for a writer forever.
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    parsed, problems = parse_file(fifo, "pipe.jsonl")
    assert parsed is None
    assert [(p.code, p.message) for p in problems] == [
        ("import-unrecognised", "a FIFO (named pipe) is not a benchmark file; only regular files are read")
    ]
    r = import_(campaign, str(fifo), "--record", "02")
    assert r.returncode == 1 and "a FIFO (named pipe) is not a benchmark file" in r.stderr


@pytest.mark.slow
def test_a_file_swapped_for_a_fifo_after_the_check_does_not_block(tmp_path: Path, monkeypatch) -> None:
    # The open itself never waits: the type is checked again on what was opened.
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    real_stat = os.stat

    def regular_first(path, *args, **kwargs):
        st = real_stat(path, *args, **kwargs)
        if Path(path) == fifo:
            return os.stat_result((0o100644, *tuple(st)[1:]))
        return st

    monkeypatch.setattr(os, "stat", regular_first)
    result: list = []
    worker = threading.Thread(target=lambda: result.append(parse_file(fifo, "pipe.jsonl")), daemon=True)
    worker.start()
    worker.join(10)
    assert result, "parse_file blocked on a FIFO"
    assert result[0][1][0].message.startswith("a FIFO")


def test_an_oversized_file_is_refused_by_its_size(tmp_path: Path) -> None:
    big = tmp_path / "big.jsonl"
    with open(big, "wb") as f:
        f.truncate(MAX_BYTES + 1)  # sparse: no disk used, and never read
    parsed, problems = parse_file(big, "big.jsonl")
    assert parsed is None
    assert problems[0].message == f"file is {MAX_BYTES + 1:,} bytes, over {MAX_BYTES:,}"


def test_a_failed_write_leaves_nothing(campaign: Path, tmp_path: Path) -> None:
    # results/runs cannot be created (a file holds its name): the raw copy already written must go too.
    (campaign / "results" / "runs").write_text("not a folder\n")
    before = tree(campaign)
    r = import_(campaign, str(bench(tmp_path)), "--record", "02")
    no_traceback(r)
    assert r.returncode == 1
    assert "nothing was imported" in r.stderr
    assert tree(campaign) == before
    assert not (campaign / "results" / "raw").exists()


# --- renumber -----------------------------------------------------------------------------------


def _long_slug_campaign(campaign: Path) -> tuple[Path, str]:
    """A record whose slug is long enough that a bigger number makes its page name too long."""
    slug = "-".join(["abcdefghi"] * 23)  # 229 characters: 03-<slug>.yaml and its page still fit
    old = next((campaign / "improvements").glob("03-*.yaml"))
    old_slug = old.name[3:-5]
    old.rename(old.with_name(f"03-{slug}.yaml"))
    for path in (campaign / "improvements").glob("*.yaml"):
        text = path.read_text()
        if old_slug in text:
            path.write_text(text.replace(old_slug, slug))
    assert run_cli("check", "--root", str(campaign)).returncode == 0
    return campaign, slug


def test_renumber_that_cannot_rebuild_renames_nothing(campaign: Path) -> None:
    # Was: the record was renamed to 10000-<slug>.yaml, then the build crashed on the page's name.
    # A hand-written file where the renumbered page goes stops the rebuild here.
    root, slug = _long_slug_campaign(campaign)
    page = root / "docs" / "improvements" / f"glb5improvement-10000-{slug}.md"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text("my own notes\n")
    before = tree(root)
    r = run_cli("renumber", "--root", str(root), "03", "10000")
    no_traceback(r)
    assert r.returncode == 1
    assert "nothing was renamed" in r.stderr
    assert tree(root) == before
    assert (root / "improvements" / f"03-{slug}.yaml").exists()


def test_renumber_to_a_page_name_near_the_limit_writes_it(campaign: Path) -> None:
    # Was: the page (254 characters) fitted, but the temporary file it is written through did not.
    root, slug = _long_slug_campaign(campaign)
    r = run_cli("renumber", "--root", str(root), "03", "10000")
    no_traceback(r)
    assert r.returncode == 0, r.stderr
    assert (root / "docs" / "improvements" / f"glb5improvement-10000-{slug}.md").is_file()


def test_renumber_to_a_number_too_long_for_a_file_name(campaign: Path) -> None:
    # Was: an OSError traceback from checking whether the 300-digit file name exists.
    before = tree(campaign)
    r = run_cli("renumber", "--root", str(campaign), "03", str(10**300))
    no_traceback(r)
    assert r.returncode == 2
    assert "over the file system's" in r.stderr and "nothing was renamed" in r.stderr
    assert tree(campaign) == before


def test_a_run_file_edited_past_the_count_bound_is_a_check_error(campaign: Path, tmp_path: Path) -> None:
    assert import_(campaign, str(bench(tmp_path, max_concurrency=16)), "--record", "02").returncode == 0
    [run_file] = (campaign / "results" / "runs").glob("*.json")
    data = json.loads(run_file.read_text())
    data["settings"]["max_concurrency"] = 10**400
    run_file.write_text(json.dumps(data))
    for args in (("check",), ("build",)):
        res = run_cli(*args, cwd=campaign)
        no_traceback(res)
        assert res.returncode == 1 and "has max_concurrency out of range for a count" in res.stderr, res.stderr
