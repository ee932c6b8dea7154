"""Every text printed for a shell, against a hostile corpus, under real bash.

For each case `check` either refuses the record with a positioned error and a stable code, or
every script the tool prints (`stack --format command`, the text script, the JSON's lines, the
record page's and the report's blocks) runs under bash with stub programs on PATH: the engine
stub records its argv and environment, the step stub its argv, both in one order log. The
engine must get exactly the expected argv and environment, after exactly the steps, and
nothing else may run: a `touch PWNED` anywhere in the values must never create the file.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from generator.base.shell import bash_read, first_hidden, joined_text, step_problem, visible

from conftest import run_cli

CAMPAIGN = """\
name: Shell text test
series: shellt
model: {name: GLM-5-NVFP4}
hardware: {gpu: NVIDIA H200, count: 8}
engine: {name: SGLang, version: 0.5.9}
baseline:
  label: TP8
  command: stubengine --model-path $MODEL_PATH --tp-size 8
  env: {BASE_ENV: "base value"}
  results:
    - label: single stream
      concurrency: 1
      metrics: {output_throughput: 100}
tiers: {1: a, 2: b, 3: c}
"""

RECORD = """\
title: Hostile {n}
tier: 1
status: adopted
hypothesis: A hostile text.
verdict: Adopted.
change: {change}
results:
  - label: single stream
    concurrency: 1
    metrics: {{output_throughput: 104}}
    baseline: {{output_throughput: 100}}
