"""`improvements new`: next free number, slug from the title, commented starter, never an overwrite."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from generator.authoring.starter import slugify
from generator.base.read import parse
from generator.project.load import record_files

from conftest import REPO, run_cli


@pytest.mark.parametrize(
    ("title", "slug"),
    [
        ("MSCCL++ all-reduce", "mscclpp-all-reduce"),
        ("TP4 + PP2", "tp4-p-pp2"),
        ("  Piecewise CUDA graphs!  ", "piecewise-cuda-graphs"),
        ("Überschall: naïve café", "uberschall-naive-cafe"),
        ("EP8 (expert parallelism)", "ep8"),
        ("--num-continuous-decode-steps 4", "num-continuous-decode-steps-4"),
        ("Disable NCCL peer-to-peer (NCCL_P2P_DISABLE=1)", "disable-nccl-peer-to-peer"),
        ("Single-batch overlap [SBO] for the decode step", "single-batch-overlap-for-the"),
        ("(NCCL_P2P_DISABLE=1)", "nccl-p2p-disable-1"),
        ("Persistent grouped GEMM kernels rewritten for SM120", "persistent-grouped-gemm-kernels"),
    ],
)
def test_slug_from_title(title: str, slug: str) -> None:
    assert slugify(title) == slug


def test_long_title_slug_stops_at_a_word() -> None:
    slug = slugify("word " * 40)
    assert slug == "word-word-word-word-word"
    slug = slugify("Extraordinarily-long-hyphenated-compounds identifiers everywhere")
    assert len(slug) <= 40 and slug == "extraordinarily-long-hyphenated"
    assert len(slugify("x" * 100)) == 40


def test_date_sets_the_records_date(minimal: Path) -> None:
    run = run_cli("new", "Dated idea", "--tier", "1", "--hypothesis", "h", "--date", "2025-11-03", cwd=minimal)
    assert run.returncode == 0, run.stderr
    assert str(parse((minimal / "improvements" / "01-dated-idea.yaml").read_text())[0]["date"]) == "2025-11-03"
    run = run_cli("new", "Badly dated", "--tier", "1", "--date", "03/11/2025", cwd=minimal)
    assert run.returncode == 2 and "--date" in run.stderr and "Traceback" not in run.stderr
    assert not list((minimal / "improvements").glob("*-badly-dated.yaml"))


def test_new_takes_the_next_number_and_checks_clean_with_a_hypothesis(campaign: Path) -> None:
    files, _ = record_files(campaign / "improvements")
    top = max(n for _p, n, _s in files)
    run = run_cli(
        "new",
        "MSCCL++ all-reduce: take two",
        "--tier",
        "1",
        "--tags",
        "nccl,all-reduce",
        "--tags",
        "pcie",
        "--hypothesis",
        "A second look at a Tier 1 flag: 'quotes', colons: and # hashes must survive as typed.",
        cwd=campaign,
    )
    assert run.returncode == 0, run.stderr
    name = f"{top + 1:02d}-mscclpp-all-reduce-take-two.yaml"
    assert run.stdout == f"improvements/{name}\n"
    text = (campaign / "improvements" / name).read_text()
    assert text.startswith("# yaml-language-server: $schema=../schema/record.schema.json\n")
    data, _ = parse(text)
    assert data["title"] == "MSCCL++ all-reduce: take two"
    assert data["hypothesis"] == "A second look at a Tier 1 flag: 'quotes', colons: and # hashes must survive as typed."
    assert data["tags"] == ["nccl", "all-reduce", "pcie"]
    assert (data["tier"], data["status"]) == (1, "proposed")
    # Every optional field is there to uncomment, explained.
    for key in ("summary", "expected", "change", "blockers", "results", "verdict", "caveats", "references"):
        assert f"# {key}:" in text
    check = run_cli("check", cwd=campaign)
    assert check.returncode == 0, check.stderr


def test_without_hypothesis_check_points_at_it(minimal: Path) -> None:
    run = run_cli("new", "An idea", "--tier", "2", cwd=minimal)
    assert run.returncode == 0
    assert "fill in `hypothesis:`" in run.stderr
    check = run_cli("check", cwd=minimal)
    line = next(
        i
        for i, t in enumerate((minimal / "improvements" / "01-an-idea.yaml").read_text().splitlines(), 1)
        if t.startswith("hypothesis:")
    )
    assert check.returncode == 1 and f"improvements/01-an-idea.yaml:{line}:13: error[invalid-value]" in check.stderr
    # A broken record does not stop the next one.
    assert run_cli("new", "Another idea", "--tier", "2", cwd=minimal).stdout == "improvements/02-another-idea.yaml\n"


def test_new_writes_the_schema_once_for_editors(minimal: Path) -> None:
    run_cli("new", "One", "--tier", "1", "--hypothesis", "h", cwd=minimal)
    schema = minimal / "schema" / "record.schema.json"
    assert schema.read_bytes() == (REPO / "schema" / "record.schema.json").read_bytes()
    schema.write_text("{}\n")  # the user's own file now: never touched again
    run_cli("new", "Two", "--tier", "1", "--hypothesis", "h", cwd=minimal)
    assert schema.read_text() == "{}\n"


def test_existing_slug_is_refused_with_a_hint(campaign: Path) -> None:
    path = next((campaign / "improvements").glob("01-*.yaml"))
    before = path.read_bytes()
    run = run_cli("new", "Piecewise CUDA graphs", "--tier", "1", cwd=campaign)
    assert run.returncode == 2
    assert f"slug `piecewise-cuda-graphs` is taken by improvements/{path.name}" in run.stderr
    assert "--slug" in run.stderr
    assert path.read_bytes() == before
    run = run_cli("new", "Piecewise CUDA graphs", "--tier", "1", "--slug", "piecewise-again", cwd=campaign)
    assert run.returncode == 0 and run.stdout.strip().endswith("-piecewise-again.yaml")


@pytest.mark.parametrize(
    "args",
    [
        ("日本語", "--tier", "1"),
        ("x", "--tier", "4"),
        ("x", "--tier", "1", "--tags", "Bad Tag"),
        ("x", "--tier", "1", "--slug", "Not_A_Slug"),
        ("",),
    ],
)
def test_usage_errors(minimal: Path, args: tuple[str, ...]) -> None:
    run = run_cli("new", *args, cwd=minimal)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert record_files(minimal / "improvements")[0] == []


@pytest.mark.slow
def test_edit_opens_the_editor_and_checks_the_result(minimal: Path, tmp_path: Path) -> None:
    editor = tmp_path / "editor.py"
    editor.write_text("import sys\np = sys.argv[1]\nopen(p, 'a').write('summary: Typed in the editor.\\n')\n")
    env = {"EDITOR": f"{sys.executable} {editor}", "VISUAL": ""}
    run = run_cli("new", "Edited", "--tier", "3", "--hypothesis", "h", "--edit", cwd=minimal, env=env)
    assert run.returncode == 0, run.stderr
    assert parse((minimal / "improvements" / "01-edited.yaml").read_text())[0]["summary"] == "Typed in the editor."
    # An edit that breaks the record is reported at once (the file stays, for the user to fix).
    editor.write_text("import sys\nopen(sys.argv[1], 'a').write('tier: 2\\n')\n")
    run = run_cli("new", "Edited twice", "--tier", "3", "--hypothesis", "h", "--edit", cwd=minimal, env=env)
    assert run.returncode == 1 and "duplicate-key" in run.stderr


def _start(root: Path, title: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "generator", "new", title, "--tier", "1", "--hypothesis", "h"],
        cwd=root,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow
def test_concurrent_runs_never_share_a_number(minimal: Path) -> None:
    for round_ in range(4):
        procs = [_start(minimal, f"round {round_} idea {i}") for i in range(4)]
        outs = [p.communicate(timeout=120) for p in procs]
        assert [p.returncode for p in procs] == [0] * 4, [err for _out, err in outs]
    files, strays = record_files(minimal / "improvements")
    assert strays == []
    numbers = [n for _p, n, _s in files]
    assert sorted(numbers) == list(range(1, 17))
    assert run_cli("check", cwd=minimal).returncode == 0


@pytest.mark.slow
def test_concurrent_runs_with_one_title_write_one_file(minimal: Path) -> None:
    procs = [_start(minimal, "Same idea") for _ in range(3)]
    codes = sorted(p.wait(timeout=120) for p in procs)
    assert codes == [0, 2, 2]
    assert [p.name for p in (minimal / "improvements").glob("*-same-idea.yaml")] == ["01-same-idea.yaml"]
