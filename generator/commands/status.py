"""`improvements status`: move a record to another status, editing its file in place."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from generator.cli import resolve_root, root_option
from generator.model.record import STATUSES


@click.command(
    "status",
    epilog="""\b
Examples:
  improvements status mscclpp-all-reduce in-progress
  improvements status 12 adopted --verdict "Faster at every concurrency measured."
  improvements status 07 superseded --superseded-by mscclpp-all-reduce
  improvements status 01 rejected --resolve-blocker fp4-jit-graph-breaks --verdict "..."
""",
)
@root_option
@click.argument("record", metavar="SLUG|NN")
@click.argument("status", type=click.Choice(STATUSES), metavar="STATUS")
@click.option("--verdict", help="Set the verdict (adopted and rejected need one).")
@click.option("--superseded-by", "superseded_by", metavar="SLUG", help="The record that replaces this one.")
@click.option(
    "--resolve-blocker",
    "resolve",
    multiple=True,
    metavar="ID|N",
    help="Set this blocker's status to resolved in the same edit: its `id`, or its place in "
    "`blockers:` counting from 1 (repeatable).",
)
def command(
    root: Path | None,
    record: str,
    status: str,
    verdict: str | None,
    superseded_by: str | None,
    resolve: tuple[str, ...],
) -> None:
    """Change a record's status in place.

    STATUS is one of: proposed, in-progress, blocked, adopted, rejected, superseded.

    Only the changed lines of the file differ afterwards: comments, key order, quoting and
    blank lines stay as written. The result is checked first (the status rules, for example
    that `adopted` needs a result and a verdict), and nothing is written when it fails.

    A blocked record whose blocker has just been resolved moves on in one step:
    `--resolve-blocker ID` sets that blocker's `status: resolved` in the same edit.
    """
    from generator.authoring.status import change_status

    if superseded_by is not None and status != "superseded":
        raise click.UsageError("--superseded-by goes with status `superseded`")
    if verdict is not None and not verdict.strip():
        raise click.UsageError("--verdict needs some text")
    if change_status(resolve_root(root), record, status, verdict, superseded_by, resolve):
        sys.stdout.write("Run `improvements build` to update the series and the summary.\n")
