"""`improvements init`: start a campaign in a folder, with everything it needs to check, build and publish."""

from __future__ import annotations

import contextlib
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

# The files init writes, relative to the campaign folder; template names under templates/init/.
FILES: dict[str, str] = {
    "improvements/campaign.yaml": "campaign.yaml.j2",
    "mkdocs.yml": "mkdocs.yml.j2",
    ".gitignore": "gitignore",
    ".pre-commit-config.yaml": "pre-commit-config.yaml.j2",
    ".github/workflows/improvements.yml": "workflow.yml.j2",
    "schema/campaign.schema.json": "",
}
# What a source that says nothing gets: words that say so, never a guessed value. A number
# (the GPU count, an engine version) is left out instead.
NOT_RECORDED = "not recorded"
TIERS = {
    1: "Flag flips: launch options and environment variables, to try at once on the baseline command.",
    2: "Small code changes.",
    3: "Significant engineering.",
}
_GOAL_RE = re.compile(r"^(?P<metric>[A-Za-z0-9_]+):(?P<target>[0-9.eE+-]+)(?:@(?P<concurrency>[0-9]+))?$")


@dataclass
class Answers:
    name: str
    series: str
    model: str
    gpu: str
    gpu_count: int | None
    engine: str
    engine_version: str | None
    baseline_label: str
    command: str
    goals: list[dict[str, Any]] = field(default_factory=list)


def parse_goal(text: str) -> dict[str, Any]:
    """`METRIC:TARGET[@CONCURRENCY]` ("output_throughput:100@1") as a goal, or a usage error."""
    from generator.model import metrics

    m = _GOAL_RE.match(text.strip())
    if m is None:
        raise click.BadParameter(f"`{text}` is not METRIC:TARGET[@CONCURRENCY], e.g. output_throughput:100@1")
    if metrics.lookup(m["metric"]) is None:
        near = metrics.suggest(m["metric"])
        raise click.BadParameter(f"unknown metric `{m['metric']}`" + (f"; did you mean `{near}`?" if near else ""))
    try:
        target = float(m["target"])
    except ValueError:
        raise click.BadParameter(f"`{m['target']}` is not a number") from None
    goal: dict[str, Any] = {"metric": m["metric"], "target": int(target) if target.is_integer() else target}
    if m["concurrency"]:
        goal["concurrency"] = int(m["concurrency"])
    return goal


def _goals(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> list[dict[str, Any]]:
    return [parse_goal(v) for v in values]


def default_command(engine: str, model: str) -> str | None:
    """The engine's plain serve command for the model, when both are known; never a guessed flag."""
    if model == NOT_RECORDED:
        return None
    import shlex

    quoted = shlex.quote(model)
    known = {"sglang": f"python -m sglang.launch_server --model-path {quoted}", "vllm": f"vllm serve {quoted}"}
    return known.get(engine.strip().lower())


def series_of(name: str) -> str:
    from generator.commands.new import slugify

    return slugify(name) or "improvement"


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
    command = get("command", "Baseline launch command", default_command(engine, model) or "$BASELINE_COMMAND")
    goals = list(options["goals"])
    if interactive and not goals:
        while text := click.prompt(
            "Goal as METRIC:TARGET[@CONCURRENCY] (blank: no more)", default="", show_default=False
        ).strip():
            try:
                goals.append(parse_goal(text))
            except click.BadParameter as exc:
                click.echo(exc.message, err=True)
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
    )


def _count(text: str | None) -> int | None:
    if text is None:
        return None
    if not text.strip().isdigit() or int(text) < 1:
        raise click.BadParameter(f"`{text}` is not a number of GPUs (1 or more)", param_hint="--gpu-count")
    return int(text)


@dataclass(frozen=True)
class Install:
    """How the CI workflow installs improvements: its command, the comment above it, and whether CI can run it."""

    run: str
    comment: tuple[str, ...]
    reachable: bool = True


# What the workflow's install step runs when CI cannot get improvements the way this machine did:
# a failure that says what to do, rather than a pip error about a path or a version it cannot find.
UNREACHABLE_RUN = 'echo "::error::set how CI installs improvements in .github/workflows/improvements.yml" && exit 1'
_RELEASE_RE = re.compile(r"^[0-9]+(?:\.[0-9]+)*$")


