"""`improvements status`: in-place edits that change only the edited lines, and refusals that say why."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.authoring.edit import Document, set_key, splice
from generator.base.read import parse

from conftest import run_cli

# Comments everywhere, quoting of every kind, blank lines, flow and block collections, an
# indentation style unlike ruamel's default, and a long line ruamel would otherwise fold.
ODD = """\
# yaml-language-server: $schema=../schema/record.schema.json
# A record written by hand, the way people do.

title:   'Odd  quoting: kept'   # two spaces inside the quotes
tier: 2
status: "in-progress"      # double-quoted on purpose

tags: [ nccl,  all-reduce ]   # flow list with extra spaces
hypothesis: >-
  Folded text that
  continues on a second line.

summary: |
  Literal text,
    indented inside.
change:
    flags:
    - "--enable-custom-all-reduce"     # a flag as a string
    -   flag: --tp-size
        value: '8'
    env: {NCCL_PROTO: Simple,   NCCL_ALGO: Ring}

results:
- label: c64
  concurrency: 64
  metrics: {output_throughput: [1300, 1310, 1290]}   # three runs
  baseline:
    output_throughput: 1240
# A comment between keys, about the caveats.
caveats:
  -   Only one workload was measured, so this line is long enough for ruamel to fold at its default width.
references:
  - {title: "sglang docs", url: https://docs.sglang.ai/}
"""


def changed(before: str, after: str) -> tuple[list[str], list[str]]:
    """The lines removed from `before` and added in `after`; every other line is byte-identical."""
    removed, added = [], []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(
        None, before.splitlines(keepends=True), after.splitlines(keepends=True), autojunk=False
    ).get_opcodes():
        if op != "equal":
            removed += before.splitlines(keepends=True)[i1:i2]
            added += after.splitlines(keepends=True)[j1:j2]
    return removed, added


def write_odd(root: Path) -> Path:
    path = root / "improvements" / "03-odd-record.yaml"
    path.write_bytes(ODD.encode())
    return path


def test_adopt_changes_only_the_status_line_and_adds_the_verdict(minimal: Path) -> None:
    path = write_odd(minimal)
    assert run_cli("check", "--root", str(minimal)).returncode == 0
    run = run_cli("status", "odd-record", "adopted", "--verdict", "Adopted: faster, within one run.", cwd=minimal)
    assert run.returncode == 0, run.stderr
    assert "in-progress -> adopted" in run.stdout
    after = path.read_text()
    removed, added = changed(ODD, after)
    assert removed == ['status: "in-progress"      # double-quoted on purpose\n']
    # The quotes stay, and the comment keeps its column.
    assert added == [
        'status: "adopted"          # double-quoted on purpose\n',
        "verdict: 'Adopted: faster, within one run.'\n",
    ]
    assert added[0].index("#") == removed[0].index("#")
    # The verdict lands where the model's field order puts it: after results, before the caveats' comment.
    assert after.index("verdict:") < after.index("# A comment between keys")
    assert run_cli("check", "--root", str(minimal)).returncode == 0


def test_by_number_and_back_again_restores_the_bytes(minimal: Path) -> None:
    path = write_odd(minimal)
    assert run_cli("status", "3", "blocked", cwd=minimal).returncode == 1  # no open blocker
    assert path.read_text() == ODD
    assert run_cli("status", "03", "proposed", cwd=minimal).returncode == 0
    assert changed(ODD, path.read_text())[0] == ['status: "in-progress"      # double-quoted on purpose\n']
    assert run_cli("status", "03", "in-progress", cwd=minimal).returncode == 0
    assert path.read_bytes() == ODD.encode()


def test_crlf_file_keeps_its_line_endings(minimal: Path) -> None:
    path = minimal / "improvements" / "03-odd-record.yaml"
    path.write_bytes(ODD.replace("\n", "\r\n").encode())
    assert run_cli("status", "odd-record", "proposed", cwd=minimal).returncode == 0
    crlf = path.read_bytes()
    path.write_bytes(ODD.encode())
    assert run_cli("status", "odd-record", "proposed", cwd=minimal).returncode == 0
    assert crlf == path.read_bytes().replace(b"\n", b"\r\n")
    assert crlf.count(b"\r\n") == ODD.count("\n")


def test_refuses_adopted_without_results_saying_what_is_missing(campaign: Path) -> None:
    path = campaign / "improvements" / "01-piecewise-cuda-graphs.yaml"
    before = path.read_bytes()
    run = run_cli("status", "piecewise-cuda-graphs", "adopted", cwd=campaign)
    assert run.returncode == 1
    assert "improvements/01-piecewise-cuda-graphs.yaml:5:9: error[status-rule]" in run.stderr
    assert "needs at least one result" in run.stderr
    assert "import" in run.stderr  # the hint says how to add one
    assert "Traceback" not in run.stderr
    assert path.read_bytes() == before


def test_refuses_adopted_without_verdict(minimal: Path) -> None:
    path = write_odd(minimal)
    text = ODD.replace("caveats:", "verdict: ''\ncaveats:")
    path.write_text(text)
    run = run_cli("status", "odd-record", "adopted", cwd=minimal)
    assert run.returncode == 1
    assert "needs a `verdict`" in run.stderr and "--verdict" in run.stderr
    assert path.read_text() == text


def test_superseded_needs_an_existing_slug(campaign: Path) -> None:
    path = campaign / "improvements" / "01-piecewise-cuda-graphs.yaml"
    before = path.read_bytes()
    run = run_cli("status", "01", "superseded", cwd=campaign)
    assert run.returncode == 1 and "superseded_by" in run.stderr
    run = run_cli("status", "01", "superseded", "--superseded-by", "no-such-record", cwd=campaign)
    assert run.returncode == 2 and "no record has slug `no-such-record`" in run.stderr
    run = run_cli("status", "01", "in-progress", "--superseded-by", "x", cwd=campaign)
    assert run.returncode == 2
    assert path.read_bytes() == before


def test_unknown_record_and_status_are_usage_errors(campaign: Path) -> None:
    run = run_cli("status", "piecewise-cuda-graph", "adopted", cwd=campaign)
    assert run.returncode == 2 and "did you mean `piecewise-cuda-graphs`?" in run.stderr
    run = run_cli("status", "01", "done", cwd=campaign)
    assert run.returncode == 2 and "Traceback" not in run.stderr


def test_a_broken_record_is_not_edited(minimal: Path) -> None:
    path = write_odd(minimal)
    broken = ODD.replace("tier: 2", "tier: 7")
    path.write_text(broken)
    run = run_cli("status", "odd-record", "proposed", cwd=minimal)
    assert run.returncode == 1 and "improvements/03-odd-record.yaml:5:7: error[invalid-value]" in run.stderr
    assert path.read_text() == broken


def test_same_status_writes_nothing(minimal: Path) -> None:
    path = write_odd(minimal)
    mtime = path.stat().st_mtime_ns
    run = run_cli("status", "odd-record", "in-progress", cwd=minimal)
    assert run.returncode == 0 and "already in-progress" in run.stdout
    assert path.stat().st_mtime_ns == mtime


@pytest.mark.parametrize("dash", ["", "  "])
def test_nested_insert_follows_the_files_indentation(dash: str) -> None:
    text = (
        "title: T\ntier: 1\nstatus: proposed\nhypothesis: H\n"
        f"results:\n{dash}- label: a\n{dash}  metrics:\n{dash}    output_throughput: 1\n"
        f"caveats:\n{dash}- c\n"
    )
    doc = Document(text)
    set_key(doc.data["results"][0], "note", "one machine", ["label", "metrics", "note"])
    removed, added = changed(text, doc.text())
    assert removed == [] and added == [f"{dash}  note: one machine\n"]


def test_splice_is_identity_without_edits() -> None:
    assert splice(ODD, "a: 1\n", "a: 1\n") == ODD
    assert Document(ODD).text() == ODD


@st.composite
def styled_records(draw: st.DrawFn) -> tuple[str, str]:
    """A record in a random mix of styles, and the text of its status line."""
    quote = draw(st.sampled_from(["", "'", '"']))
    comment = draw(st.sampled_from(["", "  # why", "      # aligned far"]))
    blank = draw(st.sampled_from(["", "\n", "\n\n"]))
    dash = draw(st.sampled_from(["", "  ", "    "]))
    tags = draw(st.sampled_from(["tags: [a, b]\n", "tags: [ a,b ]\n", f"tags:\n{dash}- a\n{dash}- b\n"]))
    status_line = f"status: {quote}{draw(st.sampled_from(['proposed', 'in-progress']))}{quote}{comment}\n"
    parts = [
        draw(st.sampled_from(["", "# head comment\n", "# yaml-language-server: $schema=x\n\n"])),
        "title: T\n",
        draw(st.sampled_from(["tier: 1\n", "tier: 1   # tier\n"])),
        blank,
        status_line,
        blank,
        tags,
        draw(st.sampled_from(["hypothesis: H\n", "hypothesis: >-\n  H H\n  H\n", "hypothesis: 'H: h'\n"])),
        draw(st.sampled_from(["", f"caveats:\n{dash}-   c1\n{dash}- 'c2'\n", "caveats: [c1,   c2]\n"])),
    ]
    return "".join(parts), status_line


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(styled_records(), st.sampled_from(["blocked", "adopted", "rejected", "superseded"]))
def test_status_edit_changes_only_the_status_line(case: tuple[str, str], new_status: str) -> None:
    text, status_line = case
    doc = Document(text)
    set_key(doc.data, "status", new_status)
    removed, added = changed(text, doc.text())
    assert removed == [status_line]
    assert len(added) == 1 and added[0].startswith("status: ") and new_status in added[0]
    assert parse(doc.text())[0]["status"] == new_status


BLOCKED = """\
title: Blocked idea
tier: 1
status: blocked   # waiting on upstream
hypothesis: It would be faster.
blockers:
  - id: graph-breaks
    title: FP4 JIT graph breaks
    status: open   # upstream issue, still open
  - title: A second one
    status: open
results:
  - label: c1
    metrics: {output_throughput: 10}
"""


def write_blocked(root: Path, text: str = BLOCKED) -> Path:
    path = root / "improvements" / "04-blocked-idea.yaml"
    path.write_text(text)
    return path


def test_resolve_blockers_and_reject_in_one_edit(minimal: Path) -> None:
    path = write_blocked(minimal)
    assert run_cli("check", cwd=minimal).returncode == 0
    run = run_cli(
        "status", "blocked-idea", "rejected", "--verdict", "Slower.", "--resolve-blocker", "graph-breaks",
        "--resolve-blocker", "2", cwd=minimal,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "status blocked -> rejected" in run.stdout
    assert "blocker `graph-breaks` open -> resolved" in run.stdout and "blocker #2 open -> resolved" in run.stdout
    removed, added = changed(BLOCKED, path.read_text())
    assert removed == [
        "status: blocked   # waiting on upstream\n",
        "    status: open   # upstream issue, still open\n",
        "    status: open\n",
    ]
    assert added == [
        "status: rejected  # waiting on upstream\n",
        "    status: resolved # upstream issue, still open\n",
        "    status: resolved\n",
        "verdict: Slower.\n",
    ]
    assert run_cli("check", cwd=minimal).returncode == 0


def test_a_blocker_resolved_by_hand_no_longer_stops_the_next_status(minimal: Path) -> None:
    # The record breaks the `blocked` rule now; the new status is the fix, so it is not refused.
    text = BLOCKED.replace("status: open   # upstream", "status: resolved   # upstream").replace(
        "  - title: A second one\n    status: open\n", ""
    )
    path = write_blocked(minimal, text)
    assert run_cli("check", cwd=minimal).returncode == 1
    run = run_cli("status", "blocked-idea", "rejected", "--verdict", "Slower.", cwd=minimal)
    assert run.returncode == 0, run.stderr
    assert parse(path.read_text())[0]["status"] == "rejected"


def test_leaving_blocked_with_open_blockers_points_at_resolve_blocker(minimal: Path) -> None:
    path = write_blocked(minimal)
    run = run_cli("status", "blocked-idea", "adopted", cwd=minimal)  # no verdict: refused
    assert run.returncode == 1
    assert "needs a `verdict`" in run.stderr
    assert "--resolve-blocker graph-breaks" in run.stderr
    assert path.read_text() == BLOCKED
    run = run_cli("status", "blocked-idea", "rejected", "--verdict", "Slower.", cwd=minimal)
    assert run.returncode == 0
    assert "blocker `graph-breaks` is still open; `--resolve-blocker graph-breaks`" in run.stderr
    assert "blocker #2 is still open; `--resolve-blocker 2`" in run.stderr


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("nope", "its blockers are 1 (`graph-breaks`), 2"),
        ("3", "the record has 2 blocker(s)"),
        ("0", "the record has 2 blocker(s)"),
    ],
)
def test_resolve_blocker_names_one_that_exists(minimal: Path, ref: str, message: str) -> None:
    path = write_blocked(minimal)
    run = run_cli("status", "blocked-idea", "rejected", "--verdict", "v", "--resolve-blocker", ref, cwd=minimal)
    assert run.returncode == 2 and message in run.stderr and "Traceback" not in run.stderr
    assert path.read_text() == BLOCKED


def test_a_shared_blocker_is_resolved_where_it_is_defined(minimal: Path) -> None:
    write_blocked(minimal)
    sharing = BLOCKED.replace("title: Blocked idea", "title: Sharing idea").replace(
        "  - id: graph-breaks\n    title: FP4 JIT graph breaks\n    status: open   # upstream issue, still open\n",
        "  - ref: graph-breaks\n",
    )
    path = minimal / "improvements" / "05-sharing-idea.yaml"
    path.write_text(sharing)
    assert run_cli("check", cwd=minimal).returncode == 0
    run = run_cli("status", "05", "rejected", "--verdict", "v", "--resolve-blocker", "graph-breaks", cwd=minimal)
    assert run.returncode == 2
    assert "defined in improvements/04-blocked-idea.yaml" in run.stderr
    assert path.read_text() == sharing
