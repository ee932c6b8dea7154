"""Nothing is lost: failed builds, invalid input, foreign files, concurrent runs, other locales.

- A failure injected in the middle of a build (a replace or a write that raises, as a full disk
  would) leaves the previous outputs byte for byte, and the next build completes them.
- An invalid record means no command writes anything anywhere in the repository.
- A file the generator did not write is never modified or deleted.
- Every command exits 2 on a usage error and 1 on invalid input, without a traceback.
- Concurrent `new` runs get distinct numbers; concurrent builds leave the outputs of exactly one
  input state.
- The outputs are the same bytes under other locales, time zones, hash seeds and file orders.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generator.cli import COMMANDS

from conftest import BENCH, REPO, Run, copy_campaign, run_cli, run_cli_process

# Slow: kills, races and fails builds on purpose, and changes locale and time zone.
pytestmark = pytest.mark.slow

Tree = dict[str, bytes]


def tree(root: Path, sub: str = "") -> Tree:
    """Every file under root/sub, by path relative to root, with its bytes (symlinks as their target)."""
    base = root / sub if sub else root
    out: Tree = {}
    if not base.exists():
        return out
    for path in sorted(base.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            out[rel] = b"->" + os.readlink(path).encode()
        elif path.is_file():
            out[rel] = path.read_bytes()
    return out


def _env(**extra: str) -> dict[str, str]:
    return {"PYTHONDONTWRITEBYTECODE": "1", **extra}


def _retitle(root: Path, suffix: str) -> None:
    """Change what every output shows: a record's title (its page, summary, blockers, home) and the campaign."""
    rec = root / "improvements" / "01-piecewise-cuda-graphs.yaml"
    text = rec.read_text(encoding="utf-8")
    rec.write_text(text.replace("title: Piecewise CUDA graphs", f"title: Piecewise CUDA graphs {suffix}", 1))
    camp = root / "improvements" / "campaign.yaml"
    text = camp.read_text(encoding="utf-8")
    camp.write_text(text.replace("\nname: ", f"\nname: {suffix} ", 1), encoding="utf-8")


def _built(tmp_path: Path, name: str = "repo") -> Path:
    root = copy_campaign(tmp_path / name)
    res = run_cli("build", "--quiet", cwd=root)
    assert res.returncode == 0, res.stderr
    return root


# --- a failure in the middle of a build -----------------------------------------------------

INJECT = textwrap.dedent(
    """
    # Loaded at start-up (PYTHONPATH): the Nth os.replace or fsync under INJECT_ROOT raises, as a
    # full disk would.
    import errno, os

    _root = os.environ["INJECT_ROOT"]
    _what = os.environ["INJECT_WHAT"]
    _n = int(os.environ["INJECT_N"])
    _count = 0


    def _hit(target):
        global _count
        if str(target).startswith(_root):
            _count += 1
            if _count == _n:
                raise OSError(errno.ENOSPC, "No space left on device (injected)", str(target))


    if _what == "replace":
        _replace = os.replace

        def replace(src, dst, *a, **k):
            _hit(dst)
            return _replace(src, dst, *a, **k)

        os.replace = replace
    else:
        _fsync = os.fsync

        def fsync(fd):
            # The file behind the descriptor, however it was opened (open, mkstemp, os.open).
            try:
                target = os.readlink(f"/proc/self/fd/{fd}")
            except OSError:
                target = ""
            _hit(target)
            return _fsync(fd)

        os.fsync = fsync
    """
)


