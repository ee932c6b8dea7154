"""Running a plan: each run's launch, warm-ups, benchmark and stop, journalled as it goes.

A run writes its output to a temporary path; only a run that ended well (every process exited 0,
an output the campaign's format reads) has it moved into `out/` and its end journalled as
`done`. A run killed half-way has no `done` line, so a resume runs it again, and its partial
output is deleted, never imported.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from generator.analysis.sequential import Look, block_difference, look
from generator.base.fsio import write_temp
from generator.project.runs.redact import redact_file, redact_text
from generator.runner.journal import Journal, State, now, sync_dir
from generator.runner.plan import Plan, PlannedRun
from generator.runner.processes import MARKER, Group, Started, stop_leftovers, tail, wait_bench, wait_ready

if TYPE_CHECKING:
    from generator.project.runs.parse import ParsedFile

Parse = Callable[[Path, str], "tuple[ParsedFile | None, list[Any]]"]


class Failed(Exception):
    """A run failed: why, the exit status where one was given, the log's tail."""

    def __init__(self, why: str, exit: int | None, log: Path | None) -> None:
        super().__init__(why)
        self.why, self.exit, self.log = why, exit, log
        # In server mode, when the benchmark failed: the server's log, the engine's own last lines.
        self.server_log: Path | None = None


class Interrupted(Exception):
    """SIGINT or SIGTERM reached the runner: every process it started is stopped."""


@dataclass
class Outcome:
    completed: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    looks: list[dict[str, Any]] = field(default_factory=list)
    stopped: str = "planned blocks run"