"""

BASE_ARGV = ["--model-path", "/models/m", "--tp-size", "8"]

ENGINE = """#!/bin/bash
printf 'engine\\n' >> "$ORDER_LOG"
printf '%s\\0' "$@" > "$ENGINE_ARGV"
env -0 > "$ENGINE_ENV"
"""
PRE = """#!/bin/bash
n=$(wc -l < "$ORDER_LOG")
printf 'pre\\n' >> "$ORDER_LOG"
out="$PRE_DIR/$n"
: > "$out"
for arg in "$@"; do printf '%s\\0' "$arg" >> "$out"; done
"""

# (id, change, the step stub's calls, the engine's argv after the program, environment it must see)
RUNS: list[tuple[str, dict[str, Any], list[list[str]], list[str], dict[str, str]]] = [
    ("words", {"before": ["stubpre a 'b c'"]}, [["a", "b c"]], BASE_ARGV, {}),
    ("ansi-c", {"before": ["stubpre $'a\\tb\\x41'"]}, [["a\tbA"]], BASE_ARGV, {}),
    ("ansi-c-quote", {"before": ["stubpre $'it\\'s'"]}, [["it's"]], BASE_ARGV, {}),
    ("comment", {"before": ["stubpre x # ;touch PWNED"]}, [["x"]], BASE_ARGV, {}),
    ("quote-in-comment", {"before": ["stubpre x #'"]}, [["x"]], BASE_ARGV, {}),
    ("list", {"before": ["stubpre a; stubpre b"]}, [["a"], ["b"]], BASE_ARGV, {}),
    ("and-or", {"before": ["stubpre a && stubpre b || touch PWNED"]}, [["a"], ["b"]], BASE_ARGV, {}),
    ("pipe", {"before": ["echo piped | stubpre p"]}, [["p"]], BASE_ARGV, {}),
    ("command-substitution", {"before": ['stubpre "$(echo sub)"']}, [["sub"]], BASE_ARGV, {}),
    ("backticks", {"before": ["stubpre `echo bt`"]}, [["bt"]], BASE_ARGV, {}),
    ("process-substitution", {"before": ['stubpre "$(cat <(echo ps))"']}, [["ps"]], BASE_ARGV, {}),
    ("unicode", {"before": ["stubpre 'héllo ✓ 日本'"]}, [["héllo ✓ 日本"]], BASE_ARGV, {}),
    ("quote-in-quote", {"before": ["stubpre 'it'\\''s'"]}, [["it's"]], BASE_ARGV, {}),
    ("json-step", {"before": ['stubpre \'{"a": [1, "b"]}\'']}, [['{"a": [1, "b"]}']], BASE_ARGV, {}),
    ("escaped-backslash", {"before": ["stubpre a \\\\"]}, [["a", "\\"]], BASE_ARGV, {}),
    ("escaped-space", {"before": ["stubpre a\\ b"]}, [["a b"]], BASE_ARGV, {}),
    ("here-string", {"before": ["stubpre <<<here"]}, [[]], BASE_ARGV, {}),
    ("brace-group", {"before": ["{ stubpre g; }"]}, [["g"]], BASE_ARGV, {}),
    ("if", {"before": ["if true; then stubpre t; fi"]}, [["t"]], BASE_ARGV, {}),
    ("for", {"before": ["for i in 1 2; do stubpre $i; done"]}, [["1"], ["2"]], BASE_ARGV, {}),
    ("several-steps", {"before": ["stubpre 1", "stubpre 2", "stubpre 1"]}, [["1"], ["2"]], BASE_ARGV, {}),
    ("flag-semicolon", {"flags": ["--name ';touch PWNED;#'"]}, [], [*BASE_ARGV, "--name", ";touch PWNED;#"], {}),
    (
        "flag-quoted-substitution",
        {"flags": ["--name '$(touch PWNED)'"]},
        [],
        [*BASE_ARGV, "--name", "$(touch PWNED)"],
        {},
    ),
    (
        "flag-escaped-operators",
        {"flags": ["--x a\\;b 'c|d' \"e&f\""]},
        [],
        [*BASE_ARGV, "--x", "a;b", "c|d", "e&f"],
        {},
    ),
    ("flag-hash-inside-word", {"flags": ["--x a#b"]}, [], [*BASE_ARGV, "--x", "a#b"], {}),
    (
        "flag-plain-braces",
        {"flags": ["--x {a} a~b ${MODEL_PATH}"]},
        [],
        [*BASE_ARGV, "--x", "{a}", "a~b", "/models/m"],
        {},
    ),
    ("flag-backticks", {"flags": ["--name '`touch PWNED`'"]}, [], [*BASE_ARGV, "--name", "`touch PWNED`"], {}),
    ("flag-words", {"flags": ["--x a 'b c' \"d e\""]}, [], [*BASE_ARGV, "--x", "a", "b c", "d e"], {}),
    ("flag-unicode", {"flags": ["--x héllo"]}, [], [*BASE_ARGV, "--x", "héllo"], {}),
    (
        "mapping-json",
        {"flags": [{"flag": "--speculative-config", "value": '{"method":"eagle3","num_speculative_tokens":3}'}]},
        [],
        [*BASE_ARGV, "--speculative-config", '{"method":"eagle3","num_speculative_tokens":3}'],
        {},
    ),
    ("mapping-apostrophe", {"flags": [{"flag": "--x", "value": "it's"}]}, [], [*BASE_ARGV, "--x", "it's"], {}),
    (
        "mapping-code",
        {"flags": [{"flag": "--x", "value": "a b; touch PWNED; $(touch PWNED) `touch PWNED`"}]},
        [],
        [*BASE_ARGV, "--x", "a b; touch PWNED; $(touch PWNED) `touch PWNED`"],
        {},
    ),
    ("mapping-ansi-c", {"flags": [{"flag": "--x", "value": "$'\\''"}]}, [], [*BASE_ARGV, "--x", "$'\\''"], {}),
    ("env-semicolon", {"env": {"HOSTILE": "'; touch PWNED; #"}}, [], BASE_ARGV, {"HOSTILE": "'; touch PWNED; #"}),
    ("env-json", {"env": {"J": '{"a": "b c"}'}}, [], BASE_ARGV, {"J": '{"a": "b c"}'}),
    ("env-quotes", {"env": {"Q": "x\"y'z\\"}}, [], BASE_ARGV, {"Q": "x\"y'z\\"}),
    ("env-substitution", {"env": {"D": "$(touch PWNED)`x`"}}, [], BASE_ARGV, {"D": "$(touch PWNED)`x`"}),
    # A `$NAME` in a value stays a reference (the format guide says so): the campaign writes `$MODEL_PATH`.
    (
        "env-reference",
        {"env": {"M": "$MODEL_PATH/sub"}},
        [],
        BASE_ARGV,
        {"M": "/models/m/sub", "BASE_ENV": "base value"},
    ),
    (
        "base-command",
        {"base_command": "stubengine serve --name ';touch PWNED;#'"},
        [],
        ["serve", "--name", ";touch PWNED;#"],
        {},
    ),
    (
        "all-at-once",
        {
            "before": ["stubpre $'x\\'y'", "stubpre ';touch PWNED;#'"],
            "flags": ["--name ';touch PWNED;#'", {"flag": "--j", "value": '{"k": "v\'w"}'}],
            "env": {"E": "'\"$(touch PWNED)"},
        },
        [["x'y"], [";touch PWNED;#"]],
        [*BASE_ARGV, "--name", ";touch PWNED;#", "--j", '{"k": "v\'w"}'],
        {"E": "'\"$(touch PWNED)"},
    ),
]

# (id, change, code): refused by `check`, at the record's position.
REFUSED: list[tuple[str, dict[str, Any], str]] = [
    ("open-ansi-c", {"before": ["stubpre $'\\'' x'"]}, "shell-syntax"),
    ("here-document", {"before": ["cat <<EOF"]}, "shell-syntax"),
    ("here-document-in-substitution", {"before": ["stubpre $(cat <<EOF)"]}, "shell-syntax"),
    ("open-subshell", {"before": ["(x"]}, "shell-syntax"),
    ("open-brace", {"before": ["{"]}, "shell-syntax"),
    ("open-if", {"before": ["if true; then"]}, "shell-syntax"),
    ("open-case", {"before": ["case x in"]}, "shell-syntax"),
    ("open-substitution", {"before": ["x $("]}, "shell-syntax"),
    ("lone-backtick", {"before": ["`"]}, "shell-syntax"),
    ("open-single-quote", {"before": ["stubpre 'a"]}, "shell-syntax"),
    ("open-double-quote", {"before": ['echo "a']}, "shell-syntax"),
    ("trailing-and", {"before": ["true &&"]}, "shell-syntax"),
    ("trailing-pipe", {"before": ["true |"]}, "shell-syntax"),
    ("trailing-backslash", {"before": ["stubpre a \\"]}, "shell-syntax"),
    ("closing-brace", {"before": ["}"]}, "shell-syntax"),
    ("lone-fi", {"before": ["fi"]}, "shell-syntax"),
    ("newline", {"before": ["stubpre a\nstubpre b"]}, "shell-syntax"),
    # Controls are refused in every text of a record (`invalid-value`), so in shell text too.
    ("carriage-return", {"before": ["stubpre a\r"]}, "invalid-value"),
    ("bidi-step", {"before": ["stubpre a\u202eb"]}, "invisible-character"),
    ("zero-width-step", {"before": ["stubpre \u200bx"]}, "invisible-character"),
    ("next-line-step", {"before": ["stubpre \u0085"]}, "invalid-value"),
    ("isolate-flag", {"flags": ["--name a\u2066b\u2069"]}, "invisible-character"),
    ("joiner-mapping", {"flags": [{"flag": "--x", "value": "x\u200d"}]}, "invisible-character"),
    ("mark-flag", {"flags": ["--x \u200e"]}, "invisible-character"),
    ("escape-env", {"env": {"E": "a\x1b[31mb"}}, "invalid-value"),
    ("nul-step", {"before": ["stubpre \x00"]}, "invalid-value"),
    ("surrogate-step", {"before": ["stubpre \ud800"]}, "yaml-syntax"),
    ("no-break-space", {"base_command": "stubengine --x\u00a01"}, "invisible-character"),
    ("unbalanced-flag", {"flags": ["--x 'a"]}, "invalid-value"),
    # Words the tool would pass as text where bash would act on them.
    ("flag-substitution", {"flags": ['--name "$(touch PWNED)"']}, "shell-syntax"),
    ("flag-backticks-unquoted", {"flags": ["--name `touch PWNED`"]}, "shell-syntax"),
    ("flag-operator", {"flags": ["--x a;touch PWNED"]}, "shell-syntax"),
    ("flag-comment", {"flags": ["--x 1 # the default"]}, "shell-syntax"),
    ("flag-ansi-c", {"flags": ["--x $'a\\tb'"]}, "shell-syntax"),
    ("flag-process-substitution", {"flags": ["--x <(touch PWNED)"]}, "shell-syntax"),
    ("flag-json-unquoted", {"flags": ['--speculative-config {"method":"eagle3","n":3}']}, "shell-syntax"),
    ("flag-brace-sequence", {"flags": ["--cuda-graph-bs {1..4}"]}, "shell-syntax"),
    ("flag-tilde", {"flags": ["--model-path ~/models/m"]}, "shell-syntax"),
    ("base-command-list", {"base_command": "stubengine serve; touch PWNED"}, "shell-syntax"),
    ("base-command-pipe", {"base_command": "stubengine serve | tee log"}, "shell-syntax"),
]


@pytest.fixture
def stubs(tmp_path: Path) -> dict[str, str]:
    """A PATH with the stub engine and step, and the environment that points them at their logs."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("stubengine", ENGINE), ("stubpre", PRE)):
        stub = bin_dir / name
        stub.write_text(text)
        stub.chmod(stub.stat().st_mode | stat.S_IEXEC)
    return {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "MODEL_PATH": "/models/m",
        "BASE_ENV": "base value",
    }


