"""The stack: baseline plus changes in `builds_on` order, conflicts, cycles and a shell-ready command."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generator.model.launch import Conflict, Cycle, Stack, Step, apply_ordered, apply_steps, chain, order_steps, quote
from generator.model.record import Change, apply_change

BASE = (
    "python -m sglang.launch_server --model-path $MODEL_PATH --tp-size 8 \\\n"
    "  --moe-runner-backend flashinfer_cutlass --max-running-requests 1024"
)
BASE_TOKENS = [
    *["python", "-m", "sglang.launch_server", "--model-path", "$MODEL_PATH", "--tp-size", "8"],
    *["--moe-runner-backend", "flashinfer_cutlass", "--max-running-requests", "1024"],
]


def stack(steps: list[Step], command: str = BASE, env: dict[str, str] | None = None) -> Stack:
    out = apply_steps(command, env or {}, steps)
    assert isinstance(out, Stack)
    return out


def test_no_steps_is_the_baseline_read_like_a_shell() -> None:
    s = stack([])
    # The backslash-newline joins the two lines, as a shell does.
    assert list(s.tokens) == BASE_TOKENS
    assert s.order == () and s.conflicts == ()
    assert [line.display() for line in s.lines] == [
        "python -m sglang.launch_server",
        '--model-path "$MODEL_PATH"',
        "--tp-size 8",
        "--moe-runner-backend flashinfer_cutlass",
        "--max-running-requests 1024",
    ]


def test_three_step_stack_in_builds_on_order_with_annotated_lines() -> None:
    steps = [
        # 03 is numbered before 05 but builds on it: it goes after.
        Step("drafter", 3, ("dp-attention",), flags=(("--speculative-algorithm", "EAGLE"),)),
        Step("dp-attention", 5, flags=(("--enable-dp-attention", None), ("--tp-size", "4"))),
        Step("no-cutlass", 7, remove_flags=("--moe-runner-backend",), env=(("SGLANG_X", "1"),)),
    ]
    s = stack(steps, env={"CUDA_VISIBLE_DEVICES": "0,1"})
    assert s.order == ("05-dp-attention", "03-drafter", "07-no-cutlass")
    assert s.conflicts == ()
    assert list(s.tokens) == [
        *["python", "-m", "sglang.launch_server", "--model-path", "$MODEL_PATH"],
        *["--max-running-requests", "1024", "--enable-dp-attention", "--tp-size", "4"],
        *["--speculative-algorithm", "EAGLE"],
    ]
    assert s.env == (("CUDA_VISIBLE_DEVICES", "0,1"), ("SGLANG_X", "1"))
    assert s.text() == "\n".join(
        [
            "CUDA_VISIBLE_DEVICES=0,1",
            "SGLANG_X=1  # from 07-no-cutlass",
            "python -m sglang.launch_server",
            '--model-path "$MODEL_PATH"',
            "--max-running-requests 1024",
            "--enable-dp-attention  # from 05-dp-attention",
            "--tp-size 4  # from 05-dp-attention (was: --tp-size 8)",
            "--speculative-algorithm EAGLE  # from 03-drafter",
            "# removed: --moe-runner-backend flashinfer_cutlass  (by 07-no-cutlass)",
        ]
    )
    assert s.command == (
        "CUDA_VISIBLE_DEVICES=0,1 SGLANG_X=1 python -m sglang.launch_server"
        ' --model-path "$MODEL_PATH" --max-running-requests 1024 --enable-dp-attention --tp-size 4'
        " --speculative-algorithm EAGLE"
    )


def test_ties_and_independent_steps_go_in_number_order() -> None:
    steps = [Step("c", 9), Step("a", 2), Step("b", 4, ("c",)), Step("d", 1)]
    ordered = order_steps(steps)
    assert not isinstance(ordered, Cycle)
    # 01 and 02 are free first; 04 waits for 09.
    assert [s.slug for s in ordered] == ["d", "a", "c", "b"]


def test_a_cycle_is_returned_as_data_starting_at_the_lowest_number() -> None:
    steps = [Step("x", 4), Step("b", 2, ("a",)), Step("c", 3, ("b",)), Step("a", 1, ("c",))]
    out = apply_steps(BASE, {}, steps)
    # a <- b <- c <- a: each builds on the one before it.
    assert out == Cycle(("a", "b", "c"))
    assert order_steps([Step("self", 1, ("self",))]) == Cycle(("self",))


def test_one_step_gives_exactly_apply_change() -> None:
    change = Change.model_validate(
        {"flags": ["--tp-size 4", "--cuda-graph-bs 1 2 4", "--enable-x"], "remove_flags": ["--max-running-requests"]}
    )
    command = BASE.replace("\\\n", "")
    s = stack([Step.from_change("one", 1, [], change)], command=command)
    assert list(s.tokens) == apply_change(command, change)


def test_from_change_carries_flags_removals_env_and_base_command() -> None:
    change = Change.model_validate(
        {"flags": ["--a 1", {"flag": "--b"}], "remove_flags": ["--c"], "env": {"E": "v"}, "base_command": "x --y"}
    )
    step = Step.from_change("s", 12, ["t"], change)
    assert step == Step("s", 12, ("t",), (("--a", "1"), ("--b", None)), ("--c",), (("E", "v"),), "x --y")
    assert step.label == "12-s"
    assert Step.from_change("s", 1, [], None) == Step("s", 1)


def test_two_unrelated_steps_setting_one_flag_differently_conflict() -> None:
    s = stack([Step("b", 2, flags=(("--tp-size", "2"),)), Step("a", 1, flags=(("--tp-size", "4"),))])
    assert s.conflicts == (Conflict("--tp-size", "flag", "a", "b", "--tp-size 4", "--tp-size 2"),)
    # Still deterministic: the later step's value is in the tokens.
    assert s.tokens[-2:] == ("--tp-size", "2")


def test_same_value_twice_is_no_conflict() -> None:
    s = stack([Step("a", 1, flags=(("--x", "1  2"),)), Step("b", 2, flags=(("--x", "1 2"),))])
    assert s.conflicts == ()


def test_a_step_that_builds_on_another_supersedes_its_values() -> None:
    steps = [
        Step("a", 1, flags=(("--x", "1"), ("--y", None)), env=(("E", "1"),)),
        Step("mid", 2, ("a",)),
        # Through `mid`: still builds on `a`, so changing --x, removing --y and E are deliberate.
        Step("b", 3, ("mid",), flags=(("--x", "2"),), remove_flags=("--y",), env=(("E", "2"),)),
    ]
    s = stack(steps)
    assert s.conflicts == ()
    assert s.tokens[-2:] == ("--x", "2")
    assert "--y" not in s.tokens
    assert s.env == (("E", "2"),)


def test_env_and_remove_conflicts() -> None:
    s = stack(
        [
            Step("a", 1, flags=(("--enable-x", None),), env=(("E", "1"),)),
            Step("b", 2, remove_flags=("--enable-x",), env=(("E", "2"),)),
            Step("c", 3, remove_flags=("--tp-size",)),
            Step("d", 4, flags=(("--tp-size", "2"),)),
        ]
    )
    assert set(s.conflicts) == {
        Conflict("E", "env", "a", "b", "1", "2"),
        Conflict("--enable-x", "remove", "a", "b", "--enable-x", None),
        Conflict("--tp-size", "remove", "c", "d", None, "--tp-size 2"),
    }


def test_overriding_the_baseline_is_no_conflict() -> None:
    s = stack([Step("a", 1, flags=(("--tp-size", "4"),), env=(("E", "new"),))], env={"E": "old"})
    assert s.conflicts == ()
    assert s.env == (("E", "new"),)
    assert s.lines[0].display() == "E=new  # from 01-a (was: E=old)"


def test_different_base_commands_conflict_and_the_last_is_the_base() -> None:
    s = stack([Step("a", 1, base_command="one --p 1"), Step("b", 2, base_command="two --q 2")])
    assert s.conflicts == (Conflict("", "base-command", "a", "b", "one --p 1", "two --q 2"),)
    assert s.tokens == ("two", "--q", "2")
    assert s.base_from == "b"


def test_removing_a_flag_that_is_not_there_is_reported() -> None:
    s = stack([Step("a", 1, remove_flags=("--nope", "--tp-size"))])
    assert s.absent == (("a", "--nope"),)
    assert "--tp-size" not in s.tokens and s.base_from is None


def test_builds_on_outside_the_steps_is_reported() -> None:
    s = stack([Step("a", 1, ("gone",))])
    assert s.unresolved == (("a", "gone"),)


def test_duplicate_slugs_are_a_caller_error() -> None:
    with pytest.raises(ValueError, match="given twice"):
        order_steps([Step("a", 1), Step("a", 2)])


def test_a_records_stack_is_the_baseline_plus_its_chain_only() -> None:
    steps = [
        Step("a", 1, flags=(("--a", None),)),
        Step("b", 2, ("a",), flags=(("--b", None),)),
        Step("other", 3, flags=(("--other", None),)),
        Step("c", 4, ("b",), flags=(("--c", None),)),
    ]
    picked = chain("c", steps)
    assert not isinstance(picked, Cycle)
    assert [s.slug for s in picked] == ["a", "b", "c"]
    # A record's own launch command, as the analysis builds it: the chain applied in its order.
    s = apply_ordered("run", {}, picked)
    assert s.tokens == ("run", "--a", "--b", "--c")
    assert chain("a", [Step("a", 1, ("b",)), Step("b", 2, ("a",))]) == Cycle(("a", "b"))


@pytest.mark.parametrize(
    ("token", "quoted"),
    [
        ("$MODEL_PATH", '"$MODEL_PATH"'),
        ("--model-path=$MODEL_PATH", '--model-path="$MODEL_PATH"'),
        ("${HOME}/models/a b", "\"${HOME}\"'/models/a b'"),
        ("${M:-/m/x}", '"${M:-/m/x}"'),
        ("it's", "'it'\"'\"'s'"),
        ("$(rm -rf /)", "'$(rm -rf /)'"),
        ("`id`", "'`id`'"),
        ("", "''"),
    ],
)
def test_quote_keeps_variables_and_nothing_else_expandable(token: str, quoted: str) -> None:
    assert quote(token) == quoted
    assert shlex.split(quote(token)) == [token]


AWKWARD = Step(
    "awkward",
    1,
    flags=(("--json", "'{\"a\": [1, 2]}'"), ("--name", "'it'\"'\"'s here'"), ("--path", "$HOME/x")),
    env=(("SGLANG_OPT", "a b;c"), ("EMPTY", "")),
)


def test_command_parses_back_to_the_tokens() -> None:
    s = stack([AWKWARD], env={"CUDA_VISIBLE_DEVICES": "0"})
    words = shlex.split(s.command)
    assigns = [f"{n}={v}" for n, v in s.env]
    assert words == [*assigns, *s.tokens]
    assert '{"a": [1, 2]}' in s.tokens and "it's here" in s.tokens


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_bash_accepts_the_command_and_expands_only_variables() -> None:
    probe = "import json, os, sys; print(json.dumps([sys.argv[1:], os.environ['SGLANG_OPT'], os.environ['EMPTY']]))"
    command = f"{shlex.quote(sys.executable)} -c {shlex.quote(probe)} --model-path $MODEL_PATH --x 1"
    s = stack([AWKWARD], command=command)
    assert subprocess.run(["bash", "-n", "-c", s.command], check=False).returncode == 0
    env = {"MODEL_PATH": "/models/glm 5", "HOME": "/h", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(["bash", "-c", s.command], env=env, capture_output=True, text=True, check=True)
    argv, opt, empty = json.loads(done.stdout)
    assert argv == [
        *["--model-path", "/models/glm 5", "--x", "1"],
        *["--json", '{"a": [1, 2]}', "--name", "it's here", "--path", "/h/x"],
    ]
    assert (opt, empty) == ("a b;c", "")


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_an_env_name_the_shell_cannot_assign_stays_data(tmp_path: Path) -> None:
    # `check` refuses such a name (`invalid-value`); should one reach the stack all the same,
    # the assignment is one quoted word for env(1), so `;` and `$(...)` in it never run.
    s = stack([Step("a", 1, env=(("A;touch x;B", "1"), ("C$(touch y)", "2")))], command="true")
    assert s.command == "env 'A;touch x;B=1' 'C$(touch y)=2' true"
    assert subprocess.run(["bash", "-c", s.command], cwd=tmp_path, check=False).returncode == 0
    assert list(tmp_path.iterdir()) == []