@dataclass
class Runner:
    root: Path
    state: State
    journal: Journal
    parse: Parse
    keep_going: bool = False
    # called with (runs done so far, runs planned, the run starting, the estimated seconds left)
    progress: Callable[[int, int, PlannedRun, float | None], None] | None = None
    say: Callable[[str], None] = field(default=lambda text: _stderr(text))
    group: Group = field(default_factory=Group)
    # the run and attempt going now: its logs are redacted however the loop ends
    current: tuple[PlannedRun, int] | None = None

    @property
    def plan(self) -> Plan:
        return self.state.plan

    def execute(self) -> Outcome:
        """Run what the journal has not seen end well, in the plan's order.

        Longer than most: the loop, its stopping rules and the handlers that turn Ctrl-C into a
        clean stop read best together.
        """
        outcome = Outcome()
        old = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}

        def interrupt(signum: int, _frame: object) -> None:
            # A second Ctrl-C must not cut the cleanup short: ignored until the groups are stopped.
            for sig in old:
                signal.signal(sig, signal.SIG_IGN)
            raise Interrupted(signal.Signals(signum).name)

        for sig in old:
            signal.signal(sig, interrupt)
        grace = self.plan.settings.stop_grace_s
        durations: list[float] = []
        try:
            todo = [r for r in self.plan.runs if r.key not in self.state.done]
            for run in todo:
                if self._settled_before(run, outcome):
                    break
                done = len(self.state.done)
                left = (len(self.plan.runs) - done) * (sum(durations) / len(durations)) if durations else None
                if self.progress is not None:
                    self.progress(done, len(self.plan.runs), run, left)
                began = time.monotonic()
                self._one(run, outcome)
                durations.append(time.monotonic() - began)
            else:
                self._settled_before(None, outcome)
        except _Stop:
            pass
        except Interrupted as why:
            self.group.stop_all(grace)
            self.journal.append("interrupted", signal=str(why))
            raise
        finally:
            self.group.stop_all(grace)
            self._stop_leftovers()
            # A run cut short (Ctrl-C, an error) leaves no log in the clear, nor a partial output.
            if self.current is not None:
                self._cleanup_tmp(*self.current)
                self._redact_logs(*self.current)
            for sig, handler in old.items():
                signal.signal(sig, handler)
        self.journal.append("stopped", reason=outcome.stopped, blocks_run=self._blocks_run())
        self._remove_empty_tmp()
        return outcome

    def _blocks_run(self) -> int:
        return max((r.block for r in self.plan.runs if r.key in self.state.done), default=0)

    # --- one run --------------------------------------------------------------------------

    def _one(self, run: PlannedRun, outcome: Outcome) -> None:
        attempt = self.state.attempts.get(run.key, 0) + 1
        self.state.attempts[run.key] = attempt
        arm = self.plan.arm(run.arm)
        self.journal.append(
            "start", run=run.key, attempt=attempt, index=run.index, block=run.block, arm=run.arm, load=run.load
        )
        started_at = now()
        self.current = (run, attempt)
        try:
            outputs = self._attempt(run, attempt)
        except Failed as failure:
            self._stop_leftovers()
            self._cleanup_tmp(run, attempt)
            self._redact_logs(run, attempt)
            self.journal.append(
                "end",
                run=run.key,
                attempt=attempt,
                state="failed",
                why=redact_text(failure.why)[0],
                exit=failure.exit,
                started=started_at,
                tail=redact_text(tail(failure.log))[0] if failure.log is not None else "",
            )
            self.current = None
            self.state.failed[run.key] = {"why": failure.why}
            outcome.failed.append(run.key)
            self.say(f"run {run.index} ({run.key}, arm {arm.name}) failed: {failure.why}")
            # What the engine said last, here and now: a failure is read where it is seen.
            for log in (failure.log, failure.server_log):
                lines = tail(log).splitlines() if log is not None else []
                if log is not None and lines:
                    where = log.relative_to(self.root) if log.is_relative_to(self.root) else log
                    self.say(f"  the last lines of {where}:\n" + "\n".join(f"  | {line}" for line in lines))
            if not self.keep_going:
                outcome.stopped = f"run {run.key} failed"
                raise _Stop from None
            return
        self._stop_leftovers()
        self._redact_logs(run, attempt)
        end = self.journal.append(
            "end", run=run.key, attempt=attempt, state="done", exit=0, started=started_at, outputs=outputs
        )
        self.current = None
        self.state.done[run.key] = end
        outcome.completed.append(run.key)

    def _stop_leftovers(self) -> None:
        """Whatever of this plan still runs after a run's processes were stopped: stopped too.

        The keepers stop what left their group; this finds what they could not (a keeper killed,
        a system without a subreaper), so the next arm never runs beside the last one's rest.
        """
        stopped = stop_leftovers(self.plan.id, self.plan.settings.stop_grace_s)
        if stopped:
            self.journal.append("leftovers", stopped_groups=stopped)

    def _env(self, run: PlannedRun, attempt: int) -> dict[str, str]:
        return {**os.environ, MARKER: f"{self.plan.id}/{run.key}/{attempt}"}

    def _start(self, run: PlannedRun, attempt: int, role: str, line: str) -> Started:
        log = self.root / self.plan.log_path(run, attempt, role)
        env = self._env(run, attempt)
        started = self.group.start(self.plan.shell, line, self.root, log, env, self.plan.settings.stop_grace_s)
        self.journal.append("process", run=run.key, attempt=attempt, role=role, pid=started.pgid, command=line)
        return started

    def _attempt(self, run: PlannedRun, attempt: int) -> list[dict[str, Any]]:
        cfg = self.plan.settings
        arm = self.plan.arm(run.arm)
        (self.root / self.plan.tmpdir).mkdir(parents=True, exist_ok=True)
        self._cleanup_tmp(run, attempt)
        (self.root / self.plan.workdir / "out").mkdir(parents=True, exist_ok=True)
        for i, line in enumerate(arm.before, 1):
            self._bench(run, attempt, f"before{i}", line, None)
        server: Started | None = None
        try:
            if cfg.ready is not None:
                server = self._start(run, attempt, "server", arm.launch_line)
                why = wait_ready(server, cfg.ready.url, cfg.ready.log, cfg.ready.timeout_s)
                if why is not None:
                    raise Failed(why, server.proc.poll(), server.log)
            for w in range(1, cfg.warmup + 1):
                out = self.plan.output_tmp(run, attempt, warmup=w)
                self._bench(run, attempt, f"warmup{w}", self.plan.bench_line(run, out), server)
                self.journal.append("warmup", run=run.key, attempt=attempt, number=w, discarded=True)
                with contextlib.suppress(OSError):
                    (self.root / out).unlink()
            subs = self.plan.bench_calls(run)
            tmp = [self.plan.output_tmp(run, attempt, sub=s) for s in range(1, subs + 1)]
            began: list[str] = []
            kept: list[bytes] = []
            for s, out in enumerate(tmp, 1):
                began.append(now())  # when this measured run began: its `started`
                log = self._bench(
                    run, attempt, f"bench{s}" if subs > 1 else "bench", self.plan.bench_line(run, out), server
                )
                kept.append(self._check_output(self.root / out, log))
        except Failed as failure:
            if server is not None and failure.log != server.log:
                failure.server_log = server.log
            raise
        finally:
            if server is not None:
                self.group.stop(server, cfg.stop_grace_s)
        outputs = []
        for s, out in enumerate(tmp, 1):
            final = self.root / self.plan.output_final(run, sub=s)
            # On disk before the journal says `done`: the benchmark may not have synced what it wrote.
            fd = os.open(self.root / out, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            if kept[s - 1] != (self.root / out).read_bytes():
                # What is kept is what `import` keeps: the output with its secrets redacted.
                # Written beside the temporary and moved in whole; the digest is of those bytes.
                os.replace(write_temp(self.root / out, kept[s - 1]), self.root / out)
            os.replace(self.root / out, final)
            sync_dir(final.parent)
            digest = hashlib.sha256(final.read_bytes()).hexdigest()
            outputs.append({"path": self.plan.output_final(run, sub=s), "sha256": digest, "started": began[s - 1]})
        return outputs

    def _bench(self, run: PlannedRun, attempt: int, role: str, line: str, server: Started | None) -> Path:
        cfg = self.plan.settings
        started = self._start(run, attempt, role, line)
        code = wait_bench(started, cfg.bench.timeout_s)
        self.group.stop(started, cfg.stop_grace_s)  # whatever it left running in its group
        if code is None:
            raise Failed(
                f"`{role}` was still running after {cfg.bench.timeout_s:g} s (bench.timeout_s)", None, started.log
            )
        if code != 0:
            raise Failed(f"`{role}` exited with status {code}", code, started.log)
        if server is not None and server.proc.poll() is not None:
            raise Failed(
                f"the server exited with status {server.proc.returncode} during the benchmark",
                server.proc.returncode,
                server.log,
            )
        return started.log

    def _check_output(self, path: Path, log: Path) -> bytes:
        """The bytes to keep of a benchmark's output: as `import` keeps them, secrets redacted."""
        if not path.is_file() or path.stat().st_size == 0:
            raise Failed(f"the benchmark wrote nothing to {path.name}", 0, log)
        parsed, problems = self.parse(path, str(path))
        if parsed is None or problems or not parsed.runs:
            first = problems[0].message if problems else "no run in it"
            raise Failed(f"the benchmark's output is not readable as `{self.plan.settings.format}`: {first}", 0, log)
        return parsed.stored_bytes

    def _cleanup_tmp(self, run: PlannedRun, attempt: int) -> None:
        folder = self.root / self.plan.tmpdir
        # Every attempt's: a killed attempt's partial output is never read, nor left to be.
        for path in folder.glob(f"{run.key}.*") if folder.is_dir() else ():
            with contextlib.suppress(OSError):
                path.unlink()

    def _redact_logs(self, run: PlannedRun, attempt: int) -> None:
        """Every log of one attempt, its processes stopped, redacted as `import` redacts a file."""
        redact_logs(self.root, self.plan, run, attempt)

    def _remove_empty_tmp(self) -> None:
        # The outputs were moved beside the journal; only empty folders go (rmdir refuses others).
        folder = self.root / self.plan.tmpdir
        for path in (folder, folder.parent):
            with contextlib.suppress(OSError):
                path.rmdir()

    # --- sequential looks -----------------------------------------------------------------

    def _settled_before(self, run: PlannedRun | None, outcome: Outcome) -> bool:
        """At a block's end, the interim look; True when the rule is settled (stop here)."""
        seq = self.plan.sequential
        previous = run.block - 1 if run is not None else max((r.block for r in self.plan.runs), default=0)
        if (
            seq is None
            or previous < 1
            or (run is not None and any(r.block == run.block and r.key in self.state.done for r in self.plan.runs))
        ):
            return False
        looks = interim_looks(self.plan, self.state, self.parsed_metric)
        if not looks:
            return False
        record = {name: _look_json(lk) for name, lk in looks.items()}
        self.journal.append("look", after_block=previous, interim=run is not None, arms=record)
        outcome.looks.append(record)
        for name, data in record.items():
            low, high = data["low_percent"], data["high_percent"]
            bounds = f"{low:+.2f}% to {high:+.2f}%" if low is not None else "no bounds yet"
            which = "interim" if run is not None else "final"
            change = data["change_percent"]
            seen = f"{change:+.2f}%" if change is not None else "no complete block"
            self.say(
                f"{which} look after block {previous}: {name} {seen} (confidence sequence {bounds}), {data['call']}"
            )
        if all(lk.settled for lk in looks.values()):
            outcome.stopped = f"decided after block {previous}"
            return True
        return False

    def parsed_metric(self, key: str) -> list[float]:
        """The sequential metric of one run's measured outputs (its launch's sub-samples)."""
        seq = self.plan.sequential
        assert seq is not None
        values: list[float] = []
        for out in self.state.done[key].get("outputs", []):
            parsed, _ = self.parse(self.root / out["path"], out["path"])
            for r in parsed.runs if parsed is not None else []:
                if seq.metric in r.metrics:
                    values.append(r.metrics[seq.metric])
        return values


def redact_logs(root: Path, plan: Plan, run: PlannedRun, attempt: int) -> None:
    """Redact the logs of one attempt of `run` (every process of it stopped)."""
    folder = root / plan.workdir / "logs"
    prefix = Path(plan.log_path(run, attempt, "x")).name[: -len("x.log")]
    for path in sorted(folder.glob(f"{prefix}*.log")) if folder.is_dir() else ():
        if path.is_file() and not path.is_symlink():
            redact_file(path)


def _stderr(text: str) -> None:
    sys.stderr.write(text + "\n")


class _Stop(Exception):
    """A run failed without --keep-going: the plan stops here."""


def interim_looks(plan: Plan, state: State, metric_of: Callable[[str], list[float]]) -> dict[str, Look]:
    """Each arm against the baseline arm at each load, over the blocks complete on both sides.

    Every arm and load has a look, with too few blocks an inconclusive one: the plan stops only
    when all of them are settled, never because an arm that keeps failing has no numbers.
    """
    seq = plan.sequential
    assert seq is not None
    base = next(a.name for a in plan.arms if a.role == "baseline")
    blocks = sorted({r.block for r in plan.runs})
    by_place = {(r.block, r.load, r.arm): r for r in plan.runs}
    out: dict[str, Look] = {}
    for arm in (a for a in plan.arms if a.role != "baseline"):
        for load in plan.loads:
            diffs: list[float] = []
            for b in blocks:
                mine, theirs = by_place.get((b, load, arm.name)), by_place.get((b, load, base))
                if mine is None or theirs is None or mine.key not in state.done or theirs.key not in state.done:
                    continue
                # A launch's sub-samples are one observation, as the record page counts them:
                # the same difference the page's final analysis makes (`as_sequential`).
                d = block_difference(metric_of(mine.key), metric_of(theirs.key))
                if d is not None:
                    diffs.append(d)
            name = arm.name if len(plan.loads) == 1 else f"{arm.name} at load {load}"
            out[name] = look(diffs, alpha=seq.alpha, min_effect=seq.min_effect, higher_is_better=seq.higher_is_better)
    return out


def _look_json(lk: Look) -> dict[str, Any]:
    import math

    mid, low, high = lk.percent()
    # Too few blocks for the sequence to exclude anything yet: no bounds (JSON has no infinity).
    low_, high_ = (low, high) if math.isfinite(low) and math.isfinite(high) else (None, None)
    change = mid if math.isfinite(mid) else None
    return {"blocks": lk.n, "change_percent": change, "low_percent": low_, "high_percent": high_, "call": lk.call}