def _campaign(root: Path, *changes: dict[str, Any]) -> Path:
    (root / "improvements").mkdir(parents=True)
    (root / "results").mkdir()
    (root / "improvements" / "campaign.yaml").write_text(CAMPAIGN)
    for n, change in enumerate(changes, 1):
        # JSON is YAML: every string exactly as Python holds it, escapes included.
        text = RECORD.format(n=n, change=json.dumps(change))
        (root / "improvements" / f"{n:02d}-hostile-{n}.yaml").write_text(text, encoding="utf-8")
    return root


def _run(script: str, work: Path, env: dict[str, str]) -> tuple[list[list[str]], list[str], dict[str, str]]:
    """`script` under bash in a fresh folder: the step stub's calls, the engine's argv and environment."""
    work.mkdir()
    (work / "pre").mkdir()
    logs = {
        "ORDER_LOG": str(work / "order"),
        "ENGINE_ARGV": str(work / "argv"),
        "ENGINE_ENV": str(work / "env"),
        "PRE_DIR": str(work / "pre"),
    }
    (work / "order").write_text("")
    done = subprocess.run(
        ["bash"], input=script, text=True, cwd=work, env={**env, **logs}, capture_output=True, timeout=60
    )
    assert done.returncode == 0, (script, done.stderr)
    assert done.stderr == "", (script, done.stderr)
    assert not (work / "PWNED").exists(), f"a value ran as code:\n{script}"
    order = (work / "order").read_text().splitlines()
    assert order[-1:] == ["engine"] and set(order[:-1]) <= {"pre"}, order
    calls = [(work / "pre" / str(i)).read_bytes().decode().split("\0")[:-1] for i in range(len(order) - 1)]
    argv = (work / "argv").read_bytes().decode().split("\0")[:-1]
    environ = dict(item.split("=", 1) for item in (work / "env").read_bytes().decode().split("\0")[:-1])
    return calls, argv, environ


