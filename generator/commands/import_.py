"""`improvements import`: benchmark output files to runs under results/, linked from a record."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from contextlib import AbstractContextManager
from pathlib import Path

import click

from generator.cli import resolve_root, root_option


@click.command(
    "import",
    epilog="""\b
Examples:
  improvements import sweep.jsonl --record mscclpp-all-reduce
  improvements import result.jsonl --record 04 --label "TP4 PP2"
  improvements import bench-c16.json bench-c64.json --baseline
  improvements import console.txt --record 02   # a pasted "Serving Benchmark Result" block
  improvements import A.jsonl --record 03 --format h200-harness   # campaign.yaml import_formats
  improvements import both.jsonl --record 05 --baseline-where run_name=no_cuda_graph
""",
)
@root_option
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--record", "record_ref", metavar="SLUG|NN", help="Link the runs from this record's results.")
@click.option("--baseline", is_flag=True, help="Link the runs from the campaign baseline (campaign.yaml) instead.")
@click.option("--label", help="Result label (with several runs, each label also says its workload and load).")
@click.option(
    "--baseline-where",
    metavar="KEY=VALUE",
    help="The file holds both arms: runs whose setting KEY is VALUE are the baseline (each result names "
    "them as `baseline_run`), the others the record's results.",
)
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
    baseline_where: str | None,
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
    from generator.authoring.importing import import_files

    if baseline and record_ref is not None:
        raise click.UsageError("give either --record SLUG or --baseline, not both")
    if not baseline and record_ref is None:
        raise click.UsageError("say where the runs go: --record SLUG|NN, or --baseline for the campaign baseline")
    if label is not None and not label.strip():
        raise click.UsageError("--label needs some text")
    arms: tuple[str, str] | None = None
    if baseline_where is not None:
        key, sep, value = baseline_where.partition("=")
        if not sep or not key.strip():
            raise click.UsageError(
                "--baseline-where needs KEY=VALUE, a run setting and its value (run_name=no_cuda_graph)"
            )
        if baseline:
            raise click.UsageError(
                "--baseline-where splits a file between a record's results and their baseline; give --record"
            )
        arms = (key.strip(), value.strip())

    show = len(files) > 1 and sys.stderr.isatty()

    def progress(paths: tuple[Path, ...]) -> AbstractContextManager[Iterable[Path]]:
        return click.progressbar(paths, label="Reading benchmark files", file=sys.stderr, hidden=not show)

    import_files(resolve_root(root), files, record_ref, baseline, label, format_name, arms, progress)
