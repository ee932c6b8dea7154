"""A new campaign's files: campaign.yaml, mkdocs.yml, pre-commit, CI and the schema, rendered and
created all together or not at all (`improvements init`)."""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.base.problems import UsageProblem

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
        raise UsageProblem(f"`{text}` is not METRIC:TARGET[@CONCURRENCY], e.g. output_throughput:100@1")
    if metrics.lookup(m["metric"]) is None:
        near = metrics.suggest(m["metric"])
        raise UsageProblem(f"unknown metric `{m['metric']}`" + (f"; did you mean `{near}`?" if near else ""))
    try:
        target = float(m["target"])
    except ValueError:
        raise UsageProblem(f"`{m['target']}` is not a number") from None
    goal: dict[str, Any] = {"metric": m["metric"], "target": int(target) if target.is_integer() else target}
    if m["concurrency"]:
        goal["concurrency"] = int(m["concurrency"])
    return goal


def default_command(engine: str, model: str) -> str | None:
    """The engine's plain serve command for the model, when both are known; never a guessed flag."""
    if model == NOT_RECORDED:
        return None
    from generator.model.launch import quote

    quoted = quote(model)
    known = {"sglang": f"python -m sglang.launch_server --model-path {quoted}", "vllm": f"vllm serve {quoted}"}
    return known.get(engine.strip().lower())


def series_of(name: str) -> str:
    from generator.authoring.starter import slugify

    return slugify(name) or "improvement"


def render_files(answers: Answers, package: str) -> dict[str, str]:
    """Each file's text, keyed by its path in the campaign folder."""
    from importlib.resources import files

    import jinja2

    from generator.authoring.starter import yaml_scalar
    from generator.model.schema import schema_text

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
        "package": package,
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
        raise UsageProblem(
            f"{root} already has {', '.join(taken)}; init writes nothing over an existing file. "
            "Choose an empty folder, or move these away"
        )
    folders = sorted({parent for p in texts for parent in Path(p).parents if parent != Path(".")}, key=str)
    linked = [str(f) for f in folders if (root / f).is_symlink()]
    if linked:
        raise UsageProblem(f"{', '.join(linked)} in {root} is a link; init writes only into folders of its own")
    new_folders = [root / f for f in folders if not (root / f).exists()]
    made: list[Path] = []
    try:
        for rel_path, text in texts.items():
            path = root / rel_path
            path.parent.mkdir(parents=True, exist_ok=True)
            if not create_exclusive(path, text):
                raise UsageProblem(f"{path} appeared while init was writing; nothing was kept")
            made.append(path)
    except BaseException:
        for path in made:
            path.unlink(missing_ok=True)
        for folder in reversed(new_folders):
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise
    return made
