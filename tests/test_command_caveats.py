"""The command's caveats beside it: a reconstruction, an engine version not recorded, the folder it runs from."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from conftest import REPO, copy_campaign, run_cli


def test_shipped_campaigns_say_their_caveats_under_the_command(tmp_path: Path) -> None:
    glm = run_cli("stack", "--root", str(REPO)).stdout.splitlines()
    command_end = max(i for i, line in enumerate(glm) if not line.startswith("#"))
    under = glm[command_end + 1 :]
    assert under[0].startswith("# Caveat: The baseline command is a reconstruction, not a recorded command: ")
    assert under[1] == "# Caveat: The SGLang version was not recorded."
    root = tmp_path / "h200"
    shutil.copytree(REPO / "examples" / "h200-decode", root, ignore=shutil.ignore_patterns("site", "docs"))
    data = json.loads(run_cli("stack", "--root", str(root), "--format", "json").stdout)
    assert data["workdir"] == "data"
    assert data["caveats"][-1] == "Run it from data/ in the campaign's folder: its paths are relative to there."
    assert run_cli("build", "--root", str(root)).returncode == 0
    home = (root / "docs" / "index.md").read_text()
    # Directly under the code block of the command in force, before anything else on the page.
    block_end = home.index("```\n", home.index("```bash")) + 4
    assert home[block_end:].lstrip("\n").startswith("- **Caveat**: The baseline command is a reconstruction")
    assert "- **Caveat**: Run it from data/ in the campaign's folder" in home[block_end : block_end + 800]


def test_a_workdir_outside_the_campaign_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "h200"
    shutil.copytree(REPO / "examples" / "h200-decode", root, ignore=shutil.ignore_patterns("site", "docs"))
    path = root / "improvements" / "campaign.yaml"
    path.write_text(path.read_text().replace("  workdir: data\n", "  workdir: ../elsewhere\n"))
    proc = run_cli("check", "--root", str(root))
    assert proc.returncode == 1 and "campaign.yaml:" in proc.stdout + proc.stderr
    assert "no leading /, no .." in proc.stdout + proc.stderr


def test_a_campaign_without_measured_comparisons_says_so_in_its_own_words(tmp_path: Path) -> None:
    root = copy_campaign(tmp_path / "repo")
    path = root / "improvements" / "campaign.yaml"
    assert run_cli("build", "--root", str(root)).returncode == 0
    home = (root / "docs" / "index.md").read_text()
    first_screen = home[: home.index("</div>")]
    assert "**No measured comparison**: no record has a measured comparison with the baseline yet" in first_screen
    # The pointer to the example is this campaign's own text, not the template's: without it, no word of it.
    assert "`examples/h200-decode`" in home and "`examples/h200-decode`" not in first_screen
    text = path.read_text()
    path.write_text(text[: text.index("None of these records has a")] + text[text.index("\nmodel:") :])
    assert run_cli("build", "--root", str(root)).returncode == 0
    assert "h200-decode" not in (root / "docs" / "index.md").read_text()


def test_the_printed_command_runs_from_the_workdir(tmp_path: Path) -> None:
    # `--format command` runs as printed from the campaign's folder: it goes to the workdir first.
    root = tmp_path / "h200"
    shutil.copytree(REPO / "examples" / "h200-decode", root, ignore=shutil.ignore_patterns("site", "docs"))
    stub = root / "data" / "harness" / "run.sh"
    stub.parent.mkdir(parents=True, exist_ok=True)
    stub.write_text('printf "%s\\n" "$PWD" "$*" > "$RAN"\n')
    printed = run_cli("stack", "--root", str(root), "--format", "command").stdout
    ran = tmp_path / "ran"
    proc = subprocess.run(
        ["bash", "-c", printed], cwd=root, env={**os.environ, "RAN": str(ran)}, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    where, args = ran.read_text().splitlines()
    assert Path(where).resolve() == (root / "data").resolve() and args.startswith("--batches 1 8")
