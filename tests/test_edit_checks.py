"""What an edit command writes, `check` accepts, and it keeps what the user wrote (issue 15):
text too long for a line is folded or refused before anything is written, a record that is a
symlink stays one, each line keeps its own ending, a flow mapping written over several lines
stays as written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from generator.authoring.edit import Document, set_key
from generator.base.read import parse

from conftest import BENCH, copy_campaign, run_cli

SWEEP = str(BENCH / "vllm-benchmark-serving-legacy.json")
WORDS = " ".join(["word"] * 3000)  # 14,999 characters that fold
WORD = "v" * 12_000  # one word that cannot


def _checks(root: Path) -> None:
    res = run_cli("check", cwd=root)
    assert res.returncode == 0, res.stderr[-2000:]


@pytest.mark.parametrize("text", [WORDS, WORD])
def test_status_verdict_of_any_length_passes_check_or_is_refused(tmp_path: Path, text: str) -> None:
    root = copy_campaign(tmp_path)
    record = root / "improvements" / "09-num-continuous-decode-steps.yaml"
    before = record.read_bytes()
    res = run_cli("status", "09", "rejected", "--verdict", text, cwd=root)
    assert "Traceback" not in res.stderr
    if text is WORD:
        assert res.returncode == 1 and "error[line-too-long]" in res.stderr
        assert record.read_bytes() == before
        return
    assert res.returncode == 0, res.stderr
    _checks(root)
    assert parse(record.read_text())[0]["verdict"] == text


@pytest.mark.parametrize("text", [WORDS, "L" * 20_000])
def test_import_label_of_any_length_passes_check_or_is_refused(tmp_path: Path, text: str) -> None:
    root = copy_campaign(tmp_path)
    record = root / "improvements" / "02-mscclpp-allreduce.yaml"
    before = record.read_bytes()
    res = run_cli("import", SWEEP, "--record", "02", "--label", text, cwd=root)
    assert "Traceback" not in res.stderr
    if " " not in text:
        assert res.returncode == 1 and "error[line-too-long]" in res.stderr
        assert record.read_bytes() == before and not (root / "results" / "runs").exists()
        return
    assert res.returncode == 0, res.stderr
    _checks(root)
    assert parse(record.read_text())[0]["results"][-1]["label"] == text


@pytest.mark.parametrize("text", [WORDS, "L" * 20_000])
def test_new_title_of_any_length_passes_check_or_is_refused(tmp_path: Path, text: str) -> None:
    root = copy_campaign(tmp_path)
    before = sorted(p.name for p in (root / "improvements").iterdir())
    res = run_cli("new", text, "--tier", "1", "--hypothesis", "h", cwd=root)
    assert "Traceback" not in res.stderr
    if " " not in text:
        assert res.returncode == 2 and "the title is too long for a record" in res.stderr
        assert sorted(p.name for p in (root / "improvements").iterdir()) == before
        return
    assert res.returncode == 0, res.stderr
    _checks(root)


def test_a_symlinked_record_stays_a_link_and_its_target_is_edited(tmp_path: Path) -> None:
    root = copy_campaign(tmp_path)
    record = root / "improvements" / "09-num-continuous-decode-steps.yaml"
    elsewhere = root / "kept" / "09.yaml"
    elsewhere.parent.mkdir()
    record.rename(elsewhere)
    record.symlink_to(os.path.relpath(elsewhere, record.parent))
    res = run_cli("status", "09", "rejected", "--verdict", "Not worth it.", cwd=root)
    assert res.returncode == 0, res.stderr
    assert record.is_symlink() and record.resolve() == elsewhere.resolve()
    assert parse(elsewhere.read_text())[0]["verdict"] == "Not worth it."


def test_each_line_keeps_its_own_ending() -> None:
    text = "title: T\r\ntier: 2\nstatus: proposed\r\n# a note\nverdict: x\r\n"
    doc = Document(text)
    set_key(doc.data, "status", "rejected")
    set_key(doc.data, "caveats", ["c"], ["title", "tier", "status", "verdict", "caveats"])
    out = doc.text()
    assert out.startswith("title: T\r\ntier: 2\nstatus: rejected\r\n# a note\nverdict: x\r\n")
    assert parse(out)[0]["caveats"] == ["c"]


def test_a_flow_mapping_over_several_lines_stays_as_written(tmp_path: Path) -> None:
    root = copy_campaign(tmp_path)
    record = root / "improvements" / "90-flow.yaml"
    flow = "  - {label: a,\n     concurrency: 4,\n     metrics: {output_throughput: 1}}\n"
    record.write_text("title: T\ntier: 2\nstatus: proposed\nhypothesis: H\nresults:\n" + flow)
    res = run_cli("import", SWEEP, "--record", "90", cwd=root)
    assert res.returncode == 0, res.stderr
    text = record.read_text()
    assert flow in text and text.count("label:") == 2
    _checks(root)
