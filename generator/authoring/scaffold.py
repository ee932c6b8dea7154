"""A new campaign's files: campaign.yaml, mkdocs.yml, pre-commit, CI and the schema, rendered and
created all together or not at all (`improvements init`)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping
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
    # The metric that decides and ranks the records (`decision.primary_metric`).
    primary_metric: str = "output_throughput"


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


def default_command(engine: str, model: str, gpu_count: int | None = None) -> str | None:
    """The engine's plain serve command for the model, when both are known; never a guessed flag.

    A GPU count that was given becomes the engine's tensor-parallel size: it is what the count
    means to a single-node server, and without it the server would use one GPU.
    """
    if model == NOT_RECORDED:
        return None
    from generator.model.launch import quote

    quoted = quote(model)
    known = {
        "sglang": (f"python -m sglang.launch_server --model-path {quoted}", "--tp-size"),
        "vllm": (f"vllm serve {quoted}", "--tensor-parallel-size"),
    }
    found = known.get(engine.strip().lower())
    if found is None:
        return None
    command, flag = found
    return f"{command} {flag} {gpu_count}" if gpu_count is not None else command


# Page prefixes stay short, but whole words: a prefix cut mid-phrase ("llama-3-3-70b-on") reads as a typo.
SERIES_MAX = 32
_TRAILING = {"a", "and", "at", "by", "for", "in", "of", "on", "the", "to", "with", "x"}


def series_of(name: str) -> str:
    """The page prefix from the campaign's name: its words, whole, up to SERIES_MAX characters."""
    import re
    import unicodedata

    text = unicodedata.normalize("NFKD", name.replace("+", "p")).encode("ascii", "ignore").decode("ascii")
    words: list[str] = []
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        if words and len("-".join([*words, word])) > SERIES_MAX:
            break
        words.append(word[:SERIES_MAX])
    while len(words) > 1 and words[-1] in _TRAILING:
        words.pop()
    return "-".join(words) or "improvement"


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
    import textwrap

    from generator.model.launch import quote

    return Install(f"pip install {quote(spec)}", tuple(textwrap.wrap(comment, 90)))


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


def _git_out(folder: Path, *args: str) -> str | None:
    """What git prints for `args` in `folder`, or None when it fails (no git, not a checkout)."""
    import subprocess

    try:
        proc = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def _from_checkout(url: str, ref: str) -> Install | None:
    """A clone on this machine, installed from: its origin at the commit, when the origin is known to have it.

    Known: a remote-tracking branch of `origin` holds the commit (as of the last fetch). Only a
    web address without credentials, which CI can clone and a committed file may show.
    """
    from urllib.parse import unquote, urlsplit

    folder = Path(unquote(urlsplit(url).path))
    origin = _git_out(folder, "remote", "get-url", "origin")
    if origin is None:
        return None
    parts = urlsplit(origin)
    if parts.scheme != "https" or not parts.hostname or "@" in parts.netloc:
        return None
    commit = _git_out(folder, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if not commit or not _git_out(folder, "branch", "--remotes", "--list", "origin/*", "--contains", commit):
        return None
    return _install(
        f"improvements @ git+{origin}@{commit}",
        f"improvements as it was installed here, from a clone of {origin}: that repository at commit {commit}, "
        "which its origin has (changes not committed and pushed are not in it).",
    )


def install_of(version: str, direct_url: str | None) -> Install:
    """How CI gets the improvements installed here, from its version and PEP 610's direct_url.json.

    A repository at a commit and an archive at a web address are installed from there; a package
    index gives a range that holds this version; a clone on this machine (a folder, editable or
    not, or a git URL) gives its origin's web address at the commit installed, when the origin is
    known to have it. Anything else on this machine cannot be reached from CI, so the step says
    so and fails until it is set.

    Over 60 lines: one decision over the kinds of install PEP 610 records, tried in a fixed
    order, with the small helper that names a folder's commit kept beside the one case using it.
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
        if here and vcs.get("commit_id") and (found := _from_checkout(url, str(vcs["commit_id"]))):
            return found
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
    folder = data.get("dir_info")
    if here and isinstance(folder, dict) and (ref := _installed_ref(version, bool(folder.get("editable")))):
        found = _from_checkout(url, ref)
        if found is not None:
            return found
    return _unreachable("a folder on this machine")


def _installed_ref(version: str, editable: bool) -> str | None:
    """The commit a folder install holds: the checkout's HEAD when editable, else the one its version names."""
    if editable:
        return "HEAD"
    if _RELEASE_RE.match(version):
        return f"v{version}"
    m = re.search(r"\+g([0-9a-f]{7,40})(?:\.|$)", version)
    # A version with `.dYYYYMMDD` was built from uncommitted changes: no commit holds them.
    return m[1] if m and ".d" not in version.split("+", 1)[1] else None


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


def scaffold_files(answers: Answers, install: Install) -> dict[str, str]:
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
        "primary_metric": answers.primary_metric,
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


# The sample benchmark files `init --sample` writes, under this folder of the campaign.
SAMPLES_DIR = "samples"


def sample_files() -> dict[str, bytes]:
    """The sample benchmark files and their README, byte for byte as the package holds them."""
    from importlib.resources import files

    folder = files("generator").joinpath("templates", SAMPLES_DIR)
    return {f"{SAMPLES_DIR}/{f.name}": f.read_bytes() for f in sorted(folder.iterdir(), key=lambda f: f.name)}


def write_all(root: Path, texts: Mapping[str, str | bytes]) -> list[Path]:
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
