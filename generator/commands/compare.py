"""`improvements compare`: two benchmark files, or two sets, compared and decided without a campaign."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, cast

import click

from generator.analysis.comparison import FAIL_ON
from generator.cli import root_option

if TYPE_CHECKING:
    from generator.analysis.comparison import FailOn
    from generator.base.problems import Problem
    from generator.model import metrics
    from generator.project.runs.formats.mapped_facts import Mapping
    from generator.project.runs.run import Run

_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)


@click.command(
    "compare",
    epilog="""\b
Examples:
  improvements compare old.json new.json
  improvements compare old.json new.json --metric ttft_p99
  improvements compare -b old1.json -b old2.json -c new1.json -c new2.json
  improvements compare main.jsonl pr.jsonl --format json --fail-on regression
  improvements compare A.jsonl B.jsonl --input-format h200-harness   # a campaign's own format
""",
)
@root_option
@click.argument("files", nargs=-1, type=_FILE, metavar="[BASELINE CANDIDATE]")
@click.option("-b", "--baseline", "baseline", multiple=True, type=_FILE, help="A baseline file (repeatable).")
@click.option("-c", "--candidate", "candidate", multiple=True, type=_FILE, help="A candidate file (repeatable).")
@click.option("--metric", help="The metric to decide on. Default: output throughput, or the first both sides share.")
@click.option("--alpha", type=click.FloatRange(0, 0.5, min_open=True, max_open=True), default=0.05, show_default=True)
@click.option(
    "--min-effect",
    type=click.FloatRange(0, 1000),
    default=1.0,
    show_default=True,
    help="The smallest change in percent that matters: inside it, `no-change`.",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option(
    "--input-format",
    metavar="NAME",
    help="Read the files as NAME, a format of the campaign's `import_formats:` (the campaign here, or --root).",
)
@click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON),
    help="Exit 3 when a comparison is `worse` (worse), or `worse` by at least --min-effect (regression).",
)
def command(
    root: Path | None,
    files: tuple[Path, ...],
    baseline: tuple[Path, ...],
    candidate: tuple[Path, ...],
    metric: str | None,
    alpha: float,
    min_effect: float,
    fmt: str,
    fail_on: str | None,
    input_format: str | None,
) -> None:
    """Compare benchmark files as a record's page would: each load and workload, its decision.

    Give two files, BASELINE then CANDIDATE, or sets of files with -b/--baseline and
    -c/--candidate. Each file is read as `import` reads it (SGLang and vLLM outputs, a pasted
    console block; the format is read from the content, or another harness's through a
    campaign's `import_formats:` with --input-format), and each run in it is one repetition.
    Runs at the same load and workload are compared with the statistics and decision rule of
    a campaign (docs/guide/decisions.md), with the caveats about how they were run. No
    campaign is needed and nothing is written.
    """
    from generator.analysis.files import compare_runs, default_metric
    from generator.base.jsontext import dumps
    from generator.cli import gate
    from generator.views.verdict import compare_json, compare_text

    if files and (baseline or candidate):
        raise click.UsageError("give BASELINE CANDIDATE, or -b/--baseline and -c/--candidate, not both")
    if files and len(files) != 2:
        raise click.UsageError(f"give two files, BASELINE then CANDIDATE (got {len(files)}), or use -b and -c")
    sides = (files[:1], files[1:]) if files else (baseline, candidate)
    if not sides[0] or not sides[1]:
        raise click.UsageError("give at least one baseline file and one candidate file")
    mapping, vocabulary = _input_format(root, input_format)
    runs, shown = _read(sides, mapping)
    if metric is None:
        metric = default_metric([r for _, r in runs[0]], [r for _, r in runs[1]])
        if metric is None:
            raise click.UsageError("the two sides share no metric to compare; name one with --metric")
    elif vocabulary.lookup(metric) is None:
        raise click.UsageError(f"unknown metric `{metric}`")
    groups = compare_runs(runs[0], runs[1], metric, vocabulary=vocabulary, alpha=alpha, min_effect=min_effect)
    rule = cast("FailOn", fail_on) if fail_on is not None else None
    if fmt == "json":
        sys.stdout.write(dumps(compare_json(groups, shown, vocabulary, rule)) + "\n")
    else:
        sys.stdout.write(compare_text(groups, shown, vocabulary))
    if rule is not None:
        gate(
            [
                f"{g.metric}: {g.comparison.decision} at {', '.join(f'{k} {v}' for k, v in g.key) or 'its load'}"
                for g in groups
                if g.comparison is not None and g.comparison.fails(rule)
            ]
        )


def _input_format(root: Path | None, name: str | None) -> tuple[Mapping | None, metrics.Vocabulary]:
    """The campaign's format `name` and its metric vocabulary; the built-in names without one."""
    from generator.model import metrics

    if name is None:
        return None, metrics.BUILTIN
    # Another harness's files: read through the campaign's mapping, in its metric vocabulary.
    from generator.authoring.link_runs import campaign_mapping
    from generator.checks.validate import require_project
    from generator.cli import resolve_root

    project = require_project(resolve_root(root))
    return campaign_mapping(project, name), project.campaign.vocabulary()


def _read(
    sides: tuple[tuple[Path, ...], tuple[Path, ...]], mapping: Mapping | None
) -> tuple[tuple[list[tuple[str, Run]], list[tuple[str, Run]]], tuple[list[str], list[str]]]:
    """Each side's runs with the file each came from, and the files as shown; every file is read
    first, and any problem in any of them stops the comparison (as `import` stops)."""
    from generator.base.problems import ProblemsFound, Report, rel
    from generator.project.runs.formats.mapped import parse_mapped
    from generator.project.runs.parse import parse_file

    problems: list[Problem] = []
    runs: tuple[list[tuple[str, Run]], list[tuple[str, Run]]] = ([], [])
    shown: tuple[list[str], list[str]] = ([], [])
    for i, side in enumerate(sides):
        for path in side:
            name = rel(path, Path.cwd())
            parsed, found = parse_file(path, name) if mapping is None else parse_mapped(path, name, mapping)
            problems += found
            shown[i].append(name)
            if parsed is not None:
                runs[i].extend((name, run) for run in parsed.runs)
    if problems:
        raise ProblemsFound(Report(problems))
    return runs, shown
