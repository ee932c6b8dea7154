"""`improvements report`: the whole campaign as one markdown document, for a pull request."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from generator.cli import resolve_root, root_option


@click.command(
    "report",
    epilog="""\b
Examples:
  improvements report > campaign-report.md
  improvements report -o report.md
  improvements report | gh pr comment 42 --body-file -
""",
)
@root_option
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the report to FILE (atomically: a reader sees the old file or the new one) instead of standard output.",
)
def command(root: Path | None, output: Path | None) -> None:
    """Write the whole campaign as one markdown document: summary, stack and each record condensed.

    It links nowhere (paste it into a pull request, an issue or a message): the numbers,
    changes and verdicts are the ones the site shows, from the same analysis.
    """
    from generator.analysis.campaign import analyse
    from generator.checks.validate import require_project
    from generator.output.report import report_text

    text = report_text(analyse(require_project(resolve_root(root))))
    if output is None:
        sys.stdout.write(text)
        return
    from generator.base.fsio import atomic_write

    if output.is_symlink():
        raise click.ClickException(f"{output} is a symbolic link; the report is not written through it")
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(output, text)
    except OSError as exc:
        raise click.ClickException(f"cannot write {output}: {exc.strerror or exc}") from None
    sys.stderr.write(f"wrote {output}\n")