def _scripts(root: Path) -> dict[str, str]:
    """Every shell text `stack` prints: the command format, the text script, and the JSON's lines."""
    out = {}
    for fmt in ("command", "text", "json"):
        res = run_cli("stack", "--root", str(root), "--format", fmt)
        assert res.returncode == 0, res.stderr
        out[fmt] = res.stdout
    data = json.loads(out["json"])
    out["json"] = "".join(b["command"] + "\n" for b in data["before"]) + data["command"] + "\n"
    return out


@pytest.mark.slow  # runs each printed script under bash, a fresh process each
@pytest.mark.parametrize(("change", "calls", "argv", "env"), [c[1:] for c in RUNS], ids=[c[0] for c in RUNS])
def test_every_printed_script_runs_exactly_what_the_record_says(
    tmp_path: Path,
    stubs: dict[str, str],
    change: dict[str, Any],
    calls: list[list[str]],
    argv: list[str],
    env: dict[str, str],
) -> None:
    root = _campaign(tmp_path / "repo", change)
    check = run_cli("check", "--root", str(root))
    assert check.returncode == 0, check.stderr
    for fmt, script in _scripts(root).items():
        # bash reads the whole script cleanly, then runs it.
        [reading] = bash_read([script]) or pytest.fail("bash is needed for this test")
        assert reading.clean, (fmt, reading)
        got_calls, got_argv, got_env = _run(script, tmp_path / fmt, stubs)
        assert got_calls == calls, fmt
        assert got_argv == argv, fmt
        assert {k: got_env.get(k) for k in env} == env, fmt


