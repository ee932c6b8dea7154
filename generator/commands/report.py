"""`improvements report`: the whole campaign as one markdown document, for a pull request."""

from __future__ import annotations

from pathlib import Path

import click

from generator.cli import emit, resolve_root, root_option


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

    emit(report_text(analyse(require_project(resolve_root(root)))), output)
