"""The error catalogue (docs/guide/errors.md) is real: every entry is run and printed exactly as shown.

Each entry is a `### \\`code\\`` heading followed by:

- `Fixture: \\`tests/fixtures/errors/<code>/...\\``: the file the example is about. The whole
  folder tests/fixtures/errors/<code>/ is laid over a minimal campaign (the campaign.yaml in
  tests/fixtures/errors/ and an empty results/).
- `Command: \\`improvements ...\\``: run in that campaign as a user would (in-process, through the
  console script's entry point).
- `Exit status: N`.
- optionally `Padded to: N bytes` (the fixture is padded with comment lines, so the repository
  does not carry a megabyte file) or `Without: \\`PATH\\`` (that file of the minimal campaign
  is removed before the command runs).
- a fenced block showing the input: `yaml` blocks must equal the fixture file; `python` blocks
  hold the repr of its bytes (for files that are not text); blocks whose title says
  "abbreviated" are not compared.
- `Output:` and a `text` block: every line of it appears, in order, in what the command prints.

An entry marked `Reserved:` names a code no command prints yet; the test checks that nothing
in generator/ uses it, so the day something does, the entry needs a real example.
"""

from __future__ import annotations

import ast
import functools
import re
import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from generator.base.problems import CODES

from conftest import FIXTURES, REPO, run_cli

CATALOGUE = REPO / "docs" / "guide" / "errors.md"
ERRORS = FIXTURES / "errors"


@dataclass
class Entry:
    code: str
    fixture: str | None = None
    command: str | None = None
    exit_status: int | None = None
    padded: int | None = None
    without: list[str] = field(default_factory=list)
    reserved: bool = False
    blocks: list[tuple[str, str]] = field(default_factory=list)  # (info string, content)
    output: list[str] = field(default_factory=list)


def parse_catalogue(text: str) -> list[Entry]:
    entries: list[Entry] = []
    current: Entry | None = None
    lines = text.split("\n")
    i = 0
    expect_output = False
    while i < len(lines):
        line = lines[i]
        heading = re.fullmatch(r"### `([a-z0-9-]+)`", line)
        if heading:
            current = Entry(heading.group(1))
            entries.append(current)
            expect_output = False
        elif current is not None and line.startswith("## "):
            current = None
        elif current is not None:
            if m := re.fullmatch(r"Fixture: `([^`]+)`", line):
                current.fixture = m.group(1)
            elif m := re.fullmatch(r"Command: `([^`]+)`", line):
                current.command = m.group(1)
            elif m := re.fullmatch(r"Exit status: (\d)", line):
                current.exit_status = int(m.group(1))
            elif m := re.fullmatch(r"Padded to: ([\d,]+) bytes", line):
                current.padded = int(m.group(1).replace(",", ""))
            elif m := re.fullmatch(r"Without: `([^`]+)`", line):
                current.without.append(m.group(1))
            elif line.startswith("Reserved:"):
                current.reserved = True
            elif line == "Output:":
                expect_output = True
            elif m := re.fullmatch(r"(`{3,})(.*)", line):
                fence, info = m.groups()
                body: list[str] = []
                i += 1
                while lines[i] != fence:
                    body.append(lines[i])
                    i += 1
                if expect_output:
                    current.output = body
                    expect_output = False
                else:
                    current.blocks.append((info, "\n".join(body) + "\n" if body else ""))
        i += 1
    return entries


ENTRIES = parse_catalogue(CATALOGUE.read_text(encoding="utf-8")) if CATALOGUE.exists() else []


def test_catalogue_lists_every_code_once() -> None:
    codes = [e.code for e in ENTRIES]
    assert len(codes) == len(set(codes)), "a code is listed twice"
    assert sorted(set(CODES) - set(codes)) == [], "codes missing from docs/guide/errors.md"
    assert sorted(set(codes) - set(CODES)) == [], (
        "catalogue entries that are not codes in generator.base.problems.CODES"
    )