def inject(root: str, what: str, n: int, patch: Callable[[str, object], None]) -> None:
    """Make the Nth os.replace (what="replace") or os.fsync ("write") of a file under `root` raise
    ENOSPC, as a full disk would: through `patch(name, new)` (a monkeypatch, undone after the
    test). INJECT, above, does the same in a fresh process, where nothing of the tests loads."""
    count = 0

    def hit(target: object) -> None:
        nonlocal count
        if str(target).startswith(root):
            count += 1
            if count == n:
                raise OSError(errno.ENOSPC, "No space left on device (injected)", str(target))

    if what == "replace":
        original_replace = os.replace

        def replace(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
            hit(dst)
            original_replace(src, dst, *args, **kwargs)

        new: object = replace
    else:
        original_fsync = os.fsync

        def fsync(fd: Any) -> None:
            # The file behind the descriptor, however it was opened (open, mkstemp, os.open).
            try:
                target = os.readlink(f"/proc/self/fd/{fd if isinstance(fd, int) else fd.fileno()}")
            except OSError:
                target = ""
            hit(target)
            original_fsync(fd)

        new = fsync
    name = "replace" if what == "replace" else "fsync"
    patch(name, new)


def _failed_build_then_a_good_one(root: Path, before: Tree, res: Run) -> None:
    assert res.returncode == 1, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    assert "injected" in res.stderr
    after = tree(root, "docs")
    assert after == before, "a failed build must leave the previous outputs exactly"
    # The next build, with nothing in the way, completes the new set.
    res = run_cli("build", "--quiet", cwd=root)
    assert res.returncode == 0, res.stderr
    final = tree(root, "docs")
    assert not any(".improvements-tmp-" in p for p in final)
    assert any(b"Piecewise CUDA graphs again" in data for data in final.values())


@pytest.mark.parametrize(("what", "n"), [("replace", 1), ("replace", 2), ("replace", 4), ("write", 1), ("write", 3)])
def test_failure_mid_build_leaves_previous_outputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, what: str, n: int
) -> None:
    # The fault injected in this process (the build is the same code either way; the case
    # below shows it in a fresh process, as a user's build meets it).
    root = _built(tmp_path)
    before = tree(root, "docs")
    _retitle(root, "again")
    with monkeypatch.context() as patched:
        inject(str(root), what, n, lambda name, new: patched.setattr(os, name, new))
        res = run_cli("build", cwd=root)
    _failed_build_then_a_good_one(root, before, res)


def test_failure_mid_build_in_a_fresh_process_leaves_previous_outputs(tmp_path: Path) -> None:
    root = _built(tmp_path)
    before = tree(root, "docs")
    _retitle(root, "again")
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(INJECT)
    env = _env(PYTHONPATH=str(hook), INJECT_ROOT=str(root), INJECT_WHAT="replace", INJECT_N="2")
    res = run_cli_process("build", cwd=root, env=env)
    _failed_build_then_a_good_one(root, before, res)


# --- invalid input writes nothing -----------------------------------------------------------

INVALID = b"title: Broken\ntier: 9\nstatus: proposed\nhypothesis: h\n"
CAMPAIGN_PROBLEM = "improvements/campaign.yaml:1:1: error[unknown-key]: unknown key `serie`"


def _break_campaign(root: Path) -> None:
    camp = root / "improvements" / "campaign.yaml"
    camp.write_bytes(b"serie: typo\n" + camp.read_bytes())


@pytest.mark.parametrize(
    "args",
    [
        ("build",),
        ("build", "--site"),
        # `new` needs only campaign.yaml to load (a half-written record elsewhere must not stop
        # a new one), so its invalid input is the campaign file; `status` edits only a record
        # that loads, so its invalid input is the record it is asked to edit.
        ("new", "Another idea", "--tier", "1", "--hypothesis", "h"),
        ("status", "50", "in-progress"),
        ("renumber", "01", "20"),
        ("renumber", "--compact"),
        ("import", str(BENCH / "sglang-bench-one-batch.jsonl"), "--record", "01"),
        ("export", "--output", "records.json"),
        ("summary",),
        ("check",),
    ],
    ids=lambda a: " ".join(a[:2]) if a[0] != "import" else "import",
)
def test_invalid_record_means_nothing_is_written(tmp_path: Path, args: tuple[str, ...]) -> None:
    root = copy_campaign(tmp_path / "repo", with_docs=True)
    # A previous good build: the invalid state must not disturb its outputs either.
    assert run_cli("build", "--quiet", cwd=root).returncode == 0
    (root / "improvements" / "50-broken.yaml").write_bytes(INVALID)
    _retitle(root, "unpublished")  # a valid change that a partial build would write
    expected = "improvements/50-broken.yaml:2:7: error[invalid-value]"
    if args[0] == "new":
        _break_campaign(root)
        expected = CAMPAIGN_PROBLEM
    before = tree(root)
    res = run_cli(*args, cwd=root)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    assert expected in res.stderr
    assert tree(root) == before


# --- files the generator did not write ------------------------------------------------------


