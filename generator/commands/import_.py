"""`improvements import`: benchmark output files to runs under results/, linked from a record."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from generator.cli import resolve_root, root_option

if TYPE_CHECKING:
    from generator.project.load import Project
    from generator.project.runs.parse import ParsedFile


@click.command(
    "import",
    epilog="""\b
Examples:
  improvements import sweep.jsonl --record mscclpp-all-reduce
  improvements import result.jsonl --record 04 --label "TP4 PP2"
  improvements import bench-c16.json bench-c64.json --baseline
  improvements import console.txt --record 02   # a pasted "Serving Benchmark Result" block
  improvements import A.jsonl --record 03 --format h200-harness   # campaign.yaml import_formats
""",
)
@root_option
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--record", "record_ref", metavar="SLUG|NN", help="Link the runs from this record's results.")
@click.option("--baseline", is_flag=True, help="Link the runs from the campaign baseline (campaign.yaml) instead.")
@click.option("--label", help="Result label (with several runs, each label also says its workload and load).")
@click.option(
    "--format",
    "format_name",
    metavar="NAME",
    help="Read the files as NAME, a format of campaign.yaml's `import_formats:` (another harness's keys).",
)
def command(
    root: Path | None,
    files: tuple[Path, ...],
    record_ref: str | None,
    baseline: bool,
    label: str | None,
    format_name: str | None,
) -> None:
    """Import benchmark output FILES as runs and link them from a record or the baseline.

    The format is read from the content: SGLang bench_serving JSONL (every generation),
    bench_one_batch and bench_one_batch_server result.jsonl, vLLM benchmark_serving.py and
    `vllm bench serve` JSON (single or appended), or a pasted console block. A file with
    many runs (a sweep) becomes many runs. Another harness's JSON, JSON lines or CSV is read
    with --format NAME, through the mapping campaign.yaml declares under `import_formats:`.

    Each run is written to results/runs/<id>.json (the id ends in a hash of its content, so
    importing the same file again changes nothing), the file itself is kept under
    results/raw/ with secrets such as api_key redacted, and a result `run: <id>` is appended
    to the record, keeping its comments. Every file is checked first: on any problem nothing
    is written.
    """
    # Longer than most: a command's steps in the order that keeps the user's files safe (check,
    # change, check the result, write); split up, that order would be harder to see.
    from generator.authoring.link_runs import campaign_mapping, link, read_all, unique_runs, write_all
    from generator.base.fsio import edit_lock
    from generator.base.problems import ProblemsFound, Report, rel
    from generator.checks.validate import require_project

    if baseline and record_ref is not None:
        raise click.UsageError("give either --record SLUG or --baseline, not both")
    if not baseline and record_ref is None:
        raise click.UsageError("say where the runs go: --record SLUG|NN, or --baseline for the campaign baseline")
    if label is not None and not label.strip():
        raise click.UsageError("--label needs some text")

    repo = resolve_root(root)
    # Locked from the first read to the write: two imports into one record, or an import beside
    # `status`, queue up instead of the later write dropping the earlier one's links.
    with edit_lock(repo, _lock_target(repo, record_ref, baseline)):
        project = require_project(repo)
        target = project.campaign_file.path if baseline else _record_path(project, record_ref or "")

        mapping = campaign_mapping(project, format_name) if format_name is not None else None
        show = len(files) > 1 and sys.stderr.isatty()
        with click.progressbar(files, label="Reading benchmark files", file=sys.stderr, hidden=not show) as bar:
            parsed, problems = read_all(bar, mapping)
        if problems:
            raise ProblemsFound(Report(problems))

        runs = unique_runs(parsed)
        text, added, problems = link(project, target, runs, label, baseline)
        if problems:
            sys.stderr.write(
                f"{rel(target, repo)}: nothing imported; the edit would leave these problems "
                "(positions are in the edited text, not in the file as it is):\n"
            )
            raise ProblemsFound(Report(problems))

        write_all(repo, target, text if added else None, parsed)

    shown = rel(target, repo)
    _warn_provenance(project, parsed)
    for p in parsed:
        if p.redacted:
            # Where, never what: the key path or line names the place, the value stays unsaid.
            sys.stderr.write(f"{p.shown}: redacted {len(p.redacted)} secret value(s) before writing\n")
            for where in p.redacted:
                sys.stderr.write(f"  {where}\n")
    if not added:
        sys.stdout.write(f"{len(runs)} run(s) already imported and linked from {shown}; nothing changed\n")
        return
    sys.stdout.write(f"imported {len(added)} run(s) from {len(parsed)} file(s), linked from {shown}:\n")
    for run, result_label in added:
        sys.stdout.write(f"  {run.id}  {result_label}\n")


def _warn_provenance(project: Project, parsed: list[ParsedFile]) -> None:
    """Say where a file names another model or engine than the campaign: imported all the same, it may be a mix-up."""
    from generator.project.runs.provenance import mismatches

    seen: set[tuple[str, str]] = set()
    for p in parsed:
        for run in p.runs:
            for key, what in mismatches(project.campaign, run):
                where = f"{p.shown}:{run.source.get('line', 1)}: {key}"
                if (where, what) not in seen:
                    seen.add((where, what))
                    sys.stderr.write(f"warning: {where}: {what} (improvements/campaign.yaml)\n")


def _lock_target(repo: Path, ref: str | None, baseline: bool) -> Path:
    """The file the import will edit, named before the campaign is loaded (a ref that names no
    record is reported after the campaign's own problems, as before)."""
    from generator.authoring.records import locate_record
    from generator.base.problems import CommandError

    folder = repo / "improvements"
    if baseline or ref is None:
        return folder / "campaign.yaml"
    try:
        return locate_record(folder, ref)
    except CommandError:
        return folder


def _record_path(project: Project, ref: str) -> Path:
    from generator.authoring.records import find_record
    from generator.base.problems import Report

    return find_record(project, Report(), ref)
