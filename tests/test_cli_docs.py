"""The command reference is generated from the CLI; every command documents itself with examples."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys

import click
import pytest
import yaml

from generator import clidoc
from generator.cli import COMMANDS, main, top_help

from conftest import REPO, run_cli


def test_committed_reference_is_current() -> None:
    committed = (REPO / clidoc.OUTPUT).read_text()
    assert committed == clidoc.render(), "docs/guide/cli.md is stale: run `python -m generator.clidoc`"


def test_every_command_is_documented() -> None:
    page = (REPO / clidoc.OUTPUT).read_text()
    sections = re.findall(r"^## improvements (\S+)$", page, flags=re.M)
    assert sections == sorted(COMMANDS)
    for name in COMMANDS:
        assert f"Usage: improvements {name} " in page


@pytest.mark.parametrize("name", [None, *sorted(COMMANDS)])
def test_help_shows_an_example(name: str | None) -> None:
    args = ["--help"] if name is None else [name, "--help"]
    run = run_cli(*args)
    assert run.returncode == 0, run.stderr
    assert "Examples:" in run.stdout
    assert re.search(rf"^\s+(\$EDITOR \$\()?improvements {name or ''}", run.stdout, flags=re.M)


@pytest.mark.parametrize("width", range(50, 79))
def test_top_level_help_without_click_is_clicks(width: int) -> None:
    # `run` prints the top-level help without importing click: it must be click's text at every
    # width click can pick (50 to 78 columns), the commands' help lines wrapped alike.
    ctx = click.Context(main, info_name="improvements", terminal_width=width, **main.context_settings)
    assert ctx.make_formatter().width == width
    assert top_help(width) == main.get_help(ctx) + "\n"


@pytest.mark.parametrize("columns", ["40", "64", "100"])
def test_top_level_help_in_a_fresh_process_is_clicks(columns: str) -> None:
    # The whole path: COLUMNS read as click reads it, and `-h` the same as `--help`.
    env = {**os.environ, "COLUMNS": columns}
    code = (
        "import click, generator.cli as c\n"
        "print(c.main.get_help(click.Context(c.main, info_name='improvements', **c.main.context_settings)))"
    )
    expected = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    for flag in ("--help", "-h"):
        fast = subprocess.run([sys.executable, "-m", "generator", flag], capture_output=True, text=True, env=env)
        assert fast.returncode == 0 and fast.stderr == ""
        assert fast.stdout == expected.stdout


def _examples(command: click.Command, name: str) -> list[list[str]]:
    text = (command.epilog or "").replace("\\\n", " ")
    out = []
    for line in text.splitlines():
        found = line.find(f"improvements {name}")
        if found < 0:
            continue
        line = re.split(r"\s(?:\||>|#)\s|\)", line[found:])[0]
        out.append(shlex.split(line)[2:])
    return out


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_examples_parse(name: str) -> None:
    """Every example in a command's help uses options and arguments the command accepts."""
    root = click.Context(main, info_name="improvements")
    command = main.get_command(root, name)
    assert command is not None
    examples = _examples(command, name)
    assert examples, f"`improvements {name} --help` has no example"
    ctx = click.Context(command, info_name=name, parent=root)
    for args in examples:
        # Option names and arity, as the parser sees them; values (files that exist) are not checked.
        _opts, positional, _order = command.make_parser(ctx).parse_args(list(args))
        arguments = [p for p in command.params if isinstance(p, click.Argument)]
        if not any(a.nargs == -1 for a in arguments):
            assert len(positional) <= len(arguments), (name, args)


@pytest.mark.slow
def test_help_stays_light() -> None:
    """`improvements --help` must not import the heavy libraries that only some commands need."""
    code = (
        "import sys\n"
        "from generator.cli import main\n"
        "try:\n    main.main(['--help'], standalone_mode=False)\nexcept SystemExit:\n    pass\n"
        "heavy = sorted(m for m in ('pandas', 'matplotlib', 'mkdocs', 'jinja2', 'pydantic') if m in sys.modules)\n"
        "print('HEAVY:' + ','.join(heavy))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().splitlines()[-1] == "HEAVY:"


def test_pre_commit_hook_runs_check() -> None:
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    (hook,) = hooks
    assert hook["id"] == "improvements-check"
    assert hook["language"] == "python" and hook["pass_filenames"] is False
    assert re.match(hook["files"], "improvements/01-x.yaml") and re.match(hook["files"], "results/runs/a.json")
    assert not re.match(hook["files"], "docs/index.md")
    entry = shlex.split(hook["entry"])
    assert entry[0] == "improvements" and entry[1] in COMMANDS
    run = run_cli(*entry[1:], *hook.get("args", []))
    assert run.returncode == 0, run.stderr


def test_example_workflow_file_checks_and_publishes() -> None:
    workflow = yaml.safe_load((REPO / "docs" / "guide" / "examples" / "publish.yml").read_text())
    steps = [s for job in workflow["jobs"].values() for s in job["steps"]]
    runs = "\n".join(s.get("run", "") for s in steps)
    uses = [s.get("uses", "") for s in steps]
    assert "improvements check --format github" in runs
    assert "improvements build --site" in runs
    assert any(u.startswith("actions/upload-pages-artifact") for u in uses)
    assert any(u.startswith("actions/deploy-pages") for u in uses)
