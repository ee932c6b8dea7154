"""`improvements check`: validate the campaign and report every problem."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from generator.cli import resolve_root, root_option


@click.command(
    "check",
    epilog="""\b
Examples:
  improvements check
  improvements check --verbose         # every warning on its own line
  improvements check --format github   # annotations in a GitHub Actions log
  improvements check --format json | jq '.[].code'
""",
)
@root_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "github"]),
    default="text",
    show_default=True,
    help="How to print problems.",
)
@click.option(
    "--verbose",
    "-v",
    is_flag=True,
    help="Print each warning on its own line (by default a cause's warnings share one, with every position).",
)
def command(root: Path | None, fmt: str, verbose: bool) -> None:
    """Validate every record and campaign.yaml; exit 1 if any error is found."""
    from generator.base.problems import Report, format_report
    from generator.checks.validate import load_project

    repo = resolve_root(root)
    report = Report()
    project = load_project(repo, report)
    if project is not None and report.ok:
        import gc

        # The loaded project lives until the process ends and holds no cycles: frozen, the
        # analysis' collections stop walking it again and again (half the analysis' time at
        # 1,000 records). Only here: a long-lived `serve` loads again and again.
        gc.freeze()
        # The status against the evidence needs the analysis, which only a valid project has;
        # only the records whose warnings read it are analysed (`analysis.asked`).
        from generator.analysis.asked import analyse_asked, analysis_warnings

        for problem in analysis_warnings(analyse_asked(project)):
            report.add(problem)
    out = format_report(report, fmt, grouped=not verbose)
    if fmt == "text":
        sys.stderr.write(out)
        if report.ok and project is not None:
            warnings = len(report.problems)
            extra = f", {warnings} warning(s)" if warnings else ""
            sys.stdout.write(f"{len(project.records)} record(s) checked: no errors{extra}\n")
    else:
        sys.stdout.write(out)
    sys.exit(0 if report.ok else 1)