@pytest.mark.parametrize(("change", "code"), [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_check_refuses_what_bash_would_not_run_as_printed(tmp_path: Path, change: dict[str, Any], code: str) -> None:
    root = _campaign(tmp_path / "repo", change)
    check = run_cli("check", "--root", str(root))
    assert check.returncode == 1, check.stderr
    assert "Traceback" not in check.stderr
    errors = [line for line in check.stderr.splitlines() if "error[" in line]
    assert len(errors) == 1, errors
    hint = r" \(hint: .+\)" if code in ("shell-syntax", "invisible-character") else ""
    assert re.match(rf"improvements/01-hostile-1\.yaml:6:\d+: error\[{code}\]: .+{hint}$", errors[0]), errors
    # The report itself shows what it found, escaped: never the raw character.
    assert first_hidden(check.stderr, "\n") is None


@pytest.mark.slow  # runs the old script under bash
def test_the_issue_case_refused_and_what_it_would_have_run(tmp_path: Path, stubs: dict[str, str]) -> None:
    # One record's step leaves bash inside a quote; another's quoted flag value then runs as code.
    step, flag = "stubpre $'\\'' x'", "--name ';touch PWNED;#'"
    root = _campaign(tmp_path / "repo", {"before": [step]}, {"flags": [flag]})
    check = run_cli("check", "--root", str(root))
    assert check.returncode == 1
    assert "improvements/01-hostile-1.yaml:6:" in check.stderr and "error[shell-syntax]" in check.stderr
    # The harness can fail: printed as before this check, the lines do run the value as code.
    work = tmp_path / "old"
    work.mkdir()
    old = f"{step}\nstubengine --model-path /m {flag.split()[0]} ';touch PWNED;#'\n"
    subprocess.run(["bash"], input=old, text=True, cwd=work, env=stubs, capture_output=True, timeout=60, check=False)
    assert (work / "PWNED").exists()


@pytest.mark.slow  # runs the printed scripts under bash
def test_a_mapping_value_is_one_argument_on_the_page_and_in_the_report(tmp_path: Path, stubs: dict[str, str]) -> None:
    value = '{"method":"eagle3","num_speculative_tokens":3}'
    change = {
        "before": ["stubpre ';touch PWNED;#'"],
        "flags": [{"flag": "--speculative-config", "value": value, "note": "EAGLE-3."}],
        "env": {"E": "it's"},
    }
    root = _campaign(tmp_path / "repo", change)
    assert run_cli("build", "--root", str(root)).returncode == 0
    [page] = (root / "docs" / "improvements").glob("*-01-hostile-1.md")
    report = run_cli("report", "--root", str(root))
    assert report.returncode == 0, report.stderr
    for name, text in (("page", page.read_text()), ("report", report.stdout[report.stdout.index("## Stack") :])):
        block = text[text.index("```bash\n") + len("```bash\n") :]
        calls, argv, env = _run(block[: block.index("```")], tmp_path / name, stubs)
        assert calls == [[";touch PWNED;#"]]
        assert argv == [*BASE_ARGV, "--speculative-config", value]
        assert env["E"] == "it's"


def test_bash_reads_each_text_alone_in_one_process() -> None:
    texts = ["true", "cat <<EOF", "(x", "set +n; touch PWNED", "exit 0", "true"]
    readings = bash_read(texts)
    assert readings is not None
    assert [r.clean for r in readings] == [True, False, False, True, True, True]
    assert readings[0] == readings[-1]
    assert "here-document" in readings[1].messages[0]
    assert not Path("PWNED").exists()


@pytest.mark.parametrize(
    ("step", "why"),
    [
        ("echo \\", "joins the next printed line"),
        ("echo \\\\", None),
        ("echo x #\\", None),
        ("echo '\\'", None),
        ("echo $'\\''", None),
        ("true &&", "unexpected end of file"),
    ],
)
def test_a_step_is_one_complete_line(step: str, why: str | None) -> None:
    joined = joined_text(step)
    readings = bash_read([step, *([joined] if joined else [])])
    assert readings is not None
    said = step_problem(step, readings[0], readings[1] if joined else None)
    assert (said is None) if why is None else (said is not None and why in said[0]), said


def test_without_bash_check_warns_once_and_goes_on(tmp_path: Path) -> None:
    root = _campaign(tmp_path / "repo", {"before": ["stubpre a", "(x"]})
    check = run_cli("check", "--root", str(root), env={"PATH": str(tmp_path / "nothing")})
    assert check.returncode == 0, check.stderr
    [warning] = [line for line in check.stderr.splitlines() if "warning[" in line]
    assert "improvements/01-hostile-1.yaml:6:" in warning and "warning[shell-syntax]: bash was not found" in warning


def test_pages_show_invisible_characters_as_escapes(tmp_path: Path) -> None:
    assert visible("a\u202eb\u200bc\x1bd\u00a0e\u2066") == "a\\u202eb\\u200bc\\x1bd\\xa0e\\u2066"
    assert visible("tab\there héllo ✓", "\t") == "tab\there héllo ✓"
    # Not shell text, so `check` takes it; in code on the page it is an escape, never the character.
    change = {"patches": [{"path": "src/evil\u202eyp.exe", "summary": "Patched."}]}
    root = _campaign(tmp_path / "repo", change)
    assert run_cli("build", "--root", str(root)).returncode == 0
    [page] = (root / "docs" / "improvements").glob("*-01-hostile-1.md")
    text = page.read_text()
    # The backslash makes it an HTML code span (`&#92;` is `\\`): it shows as `src/evil\\u202eyp.exe`.
    assert "<code>src/evil&#92;u202eyp.exe</code>" in text and "\u202e" not in text


@pytest.mark.slow
def test_the_shipped_campaigns_stay_clean() -> None:
    for root in (Path(__file__).parent.parent, Path(__file__).parent.parent / "examples" / "h200-decode"):
        check = run_cli("check", "--root", str(root))
        assert check.returncode == 0 and "error[" not in check.stderr, check.stderr
        assert os.path.isdir(root / "improvements")


def test_a_setup_base_command_that_does_not_split_is_refused_not_a_traceback(tmp_path: Path) -> None:
    root = _campaign(tmp_path / "repo")
    (root / "improvements" / "01-setup.yaml").write_text(
        'title: X\ntier: 1\nstatus: proposed\nhypothesis: A.\nsetup:\n  base_command: "stubengine \'x"\n'
    )
    check = run_cli("check", "--root", str(root))
    assert check.returncode == 1 and "Traceback" not in check.stderr
    assert "improvements/01-setup.yaml:6:17: error[invalid-value]: `setup.base_command`: the ' at character 12" in (
        check.stderr
    )


def test_the_baseline_command_is_words_too(tmp_path: Path) -> None:
    root = _campaign(tmp_path / "repo")
    campaign = root / "improvements" / "campaign.yaml"
    campaign.write_text(CAMPAIGN.replace("--tp-size 8", "--tp-size 8 > log"))
    check = run_cli("check", "--root", str(root))
    assert check.returncode == 1
    assert (
        "improvements/campaign.yaml:8:12: error[shell-syntax]: `baseline.command`: bash reads `>` at character 49 "
        "as an operator, not as part of a word; the printed command would pass it to the program as text"
    ) in check.stderr


def test_the_stack_script_comments_show_invisible_characters_as_escapes(tmp_path: Path) -> None:
    # A patch's summary is prose, so `check` takes it; in the script's comment it is an escape.
    change = {"flags": ["--x 1"], "patches": [{"summary": "Skip the copy \u202e;touch PWNED"}]}
    root = _campaign(tmp_path / "repo", change)
    script = run_cli("stack", "--root", str(root)).stdout
    assert "# Not in the command: 01-hostile-1: patch: Skip the copy \\u202e;touch PWNED\n" in script
    assert "\u202e" not in script


def test_many_texts_are_read_in_shares_with_the_same_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    import generator.base.shell as shell

    texts = [f"stubpre {i}" if i % 7 else f"(x{i}" for i in range(3 * shell.CHUNK)]
    monkeypatch.setattr(shell.os, "cpu_count", lambda: 4)
    shared = bash_read(texts)
    monkeypatch.setattr(shell, "CHUNK", 10**9)
    assert shared is not None and shared == bash_read(texts)
    assert [r.clean for r in shared] == [bool(i % 7) for i in range(len(texts))]
