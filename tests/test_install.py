"""Every way to install improvements, from a `git clone` of this repository, as a new user would.

From a clone (the tree's uncommitted changes and new files committed on top, so the test checks
the tree it runs in, not only its last commit), `python -m build` makes the sdist and, from that sdist, the
wheel. Five installs, each into a virtual environment of its own: the wheel, the sdist, the
clone's folder (`pip install .`), the clone by git URL and the folder editable (`pip install -e
.`). With each, in an empty folder, a campaign is started with the sample benchmark files, given
a record and the sample's runs, checked and built into a site, whose pages are read back.

Cheap enough for every CI run (about 10 s of CPU an install): the package is built without
build isolation and installed with --no-deps and --no-index, offline; its dependencies come
from the test's own environment through a .pth line, which adds that folder to the path
without running the .pth files inside it, so the checkout's own editable install is not active
there and `generator` can only come from the install under test (asserted). Downloading the
dependencies into five environments would cost minutes.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import socket
import stat
import subprocess
import sys
import sysconfig
import tarfile
import time
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from filelock import FileLock

from conftest import REPO, serve_folder

pytestmark = pytest.mark.slow  # builds and installs the package, then starts a few dozen processes

INSTALLS = ("wheel", "sdist", "folder", "git", "editable")
_GIT_ENV = {
    "GIT_AUTHOR_NAME": "test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def _run(*args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, f"{' '.join(map(str, args))}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def _git(*args: str | Path, cwd: Path | None = None) -> str:
    return _run("git", *args, cwd=cwd, env={**os.environ, **_GIT_ENV})


@dataclass(frozen=True)
class Built:
    clone: Path
    sdist: Path
    wheel: Path
    version: str


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """A clone of this repository, and the sdist and wheel `python -m build` makes from a clone of it.

    Made once per test run: pytest-xdist's workers share the folder above their own temporary
    ones, and the first to take the lock builds there for all (a build costs about 5 s of CPU).
    """
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode != 0:
        pytest.skip("not a git checkout: the installs are made from a clone")
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    with FileLock(shared / "install.lock"):
        if not (shared / "install" / "done").is_file():
            _build(head.stdout.strip(), shared / "install")
    tmp = shared / "install"
    (sdist,) = (tmp / "dist").glob("improvements-*.tar.gz")
    (wheel,) = (tmp / "dist").glob("improvements-*-py3-none-any.whl")
    version = sdist.name.removeprefix("improvements-").removesuffix(".tar.gz")
    return Built(tmp / "improvements", sdist, wheel, version)


def _build(head: str, tmp: Path) -> None:
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    clone = tmp / "improvements"
    _git("clone", "--quiet", REPO, clone)
    _git("checkout", "--quiet", "--detach", head, cwd=clone)
    diff = _git("diff", "HEAD", "--binary", cwd=REPO)
    if diff:
        subprocess.run(["git", "apply"], cwd=clone, input=diff, text=True, check=True)
    for name in _git("ls-files", "-z", "--others", "--exclude-standard", cwd=REPO).split("\0"):
        if name and (REPO / name).is_file():
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, clone / name)
    if _git("status", "--porcelain", cwd=clone):
        _git("add", "--all", cwd=clone)
        _git("commit", "--quiet", "--no-verify", "-m", "the tree's uncommitted changes", cwd=clone)
    # Built from a clone of its own, so the clone the folder installs use stays as git left it.
    source = tmp / "source"
    _git("clone", "--quiet", clone, source)
    dist = tmp / "dist"
    _run(sys.executable, "-m", "build", "--no-isolation", "--outdir", dist, source)
    (tmp / "done").touch()


def test_the_sdist_and_the_wheel_hold_no_link_and_carry_the_guide(built: Built) -> None:
    with tarfile.open(built.sdist) as tar:
        members = tar.getmembers()
    assert [m.name for m in members if m.issym() or m.islnk()] == []
    with zipfile.ZipFile(built.wheel) as whl:
        infos = whl.infolist()
    assert [i.filename for i in infos if stat.S_ISLNK(i.external_attr >> 16)] == []
    names = {i.filename for i in infos}
    guide = REPO / "docs" / "guide"
    for page in [*guide.glob("*.md"), *(guide / "examples").iterdir()]:
        assert f"generator/guide/{page.relative_to(guide).as_posix()}" in names
    templates = REPO / "generator" / "templates"
    for path in templates.rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts:
            assert f"generator/{path.relative_to(REPO / 'generator').as_posix()}" in names
    assert "generator/py.typed" in names


def test_the_license_is_an_spdx_expression_with_its_file(built: Built) -> None:
    # PEP 639's form: setuptools refuses the `license = { text = ... }` table after 2027-02-18.
    with zipfile.ZipFile(built.wheel) as whl:
        [meta] = [n for n in whl.namelist() if n.endswith(".dist-info/METADATA")]
        text = whl.read(meta).decode()
        names = whl.namelist()
    assert "License-Expression: MIT" in text.splitlines()
    assert "License-File: LICENSE" in text.splitlines()
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)


def _venv(tmp_path: Path) -> Path:
    """An empty virtual environment whose path ends with this one's site-packages; returns its python."""
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", venv)
    site = Path(sysconfig.get_paths(vars={"base": str(venv), "platbase": str(venv)})["purelib"])
    ours = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    (site / "zz_dependencies.pth").write_text("".join(f"{p}\n" for p in ours))
    return venv / "bin" / "python"


