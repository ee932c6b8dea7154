"""`improvements stack`: the launch command in force, the baseline with every adopted change applied."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from generator.cli import resolve_root, root_option


@click.command(
    "stack",
    epilog="""\b
Examples:
  improvements stack
  improvements stack > launch.sh
  improvements stack --format command
  improvements stack --format json | jq -r .command
""",
)
@root_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "command", "json"]),
    default="text",
    show_default=True,
    help=(
        "text: a shell script, its comments naming the record of each line; command: the `before:` "
        "steps, then the launch on one line (after `cd` to the baseline's workdir, if any); json: for scripts."
    ),
)
def command(root: Path | None, fmt: str) -> None:
    """Print the launch command in force: the campaign baseline with every adopted record's change.

    Changes apply in `builds_on` order (by number where none is given); a superseded record is
    not in the stack. The text format is a shell script: its comments name the record each
    added, changed or removed line comes from, and `> launch.sh` runs as it is. `check` refuses
    two adopted changes that contradict each other, so what is printed is the one command the
    adopted records describe.
    """
    from generator.analysis.campaign import analyse
    from generator.checks.validate import require_project
    from generator.views.road import command_lines, stack_json, stack_script

    analysis = analyse(require_project(resolve_root(root)))
    found = analysis.stack
    assert found.stack is not None  # `check` refuses a circle (build-cycle) before this
    if fmt == "command":
        sys.stdout.write(command_lines(analysis))
    elif fmt == "json":
        sys.stdout.write(stack_json(analysis))
    else:
        sys.stdout.write(stack_script(analysis))
