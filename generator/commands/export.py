"""`improvements export`: every record with its computed summary, as one JSON document."""

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
  improvements export | jq '.records[] | {slug, best: .summary.best_gain}'
""",
)
@root_option
@click.option("--format", "fmt", type=click.Choice(["json"]), default="json", show_default=True, help="Output format.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), help="Write to FILE, not stdout.")
def command(root: Path | None, fmt: str, output: Path | None) -> None:
    """Export every record with its computed summary as JSON.

    One document: the campaign, and each record as written with its rank in the summary,
    best measured gain, open blockers and every result's deltas (the same numbers the pages
    show). Sorted keys and no timestamps, so the same records give the same bytes. `mkdocs
    build` also publishes it at the site root as records.json.
    """
    from generator.analysis import analyse
    from generator.export import dumps
    from generator.validate import require_project

    del fmt  # JSON is the one format; the option keeps the command line stable when others come
    project = require_project(resolve_root(root))
    text = dumps(analyse(project))
    emit(text, output)