def _pip(python: Path) -> list[str | Path]:
    """`pip install` into that environment, offline: no index, no dependencies, no build isolation."""
    pip: list[str | Path] = [sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-deps"]
    return [*pip, "--no-index", "--no-build-isolation", "--disable-pip-version-check"]


def _install(how: str, built: Built, tmp_path: Path) -> tuple[Path, Path]:
    """Install improvements the way `how` names; returns the environment's python and where its code must come from."""
    python = _venv(tmp_path)
    pip = _pip(python)
    venv = python.parent.parent
    if how == "wheel":
        _run(*pip, built.wheel)
    elif how == "sdist":
        _run(*pip, built.sdist)
    elif how == "git":
        # `localhost`: pip before 24 rejects a git+file:/// URL with an empty host in a requirement.
        _run(*pip, f"improvements @ git+file://localhost{built.clone.as_posix()}")
    else:
        # `pip install .` and `pip install -e .`, run in a clone of its own (the editable one stays in use).
        folder = tmp_path / "improvements"
        _git("clone", "--quiet", built.clone, folder)
        _run(*pip, *(["-e"] if how == "editable" else []), ".", cwd=folder)
        if how == "editable":
            return python, folder / "generator"
    return python, venv


@pytest.mark.parametrize("how", INSTALLS)
def test_a_new_campaign_from_each_install(how: str, built: Built, tmp_path: Path) -> None:
    python, code = _install(how, built, tmp_path)
    bindir = python.parent
    work = tmp_path / "empty"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env.update(PATH=f"{bindir}{os.pathsep}{env.get('PATH', '')}", NO_MKDOCS_2_WARNING="1")

    def user(*args: str) -> str:
        return _run(bindir / args[0], *args[1:], cwd=work, env=env)

    where = Path(user("python", "-c", "import generator; print(generator.__file__)").strip())
    assert where.is_relative_to(code), where
    assert user("improvements", "--version") == f"improvements, version {built.version}\n"
    user("improvements", "init", "--no-input", "--name", "Llama 3.3 70B on H200", "--sample",
         "--model", "meta-llama/Llama-3.3-70B-Instruct", "--gpu", "H200", "--engine", "SGLang")  # fmt: skip
    new = user("improvements", "new", "Larger chunked prefill", "--tier", "1",
               "--hypothesis", "Larger prefill chunks may raise output throughput.")  # fmt: skip
    assert new == "improvements/01-larger-chunked-prefill.yaml\n"
    user("improvements", "import", "samples/sglang-bench-serving.jsonl", "--record", "larger-chunked-prefill")
    user("improvements", "check")
    user("improvements", "build", "--site")
    site = work / "site"
    index = (site / "index.html").read_text()
    assert "Llama 3.3 70B on H200" in index and "Larger chunked prefill" in index
    (page_file,) = (site / "improvements").glob("*-01-larger-chunked-prefill.html")
    page = page_file.read_text()
    assert "537.4" in page  # the sample's first output throughput, imported
    # The package data: the stylesheet, the tags page and the guide, each as this tree has it.
    clone = built.clone
    assert (site / "stylesheets" / "improvements.css").read_bytes() == (
        clone / "generator" / "templates" / "site" / "improvements.css"
    ).read_bytes()
    assert (site / "tags.html").is_file()
    assert "Start a campaign of your own" in (site / "guide" / "workflow.html").read_text()


@pytest.mark.parametrize("how", ["git archive", "copy without .git"])
def test_a_tree_without_git_metadata_builds_as_the_stated_fallback_version(
    how: str, built: Built, tmp_path: Path
) -> None:
    # pyproject.toml's fallback_version, which CONTRIBUTING.md states: below every release, so never taken for one.
    tree = tmp_path / "tree"
    tree.mkdir()
    if how == "git archive":
        # Archived where no tag is known (before the first release, or a clone without tags): git
        # fills in the commit in .git_archival.txt and leaves the description empty.
        repo = tmp_path / "repo"
        _git("clone", "--quiet", "--no-tags", built.clone, repo)
        archive = subprocess.run(["git", "archive", "HEAD"], cwd=repo, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", tree], input=archive, check=True)
        assert "describe-name: \n" in (tree / ".git_archival.txt").read_text()
        out = _run(sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", tmp_path / "dist", tree)
        built_name = "improvements-0.0-py3-none-any.whl"
    else:
        # A copy of the folder: .git_archival.txt as committed, never filled in. The sdist is
        # enough to see the version (a wheel from it is what the sdist install above does).
        shutil.copytree(built.clone, tree, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".git"))
        out = _run(sys.executable, "-m", "build", "--sdist", "--no-isolation", "--outdir", tmp_path / "dist", tree)
        built_name = "improvements-0.0.tar.gz"
    assert "Traceback" not in out
    assert [p.name for p in (tmp_path / "dist").iterdir()] == [built_name]
    if built_name.endswith(".whl"):
        with zipfile.ZipFile(tmp_path / "dist" / built_name) as whl:
            assert "generator/guide/workflow.md" in whl.namelist()


def test_the_ci_workflow_init_writes_installs_improvements(built: Built, tmp_path: Path) -> None:
    # A code host as git sees one: a bare clone served over HTTP (git's "dumb" protocol).
    host = tmp_path / "host"
    _git("clone", "--quiet", "--bare", built.clone, host / "improvements.git")
    _git("update-server-info", cwd=host / "improvements.git")
    commit = _git("rev-parse", "HEAD", cwd=built.clone).strip()
    with serve_folder(host) as url:
        user = _venv(tmp_path / "user")
        _run(*_pip(user), f"improvements @ git+{url}improvements.git")
        work = tmp_path / "campaign"
        _run(user.parent / "improvements", "init", "--no-input", work)
        workflow = yaml.safe_load((work / ".github" / "workflows" / "improvements.yml").read_text())
        (step,) = [s["run"] for s in workflow["jobs"]["check"]["steps"] if s.get("name") == "Install improvements"]
        argv = shlex.split(step)
        assert argv == ["pip", "install", f"improvements @ git+{url}improvements.git@{commit}"]
        # The step as CI runs it (offline here), into a fresh environment: the same version.
        ci = _venv(tmp_path / "ci")
        _run(*_pip(ci), *argv[2:])
    version = _run(ci.parent / "improvements", "--version", cwd=tmp_path)
    assert version == f"improvements, version {built.version}\n"


# --- the README's "Start your own campaign", as written -----------------------------------------

README = REPO / "README.md"
FENCE = re.compile(r"^```sh\n(.*?)^```$", flags=re.M | re.S)


def readme_block() -> list[str]:
    """The commands of the README's own-campaign section, one a line."""
    text = README.read_text()
    section = text.split("## Start your own campaign\n", 1)[1].split("\n## ", 1)[0]
    (block,) = FENCE.findall(section)
    return block.splitlines()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_the_readme_starts_a_campaign_as_written(built: Built, tmp_path: Path) -> None:
    *commands, serve = readme_block()
    assert serve == ".venv/bin/improvements serve"
    # Offline and cheap, the README's commands unchanged: pip installs the wheel alone (no index,
    # no dependencies), and every python finds the dependencies at the end of its path, from this
    # environment, through a sitecustomize module (the README makes the environment itself).
    hook = tmp_path / "hook"
    hook.mkdir()
    ours = list(dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]))
    (hook / "sitecustomize.py").write_text(f"import sys\nsys.path.extend({ours!r})\n")
    work = tmp_path / "empty"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env.update(
        # `python3` is this interpreter's, so the dependencies on the path fit it.
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        PYTHONPATH=str(hook),
        PIP_NO_INDEX="1",
        PIP_NO_DEPS="1",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        IMPROVEMENTS=str(built.wheel),
        NO_MKDOCS_2_WARNING="1",
    )
    _run("bash", "-euo", "pipefail", "-c", "\n".join(commands), cwd=work, env=env)
    campaign = work / "my-campaign"
    where = _run(
        campaign / ".venv" / "bin" / "python",
        "-c",
        "import generator; print(generator.__file__)",
        cwd=campaign,
        env=env,
    )
    assert Path(where.strip()).is_relative_to(campaign / ".venv"), where
    index = (campaign / "site" / "index.html").read_text()
    assert "Llama 3.3 70B on H200" in index and "CUDA graphs" in index
    # The sample holds its own baseline: the first record's page shows a decision, not "none".
    (record_page,) = (campaign / "site" / "improvements").glob("*-01-cuda-graphs.html")
    assert "unreplicated" in record_page.read_text()
    # `serve` runs until stopped: started as written (on a free port), a page fetched, stopped.
    port = _free_port()
    argv = [*shlex.split(serve), "--dev-addr", f"127.0.0.1:{port}"]
    proc = subprocess.Popen(argv, cwd=campaign, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        page = _fetch_when_up(f"http://127.0.0.1:{port}/", proc)
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=60)
    assert "Llama 3.3 70B on H200" in page and "CUDA graphs" in page, err


def _fetch_when_up(url: str, proc: subprocess.Popen[bytes]) -> str:
    """The page at `url` once the server answers; fails when it exits first or takes minutes."""
    deadline = time.monotonic() + 180
    while True:
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                return str(response.read().decode())
        except OSError:
            assert proc.poll() is None, "serve exited before it answered"
            assert time.monotonic() < deadline, "serve did not answer in 3 minutes"
            time.sleep(0.2)