def _install(spec: str, comment: str) -> Install:
    import shlex
    import textwrap

    return Install(f"pip install {shlex.quote(spec)}", tuple(textwrap.wrap(comment, 90)))


def _unreachable(how: str) -> Install:
    import textwrap

    said = (
        f"improvements was installed from {how}, which CI cannot reach. Replace this step's run "
        "with how CI gets it (until then the step fails), e.g.:"
    )
    comment = (
        *textwrap.wrap(said, 90),
        '  pip install "improvements @ git+https://github.com/OWNER/improvements@v0.2.0"',
        "at a tag or a commit of its repository, or pip install with the URL of a wheel.",
    )
    return Install(UNREACHABLE_RUN, comment, reachable=False)


def install_of(version: str, direct_url: str | None) -> Install:
    """How CI gets the improvements installed here, from its version and PEP 610's direct_url.json.

    A repository at a commit and an archive at a web address are installed from there; a package
    index gives a range that holds this version; a folder, a file or a repository on this machine
    cannot be reached from CI, so the step says so and fails until it is set. The same install
    always gives the same step.
    """
    import json

    if direct_url is None:  # from a package index: pip records no direct URL
        if _RELEASE_RE.match(version):
            parts = [int(p) for p in version.split(".")]
            # 0.x releases may change what they write at each minor version; later ones at each major.
            upper = f"{parts[0] + 1}" if parts[0] else f"0.{(parts[1] if len(parts) > 1 else 0) + 1}"
            return _install(
                f"improvements>={version},<{upper}",
                f"improvements {version} came from a package index; this takes it or a later release below "
                f"{upper}. A later one may write the pages differently (rebuild and commit docs/ then), or pin "
                f"improvements=={version}.",
            )
        if "+" not in version:
            return _install(f"improvements=={version}", f"improvements {version} came from a package index.")
        return _unreachable(f"a local build ({version})")
    try:
        data = json.loads(direct_url)
        url = str(data["url"])
    except (ValueError, KeyError, TypeError):
        return _unreachable("a place its metadata does not name")
    here = url.startswith("file:")
    vcs, archive = data.get("vcs_info"), data.get("archive_info")
    if isinstance(vcs, dict):
        if here or not vcs.get("commit_id"):
            return _unreachable("a repository on this machine")
        spec = f"improvements @ {vcs.get('vcs', 'git')}+{url}@{vcs['commit_id']}"
        if data.get("subdirectory"):
            spec += f"#subdirectory={data['subdirectory']}"
        asked = f" (asked for as {vcs['requested_revision']})" if vcs.get("requested_revision") else ""
        return _install(
            spec, f"improvements as it was installed here: its repository at commit {vcs['commit_id']}{asked}."
        )
    if isinstance(archive, dict):
        if here:
            return _unreachable("a file on this machine")
        sha256 = (archive.get("hashes") or {}).get("sha256")
        fragment = f"#sha256={sha256}" if sha256 else (f"#{archive['hash']}" if archive.get("hash") else "")
        spec = f"improvements @ {url}{'' if '#' in url else fragment}"
        return _install(
            spec,
            "improvements as it was installed here: that file, checked against its hash."
            if fragment
            else "improvements as it was installed here: that file.",
        )
    return _unreachable("a folder on this machine")


def ci_install(package: str | None) -> Install:
    """What the workflow installs: --package as given, else the way this improvements was installed."""
    from importlib.metadata import PackageNotFoundError, distribution

    if package is not None:
        return _install(package, "As given to `improvements init --package`.")
    try:
        dist = distribution("improvements")
    except PackageNotFoundError:
        return _unreachable("its source folder (it is not installed as a package)")
    return install_of(dist.version, dist.read_text("direct_url.json"))


