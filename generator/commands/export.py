"""`improvements export`: every record with its computed evidence as JSON, or every sample as CSV."""

from __future__ import annotations

from pathlib import Path

import click

from generator.cli import emit, resolve_root, root_option


@click.command(
    "export",
    epilog="""\b
Examples:
  improvements export --format json > records.json
  improvements export --output site-extra/records.json
  improvements export | jq '.records[] | {slug, primary}'
  improvements export --format csv -o samples.csv   # one row per repetition, for pandas
""",
)
@root_option
@click.option(
    "--format", "fmt", type=click.Choice(["json", "csv"]), default="json", show_default=True, help="Output format."
)
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), help="Write to FILE, not stdout.")
def command(root: Path | None, fmt: str, output: Path | None) -> None:
    """Export every record with its computed evidence as JSON, or every sample as CSV.

    JSON: one document, the campaign and each record as written with its primary-metric
    evidence, its rank in the summary, open blockers and every result's comparisons (n on
    each side, change, interval, p-value, test, decision: the same numbers the pages show).
    Sorted keys and no timestamps, so the same records give the same bytes. `mkdocs build`
    also publishes it at the site root as records.json.

    CSV: a tidy table of every sample, one row per repetition (record, result, side, metric,
    repetition, value, concurrency, variant), variants' results included, ready for a notebook.
    """
    from generator.analysis.campaign import analyse
    from generator.checks.validate import require_project
    from generator.output.export import dumps, samples_csv

    project = require_project(resolve_root(root))
    analysis = analyse(project)
    emit(samples_csv(analysis) if fmt == "csv" else dumps(analysis), output)
