"""`improvements summary`: the tier-ranked table of records on standard output."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from generator.cli import resolve_root, root_option
from generator.model.record import STATUSES


@click.command(
    "summary",
    epilog="""\b
Examples:
  improvements summary
  improvements summary --format markdown
  improvements summary --tier 1 --status blocked
  improvements summary --format json | jq '.[] | select(.open_blockers > 0) | .slug'
  improvements summary --tag pcie --tag moe --format csv > summary.csv
""",
)
@root_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "markdown", "csv", "json"]),
    default="table",
    show_default=True,
    help="Output format. JSON is a list of objects, one per record.",
)
@click.option("--tier", "tiers", type=click.IntRange(1, 3), multiple=True, help="Only this tier (repeatable).")
@click.option("--status", "statuses", type=click.Choice(STATUSES), multiple=True, help="Only this status (repeatable).")
@click.option("--tag", "tags", multiple=True, help="Only records with this tag (repeatable; any of them).")
def command(
    root: Path | None, fmt: str, tiers: tuple[int, ...], statuses: tuple[str, ...], tags: tuple[str, ...]
) -> None:
    """Print every record ranked by tier, then its primary metric's decision, then number.

    The primary metric is the record's `expected.metric`, else the campaign's
    `decision.primary_metric`; other metrics never rank. Within a tier: better (by the low end
    of the interval), unreplicated (by the point change), no-change and inconclusive, worse,
    reported only, not measured. The column shows the change, interval, n on each side and
    the decision.
    """
    from generator.analysis.campaign import analyse
    from generator.checks.validate import require_project
    from generator.views.summary import format_rows, summary_rows

    project = require_project(resolve_root(root))
    rows = summary_rows(analyse(project), tiers=tiers or None, statuses=statuses or None, tags=tags or None)
    sys.stdout.write(format_rows(rows, fmt))
