"""`improvements run`: no text of a record reaches a printed or run shell line unless as a quoted word.

Each attack of issue 52 ("code runs from printed text") and 46 (`inside:`/`image:` dropped, the
server-mode dry run never returning), as written: a line break in a label or a pattern, a
`{command}` inside quotes under `bash -c`, a 250-character label, a change that runs in a
container. `check` refuses them with their position; what it lets through, the printed script
runs as printed under bash, with a stub engine that records its argv and nothing else running.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import stat
import subprocess
from pathlib import Path

import pytest
import yaml

from generator.base.problems import CommandError
from generator.runner.plan import Arm, Plan, draw_runs, with_slots

from conftest import run_cli

BASE = "title: T\ntier: 1\nstatus: in-progress\nhypothesis: H.\n"
RUN = {"bench": {"command": "stubbench {output} -- {command}"}, "format": "vllm-bench-serve"}


def campaign(root: Path, records: dict[str, str], run: dict | None = None, label: str = "base") -> Path:
    (root / "improvements").mkdir(parents=True)
    data = {
        "name": "Run text",
        "series": "RX",
        "model": {"name": "tiny"},
        "hardware": {"gpu": "none", "count": 1},
        "engine": {"name": "e"},
        "baseline": {"label": label, "command": "stubengine --port 8000"},
        "tiers": {1: "one", 2: "two", 3: "three"},
        "run": run if run is not None else RUN,
    }
    (root / "improvements" / "campaign.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    for name, text in records.items():
        (root / "improvements" / name).write_text(text)
    return root


def check(root: Path) -> str:
    done = run_cli("check", "--root", str(root))
    return done.stdout + done.stderr


def stubs(folder: Path) -> dict[str, str]:
    """A PATH with `stubengine` (records its argv) and `stubbench` (runs what follows `--`, writes
    nothing): what a printed script runs, and nothing else."""
    folder.mkdir()
    (folder / "stubengine").write_text('#!/bin/bash\nprintf \'%s\\0\' "$@" >> "$ENGINE_ARGV"\n')
    (folder / "stubbench").write_text('#!/bin/bash\nshift\n[ "$1" = -- ] && shift\n"$@"\n')
    for f in folder.iterdir():
        f.chmod(f.stat().st_mode | stat.S_IXUSR)
    return {**os.environ, "PATH": f"{folder}:{os.environ['PATH']}", "ENGINE_ARGV": str(folder / "argv")}


def run_script(text: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The printed script under bash; one that does not return (the old server mode's) is stopped,
    its whole process group, and the test fails on the timeout."""
    proc = subprocess.Popen(
        ["bash", "-c", text],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.communicate(timeout=10)
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


# --- (a) line breaks in labels and patterns -----------------------------------------------------


@pytest.mark.parametrize(
    ("where", "loc"),
    [("baseline", "baseline.label"), ("variant", "variants[0].label"), ("ready", "run.ready.log")],
)
def test_a_line_break_in_a_printed_label_or_pattern_is_refused_where_it_is(
    tmp_path: Path, where: str, loc: str
) -> None:
    hostile = "fine\ntouch PWN"
    record = BASE + "change:\n  flags:\n    - flag: --fast\n"
    run = dict(RUN)
    if where == "variant":
        record += "variants:\n  - label: " + '"fine\\ntouch PWN"' + "\n    outcome: rejected\n"
    if where == "ready":
        run = {**RUN, "bench": {"command": "stubbench {output}"}, "ready": {"log": hostile}}
    root = campaign(tmp_path / "c", {"01-x.yaml": record}, run, label=hostile if where == "baseline" else "base")
    out = check(root)
    line = next(x for x in out.splitlines() if "error[invisible-character]" in x and f"`{loc}`" in x)
    shown = "improvements/01-x.yaml" if where == "variant" else "improvements/campaign.yaml"
    assert line.startswith(f"{shown}:") and "a line break at character 5" in line and "hint:" in line
    assert run_cli("run", "x", "--root", str(root), "--dry-run").returncode == 1


def test_the_dry_run_prints_no_text_as_a_command_line_even_past_check(tmp_path: Path) -> None:
    from generator.runner.script import dry_run_text

    # The labels and the root as the plan holds them, whatever `check` let through: each is a comment.
    arms = tuple(
        with_slots(
            [
                Arm("baseline", "base\ntouch PWN1", "baseline", None, ("stubengine", "--a"), ()),
                Arm("x", "x\rtouch PWN2\u2028touch PWN3", "arm", None, ("stubengine", "--b"), ()),
            ]
        )
    )
    plan = Plan(
        "p1",
        "x",
        "improvements/01-x.yaml",
        0,
        1,
        (None,),
        arms,
        tuple(draw_runs(list(arms), 1, [None], 0)),
        {**RUN, "format": "fmt\ntouch PWN4"},
        "w",
    )
    text = dry_run_text(plan, tmp_path / "root\ntouch PWN5")
    env = stubs(tmp_path / "bin")
    done = run_script(text, tmp_path, env)
    assert done.returncode == 0, done.stderr
    assert not list(tmp_path.glob("PWN*"))
    assert sorted(Path(env["ENGINE_ARGV"]).read_text().split("\0")[:-1]) == ["--a", "--b"]
    assert "# arm baseline (baseline, {arm} and paths: a0): base\\x0atouch PWN1" in text


@pytest.mark.parametrize("step", ["echo 'open", "}; touch PWN; f() {", "cat <<EOF", "echo joined \\"])
def test_a_script_bash_would_read_otherwise_is_never_printed(tmp_path: Path, step: str) -> None:
    from generator.runner.script import dry_run_text

    arms = tuple(
        with_slots(
            [
                Arm("baseline", "b", "baseline", None, ("stubengine",), ()),
                Arm("x", "x", "arm", None, ("stubengine", "--b"), (), (step,)),
            ]
        )
    )
    plan = Plan("p1", "x", "r", 0, 1, (None,), arms, tuple(draw_runs(list(arms), 1, [None], 0)), RUN, "w")
    cwd = Path.cwd()
    os.chdir(tmp_path)
    try:
        with pytest.raises(CommandError, match="bash does not read this line"):
            dry_run_text(plan, tmp_path)
    finally:
        os.chdir(cwd)
    assert not list(tmp_path.glob("PWN*"))  # reading it ran nothing


def test_a_comment_that_would_hold_code_is_caught_by_bash_reading_the_script(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The second line of defence: were a label printed unescaped, bash's reading of the script
    # would hold a command the runner's lines do not, and nothing is printed.
    from generator.runner import script

    monkeypatch.setattr(script, "visible", lambda text: text)
    arms = tuple(
        with_slots(
            [
                Arm("baseline", "base\ntouch PWN", "baseline", None, ("stubengine",), ()),
                Arm("x", "x", "arm", None, ("stubengine", "--b"), ()),
            ]
        )
    )
    plan = Plan("p1", "x", "r", 0, 1, (None,), arms, tuple(draw_runs(list(arms), 1, [None], 0)), RUN, "w")
    with pytest.raises(CommandError, match="would not run what the runner runs"):
        script.dry_run_text(plan, tmp_path)


def test_bash_parses_hostile_text_without_running_it(tmp_path: Path) -> None:
    from generator.base.shell import bash_parsed

    cwd = Path.cwd()
    os.chdir(tmp_path)
    try:
        found = bash_parsed(["a # c\nb &\nc", "}; touch PWN; f() {", "x '$(touch PWN)'", "echo a \\"])
    finally:
        os.chdir(cwd)
    assert found == ["    a;\n    b & c", None, "    x '$(touch PWN)'", None]
    assert not (tmp_path / "PWN").exists()


# --- (b) {command} inside quotes ----------------------------------------------------------------

HOSTILE_FLAGS = (
    "change:\n  flags:\n    - \"--name '$(touch PWN)' '`touch PWN2`'\"\n"
    '    - flag: --env\n      value: "a\\"b\'; touch PWN3"\n'
)


@pytest.mark.parametrize(
    ("template", "where"),
    [
        ('bash -c "{command}" {output}', "inside double quotes"),
        ("bash -c '{command}' {output}", "inside single quotes"),
        ("stubbench {output} `echo {command}`", "inside backticks"),
        ("stubbench {output} -- eval {command}", "after `eval`"),
        ("stubbench {output} -- sh -c {command}", "after `eval` or a shell"),
        ("cat <<EOF > {output}\n{command}\nEOF", "inside a here-document"),
    ],
)
def test_a_bench_template_quoting_command_is_refused_with_its_position(
    tmp_path: Path, template: str, where: str
) -> None:
    run = {**RUN, "bench": {"command": template}}
    root = campaign(tmp_path / "c", {"01-x.yaml": BASE + HOSTILE_FLAGS}, run)
    out = check(root)
    line = next(x for x in out.splitlines() if "error[shell-syntax]" in x and "run.bench.command" in x)
    assert line.startswith("improvements/campaign.yaml:") and where in line
    assert f"character {template.index('{command}') + 1}" in line and 'exec "$@"' in line
    refused = run_cli("run", "x", "--root", str(root), "--dry-run")
    assert refused.returncode == 1 and "error[shell-syntax]" in refused.stdout + refused.stderr
    assert not list(root.glob("PWN*"))


@pytest.mark.parametrize(
    "template",
    [
        "stubbench {output} -- {command}",
        "stubbench {output} -- bash -c 'exec \"$@\"' bash {command}",
        'stubbench "{output}" -- bash -c \'cd . && "$@"\' bash {command}',
    ],
)
def test_hostile_flag_values_under_the_safe_wrapper_are_passed_as_text(tmp_path: Path, template: str) -> None:
    root = campaign(tmp_path / "c", {"01-x.yaml": BASE + HOSTILE_FLAGS}, {**RUN, "bench": {"command": template}})
    assert "error[" not in check(root)
    done = run_cli("run", "x", "--root", str(root), "--dry-run", "--blocks", "1")
    assert done.returncode == 0, done.stderr
    env = stubs(tmp_path / "bin")
    ran = run_script(done.stdout, root, env)
    assert ran.returncode == 0, ran.stderr
    assert not list(root.glob("PWN*"))
    argv = Path(env["ENGINE_ARGV"]).read_text().split("\0")[:-1]
    assert argv.count("--port") == 2 and "$(touch PWN)" in argv and "`touch PWN2`" in argv
    assert "a\"b'; touch PWN3" in argv


def test_quoted_at_names_where_bash_reads_a_position() -> None:
    from generator.base.shell import quoted_at

    assert quoted_at("a {c} b", 2) is None
    assert quoted_at('a "x {c}"', 5) == "inside double quotes"
    assert quoted_at("a 'x' {c}", 6) is None
    assert quoted_at("a \\{c}", 3) == "after a backslash"
    assert quoted_at("a $(b {c})", 6) is None


# --- names the runner makes file names from ---------------------------------------------------------


def test_a_label_too_long_for_a_file_name_is_refused_where_it_is(tmp_path: Path) -> None:
    label = "x" * 250
    record = BASE + f"change:\n  flags:\n    - flag: --fast\nvariants:\n  - label: {label}\n    outcome: rejected\n"
    root = campaign(tmp_path / "c", {"01-x.yaml": record})
    line = next(x for x in check(root).splitlines() if "error[bad-filename]" in x)
    assert line.startswith("improvements/01-x.yaml:9:12:") and "`variants[0].label`" in line and "250 bytes" in line
    slug = "s" * 140
    root2 = campaign(tmp_path / "d", {f"01-{slug}.yaml": BASE + "change:\n  flags:\n    - flag: --fast\n"})
    line2 = next(x for x in check(root2).splitlines() if "error[bad-filename]" in x)
    assert line2.startswith(f"improvements/01-{slug}.yaml:1:1:") and "140 bytes" in line2


# --- inside:, image: and container: -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value", "col"),
    [
        ("inside", "['pip install x']", 11),
        ("image", "img:1", 10),
        # How the container starts (issue 51): the runner starts none, so it refuses it too.
        ("container", "{options: ['--shm-size 32g'], volumes: ['/data:/data:ro']}", 14),
    ],
)
def test_a_change_run_in_a_container_is_refused_by_run_and_said_by_check(
    tmp_path: Path, key: str, value: str, col: int
) -> None:
    record = BASE + f"change:\n  {key}: {value}\n  flags:\n    - flag: --fast\n"
    root = campaign(tmp_path / "c", {"01-x.yaml": record})
    want = f"improvements/01-x.yaml:6:{col}: "
    out = check(root)
    assert f"{want}warning[not-runnable]: `change.{key}`: `improvements run` cannot run" in out
    done = run_cli("run", "x", "--root", str(root), "--dry-run")
    assert done.returncode == 1 and f"{want}error[not-runnable]" in done.stdout + done.stderr
    assert "stubengine" not in done.stdout


def test_a_container_change_below_the_record_is_refused_where_it_is(tmp_path: Path) -> None:
    below = BASE.replace("in-progress", "adopted") + (
        "verdict: v\nresults:\n  - label: r\n    metrics: {output_throughput: 1}\n"
        "    baseline: {output_throughput: 1}\nchange:\n  image: img:2\n  flags:\n    - flag: --a\n"
    )
    top = BASE + "builds_on: [a]\nchange:\n  flags:\n    - flag: --b\n"
    root = campaign(tmp_path / "c", {"01-a.yaml": below, "02-b.yaml": top})
    done = run_cli("run", "b", "--root", str(root), "--dry-run")
    assert done.returncode == 1 and "improvements/01-a.yaml:11:10: error[not-runnable]" in done.stdout + done.stderr


# --- server mode: the printed script returns and stops its server -------------------------------------


def _engine_processes(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"server.py" in b" ".join(argv) and marker.encode() in argv:
                found.append(int(entry.name))
    return found


def _free_port() -> int:
    # Only where the script must name the URL before the engine starts (`ready.url`, as a user's
    # fixed port is): everywhere else the engine binds port 0 and says which port it got.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
@pytest.mark.parametrize(
    ("ready", "engine_extra", "status"),
    [("url", "", 0), ("log", "", 0), ("url", " --never-ready", 1), ("url", " --crash", 1)],
)
def test_the_server_mode_dry_run_runs_as_printed_and_stops_its_server(
    tmp_path: Path, ready: str, engine_extra: str, status: int
) -> None:
    from test_runner import make_campaign

    root = make_campaign(tmp_path / "c", server=True, engine_extra=engine_extra, ready_timeout=2 if status else 30)
    path = root / "improvements" / "campaign.yaml"
    data = yaml.safe_load(path.read_text())
    port_file = str(root / "engine.port")
    if ready == "url":
        port = _free_port()
        data["run"]["ready"] = {"url": f"http://127.0.0.1:{port}/health", "timeout_s": 2 if status else 30}
        data["baseline"]["command"] = data["baseline"]["command"].replace("--port 0", f"--port {port}")
    data["run"]["warmup"] = 1
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    script = run_cli("run", "faster", "--root", str(root), "--blocks", "2", "--dry-run")
    assert script.returncode == 0, script.stderr
    # It returns (the old script started the server in the foreground and never did).
    done = run_script(script.stdout, root, dict(os.environ))
    assert done.returncode == status, done.stderr
    assert _engine_processes(port_file) == []
    outputs = sorted(p.name for p in (root / "results" / "journal" / "tmp" / "faster").glob("*.json"))
    if status == 0:
        assert len(outputs) == 8  # 4 runs: a warm-up and a measured run each
    else:
        said = done.stderr + done.stdout
        assert outputs == [] and ("not ready" in said or "exited before it was ready" in said)


def test_a_hidden_character_in_the_bench_template_or_a_version_command_is_refused(tmp_path: Path) -> None:
    run = {
        **RUN,
        "bench": {"command": "stubbench {output} -- {command} --x \u202eab"},
        "versions": {"v": "echo\u200b1"},
    }
    root = campaign(tmp_path / "c", {"01-x.yaml": BASE + "change:\n  flags:\n    - flag: --fast\n"}, run)
    out = check(root)
    assert "`run.bench.command` holds U+202E (RIGHT-TO-LEFT OVERRIDE), which a reader cannot see, at character" in out
    assert "`run.versions.v` holds U+200B (ZERO WIDTH SPACE)" in out