def render_files(answers: Answers, install: Install) -> dict[str, str]:
    """Each file's text, keyed by its path in the campaign folder."""
    from importlib.resources import files

    import jinja2

    from generator.commands.new import yaml_scalar
    from generator.commands.schema import schema_text

    folder = files("generator").joinpath("templates", "init")
    env = jinja2.Environment(
        undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False, trim_blocks=True
    )

    def scalar(value: str, key: str) -> str:
        return yaml_scalar(value, key, indent=4)

    context = {
        "name": scalar(answers.name, "name"),
        "series": answers.series,
        "model": scalar(answers.model, "name"),
        "gpu": scalar(answers.gpu, "gpu"),
        "gpu_count": answers.gpu_count,
        "engine": scalar(answers.engine, "name"),
        "engine_version": scalar(answers.engine_version, "version") if answers.engine_version else None,
        "baseline_label": scalar(answers.baseline_label, "label"),
        "command": scalar(answers.command, "command"),
        "goals": answers.goals,
        "tier1": scalar(TIERS[1], "t1"),
        "tier2": scalar(TIERS[2], "t2"),
        "tier3": scalar(TIERS[3], "t3"),
        "site_name": yaml_scalar(answers.name, "site_name"),
        "install_run": yaml_scalar(install.run, "run", indent=10, width=10**6),
        "install_comment": install.comment,
    }
    out: dict[str, str] = {}
    for path, template in FILES.items():
        if not template:
            out[path] = schema_text("campaign")
            continue
        source = folder.joinpath(template).read_text(encoding="utf-8")
        out[path] = env.from_string(source).render(**context)
    return out


def write_all(root: Path, texts: dict[str, str]) -> list[Path]:
    """Create every file, or none: each exclusively, and what was made removed again if one fails.

    A folder on the way that is a link is refused too: writing through it would put a file
    somewhere init was not pointed at.
    """
    from generator.base.fsio import create_exclusive

    taken = [p for p in texts if (root / p).exists() or (root / p).is_symlink()]
    if taken:
        raise click.UsageError(
            f"{root} already has {', '.join(taken)}; init writes nothing over an existing file. "
            "Choose an empty folder, or move these away"
        )
    folders = sorted({parent for p in texts for parent in Path(p).parents if parent != Path(".")}, key=str)
    linked = [str(f) for f in folders if (root / f).is_symlink()]
    if linked:
        raise click.UsageError(f"{', '.join(linked)} in {root} is a link; init writes only into folders of its own")
    new_folders = [root / f for f in folders if not (root / f).exists()]
    made: list[Path] = []
    try:
        for rel_path, text in texts.items():
            path = root / rel_path
            path.parent.mkdir(parents=True, exist_ok=True)
            if not create_exclusive(path, text):
                raise click.UsageError(f"{path} appeared while init was writing; nothing was kept")
            made.append(path)
    except BaseException:
        for path in made:
            path.unlink(missing_ok=True)
        for folder in reversed(new_folders):
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise
    return made


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
    "--package",
    metavar="SPEC",
    help='What CI pip-installs, e.g. "improvements @ git+https://github.com/OWNER/improvements@v0.2.0" '
    "(default: improvements the way it was installed here).",
)
@click.option("--no-input", "no_input", is_flag=True, help="Ask nothing, even on a terminal.")
def command(folder: Path, package: str | None, no_input: bool, **options: Any) -> None:
    """Start a campaign in DIR (default: here).

    Writes improvements/campaign.yaml, a two-line mkdocs.yml (the improvements plugin supplies
    the rest of the site), a .gitignore, a pre-commit config that runs `improvements check`, a
    GitHub Actions workflow that checks, builds and publishes the site, and
    schema/campaign.schema.json for editors. On a terminal it asks for what the options do not
    give; without one it takes the defaults, and leaves out what it was not told: nothing
    is guessed. It never overwrites a file: if any of them exists, nothing is written.
    """
    from generator.base.problems import rel

    root = folder.resolve()
    if root.exists() and not root.is_dir():
        raise click.UsageError(f"{folder} is not a folder")
    options["folder_name"] = root.name or "campaign"
    interactive = not no_input and stdin_is_terminal()
    answers = ask(options, interactive)
    install = ci_install(package)
    texts = render_files(answers, install)
    root.mkdir(parents=True, exist_ok=True)
    made = write_all(root, texts)
    here = Path.cwd()
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