def test_files_the_generator_did_not_write_are_never_touched(tmp_path: Path) -> None:
    root = _built(tmp_path)
    series = root / "docs" / "improvements"
    mine = {
        # A hand-written page beside the generated ones, one named like a generated page, an
        # image, a page under a folder the generator manages, and one outside.
        series / "notes.md": b"# My notes\n",
        series / "glb5improvement-77-hand-written.md": b"# Written by hand, named like the series\n",
        root / "docs" / "plots" / "my-chart.svg": b"<svg xmlns='http://www.w3.org/2000/svg'/>\n",
        root / "docs" / "extra.md": b"# Extra\n",
        root / "README.md": b"# Mine\n",
    }
    for path, data in mine.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    stamps = {path: path.stat().st_mtime_ns for path in mine}
    # A generated page the user took over by removing its header: it becomes theirs.
    generated = sorted(series.glob("glb5improvement-09-*.md"))[0]
    lines = generated.read_text(encoding="utf-8").split("\n")
    taken = "\n".join(ln for ln in lines if "generated by improvements" not in ln)
    generated.write_text(taken, encoding="utf-8")
    # Changes that rewrite every generated page and remove one record's page.
    _retitle(root, "renamed")
    record_09 = sorted((root / "improvements").glob("09-*.yaml"))[0]
    record_09.unlink()
    text = (root / "improvements" / "01-piecewise-cuda-graphs.yaml").read_text(encoding="utf-8")
    slug_09 = record_09.stem.split("-", 1)[1]
    for path in (root / "improvements").glob("*.yaml"):
        # Nothing may point at the removed record.
        content = path.read_text(encoding="utf-8")
        if slug_09 in content:
            lines = [ln for ln in content.splitlines() if slug_09 not in ln]
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    del text
    res = run_cli("build", cwd=root)
    assert res.returncode == 0, res.stdout + res.stderr
    for path, data in mine.items():
        assert path.read_bytes() == data, path
        assert path.stat().st_mtime_ns == stamps[path], path
    # The page whose record is gone is not deleted either, since it is no longer ours.
    assert generated.read_text(encoding="utf-8") == taken


def test_a_hand_written_file_where_an_output_goes_stops_the_build(tmp_path: Path) -> None:
    root = _built(tmp_path)
    summary = root / "docs" / "summary.md"
    summary.write_bytes(b"# My own summary\n")
    _retitle(root, "blocked by summary")
    before = tree(root)
    res = run_cli("build", cwd=root)
    assert res.returncode == 1
    assert "Traceback" not in res.stderr
    assert "docs/summary.md:1:1: error[output-conflict]: `docs/summary.md` exists and was not written by" in res.stderr
    assert tree(root) == before


# --- exit codes ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_exits_2_on_a_usage_error(tmp_path: Path, name: str) -> None:
    root = copy_campaign(tmp_path / "repo")
    for args in ([name, "--no-such-option"], [name, "--root", str(tmp_path / "nowhere")]):
        if name == "schema" and "--root" in args:
            args = [name, "--which", "nothing"]
        res = run_cli(*args, cwd=root)
        assert res.returncode == 2, (args, res.stdout, res.stderr)
        assert "Traceback" not in res.stderr
        assert res.stderr.strip(), args
    res = run_cli("no-such-command", cwd=root)
    assert res.returncode == 2 and "Traceback" not in res.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("check",),
        ("build",),
        ("summary",),
        ("export",),
        ("new", "Idea", "--tier", "1"),
        ("status", "50", "proposed"),
        ("renumber", "--compact"),
        ("import", str(BENCH / "sglang-bench-one-batch.jsonl"), "--baseline"),
        ("serve", "--dev-addr", "127.0.0.1:{port}"),
    ],
    ids=lambda a: a[0],
)
def test_every_command_exits_1_on_invalid_input(tmp_path: Path, args: tuple[str, ...]) -> None:
    root = copy_campaign(tmp_path / "repo")
    (root / "improvements" / "50-broken.yaml").write_bytes(INVALID)
    expected = "improvements/50-broken.yaml:2:7: error[invalid-value]"
    if args[0] == "new":
        _break_campaign(root)
        expected = CAMPAIGN_PROBLEM
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    res = run_cli(*(a.format(port=port) for a in args), cwd=root)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    assert expected in res.stderr


# --- concurrency ------------------------------------------------------------------------------


