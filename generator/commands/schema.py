"""`improvements schema`: print the JSON Schema of records and campaign.yaml (built in generator.model.schema)."""

from __future__ import annotations

from pathlib import Path

import click

from generator.cli import emit
from generator.model.schema import WHICH, schema_text


@click.command(
    "schema",
    epilog="""\b
Examples:
  improvements schema --which record --output schema/record.schema.json
  improvements schema --which campaign --output schema/campaign.schema.json
  improvements schema | jq '.record.properties | keys'
""",
)
@click.option(
    "--which",
    type=click.Choice(WHICH),
    default=None,
    help="Print one schema (default: both, as one JSON object keyed by `record` and `campaign`).",
)
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), help="Write to FILE, not stdout.")
def command(which: str | None, output: Path | None) -> None:
    """Print the JSON Schema of records and campaign.yaml.

    Generated from the same models `improvements check` uses. Records start with a
    `# yaml-language-server: $schema=../schema/record.schema.json` line, so editors with
    the YAML language server complete keys and flag mistakes as you type.
    """
    text = schema_text(which)
    emit(text, output)
