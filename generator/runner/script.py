"""`improvements run --dry-run`: the plan as a bash script that runs as printed, checked by bash.

The script is made of comments and code. A comment's text (a label, a pattern, a path) is never
trusted to be one line: whatever a reader cannot see, a line break included, is written as its
escape (`base.shell.visible`). The code is the runner's own lines (each `before:` step, the
launch, each benchmark), exactly as the runner gives them to `bash -c`, and in server mode the
few lines that do what the runner does around a launch: start it in the background in its own
process group (`set -m`), wait until it is ready, stop the group at the end of the run (SIGTERM,
SIGKILL after `stop_grace_s`) and on any exit of the script (a trap), so the printed script
returns and leaves no server behind.

Before it is printed, bash parses it (`base.shell.bash_parsed`): each run's section as a whole
must read exactly as its code lines each read alone, one after the other. So no comment holds
code, no line runs into the next, and what runs is word for word the lines the runner runs.
Anything else is the generator's fault: refused, never printed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from generator.base.problems import CommandError
from generator.base.shell import bash_parsed, visible
from generator.model.launch import quote
from generator.runner.plan import Plan

# The shell side of the runner's ready wait (`processes.wait_ready`), in Python as the runner's
# is, so a URL answers "2xx" and a `log` pattern matches exactly as they do for the runner.
_READY = """improvements_ready() {  # PID SECONDS url URL | PID SECONDS log FILE PATTERN
  python3 - "$@" <<'PY'
import codecs, os, re, sys, time, urllib.request
pid, timeout, how, what = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4]
pattern = re.compile(sys.argv[5]) if how == "log" else None
deadline = time.monotonic() + timeout
# As the runner reads it: only the bytes added since the last look, each whole line alone.
decode, seen, pending = codecs.getincrementaldecoder("utf-8")("replace").decode, 0, ""
while True:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        sys.exit("the server exited before it was ready")
    try:
        if pattern is None:
            with urllib.request.urlopen(what, timeout=2) as answer:
                if 200 <= answer.status < 300:
                    sys.exit(0)
        else:
            with open(what, "rb") as log:
                log.seek(seen)
                data = log.read(1 << 20)
            seen += len(data)
            *lines, pending = (pending + decode(data)).split("\\n")
            if any(pattern.search(line) for line in lines):
                sys.exit(0)
    except (OSError, ValueError):
        pass
    if time.monotonic() >= deadline:
        sys.exit(f"the server was not ready within {timeout:g} s")
    time.sleep(0.1)