def _spawn(root: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "generator", *args],
        cwd=root,
        env={**os.environ, **_env()},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_concurrent_new_runs_get_distinct_numbers(tmp_path: Path) -> None:
    root = copy_campaign(tmp_path / "repo")
    existing = {p.name for p in (root / "improvements").glob("[0-9]*.yaml")}
    procs = [_spawn(root, "new", f"Concurrent idea {i}", "--tier", "2", "--hypothesis", "h") for i in range(6)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    created = sorted({p.name for p in (root / "improvements").glob("[0-9]*.yaml")} - existing)
    numbers = [name.split("-", 1)[0] for name in created]
    assert len(created) == 6 and len(set(numbers)) == 6, created
    res = run_cli("check", cwd=root)
    assert res.returncode == 0, res.stderr


def _reference(tmp_path: Path, name: str, suffix: str | None) -> Tree:
    root = copy_campaign(tmp_path / name)
    if suffix is not None:
        _retitle(root, suffix)
    res = run_cli("build", "--quiet", cwd=root)
    assert res.returncode == 0, res.stderr
    return tree(root, "docs")


def test_concurrent_builds_on_one_input_agree(tmp_path: Path) -> None:
    expected = _reference(tmp_path, "ref", "twice")
    root = _built(tmp_path)
    _retitle(root, "twice")
    procs = [_spawn(root, "build", "--quiet") for _ in range(3)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    assert tree(root, "docs") == expected


def _without_digests(docs: Tree) -> Tree:
    """The manifest without its input and output digests (generator.base.stamp).

    A build that races an edit records no digests, or those of the inputs as they were when
    it began, so that the next build runs in full: the outputs are compared, not the digests.
    """
    manifest = "docs/.improvements-manifest.json"
    if manifest in docs:
        data = json.loads(docs[manifest])
        docs = {**docs, manifest: json.dumps(data["files"]).encode()}
    return docs


def _switch(root: Path, source: Path) -> None:
    """Replace the record and campaign.yaml that `_retitle` changes, each whole, as an editor saves."""
    for name in ("01-piecewise-cuda-graphs.yaml", "campaign.yaml"):
        tmp = root / "improvements" / f".{name}.tmp"
        shutil.copy(source / "improvements" / name, tmp)
        os.replace(tmp, root / "improvements" / name)


def test_a_build_while_a_record_changes_leaves_one_state(tmp_path: Path) -> None:
    state_a = _without_digests(_reference(tmp_path, "ref-a", "state-a"))
    state_b = _without_digests(_reference(tmp_path, "ref-b", "state-b"))
    assert state_a != state_b
    root = _built(tmp_path)
    _retitle(root, "state-a")
    # Where in the build the change lands depends on the machine's load: each trial may see
    # either state, and must see one of them. The test below pins one window exactly.
    for delay in (0.0, 0.3, 0.8):
        # Back to A, then a build of A racing a change to B and a second build.
        shutil.rmtree(root / "improvements")
        shutil.copytree(tmp_path / "ref-a" / "improvements", root / "improvements")
        first = _spawn(root, "build", "--quiet")
        time.sleep(delay)
        _switch(root, tmp_path / "ref-b")
        second = _spawn(root, "build", "--quiet")
        for proc in (first, second):
            out, err = proc.communicate(timeout=300)
            assert proc.returncode == 0, out + err
        docs = _without_digests(tree(root, "docs"))
        # Whatever order the two finished in, the outputs are one state's, never a mix.
        assert docs in (state_a, state_b), sorted(k for k in docs if docs[k] != state_b.get(k))


def test_a_change_between_reading_and_writing_is_read_again_before_writing(tmp_path: Path) -> None:
    from generator.base.generated import LOCK_NAME
    from generator.base.stamp import inputs_digest

    state_b = _without_digests(_reference(tmp_path, "ref-b", "state-b"))
    root = _built(tmp_path)
    _retitle(root, "state-a")
    # Holding the build lock stops the build after it has read and rendered everything, just
    # before it writes; it says so, and that line (not a sleep) is when the records change.
    fd = os.open(root / LOCK_NAME, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        first = _spawn(root, "build")
        assert first.stderr is not None
        said = [first.stderr.readline()]
        assert said[0].startswith("waiting for another build"), said
        _switch(root, tmp_path / "ref-b")
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
    out, err = first.communicate(timeout=300)
    assert first.returncode == 0, out + err
    # The first build finds, before it moves anything into place, that its inputs changed since
    # it read them: it starts again and writes the new state, whole, with the digest of the
    # inputs as they are now...
    assert _without_digests(tree(root, "docs")) == state_b
    manifest = json.loads((root / "docs" / ".improvements-manifest.json").read_text())
    assert manifest.get("inputs") == inputs_digest(root), manifest
    # ...so the next build has nothing to do.
    res = run_cli("build", cwd=root)
    assert res.returncode == 0, res.stderr
    assert "0 written" in res.stdout, res.stdout
    assert _without_digests(tree(root, "docs")) == state_b


# --- determinism --------------------------------------------------------------------------

VARIANTS = [
    {"LC_ALL": "C", "TZ": "UTC", "PYTHONHASHSEED": "0"},
    {"LC_ALL": "C.UTF-8", "TZ": "Pacific/Kiritimati", "PYTHONHASHSEED": "1"},
    {"LC_ALL": "de_DE.UTF-8", "LANG": "de_DE.UTF-8", "TZ": "America/St_Johns", "PYTHONHASHSEED": "2"},
    {"LC_ALL": "tr_TR.UTF-8", "LANG": "tr_TR.UTF-8", "TZ": "Asia/Kathmandu", "PYTHONHASHSEED": "3"},
    {"LC_ALL": "POSIX", "TZ": "Etc/GMT+12", "PYTHONHASHSEED": "random", "PYTHONUTF8": "0"},
]


def _digest(files: Tree) -> dict[str, str]:
    return {k: hashlib.sha256(v).hexdigest() for k, v in files.items()}


def _outputs(root: Path, env: dict[str, str], *, commands: bool) -> Tree:
    res = run_cli("build", "--quiet", cwd=root, env=env)
    assert res.returncode == 0, res.stderr
    files = tree(root, "docs")
    if commands:
        exported = run_cli("export", cwd=root, env=env)
        assert exported.returncode == 0, exported.stderr
        summary = run_cli("summary", "--format", "json", cwd=root, env=env)
        assert summary.returncode == 0, summary.stderr
        files["<export>"] = exported.stdout.encode()
        files["<summary>"] = summary.stdout.encode()
    return files


def test_same_bytes_under_other_locales_time_zones_and_file_orders(tmp_path: Path) -> None:
    reference: Tree | None = None
    for i, env in enumerate(VARIANTS):
        root = tmp_path / f"v{i}"
        (root / "improvements").mkdir(parents=True)
        shutil.copytree(REPO / "results", root / "results") if (REPO / "results").exists() else (
            root / "results"
        ).mkdir()
        # Records created in a different order each time (directory order follows it on many
        # file systems), and with different modification times.
        names = sorted(p.name for p in (REPO / "improvements").iterdir() if p.is_file())
        order = names[::-1] if i % 2 else names[i:] + names[:i]
        for name in order:
            shutil.copy(REPO / "improvements" / name, root / "improvements" / name)
            os.utime(root / "improvements" / name, (1_000_000 * (i + 1), 1_000_000 * (i + 1)))
        # `export` and `summary` in fresh processes of their own under the reference and the
        # Turkish locale (whose case mapping differs most); the build's docs, which hold the
        # same export and summary table, under every variant.
        out = _outputs(root, {**env, "SOURCE_DATE_EPOCH": str(1_000_000 * (i + 1))}, commands=i in (0, 3))
        assert any(k.endswith(".md") for k in out)
        if reference is None:
            reference = out
        else:
            expected = {k: v for k, v in reference.items() if not k.startswith("<") or k in out}
            assert _digest(out) == _digest(expected), env


def test_a_hostile_manifest_cannot_make_the_build_delete_anything(tmp_path: Path) -> None:
    # The manifest of generated files is plain text in the repository: entries that point out
    # of the managed folders, or through a symlink, must not lead stale-file removal anywhere.
    root = _built(tmp_path)
    manifest = root / "docs" / ".improvements-manifest.json"
    header = next(ln for ln in (root / "docs" / "summary.md").read_text().splitlines() if "do not edit" in ln)
    bait = f"{header}\nnot yours to delete\n".encode()
    victims = [tmp_path / "victim.md", root / "README.md", tmp_path / "linked.md"]
    for path in victims:
        path.write_bytes(bait)
    (root / "docs" / "improvements" / "glb5improvement-98-link.md").symlink_to(tmp_path / "linked.md")
    data = json.loads(manifest.read_text())
    data["files"] += [
        "../victim.md",
        str(tmp_path / "victim.md"),
        "README.md",
        "docs/../README.md",
        "docs/improvements/../../README.md",
        "docs/improvements/glb5improvement-98-link.md",
    ]
    manifest.write_text(json.dumps(data))
    res = run_cli("build", cwd=root)
    assert res.returncode == 0, res.stderr
    for path in victims:
        assert path.read_bytes() == bait, path
    assert (root / "docs" / "improvements" / "glb5improvement-98-link.md").is_symlink()
