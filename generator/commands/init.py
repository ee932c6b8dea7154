"""`improvements init`: start a campaign in a folder, with everything it needs to check, build and publish."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from generator.authoring.scaffold import NOT_RECORDED, Answers, default_command, parse_goal, series_of
from generator.base.problems import UsageProblem


def _goals(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> list[dict[str, Any]]:
    try:
        return [parse_goal(v) for v in values]
    except UsageProblem as exc:
        raise click.BadParameter(str(exc)) from None


def _metric(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A metric of the vocabulary, by its canonical name, or a usage error naming the nearest."""
    if value is None:
        return None
    from generator.model import metrics

    found = metrics.lookup(value)
    if found is None:
        near = metrics.suggest(value)
        raise click.BadParameter(f"unknown metric `{value}`" + (f"; did you mean `{near}`?" if near else ""))
    return found.name


def ask(options: dict[str, Any], interactive: bool) -> Answers:
    """Every answer: from its option, else a prompt on a terminal, else the default (unknown stays unknown)."""

    def get(key: str, text: str, default: str) -> str:
        if options[key] is not None:
            return str(options[key]).strip() or default
        if not interactive:
            return default
        return str(click.prompt(text, default=default)).strip() or default

    def optional(key: str, text: str) -> str | None:
        if options[key] is not None:
            return str(options[key])
        if not interactive:
            return None
        value = click.prompt(f"{text} (blank: not recorded)", default="", show_default=False).strip()
        return value or None

    name = get("name", "Campaign name", options["folder_name"])
    model = get("model", "Model", NOT_RECORDED)
    gpu = get("gpu", "GPU", NOT_RECORDED)
    count_text = optional("gpu_count", "Number of GPUs")
    gpu_count = _count(count_text)
    engine = get("engine", "Serving engine (SGLang, vLLM, ...)", NOT_RECORDED)
    version = optional("engine_version", "Engine version")
    command = get(
        "command", "Baseline launch command", default_command(engine, model, gpu_count) or "$BASELINE_COMMAND"
    )
    goals = list(options["goals"])
    if interactive and not goals:
        while text := click.prompt(
            "Goal as METRIC:TARGET[@CONCURRENCY] (blank: no more)", default="", show_default=False
        ).strip():
            try:
                goals.append(parse_goal(text))
            except UsageProblem as exc:
                click.echo(str(exc), err=True)
    return Answers(
        name=name,
        series=options["series"] or series_of(name),
        model=model,
        gpu=gpu,
        gpu_count=gpu_count,
        engine=engine,
        engine_version=version,
        baseline_label=options["baseline_label"] or "baseline",
        command=command,
        goals=goals,
        primary_metric=options["primary_metric"] or "output_throughput",
    )


def _count(text: str | None) -> int | None:
    if text is None:
        return None
    if not text.strip().isdigit() or int(text) < 1:
        raise click.BadParameter(f"`{text}` is not a number of GPUs (1 or more)", param_hint="--gpu-count")
    return int(text)


def stdin_is_terminal() -> bool:
    return sys.stdin.isatty()


@click.command(
    "init",
    epilog="""\b
Examples:
  improvements init my-campaign
  improvements init --model "Qwen/Qwen3-235B-A22B" --gpu "H100 80GB" --gpu-count 8 \\
      --engine SGLang --goal output_throughput:100@1
  improvements init --no-input          # defaults only; the unknowns are left out
""",
)
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path), default=".", metavar="[DIR]")
@click.option("--name", help="The campaign's name (default: the folder's name).")
@click.option("--series", help="Prefix of the generated page names (default: made from the name).")
@click.option("--model", help="The model served.")
@click.option("--gpu", help="The GPU model.")
@click.option("--gpu-count", "gpu_count", metavar="N", help="How many GPUs (left out when not given).")
@click.option("--engine", help="The serving engine (SGLang, vLLM, ...).")
@click.option("--engine-version", "engine_version", help="The engine's version (left out when not given).")
@click.option("--baseline-label", "baseline_label", help="The baseline's name (default: baseline).")
@click.option("--command", help="The baseline launch command (default: the engine's serve command for the model).")
@click.option(
    "--goal", "goals", multiple=True, callback=_goals, metavar="METRIC:TARGET[@C]", help="A goal (repeatable)."
)
@click.option(
    "--primary-metric",
    "primary_metric",
    callback=_metric,
    metavar="METRIC",
    help="The metric that decides and ranks the records (default: output_throughput).",
)
@click.option(
    "--package",
    metavar="SPEC",
    help='What CI pip-installs, e.g. "improvements @ git+https://github.com/OWNER/improvements@v0.2.0" '
    "(default: improvements the way it was installed here).",
)
@click.option(
    "--sample",
    is_flag=True,
    help="Also write samples/: real benchmark output files to try `improvements import` on. In a folder "
    "that holds a campaign already, only these are written.",
)
@click.option("--no-input", "no_input", is_flag=True, help="Ask nothing, even on a terminal.")
def command(folder: Path, package: str | None, sample: bool, no_input: bool, **options: Any) -> None:
    """Start a campaign in DIR (default: here).

    Writes improvements/campaign.yaml, a short mkdocs.yml (the improvements plugin supplies
    the rest of the site, the tool's guide included), a .gitignore, a pre-commit config that
    runs `improvements check`, a GitHub Actions workflow that checks, builds and publishes the
    site, and schema/campaign.schema.json for editors. On a terminal it asks for what the
    options do not give; without one it takes the defaults, and leaves out what it was not
    told: nothing is guessed. It never overwrites a file: if any of them exists, nothing is
    written.
    """
    from generator.authoring.scaffold import ci_install, sample_files, scaffold_files, write_all
    from generator.base.problems import rel

    root = folder.resolve()
    if root.exists() and not root.is_dir():
        raise click.UsageError(f"{folder} is not a folder")
    here = Path.cwd()
    if sample and (root / "improvements" / "campaign.yaml").is_file():
        for path in write_all(root, sample_files()):
            sys.stdout.write(rel(path, here) + "\n")
        return
    options["folder_name"] = root.name or "campaign"
    interactive = not no_input and stdin_is_terminal()
    answers = ask(options, interactive)
    install = ci_install(package)
    texts: dict[str, str | bytes] = {**scaffold_files(answers, install), **(sample_files() if sample else {})}
    root.mkdir(parents=True, exist_ok=True)
    made = write_all(root, texts)
    for path in made:
        sys.stdout.write(rel(path, here) + "\n")
    unknown = [
        k for k, v in (("model", answers.model), ("gpu", answers.gpu), ("engine", answers.engine)) if v == NOT_RECORDED
    ]
    if unknown or answers.command == "$BASELINE_COMMAND":
        missing = [*unknown, *(["baseline command"] if answers.command == "$BASELINE_COMMAND" else [])]
        sys.stderr.write(f"not given, so written as unknown in campaign.yaml: {', '.join(missing)}\n")
    if not install.reachable:
        sys.stderr.write(
            "CI cannot install improvements the way it was installed here: set its install step "
            "in .github/workflows/improvements.yml (the step says how)\n"
        )
    cd = "" if root == here else f"cd {rel(root, here)} && "
    sys.stderr.write(
        f'next: {cd}improvements new "First idea" --tier 1, then `improvements build --site`; '
        "commit docs/ with the records\n"
    )
