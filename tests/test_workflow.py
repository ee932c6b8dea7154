"""docs/guide/workflow.md, followed to the letter in a fresh copy of the campaign.

The walk-through between `<!-- tutorial -->` and `<!-- /tutorial -->` is run as written:
every `improvements` line of a ```sh block is run, a ```text block that starts with
`$ improvements` is run and its output compared, the ```text block right after a command
is that command's expected output, and a ```yaml block (without a title) is added to the
record. So the page cannot describe a flow that does not work.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from generator.base.read import parse

from conftest import REPO, copy_campaign, run_cli

# Slow: walks the whole tutorial, command by command.
pytestmark = pytest.mark.slow

DOC = REPO / "docs" / "guide" / "workflow.md"
FENCE = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```$", flags=re.M | re.S)


def tutorial_blocks() -> list[tuple[str, str, str]]:
    text = DOC.read_text()
    start, end = text.index("<!-- tutorial -->"), text.index("<!-- /tutorial -->")
    return [(m[1], m[2].strip(), m[3]) for m in FENCE.finditer(text[start:end])]


def test_workflow_doc_end_to_end(tmp_path: Path) -> None:
    # The tutorial imports the samples `init --sample` writes: nothing from this repository's tests.
    root = copy_campaign(tmp_path / "clone", with_docs=True)
    record: Path | None = None
    # The first record is the one walked to `adopted`; a later `new` is measured on top of it.
    first: Path | None = None
    last_stdout: str | None = None
    ran: list[str] = []
    for lang, attrs, body in tutorial_blocks():
        if lang == "sh":
            for line in body.splitlines():
                if not line.startswith("improvements "):
                    continue
                args = shlex.split(line)[1:]
                run = run_cli(*args, cwd=root)
                assert run.returncode == 0, f"{line}\n{run.stderr}"
                ran.append(args[0])
                last_stdout = run.stdout
                if args[0] == "new":
                    record = root / run.stdout.strip()
                    first = first or record
        elif lang == "text" and body.startswith("$ improvements"):
            command, *expected = body.splitlines()
            run = run_cli(*shlex.split(command)[2:], cwd=root)
            assert run.returncode == 1, run.stderr
            for line in expected:
                assert line in run.stderr.splitlines(), f"{line!r} not in:\n{run.stderr}"
        elif lang == "text":
            assert last_stdout is not None
            assert last_stdout == body, "the output shown in the doc differs from the command's"
        elif lang == "yaml" and not attrs:
            assert record is not None
            with record.open("a") as f:
                f.write(body)
    assert ran[:1] == ["new"] and {"status", "import", "build", "summary", "stack"} <= set(ran)

    assert record is not None and first is not None
    built_on, _ = parse(record.read_text())
    assert built_on["builds_on"] == ["nccl-simple-protocol"]
    # Its page's command: what it builds on first, then its own change.
    next_page = (root / "docs" / "improvements" / f"glb5improvement-{record.stem}.md").read_text()
    assert "NCCL_PROTO=Simple python -m sglang.launch_server" in next_page and "--cuda-graph-max-bs 32" in next_page
    record = first
    data, _ = parse(record.read_text())
    assert data["status"] == "adopted" and data["verdict"] and data["results"]
    assert data["change"] == {"env": {"NCCL_PROTO": "Simple"}, "note": "Everything else as the baseline command."}
    assert run_cli("check", cwd=root).returncode == 0
    slug = record.stem.split("-", 1)[1]
    number = record.stem.split("-", 1)[0]
    page = root / "docs" / "improvements" / f"glb5improvement-{number}-{slug}.md"
    assert page.is_file() and "NCCL Simple protocol" in page.read_text()
    assert "NCCL_PROTO=Simple" in page.read_text()  # the launch command with the change applied
    summary = run_cli("summary", "--format", "json", cwd=root).json()
    (row,) = [r for r in summary if r["slug"] == slug]  # type: ignore[union-attr, index]
    assert (row["status"], row["title"]) == ("adopted", "NCCL Simple protocol")
    assert "NCCL Simple protocol" in (root / "docs" / "summary.md").read_text()
    # The site: the record's page and the export at its root.
    site_pages = root / "site" / "improvements"
    page_name = f"glb5improvement-{number}-{slug}"
    # With or without mkdocs' directory URLs.
    assert (site_pages / f"{page_name}.html").is_file() or (site_pages / page_name / "index.html").is_file()
    assert slug in (root / "site" / "records.json").read_text()


@pytest.mark.parametrize(
    "command", ["new", "status", "renumber", "schema", "export", "import", "build", "summary", "stack"]
)
def test_workflow_doc_mentions_each_everyday_command(command: str) -> None:
    assert f"improvements {command}" in DOC.read_text()
