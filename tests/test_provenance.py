"""Provenance and evidence: what each file states, the import warning, and what the pages show."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from generator.analysis.campaign import analyse
from generator.base.problems import Report
from generator.checks.validate import load_project, require_project
from generator.project.runs.parse import parse_file
from generator.project.runs.provenance import mismatches
from generator.project.runs.run import Run
from generator.views.evidence import published_name, published_raw_files, workload_text

from conftest import BENCH, FIXTURES, run_cli

DEEPSEEK = FIXTURES / "provenance" / "deepseek-h200-decode.jsonl"
GLM_2026 = FIXTURES / "import" / "sglang-bench-serving-2026.jsonl"
VLLM = BENCH / "vllm-benchmark-serving-legacy.json"
SECRET = "sk-prov-SYNTHETIC-1234abcd"


def runs_of(path: Path) -> list[Run]:
    parsed, problems = parse_file(path, path.name)
    assert problems == [] and parsed is not None
    return parsed.runs


def page_of(root: Path, number: int) -> str:
    return next((root / "docs" / "improvements").glob(f"*-{number:02d}-*.md")).read_text()


# --- what a file states ---------------------------------------------------------------------------


def test_sglang_server_info_gives_model_tokenizer_version_and_launch_command() -> None:
    run = runs_of(GLM_2026)[0]
    assert run.provenance == {
        "model": "zai-org/GLM-5-NVFP4",
        "tokenizer": "zai-org/GLM-5-NVFP4",
        "engine_version": "0.5.9",
        "server_args": (
            "python -m sglang.launch_server --model-path zai-org/GLM-5-NVFP4 --tp-size 8 --api-key <redacted>"
        ),
        "backend": "sglang",
        "engine": "sglang",
    }
    assert run.provenance_keys["model"] == "server_info.served_model_name"
    assert run.provenance_keys["engine_version"] == "server_info.version"


def test_vllm_file_gives_model_tokenizer_backend_and_date_with_their_keys() -> None:
    run = runs_of(VLLM)[0]
    raw = json.loads(VLLM.read_text())
    assert run.provenance["model"] == raw["model_id"] and run.provenance_keys["model"] == "model_id"
    assert run.provenance["tokenizer"] == raw["tokenizer_id"]
    assert run.provenance["backend"] == "openai" and run.provenance["date"] == raw["date"]
    # "openai" names the API the client spoke, not the engine: nothing is inferred from it.
    assert "engine" not in run.provenance


def test_console_block_states_only_its_backend() -> None:
    run = runs_of(FIXTURES / "import" / "console-sglang.txt")[0]
    assert run.provenance == {"backend": "sglang", "engine": "sglang"}


def test_run_json_keeps_provenance_and_runs_without_it_keep_their_bytes() -> None:
    run = runs_of(GLM_2026)[0]
    data = run.to_json()
    assert data["provenance"]["model"] == {"value": "zai-org/GLM-5-NVFP4", "key": "server_info.served_model_name"}
    back = Run.from_json(json.loads(json.dumps(data)))
    assert back.provenance == run.provenance and back.provenance_keys == run.provenance_keys
    bare = runs_of(BENCH / "sglang-bench-serving-2024-sweep.jsonl")[0]
    assert bare.provenance == {"backend": "sglang", "engine": "sglang"}
    bare.provenance.clear()
    assert "provenance" not in bare.to_json()


def test_mismatch_names_the_key_for_another_model_only() -> None:
    project = require_project(Path(__file__).resolve().parent.parent)
    (deepseek,) = runs_of(DEEPSEEK)
    found = mismatches(project.campaign, deepseek)
    assert found == [
        (
            "server_info.served_model_name",
            "the file's model `deepseek-ai/DeepSeek-V3` is not the campaign's model `GLM-5-NVFP4`",
        )
    ]
    assert mismatches(project.campaign, runs_of(GLM_2026)[0]) == []


# --- import ---------------------------------------------------------------------------------------


def test_import_warns_with_file_line_and_key_and_still_imports(campaign: Path) -> None:
    proc = run_cli("import", "--root", str(campaign), str(DEEPSEEK), "--record", "02")
    assert proc.returncode == 0, proc.stderr
    assert (
        f"warning: {DEEPSEEK}:1: server_info.served_model_name: the file's model `deepseek-ai/DeepSeek-V3` "
        "is not the campaign's model `GLM-5-NVFP4` (improvements/campaign.yaml)"
    ) in proc.stderr
    assert "imported 1 run(s)" in proc.stdout
    quiet = run_cli("import", "--root", str(campaign), str(GLM_2026), "--baseline")
    assert quiet.returncode == 0 and "warning:" not in quiet.stderr


def test_the_record_and_the_baseline_accept_a_provenance_block(campaign: Path) -> None:
    path = campaign / "improvements" / "campaign.yaml"
    text = path.read_text()
    path.write_text(
        text.replace(
            "  command_reconstructed: true\n",
            "  command_reconstructed: true\n  provenance:\n    image: lmsysorg/sglang:v0.5.9-cu129\n"
            "    engine_commit: 1a2b3c4\n    date: 2026-04-28\n",
            1,
        )
    )
    assert run_cli("check", "--root", str(campaign)).returncode == 0
    reconstructed = "  command_reconstructed: true\n"
    path.write_text(text.replace(reconstructed, reconstructed + "  provenance:\n    gpu: x\n"))
    bad = run_cli("check", "--root", str(campaign))
    assert bad.returncode == 1
    assert "error[unknown-key]: unknown key `gpu` (hint: known keys: engine_version, engine_commit, image" in bad.stderr


# --- what the pages show --------------------------------------------------------------------------


def _imported(campaign: Path) -> Path:
    for args in ((str(DEEPSEEK), "--record", "02"), (str(GLM_2026), "--baseline")):
        assert run_cli("import", "--root", str(campaign), *args).returncode == 0
    record = campaign / "improvements" / "02-mscclpp-allreduce.yaml"
    text = record.read_text()
    # The record adds what no file says: the image; and an engine version that disagrees with the file.
    record.write_text(
        text.replace(
            "    run: sglang-serving-c32-",
            "    provenance:\n      image: lmsysorg/sglang:v0.4.10\n      engine_version: 0.4.9\n"
            "    run: sglang-serving-c32-",
            1,
        )
    )
    proc = run_cli("build", "--root", str(campaign), "--quiet")
    assert proc.returncode == 0, proc.stderr
    return campaign


def test_record_page_shows_provenance_raw_file_anchor_and_the_files_workload(campaign: Path) -> None:
    root = _imported(campaign)
    page = page_of(root, 2)
    run_id = next(p.stem for p in (root / "results" / "runs").glob("sglang-serving-c32-*.json"))
    assert f'<a id="run-{run_id}"></a>' in page
    assert f"- Run: [`{run_id}`](#run-{run_id})" in page
    # The workload in the file's keys: never "input 1 tokens".
    assert "input 1 tokens" not in page
    assert (
        "- Workload, as the file states it: `dataset_name` `random`, `random_input_len` `1`, "
        "`random_output_len` `1024`, `random_range_ratio` `0.5`; measured `total_input_tokens` `320`, "
        "`total_output_tokens` `245760`, `total_output_tokens_retokenized` `245700`, `completed` `320`"
    ) in page
    # Both the record's and the file's engine version, each with its origin; the image from the record.
    assert "engine version `0.4.9` (record); engine version `0.4.10` (file: server_info.version)" in page
    assert "container image `lmsysorg/sglang:v0.4.10` (record)" in page
    assert "**Not the campaign's setup:** the file's model `deepseek-ai/DeepSeek-V3`" in page
    stored = json.loads((root / "results" / "runs" / f"{run_id}.json").read_text())["source"]
    name = Path(stored["file"]).name
    assert f"- Raw file: [`{name}`](../results/raw/{name}), line 1, sha256 `{stored['stored_sha256']}`" in page
    assert f"the original's sha256 is `{hashlib.sha256(DEEPSEEK.read_bytes()).hexdigest()}`" in page
    assert SECRET not in page and "<redacted>" in page


def test_home_page_shows_the_baseline_runs_evidence_and_a_linked_baseline_note(campaign: Path) -> None:
    root = _imported(campaign)
    home = (root / "docs" / "index.md").read_text()
    ids = sorted(p.stem for p in (root / "results" / "runs").glob("sglang-serving-c*-*.json") if "-c32-" not in p.name)
    for run_id in ids:
        assert f'<a id="run-{run_id}"></a>' in home
    assert "engine version `0.5.9` (file: server_info.version)" in home


def test_published_raw_files_are_only_the_copies_import_wrote(campaign: Path) -> None:
    root = _imported(campaign)
    project = require_project(root)
    published = published_raw_files(project)
    kept = sorted(p.name for p in (root / "results" / "raw").iterdir())
    assert sorted(Path(p).name for p in published) == kept
    for path, data in published.items():
        assert SECRET.encode() not in data and path.startswith("results/raw/")
    # A file put there by hand is not published; an edited copy no longer matches its hash.
    (root / "results" / "raw" / "notes.json").write_text('{"api_key": "sk-by-hand"}')
    first = root / "results" / "raw" / kept[0]
    first.write_bytes(first.read_bytes() + b"\n")
    # `check` now reports the edited copy (`evidence-mismatch`); the site must not publish it either.
    report = Report()
    edited = load_project(root, report)
    assert edited is not None and {p.code for p in report.errors} == {"evidence-mismatch"}
    again = published_raw_files(edited)
    assert "results/raw/notes.json" not in again and f"results/raw/{kept[0]}" not in again
    assert len(again) == len(kept) - 1


def test_published_name_never_makes_a_page() -> None:
    assert published_name("results/raw/abc-run.jsonl") == "abc-run.jsonl"
    assert published_name("results/raw/abc-notes.md") == "abc-notes.md.txt"
    assert published_name("results/raw/abc-x.html") == "abc-x.html.txt"


def test_workload_text_keeps_the_files_numbers_as_written() -> None:
    one_batch = runs_of(BENCH / "sglang-bench-one-batch.jsonl")[0]
    assert str(workload_text(one_batch)) == "as the file states it: `input_len` `256`, `output_len` `32`"
    sweep = runs_of(BENCH / "sglang-bench-serving-2024-sweep.jsonl")[0]
    assert "`random_range_ratio` `0.0`" in str(workload_text(sweep))


def test_pages_are_deterministic_with_evidence(campaign: Path) -> None:
    root = _imported(campaign)
    before = {p: p.read_bytes() for p in (root / "docs").rglob("*.md")}
    assert run_cli("build", "--root", str(root), "--quiet").returncode == 0
    assert {p: p.read_bytes() for p in (root / "docs").rglob("*.md")} == before
    assert analyse(require_project(root)).baseline_results


def test_typed_results_show_the_provenance_they_state(campaign: Path) -> None:
    path = campaign / "improvements" / "campaign.yaml"
    reconstructed = "  command_reconstructed: true\n"
    path.write_text(
        path.read_text().replace(
            reconstructed,
            reconstructed + "  provenance:\n    image: lmsysorg/sglang:v0.5.9-cu129\n    date: 2026-04-28\n",
        )
    )
    proc = run_cli("build", "--root", str(campaign), "--quiet")
    assert proc.returncode == 0, proc.stderr
    home = (campaign / "docs" / "index.md").read_text()
    assert (
        "- Measured on: container image `lmsysorg/sglang:v0.5.9-cu129` (campaign baseline); "
        "date `2026-04-28` (campaign baseline)"
    ) in home
    # A typed result without provenance says nothing new: its page is as before.
    assert "Measured on" not in page_of(campaign, 1)


def test_a_run_a_file_repeats_is_imported_once_and_warned_at_every_line(campaign: Path, tmp_path: Path) -> None:
    # The same run on lines 1 and 3 (a sweep appended twice): one run file, written from the
    # last line, and the warning at each line that holds it, in the file's order.
    line = DEEPSEEK.read_text().splitlines()[0]
    other = GLM_2026.read_text().splitlines()[0]
    repeated = tmp_path / "repeated.jsonl"
    repeated.write_text(f"{line}\n{other}\n{line}\n")
    proc = run_cli("import", "--root", str(campaign), str(repeated), "--record", "02")
    assert proc.returncode == 0, proc.stderr
    assert "imported 2 run(s)" in proc.stdout
    warned = [w.split(": ", 2)[1] for w in proc.stderr.splitlines() if w.startswith("warning: ")]
    assert warned == [f"{repeated}:1", f"{repeated}:3"]
    [kept] = [p for p in (campaign / "results" / "runs").glob("*.json") if '"deepseek' in p.read_text().lower()]
    assert json.loads(kept.read_text())["source"]["line"] == 3
