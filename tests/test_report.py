"""`improvements report`: the whole campaign as one markdown document."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from generator.analysis.campaign import analyse
from generator.checks.validate import require_project
from generator.output.report import report_text
from generator.views.summary import summary_rows

from conftest import FIXTURES, REPO, run_cli


def test_report_holds_the_summary_the_stack_note_and_every_record() -> None:
    proc = run_cli("report", "--root", str(REPO))
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    project = require_project(REPO)
    assert text.startswith(f"# {project.campaign.name}\n")
    assert "## Summary\n" in text and "## Stack\n" in text and "## Records\n" in text
    # The summary rows in the ranked order, the same as `improvements summary`.
    rows = summary_rows(analyse(project))
    positions = [text.index(f"| {row.number:02d} | ") for row in rows]
    assert positions == sorted(positions)
    # The shipped campaign adopted nothing: the stack section is the baseline command.
    assert "no adopted record yet" in text[text.index("## Stack") : text.index("## Records")]
    for rec in project.records:
        assert f"### {rec.number:02d}. " in text
    # Links nowhere: it is pasted where the site is not.
    assert "](" not in text


def test_report_is_deterministic_and_ends_with_one_newline() -> None:
    a = report_text(analyse(require_project(REPO)))
    b = report_text(analyse(require_project(REPO)))
    assert a == b and a.endswith("\n") and not a.endswith("\n\n") and "\n\n\n" not in a


def test_report_escapes_record_text(campaign: Path) -> None:
    path = next((campaign / "improvements").glob("02-*.yaml"))
    text = path.read_text()
    path.write_text(
        text.replace("title: MSCCL++ all-reduce", "title: 'MSCCL++ <img src=x onerror=alert(1)> [x](javascript:1)'")
    )
    out = run_cli("report", "--root", str(campaign)).stdout
    assert "&lt;img src=x onerror=alert(1)&gt;" in out
    assert "<img" not in out and "](javascript" not in out


def test_report_shows_an_imported_runs_numbers_and_provenance(campaign: Path) -> None:
    deepseek = FIXTURES / "provenance" / "deepseek-h200-decode.jsonl"
    assert run_cli("import", "--root", str(campaign), str(deepseek), "--record", "02").returncode == 0
    out = run_cli("report", "--root", str(campaign)).stdout
    assert "Output token throughput 2040 tok/s" in out
    assert "engine version `0.4.10` (file: server_info.version)" in out
    assert "Not the campaign's setup: the file's model `deepseek-ai/DeepSeek-V3`" in out


def test_output_file_is_written_atomically_and_matches_stdout(tmp_path: Path) -> None:
    target = tmp_path / "out" / "report.md"
    proc = run_cli("report", "--root", str(REPO), "-o", str(target))
    assert proc.returncode == 0 and proc.stdout == "" and f"wrote {target}" in proc.stderr
    assert target.read_text() == run_cli("report", "--root", str(REPO)).stdout
    assert not [p for p in target.parent.iterdir() if p.name != "report.md"]


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")
@pytest.mark.parametrize("args", [("report", "--root", str(REPO)), ("export", "--root", str(REPO)), ("schema",)])
def test_output_through_a_link_is_refused_by_every_command(tmp_path: Path, args: tuple[str, ...]) -> None:
    # One `emit` for every `-o`: none writes through a link, each says so the same way.
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    link = tmp_path / "out.txt"
    link.symlink_to(victim)
    proc = run_cli(*args, "-o", str(link))
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.splitlines()[0] == (
        f"{link}:1:1: error[output-conflict]: `{link}` is a symbolic link; the output is not written through it"
        " (hint: remove the link, or name the file it points at)"
    )
    assert victim.read_text() == "keep me\n" and link.is_symlink()


def test_help_has_examples() -> None:
    proc = run_cli("report", "--help")
    assert proc.returncode == 0 and "improvements report -o report.md" in proc.stdout


def test_report_shows_the_analysis_stack_when_it_has_one() -> None:
    """`Analysis.stack` (a CampaignStack: the command in force, the adopted records, notes) is what it shows."""
    from types import SimpleNamespace

    analysis = analyse(require_project(REPO))
    rec = analysis.project.records[0]
    command = "python -m sglang.launch_server \\\n    --tp-size 8"
    stack = SimpleNamespace(
        stack=SimpleNamespace(command=command, before=(), inside=(), image=None, container=()),
        records=(rec,),
        notes=(("01", "a patch"),),
        has=lambda slug: slug == rec.slug,
    )
    object.__setattr__(analysis, "stack", stack)
    text = report_text(analysis)
    section = text[text.index("## Stack") : text.index("## Records")]
    assert f"in this order: {rec.number:02d}. {rec.record.title}." in section
    assert f"```bash\n{command}\n```" in section and "- Not in the command: 01: a patch" in section
    object.__setattr__(analysis, "stack", SimpleNamespace(stack=None, records=(), notes=(), has=lambda slug: False))
    assert "build on each other in a circle" in report_text(analysis)


def test_report_change_line_is_escaped_once(campaign: Path) -> None:
    (campaign / "improvements" / "90-json.yaml").write_text(
        "title: JSON override\ntier: 2\nstatus: proposed\nhypothesis: A JSON flag value.\n"
        "change:\n  flags:\n    - flag: --json-model-override-args\n      value: '{\"a\": 1}'\n"
        "  env:\n    A: '1'\n  patches:\n    - summary: keep <b> out\n"
    )
    out = run_cli("report", "--root", str(campaign))
    assert out.returncode == 0, out.stderr
    line = next(x for x in out.stdout.splitlines() if x.startswith("Change: <code>--json-model-override-args"))
    # The code span's own HTML once; the patch's text escaped once; nothing escaped twice.
    assert "&#123;" in line and "&amp;" not in line and "&lt;code" not in line
    assert line.endswith("; `A=1`; patch: keep &lt;b&gt; out"), line
