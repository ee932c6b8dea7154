"""`improvements init`, and a campaign started from nothing but the built wheel, as a new user would."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from generator.authoring import scaffold
from generator.base.read import parse
from generator.cli import main
from generator.commands import init

from conftest import BENCH, REPO, copy_campaign, run_cli, serve_folder

WRITTEN = [
    "improvements/campaign.yaml",
    "mkdocs.yml",
    ".gitignore",
    ".pre-commit-config.yaml",
    ".github/workflows/improvements.yml",
    "schema/campaign.schema.json",
]


def test_without_a_terminal_it_takes_defaults_and_leaves_unknowns_out(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    run = run_cli("init", str(root), cwd=tmp_path, input="")
    assert run.returncode == 0, run.stderr
    assert sorted(run.stdout.split()) == sorted(f"fresh/{p}" for p in WRITTEN)
    campaign, _ = parse((root / "improvements" / "campaign.yaml").read_text())
    assert campaign["name"] == "fresh"
    # Nothing invented: no GPU count, no version, no goal, no result; unknown names say so.
    assert campaign["hardware"] == {"gpu": "not recorded"}
    assert campaign["engine"] == {"name": "not recorded"}
    assert campaign["model"] == {"name": "not recorded"}
    assert "goals" not in campaign and "results" not in campaign["baseline"]
    assert campaign["baseline"]["command"] == "$BASELINE_COMMAND"
    # A primary metric from the start, so the summary ranks by a decision, not "no primary metric".
    assert campaign["decision"] == {"primary_metric": "output_throughput"}
    assert "model, gpu, engine, baseline command" in run.stderr
    # The site is its name and the plugin with the guide on; the plugin supplies the rest.
    settings = yaml.safe_load((root / "mkdocs.yml").read_text())
    assert settings == {"site_name": "fresh", "plugins": [{"improvements": {"guide": True}}]}
    assert run_cli("check", cwd=root).returncode == 0
    build = run_cli("build", cwd=root)
    assert build.returncode == 0, build.stderr
    home = (root / "docs" / "index.md").read_text()
    assert "- GPU: not recorded (GPU count not recorded)" in home and "1 ×" not in home


def test_options_fill_the_campaign(tmp_path: Path) -> None:
    run = run_cli(
        "init", "--name", "Qwen3 on 8x H100", "--model", "Qwen/Qwen3-235B-A22B", "--gpu", "H100 80GB",
        "--gpu-count", "8", "--engine", "SGLang", "--engine-version", "0.5.4",
        "--goal", "output_throughput:100@1", "--goal", "ttft_p99:200", cwd=tmp_path, input="",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    campaign, _ = parse((tmp_path / "improvements" / "campaign.yaml").read_text())
    assert campaign["name"] == "Qwen3 on 8x H100"
    assert campaign["series"] == "qwen3-on-8x-h100"
    assert campaign["hardware"] == {"gpu": "H100 80GB", "count": 8}
    assert campaign["engine"] == {"name": "SGLang", "version": "0.5.4"}
    # The engine's plain serve command for the model, and the GPU count as its tensor-parallel size.
    assert (
        campaign["baseline"]["command"]
        == "python -m sglang.launch_server --model-path Qwen/Qwen3-235B-A22B --tp-size 8"
    )
    assert campaign["goals"] == [
        {"metric": "output_throughput", "target": 100, "concurrency": 1},
        {"metric": "ttft_p99", "target": 200},
    ]
    assert "not given" not in run.stderr
    assert run_cli("check", cwd=tmp_path).returncode == 0
    home_build = run_cli("build", cwd=tmp_path)
    assert home_build.returncode == 0, home_build.stderr
    assert "- GPU: 8 × H100 80GB" in (tmp_path / "docs" / "index.md").read_text()


def test_a_terminal_is_asked_for_what_the_options_leave_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(init, "stdin_is_terminal", lambda: True)
    monkeypatch.chdir(tmp_path)
    answers = "\n".join(["My campaign", "GLM-5", "RTX PRO 6000", "", "vLLM", "", "", "bogus:1", "itl_mean:30@8", ""])
    # Through the group, as the CLI runs it: invoked alone, click would cache a help option
    # without the group's `-h` on the shared command object, and the command reference would differ.
    result = CliRunner().invoke(main, ["init"], input=answers + "\n")
    assert result.exit_code == 0, result.output
    campaign, _ = parse((tmp_path / "improvements" / "campaign.yaml").read_text())
    assert campaign["model"] == {"name": "GLM-5"}
    assert campaign["hardware"] == {"gpu": "RTX PRO 6000"}  # a blank count stays unknown
    assert campaign["baseline"]["command"] == "vllm serve GLM-5"  # the default, taken with Enter
    assert campaign["goals"] == [{"metric": "itl_mean", "target": 30, "concurrency": 8}]
    assert "unknown metric `bogus`" in result.output


def test_nothing_is_overwritten_and_nothing_half_written(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("mine\n")
    (tmp_path / "mkdocs.yml").symlink_to(tmp_path / "elsewhere.yml")  # a dangling link is taken too
    run = run_cli("init", cwd=tmp_path, input="")
    assert run.returncode == 2
    assert "mkdocs.yml, .gitignore" in run.stderr and "Traceback" not in run.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [".gitignore", "mkdocs.yml"]
    assert (tmp_path / ".gitignore").read_text() == "mine\n"
    assert not (tmp_path / "elsewhere.yml").exists()


def test_the_samples_are_the_real_files_and_import_in_a_campaign_that_exists(tmp_path: Path) -> None:
    # Written with a new campaign: the benchmark tools' own files, byte for byte as the tests have them.
    run = run_cli("init", "--sample", cwd=tmp_path, input="")
    assert run.returncode == 0, run.stderr
    samples = tmp_path / "samples"
    assert sorted(p.name for p in samples.iterdir()) == [
        "README.md",
        "sglang-bench-one-batch.jsonl",
        "sglang-bench-serving.jsonl",
        "vllm-benchmark-serving.json",
    ]
    # The one-batch A/B: the real file's first six lines (cuda_graph and no_cuda_graph), byte for byte.
    real = (BENCH / "sglang-bench-one-batch.jsonl").read_bytes().splitlines(keepends=True)
    assert (samples / "sglang-bench-one-batch.jsonl").read_bytes() == b"".join(real[:6])
    assert (samples / "sglang-bench-serving.jsonl").read_bytes() == (
        BENCH / "sglang-bench-serving-2024-sweep.jsonl"
    ).read_bytes()
    assert (samples / "vllm-benchmark-serving.json").read_bytes() == (
        BENCH / "vllm-benchmark-serving-legacy.json"
    ).read_bytes()
    # In a folder that holds a campaign already (the shipped one), only the samples are written.
    root = copy_campaign(tmp_path / "shipped")
    before = sorted(p for p in root.rglob("*"))
    run = run_cli("init", "--sample", cwd=root, input="")
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [f"samples/{p.name}" for p in sorted(samples.iterdir())]
    assert sorted(p for p in root.rglob("*") if "samples" not in p.parts) == before
    run = run_cli("new", "Practice", "--tier", "1", "--hypothesis", "h", cwd=root)
    assert run.returncode == 0, run.stderr
    run = run_cli("import", "samples/vllm-benchmark-serving.json", "--record", "practice", cwd=root)
    assert run.returncode == 0, run.stderr
    # Never over a sample that exists: nothing is written, and it says what is in the way.
    (root / "samples" / "README.md").write_text("mine\n")
    run = run_cli("init", "--sample", cwd=root, input="")
    assert run.returncode != 0 and "samples/README.md" in run.stderr
    assert (root / "samples" / "README.md").read_text() == "mine\n"


def test_a_linked_folder_is_not_written_through(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    root = tmp_path / "repo"
    root.mkdir()
    (root / "improvements").symlink_to(elsewhere)
    run = run_cli("init", str(root), cwd=tmp_path, input="")
    assert run.returncode == 2 and "improvements in" in run.stderr and "is a link" in run.stderr
    assert list(elsewhere.iterdir()) == [] and sorted(p.name for p in root.iterdir()) == ["improvements"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--gpu-count", "eight"), "not a number of GPUs"),
        (("--gpu-count", "0"), "not a number of GPUs"),
        (("--goal", "throughput>100"), "METRIC:TARGET"),
        (("--goal", "output_thruput:100"), "did you mean `output_throughput`?"),
    ],
)
def test_bad_options_are_usage_errors(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    run = run_cli("init", *args, cwd=tmp_path, input="")
    assert run.returncode == 2 and message in run.stderr and "Traceback" not in run.stderr
    assert list(tmp_path.iterdir()) == []


def test_the_pre_commit_hook_is_the_one_the_package_offers(tmp_path: Path) -> None:
    assert run_cli("init", cwd=tmp_path, input="").returncode == 0
    config = yaml.safe_load((tmp_path / ".pre-commit-config.yaml").read_text())
    (hook,) = config["repos"][0]["hooks"]
    (offered,) = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    for key in ("id", "name", "entry", "pass_filenames", "files"):
        assert hook[key] == offered[key], key


@pytest.mark.slow
def test_the_ci_workflow_is_a_valid_github_workflow(tmp_path: Path) -> None:
    assert run_cli("init", "--package", "improvements==9.9", cwd=tmp_path, input="").returncode == 0
    workflow = tmp_path / ".github" / "workflows" / "improvements.yml"
    checker = Path(sys.executable).parent / "check-jsonschema"
    proc = subprocess.run(
        [str(checker), "--builtin-schema", "vendor.github-workflows", str(workflow)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    steps = yaml.safe_load(workflow.read_text())["jobs"]["check"]["steps"]
    runs = [step.get("run", "") for step in steps]
    assert "pip install improvements==9.9" in runs
    assert "improvements check --format github" in runs and "improvements build --site" in runs
    assert "${{ github.ref }}" in workflow.read_text()


# --- what the CI workflow installs ---------------------------------------------------------------

SHA = "0123456789abcdef0123456789abcdef01234567"
WHEEL_URL = "https://example.org/dist/improvements-0.2.0-py3-none-any.whl"
REPO_URL = "https://github.com/OWNER/improvements"
GIT = {"vcs": "git", "commit_id": SHA}


@pytest.mark.parametrize(
    ("version", "direct_url", "run"),
    [
        # From a package index (no direct URL): a range that holds the installed release.
        ("0.2.0", None, "pip install 'improvements>=0.2.0,<0.3'"),
        ("1.4.2", None, "pip install 'improvements>=1.4.2,<2'"),
        ("0.3.0rc1", None, "pip install improvements==0.3.0rc1"),
        # From a repository: that commit, whatever name it was asked for by.
        (
            "0.2.0",
            {"url": REPO_URL, "vcs_info": {**GIT, "requested_revision": "v0.2.0"}},
            f"pip install 'improvements @ git+https://github.com/OWNER/improvements@{SHA}'",
        ),
        (
            "0.2.0",
            {"url": "https://example.org/mono.git", "subdirectory": "tools/improvements", "vcs_info": GIT},
            f"pip install 'improvements @ git+https://example.org/mono.git@{SHA}#subdirectory=tools/improvements'",
        ),
        # From a wheel on the web: that file, checked against its hash.
        (
            "0.2.0",
            {"url": WHEEL_URL, "archive_info": {"hashes": {"sha256": "ab" * 32}}},
            f"pip install 'improvements @ {WHEEL_URL}#sha256={'ab' * 32}'",
        ),
    ],
)
def test_ci_installs_improvements_the_way_it_was_installed(version: str, direct_url: dict | None, run: str) -> None:
    install = scaffold.install_of(version, None if direct_url is None else json.dumps(direct_url))
    assert install.run == run and install.reachable
    assert shlex.split(run)[2].startswith("improvements")


@pytest.mark.parametrize(
    ("version", "direct_url", "said"),
    [
        ("0.1.dev3+g1a2b3c4", None, "a local build (0.1.dev3+g1a2b3c4)"),
        ("0.0", {"url": "file:///home/me/improvements", "dir_info": {"editable": True}}, "a folder on this machine"),
        ("0.0", {"url": "file:///tmp/improvements-0.0-py3-none-any.whl", "archive_info": {}}, "a file on this machine"),
        ("0.1.dev3", {"url": "file:///home/me/improvements", "vcs_info": GIT}, "a repository on this machine"),
        ("0.0", "{not json", "a place its metadata does not name"),
    ],
)
def test_an_install_ci_cannot_reach_is_a_step_that_says_so(version: str, direct_url: object, said: str) -> None:
    text = direct_url if isinstance(direct_url, str) or direct_url is None else json.dumps(direct_url)
    install = scaffold.install_of(version, text)
    assert install.run == scaffold.UNREACHABLE_RUN and not install.reachable
    comment = " ".join(install.comment)
    assert f"installed from {said}, which CI cannot reach" in comment
    assert "git+https://github.com/OWNER/improvements@v0.2.0" in comment
    assert "/home/me" not in comment and "/tmp" not in comment  # no path of this machine in a committed file


def _clone_with_origin(tmp_path: Path, origin: str, pushed: bool) -> tuple[Path, str]:
    """A checkout whose origin is `origin`; `pushed`: a remote-tracking branch of it holds HEAD."""
    repo = tmp_path / "clone"
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}  # fmt: skip
    for args in (["init", "-q", str(repo)], ["-C", str(repo), "commit", "-q", "--allow-empty", "-m", "one"]):
        subprocess.run(["git", *args], check=True, env=env)
    subprocess.run(["git", "-C", str(repo), "remote", "add", "origin", origin], check=True)
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
    if pushed:
        subprocess.run(["git", "-C", str(repo), "update-ref", "refs/remotes/origin/main", "HEAD"], check=True)
    return repo, head.stdout.strip()


@pytest.mark.slow  # git processes
@pytest.mark.parametrize("installed", ["editable", "folder", "git"])
def test_a_clone_installed_here_gives_its_origin_at_the_commit(tmp_path: Path, installed: str) -> None:
    repo, head = _clone_with_origin(tmp_path, "https://github.com/OWNER/improvements.git", pushed=True)
    url = repo.as_uri()
    direct_url: dict[str, object] = {
        "editable": {"url": url, "dir_info": {"editable": True}},
        "folder": {"url": url, "dir_info": {}},
        "git": {"url": url, "vcs_info": {"vcs": "git", "commit_id": head}},
    }[installed]
    version = f"0.1.dev3+g{head[:9]}"
    install = scaffold.install_of(version, json.dumps(direct_url))
    assert install.reachable
    assert shlex.split(install.run) == [
        "pip", "install", f"improvements @ git+https://github.com/OWNER/improvements.git@{head}"
    ]  # fmt: skip
    assert str(tmp_path) not in install.run + " ".join(install.comment)  # no path of this machine in a committed file


@pytest.mark.slow  # git processes
@pytest.mark.parametrize(
    ("origin", "pushed", "version"),
    [
        ("https://github.com/OWNER/improvements.git", False, "0.1.dev3+g{h}"),  # the origin may not have it
        ("https://me:s3cret@example.org/improvements.git", True, "0.1.dev3+g{h}"),  # a credential, never written
        ("git@github.com:OWNER/improvements.git", True, "0.1.dev3+g{h}"),  # ssh: CI has no key for it
        ("https://github.com/OWNER/improvements.git", True, "0.1.dev3+g{h}.d20261202"),  # uncommitted changes
    ],
)
def test_a_clone_ci_cannot_get_the_commit_from_is_a_step_that_says_so(
    tmp_path: Path, origin: str, pushed: bool, version: str
) -> None:
    repo, head = _clone_with_origin(tmp_path, origin, pushed)
    install = scaffold.install_of(version.format(h=head[:9]), json.dumps({"url": repo.as_uri(), "dir_info": {}}))
    assert install.run == scaffold.UNREACHABLE_RUN and not install.reachable
    assert "s3cret" not in " ".join(install.comment)


class _Installed:
    """A distribution as importlib.metadata gives it: a version and its direct_url.json."""

    def __init__(self, version: str, direct_url: dict[str, object] | None) -> None:
        self.version = version
        self._direct_url = direct_url

    def read_text(self, name: str) -> str | None:
        assert name == "direct_url.json"
        return None if self._direct_url is None else json.dumps(self._direct_url)


def _workflow(root: Path) -> tuple[str, list[str]]:
    workflow = root / ".github" / "workflows" / "improvements.yml"
    checker = Path(sys.executable).parent / "check-jsonschema"
    proc = subprocess.run(
        [str(checker), "--builtin-schema", "vendor.github-workflows", str(workflow)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    steps = yaml.safe_load(workflow.read_text())["jobs"]["check"]["steps"]
    (install,) = [step["run"] for step in steps if step.get("name") == "Install improvements"]
    return workflow.read_text(), shlex.split(install)


@pytest.mark.slow  # fresh processes (pip's view of the install)
def test_the_workflow_installs_the_commit_init_was_installed_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.metadata

    direct_url = {"url": REPO_URL, "vcs_info": GIT}
    monkeypatch.setattr(importlib.metadata, "distribution", lambda name: _Installed("0.2.1.dev4+g0123456", direct_url))
    texts = []
    for name in ("one", "two"):
        run = run_cli("init", name, cwd=tmp_path, input="")
        assert run.returncode == 0, run.stderr
        assert "CI cannot install" not in run.stderr
        text, argv = _workflow(tmp_path / name)
        assert argv == ["pip", "install", f"improvements @ git+https://github.com/OWNER/improvements@{SHA}"]
        texts.append(text)
    # The same installation writes the same workflow, byte for byte.
    assert texts[0] == texts[1]


@pytest.mark.slow  # a fresh process
def test_the_workflow_from_this_installation_exists_or_says_what_to_set(tmp_path: Path) -> None:
    # This checkout's editable install is a folder CI cannot reach: the step fails with what to do.
    expected = scaffold.ci_install(None)
    run = run_cli("init", cwd=tmp_path, input="")
    assert run.returncode == 0, run.stderr
    text, argv = _workflow(tmp_path)
    assert argv == shlex.split(expected.run)
    assert "improvements==0.1.0" not in text  # the old pin, of a version no index serves
    assert ("CI cannot install improvements the way it was installed here" in run.stderr) is not expected.reachable


# --- the wheel, in a fresh environment, in an empty folder ------------------------------------


def _fresh_venv(tmp_path: Path) -> Path:
    """A virtual environment holding only the wheel built from this checkout; returns its bin/.

    Offline and fast: the wheel is built without build isolation (with this environment's
    setuptools) and installed with --no-deps; its dependencies (mkdocs, scipy, ...) come from
    this environment through a .pth file that appends its site-packages to the new one's path.
    A .pth line adds the folder only, without running the .pth files inside it, so this
    checkout's editable install is not active there: `generator` can only come from the wheel
    (the test asserts it), and nothing from the repository's folders is on the path.
    """
    # Built from a copy of what the wheel is made of, so no build/ or egg-info lands in the checkout.
    source = tmp_path / "source"
    shutil.copytree(REPO / "generator", source / "generator", ignore=shutil.ignore_patterns("__pycache__"))
    # The package `generator.guide` is docs/guide (pyproject.toml's package-dir).
    shutil.copytree(REPO / "docs" / "guide", source / "docs" / "guide")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    wheels = tmp_path / "wheels"
    build = [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "--no-build-isolation", "-q"]
    proc = subprocess.run([*build, "-w", str(wheels)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (wheel,) = wheels.glob("improvements-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    bindir = venv / "bin"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(bindir / "python"), "install", "-q", "--no-deps", str(wheel)],
        check=True,
        capture_output=True,
    )
    site = Path(sysconfig.get_paths(vars={"base": str(venv), "platbase": str(venv)})["purelib"])
    (site / "zz_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return bindir


@pytest.mark.browser
def test_a_new_user_from_the_wheel(tmp_path: Path, browser: object) -> None:
    start = time.monotonic()
    bindir = _fresh_venv(tmp_path)
    work = tmp_path / "empty"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PATH=f"{bindir}{os.pathsep}{env.get('PATH', '')}", PYTHONDONTWRITEBYTECODE="1")
    env["NO_MKDOCS_2_WARNING"] = "1"

    def user(*args: str) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [str(bindir / args[0]), *args[1:]],
            cwd=work,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, f"{' '.join(args)}\n{proc.stdout}\n{proc.stderr}"
        return proc

    where = user("python", "-c", "import generator; print(generator.__file__)").stdout.strip()
    assert Path(where).is_relative_to(tmp_path / "venv"), where
    user("improvements", "init")
    new = user("improvements", "new", "Disable NCCL peer-to-peer (NCCL_P2P_DISABLE=1)", "--tier", "1",
               "--hypothesis", "Peer-to-peer over PCIe may be slower than through host memory.")  # fmt: skip
    assert new.stdout == "improvements/01-disable-nccl-peer-to-peer.yaml\n"
    bench = BENCH / "sglang-bench-serving-2024-sweep.jsonl"
    user("improvements", "import", str(bench), "--record", "disable-nccl-peer-to-peer")
    user("improvements", "check")
    user("improvements", "build", "--site")
    site = work / "site"
    assert (site / "stylesheets" / "improvements.css").is_file() and (site / "tags.html").is_file()
    _browse(browser, site)
    print(f"wheel to browsed site: {time.monotonic() - start:.1f} s")


def _browse(browser: object, site: Path) -> None:
    from playwright.sync_api import Browser, expect

    assert isinstance(browser, Browser)
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        with serve_folder(site) as url:
            page.goto(url + "index.html")
            expect(page.locator("article")).to_contain_text("GPU count not recorded")
            # The navigation the plugin lays out: the fixed pages, then the tier with the record.
            nav = page.locator("nav.md-nav--primary")
            for label in ("Summary", "Blockers", "Tags", "Tier 1"):
                expect(nav).to_contain_text(label)
            page.goto(url + "summary.html")
            page.get_by_role("link", name="Disable NCCL peer-to-peer (NCCL_P2P_DISABLE=1)").first.click()
            expect(page.locator("h1")).to_contain_text("Disable NCCL peer-to-peer")
            # The packaged stylesheet is in force: badges are filled, not plain text.
            badge = page.locator(".badge.tier-1").first
            expect(badge).to_have_css("background-color", "rgb(30, 111, 192)")
            # Material's palette toggle and search are there without a line of theme settings.
            expect(page.locator("[data-md-component=palette]")).to_have_count(1)
            page.locator("label.md-search__icon, .md-search__input").first.click()
    finally:
        context.close()
    assert errors == []


# --- the plugin's defaults ----------------------------------------------------------------------


def _campaign_with(tmp_path: Path, mkdocs_yml: str) -> Path:
    root = tmp_path / "repo"
    assert run_cli("init", str(root), "--gpu", "H100", cwd=tmp_path, input="").returncode == 0
    (root / "mkdocs.yml").unlink()
    (root / "mkdocs.yml").write_text(mkdocs_yml)
    new = run_cli("new", "An idea", "--tier", "2", "--tags", "nccl", "--hypothesis", "h", cwd=root)
    assert new.returncode == 0, new.stderr
    return root


@pytest.mark.mkdocs
def test_two_lines_of_mkdocs_yml_give_the_whole_site(tmp_path: Path) -> None:
    root = _campaign_with(tmp_path, "site_name: Two lines\nplugins: [improvements]\n")
    (root / "docs").mkdir()
    (root / "docs" / "notes.md").write_text("# Notes\n\nA page of the campaign's own.\n")
    proc = run_cli("build", "--site", cwd=root)
    assert proc.returncode == 0, proc.stderr
    site = root / "site"
    # Flat .html pages (no folder per page), the theme with both palettes, no web fonts.
    index = (site / "index.html").read_text()
    assert (site / "summary.html").is_file() and (site / "tags.html").is_file()
    assert 'data-md-color-scheme="default"' in index and 'data-md-color-scheme="slate"' in index
    assert "Switch to dark mode" in index and "Switch to light mode" in index
    assert "fonts.googleapis.com" not in index
    assert 'href="stylesheets/improvements.css"' in index
    assert (site / "stylesheets" / "improvements.css").read_bytes() == (
        REPO / "generator" / "templates" / "site" / "improvements.css"
    ).read_bytes()
    assert (site / "search" / "search_index.json").is_file()
    # The navigation: home, summary, the tier sections, blockers, tags, then the campaign's own page.
    nav = index[index.index('class="md-nav md-nav--primary"') :]
    order = [
        nav.index(s)
        for s in ('href="summary.html"', "Tier 2", 'href="blockers.html"', 'href="tags.html"', 'href="notes.html"')
    ]
    assert order == sorted(order)
    assert "nccl" in (site / "tags.html").read_text()


@pytest.mark.mkdocs
def test_what_mkdocs_yml_says_wins(tmp_path: Path) -> None:
    root = _campaign_with(
        tmp_path,
        "site_name: Mine\n"
        "use_directory_urls: true\n"
        "theme:\n  name: material\n  palette: {scheme: slate, primary: red}\n"
        "nav:\n  - Home: index.md\n  - Summary: summary.md\n"
        "plugins:\n  - improvements\n  - search\n",
    )
    (root / "docs" / "stylesheets").mkdir(parents=True)
    (root / "docs" / "stylesheets" / "improvements.css").write_text("/* the campaign's own */\n")
    proc = run_cli("build", "--site", cwd=root)
    assert proc.returncode == 0, proc.stderr
    site = root / "site"
    assert (site / "summary" / "index.html").is_file()  # directory URLs, as asked
    index = (site / "index.html").read_text()
    assert 'data-md-color-primary="red"' in index and "Switch to dark mode" not in index
    # Its own nav, with the tier sections added, and nothing else.
    links = re.findall(r'href="([^"#]*)" class="md-nav__link', index)
    assert "summary/" in links and "blockers/" not in links and "tags/" not in links
    assert "Tier 2" in index[index.index('class="md-nav md-nav--primary"') :]
    assert (site / "stylesheets" / "improvements.css").read_text() == "/* the campaign's own */\n"


@pytest.mark.parametrize(
    ("name", "series"),
    [
        # Whole words, never cut mid-phrase (it was `llama-3-3-70b-on`).
        ("Llama 3.3 70B on 4x H100", "llama-3-3-70b-on-4x-h100"),
        # Too long: words up to 32 characters, and no dangling "on" at the cut.
        ("DeepSeek-V3.2 Exp speculative decoding on 16x H200 with EAGLE", "deepseek-v3-2-exp-speculative"),
        ("Qwen3 MoE serving campaign on", "qwen3-moe-serving-campaign"),
        ("MSCCL++", "mscclpp"),
        ("!!!", "improvement"),
    ],
)
def test_series_keeps_whole_words(name: str, series: str) -> None:
    assert init.series_of(name) == series


@pytest.mark.parametrize(
    ("engine", "expected"),
    [
        ("SGLang", "python -m sglang.launch_server --model-path meta-llama/Llama-3.3-70B-Instruct --tp-size 4"),
        ("vLLM", "vllm serve meta-llama/Llama-3.3-70B-Instruct --tensor-parallel-size 4"),
    ],
)
def test_the_gpu_count_reaches_the_baseline_command(tmp_path: Path, engine: str, expected: str) -> None:
    run = run_cli(
        "init", "--no-input", "--name", "Llama 3.3 70B on 4x H100", "--model", "meta-llama/Llama-3.3-70B-Instruct",
        "--gpu", "H100", "--gpu-count", "4", "--engine", engine, cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    campaign, _ = parse((tmp_path / "improvements" / "campaign.yaml").read_text())
    assert campaign["baseline"]["command"] == expected
    assert campaign["series"] == "llama-3-3-70b-on-4x-h100"
    # The new campaign's site carries the guide, which the starter record points at.
    assert "guide: true" in (tmp_path / "mkdocs.yml").read_text()