def test_every_fixture_folder_has_an_entry() -> None:
    folders = sorted(p.name for p in ERRORS.iterdir() if p.is_dir())
    assert folders == sorted(e.code for e in ENTRIES if not e.reserved)


def _campaign(tmp_path: Path, entry: Entry) -> Path:
    root = tmp_path / "repo"
    (root / "improvements").mkdir(parents=True)
    (root / "results").mkdir()
    shutil.copy(ERRORS / "campaign.yaml", root / "improvements" / "campaign.yaml")
    shutil.copytree(ERRORS / entry.code, root, dirs_exist_ok=True, symlinks=True)
    for gone in entry.without:
        (root / gone).unlink()
    if entry.padded is not None:
        assert entry.fixture is not None
        path = root / Path(entry.fixture).relative_to(f"tests/fixtures/errors/{entry.code}")
        data = path.read_bytes()
        pad = b"# padding: a record this long is refused before it is parsed\n"
        data += pad * ((entry.padded - len(data)) // len(pad))
        data += b"#" * (entry.padded - len(data) - 1) + b"\n"
        path.write_bytes(data)
        assert len(data) == entry.padded
    return root


@pytest.mark.parametrize("entry", [e for e in ENTRIES if not e.reserved], ids=lambda e: e.code)
def test_entry_is_real(tmp_path: Path, entry: Entry) -> None:
    assert entry.fixture and entry.command and entry.exit_status is not None and entry.output, entry
    fixture = REPO / entry.fixture
    assert fixture.is_file(), entry.fixture
    assert fixture.is_relative_to(ERRORS / entry.code), "the fixture lives in the code's own folder"
    data = fixture.read_bytes()
    for info, content in entry.blocks:
        if "abbreviated" in info:
            continue
        if info.startswith("python"):
            assert content.strip() == repr(data), f"{entry.code}: the bytes shown differ from {entry.fixture}"
        else:
            assert content == data.decode("utf-8"), f"{entry.code}: the input shown differs from {entry.fixture}"
    root = _campaign(tmp_path, entry)
    words = shlex.split(entry.command)
    assert words[0] == "improvements", entry.command
    proc = run_cli(*words[1:], cwd=root, env={"COLUMNS": "200"})
    printed = (proc.stderr + proc.stdout).splitlines()
    assert "Traceback" not in proc.stderr
    assert proc.returncode == entry.exit_status, (entry.code, proc.returncode, printed)
    at = 0
    for expected in entry.output:
        assert expected in printed[at:], f"{entry.code}: `{expected}` not printed (in order); got {printed}"
        at = printed.index(expected, at) + 1
    # The code shown is the code the entry documents.
    assert any(f"[{entry.code}]" in line for line in entry.output) or entry.code == "usage"


@functools.cache
def _string_literals() -> dict[str, frozenset[object]]:
    """The constants of every file under generator/ (other than the list of codes), parsed once."""
    found: dict[str, frozenset[object]] = {}
    for path in sorted((REPO / "generator").rglob("*.py")):
        if path.name == "problems.py" and path.parent.name == "generator":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found[path.relative_to(REPO).as_posix()] = frozenset(
            n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
        )
    return found


def _uses_code(code: str) -> list[str]:
    """Files under generator/ (other than the list of codes) that mention `code` as a string literal."""
    return [path for path, constants in _string_literals().items() if code in constants]


def test_no_code_is_left_without_a_real_example() -> None:
    # `Reserved:` marks a code nothing prints yet; a code nothing prints should not exist.
    assert [e.code for e in ENTRIES if e.reserved] == [], "every code in the catalogue has a real, tested example"


def test_every_code_is_used_by_the_generator() -> None:
    # `usage` names click's usage errors (exit 2), which click prints in its own words.
    unused = [code for code in CODES if code != "usage" and not _uses_code(code)]
    assert unused == [], "codes in generator.base.problems.CODES that no module prints"
