"""The JSON Schema: generated from the models, committed, and agreeing with an independent validator."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from generator.model.schema import WHICH, schema_text

from conftest import REPO, run_cli

CHECK_JSONSCHEMA = Path(sys.executable).parent / "check-jsonschema"


def validate(schema: Path, *files: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CHECK_JSONSCHEMA), "--schemafile", str(schema), *map(str, files)],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("which", WHICH)
def test_committed_schema_is_current(which: str) -> None:
    committed = (REPO / "schema" / f"{which}.schema.json").read_text()
    assert committed == schema_text(which), (
        f"schema/{which}.schema.json is stale: run "
        f"`improvements schema --which {which} --output schema/{which}.schema.json`"
    )


def test_cli_prints_both_schemas_keyed_by_name(tmp_path: Path) -> None:
    run = run_cli("schema")
    assert run.returncode == 0
    both = json.loads(run.stdout)
    assert sorted(both) == ["campaign", "record"]
    assert both["record"] == json.loads((REPO / "schema" / "record.schema.json").read_text())
    out = tmp_path / "sub" / "campaign.json"
    assert run_cli("schema", "--which", "campaign", "--output", str(out)).returncode == 0
    assert out.read_text() == (REPO / "schema" / "campaign.schema.json").read_text()


@pytest.mark.slow  # check-jsonschema runs as its own process
def test_shipped_records_validate_with_check_jsonschema() -> None:
    records = sorted((REPO / "improvements").glob("[0-9]*.yaml"))
    assert records
    run = validate(REPO / "schema" / "record.schema.json", *records)
    assert run.returncode == 0, run.stdout + run.stderr
    run = validate(REPO / "schema" / "campaign.schema.json", REPO / "improvements" / "campaign.yaml")
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.slow  # check-jsonschema runs as its own process
@pytest.mark.parametrize(
    ("snippet", "complaint"),
    [
        ("results:\n  - label: a\n    metrics: {output_thruput: 1}\n", "output_thruput"),
        ("verdit: typo\n", "verdit"),
        ("tags: [Not A Slug]\n", "Not A Slug"),
        ("change:\n  flags: ['no-dashes value']\n", "no-dashes"),
    ],
)
def test_schema_rejects_what_check_rejects(tmp_path: Path, snippet: str, complaint: str) -> None:
    path = tmp_path / "01-x.yaml"
    path.write_text("title: X\ntier: 1\nstatus: proposed\nhypothesis: H\n" + snippet)
    run = validate(REPO / "schema" / "record.schema.json", path)
    assert run.returncode == 1 and complaint in run.stdout
    assert run_cli("check", "--root", str(_as_campaign(tmp_path, path))).returncode == 1


@pytest.mark.slow  # check-jsonschema runs as its own process
def test_schema_accepts_flag_strings_and_typed_forms(tmp_path: Path) -> None:
    path = tmp_path / "01-x.yaml"
    path.write_text(
        "title: X\ntier: 1\nstatus: proposed\nhypothesis: H\ndate: 2025-01-31\n"
        "change:\n  flags: ['--tp-size 8', {flag: --enable-x, note: why}]\n"
        "results:\n  - label: a\n    concurrency: 8\n    request_rate: inf\n"
        "    metrics: {output_throughput: [1, 2], ttft_p99: {min: 1, max: 2}}\n"
        "    baseline: {output_throughput: 1, ttft_p99: 3}\n"
    )
    run = validate(REPO / "schema" / "record.schema.json", path)
    assert run.returncode == 0, run.stdout
    assert run_cli("check", "--root", str(_as_campaign(tmp_path, path))).returncode == 0


def _as_campaign(tmp_path: Path, record: Path) -> Path:
    root = tmp_path / "repo"
    (root / "improvements").mkdir(parents=True, exist_ok=True)
    (root / "results").mkdir(exist_ok=True)
    (root / "improvements" / "campaign.yaml").write_bytes((REPO / "improvements" / "campaign.yaml").read_bytes())
    (root / "improvements" / record.name).write_bytes(record.read_bytes())
    return root