PY
}"""

_STOP = """improvements_stop() {  # SIGTERM to the launch's process group, SIGKILL after the grace
  [ -n "${improvements_server:-}" ] || return 0
  kill -TERM -- "-$improvements_server" 2>/dev/null
  local tenths=0
  while kill -0 -- "-$improvements_server" 2>/dev/null && [ "$tenths" -lt GRACE ]; do
    sleep 0.1
    tenths=$((tenths + 1))
  done
  kill -KILL -- "-$improvements_server" 2>/dev/null
  wait "$improvements_server" 2>/dev/null
  improvements_server=
  return 0
}
trap improvements_stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM"""


@dataclass(frozen=True)
class _Line:
    text: str
    code: bool


def comment(text: str) -> _Line:
    """A comment line: any character a reader cannot see, a line break too, written as its escape."""
    return _Line("# " + visible(text), False)


def code(text: str) -> _Line:
    return _Line(text, True)


def dry_run_text(plan: Plan, root: Path, design: list[str] | tuple[str, ...] = ()) -> str:
    """The plan and every command exactly as it runs: the script runs as printed under bash.

    `design`: what the design can detect (`runner.powerplan`), printed as comments at the top.
    """
    sections = [_header(plan, root, design), *(_run(plan, run_index) for run_index in range(len(plan.runs)))]
    _verify(sections)
    return "\n".join("\n".join(line.text for line in section) for section in sections) + "\n"


def _header(plan: Plan, root: Path, design: list[str] | tuple[str, ...]) -> list[_Line]:
    cfg = plan.settings
    server = cfg.ready is not None
    loads = ", ".join(str(x) for x in plan.loads if x is not None) or "as the benchmark sets"
    lines = [
        comment(
            f"improvements run {plan.slug}: plan {plan.id}, {len(plan.arms)} arms, {plan.blocks} block(s), "
            f"loads {loads}, seed {plan.seed}"
        ),
        comment(
            f"{'server' if server else 'one-shot'} mode; outputs read as `{cfg.format}`; "
            f"commands run by {plan.shell} in {root}"
        ),
        *(comment(line) for line in design),
        code(f"mkdir -p {quote(plan.tmpdir)}"),
    ]
    if plan.sequential is not None:
        s = plan.sequential
        lines.append(
            comment(f"sequential: stops once `{s.metric}` is decided, at most {s.max_blocks} blocks ({s.rule})")
        )
    lines += [comment(f"arm {arm.name} ({arm.role}, {{arm}} and paths: {arm.slot}): {arm.label}") for arm in plan.arms]
    if server:
        lines += [
            comment("each launch starts in the background in its own process group, is waited for as the runner"),
            comment("waits (python3), benchmarked, and stopped at the end of its run or when this script exits"),
            code(_READY),
            code(_STOP.replace("GRACE", str(math.ceil(cfg.stop_grace_s * 10)))),
        ]
    return lines


def _run(plan: Plan, index: int) -> list[_Line]:
    cfg = plan.settings
    run = plan.runs[index]
    arm = plan.arm(run.arm)
    lines = [
        _Line("", False),
        comment(f"run {run.index} of {len(plan.runs)}: block {run.block}, arm {arm.name}, load {run.load}"),
    ]
    lines += [code(step) for step in arm.before]
    if cfg.ready is not None:
        # The log the ready wait reads, beside the run's temporary outputs: a dry run has no plan folder.
        log = f"{plan.tmpdir}/{run.key}.server.log"
        if cfg.ready.url:
            how, ready = f"url {quote(cfg.ready.url)}", f"{cfg.ready.url} answers 2xx"
        else:
            how, ready = f"log {quote(log)} {quote(cfg.ready.log or '')}", f"its output matches {cfg.ready.log}"
        lines += [
            comment(f"the launch, in its own process group; ready when {ready} (within {cfg.ready.timeout_s:g} s)"),
            code(f"set -m\n{{\n{arm.launch_line}\n}} >{quote(log)} 2>&1 &\nimprovements_server=$!\nset +m"),
            code(f'improvements_ready "$improvements_server" {cfg.ready.timeout_s:g} {how} || exit 1'),
        ]
        for w in range(1, cfg.warmup + 1):
            lines += [comment(f"warm-up {w}, discarded"), code(plan.bench_line(run, plan.output_tmp(run, 1, warmup=w)))]
        lines += [
            code(plan.bench_line(run, plan.output_tmp(run, 1, sub=s))) for s in range(1, plan.bench_calls(run) + 1)
        ]
        lines += [
            comment(f"then SIGTERM to the process group, SIGKILL after {cfg.stop_grace_s:g} s"),
            code("improvements_stop"),
        ]
    else:
        for w in range(1, cfg.warmup + 1):
            lines += [comment(f"warm-up {w}, discarded"), code(plan.bench_line(run, plan.output_tmp(run, 1, warmup=w)))]
        lines.append(code(plan.bench_line(run, plan.output_tmp(run, 1))))
    return lines


def _verify(sections: list[list[_Line]]) -> None:
    """Each section, read by bash, is its code lines each read alone, one after the other."""
    wholes = ["\n".join(line.text for line in section) for section in sections]
    items = [line.text for section in sections for line in section if line.code]
    first = bash_parsed([*items, *wholes])
    if first is None:
        raise CommandError("bash was not found (or did not answer): the printed script cannot be read as it runs")
    alone = dict(zip(items, first[: len(items)], strict=True))
    bad = next((text for text in items if alone[text] is None), None)
    if bad is not None:
        raise CommandError(f"bash does not read this line of the script as one complete command: {visible(bad)}")
    rebuilt = ["\n".join(alone[line.text] or "" for line in section if line.code) for section in sections]
    again = bash_parsed(rebuilt) or [None] * len(rebuilt)
    for whole, parsed_whole, parsed_rebuilt in zip(wholes, first[len(items) :], again, strict=True):
        if parsed_whole is None or parsed_whole != parsed_rebuilt:
            raise CommandError(
                "the printed script would not run what the runner runs (please report this): " + visible(whole[:200])
            )
