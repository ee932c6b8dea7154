"""`improvements run`: a record's comparison run in randomized blocks, journalled, linked and decided."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, cast

import click

from generator.analysis.comparison import FAIL_ON
from generator.cli import resolve_root, root_option

if TYPE_CHECKING:
    from collections.abc import Callable

    from generator.analysis.comparison import FailOn
    from generator.analysis.plan_power import Noise
    from generator.project.load import Project, RecordFile
    from generator.runner.execute import Outcome, Parse
    from generator.runner.finish import Decided
    from generator.runner.journal import Journal, State
    from generator.runner.plan import PlannedRun

# How long a run waits for its record's run lock before it says another run is going.
RUN_LOCK_GRACE_S = 5.0


class RunsType(click.ParamType):  # type: ignore[type-arg]  # generic only from click 8.2; 8.1 is allowed
    """`--runs`: a count of runs per launch, or `auto`."""

    name = "N|auto"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> int | str:
        if isinstance(value, int) or value == "auto":
            return value
        text = str(value)
        if text.isdigit() and 1 <= int(text) <= 100:
            return int(text)
        self.fail(f"{text!r} is neither `auto` nor a count from 1 to 100", param, ctx)


@click.command(
    "run",
    epilog="""\b
Examples:
  improvements run radix-cache --dry-run
  improvements run radix-cache --blocks 5 --load 16 --load 64
  improvements run radix-cache --until-decided --max-blocks 20
  improvements run radix-cache --resume
  improvements run radix-cache --runs auto --pilot 4 --until-decided --max-blocks 40
""",
)
@root_option
@click.argument("record", metavar="SLUG|NN")
@click.option(
    "--blocks",
    type=click.IntRange(1, 1000),
    default=5,
    show_default=True,
    help="Blocks: each runs every arm once, in a random order.",
)
@click.option(
    "--seed", type=int, default=0, show_default=True, help="Seed of the arms' order (and the benchmark's {seed})."
)
@click.option(
    "--load",
    "loads",
    type=click.IntRange(1),
    multiple=True,
    help="Concurrency or batch size ({load}); repeatable for a sweep. Default: run.loads.",
)
@click.option(
    "--until-decided",
    is_flag=True,
    help="Stop once the campaign's rule is settled, on a confidence sequence valid at every look.",
)
@click.option("--max-blocks", type=click.IntRange(2, 1000), help="With --until-decided: the most blocks to run.")
@click.option(
    "--keep-going", is_flag=True, help="Go on after a failed run (its block is left out of both sides, and said so)."
)
@click.option(
    "--new-sequence",
    is_flag=True,
    help="With --until-decided: start a new sequence although an earlier one of this comparison ended "
    "undecided (it spends alpha again; the page says so).",
)
@click.option("--dry-run", is_flag=True, help="Print the plan and every command as it would run; run nothing.")
@click.option(
    "--resume",
    is_flag=True,
    help="Finish the record's unfinished plan from its journal: no run repeated, none lost.",
)
@click.option(
    "--plan",
    "plan_id",
    metavar="ID",
    help="With --resume: the plan to finish (its id, as in results/journal/SLUG-ID.jsonl).",
)
@click.option(
    "--runs",
    "runs",
    type=RunsType(),
    metavar="N|auto",
    help="Measured runs per launch (default: run.runs_per_launch), or `auto`: the cheapest for the noise "
    "and the costs measured so far.",
)
@click.option(
    "--pilot",
    type=click.IntRange(2, 100),
    metavar="N",
    help="First run N blocks that measure the noise and the costs (linked to nothing), then plan from them.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="How the decisions are printed (JSON: one object, for a CI job).",
)
@click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON),
    help="Exit 3 when a linked result is `worse` (worse), or `worse` by at least min_effect (regression).",
)
def command(
    root: Path | None,
    record: str,
    blocks: int,
    seed: int,
    loads: tuple[int, ...],
    until_decided: bool,
    max_blocks: int | None,
    keep_going: bool,
    new_sequence: bool,
    dry_run: bool,
    resume: bool,
    plan_id: str | None,
    runs: int | str | None,
    pilot: int | None,
    fmt: str = "text",
    fail_on: str | None = None,
) -> None:
    """Run RECORD's comparison: its arms in randomized complete blocks, then link and decide.

    The arms are the command the record is compared against (the campaign baseline, or the stack
    of what it builds on) and the record's own command (each non-diagnostic variant's, for a
    record with variants), as `improvements stack` and the record's page print them. campaign.yaml's
    `run:` says how to benchmark an arm (docs/guide/run.md). Every step is appended to a journal
    under results/journal/; after a crash or `kill -9`, `--resume` finishes the plan. The runs are
    linked from the record paired by block, with the baseline arm's runs as the baseline.

    Before it runs (and under --dry-run) it prints what the design can detect at 80% power at
    the noise measured so far, and the blocks and GPU time the campaign's min_effect needs.

    Longer than most: every option's check before anything runs, then the dry run or the run
    under both locks (one runner a record, no renumber or new beside it), in that order.
    """
    from generator.authoring.records import runs_held
    from generator.base.fsio import LockBusy, edit_lock_now
    from generator.base.problems import CommandError
    from generator.checks.validate import require_project
    from generator.runner import session
    from generator.runner.powerplan import designed, pilot_plan
    from generator.runner.script import dry_run_text

    if until_decided != (max_blocks is not None):
        raise click.UsageError("--until-decided and --max-blocks go together")
    if new_sequence and not until_decided:
        raise click.UsageError("--new-sequence starts a new sequence: it goes with --until-decided")
    if resume and (until_decided or loads or dry_run or runs is not None or pilot is not None):
        raise click.UsageError("--resume finishes the plan as it was made: give no other plan options")
    if plan_id is not None and not resume:
        raise click.UsageError("--plan goes with --resume")
    repo = resolve_root(root)
    project = require_project(repo)
    rec = _record(project, record)
    if until_decided and not new_sequence and not resume:
        session.refuse_restart(project, rec, loads)
    if dry_run:
        if pilot is not None:
            plan = pilot_plan(project, rec, pilot, seed, list(loads))
            then = "then the run is planned from its numbers (runs per launch, the detectable change)"
            sys.stdout.write(dry_run_text(plan, repo, [f"a pilot of {pilot} blocks, linked to nothing; {then}"]))
            return
        draft = session.new_plan(project, rec, blocks=blocks, seed=seed, loads=list(loads), max_blocks=max_blocks)
        lines, plan = designed(project, rec, draft, runs, seed, list(loads), max_blocks)
        sys.stdout.write(dry_run_text(plan, repo, lines))
        return
    try:
        # One runner of a record at a time: a second would start the same arms beside the first.
        # A few seconds' grace: a runner killed while it started a process leaves that child a
        # copy of the lock's descriptor until the child's exec closes it (milliseconds, longer
        # on a loaded machine), and `--resume` right after the kill must not take that for a
        # runner still going.
        with (
            edit_lock_now(repo, repo / "results" / "journal" / f"{rec.slug}.run", wait=RUN_LOCK_GRACE_S),
            # The runs lock, shared with other records' runs; `renumber` and `new` wait for it.
            runs_held(
                repo,
                shared=True,
                busy="`improvements renumber` or `improvements new` is changing the records: run again once it ends",
            ),
        ):
            decided = _run(
                repo,
                project,
                rec,
                blocks,
                seed,
                list(loads),
                max_blocks,
                keep_going,
                resume,
                plan_id,
                root,
                runs,
                pilot,
            )
    except LockBusy:
        raise CommandError(f"another `improvements run {rec.slug}` is going") from None
    _print_decided(rec.slug, decided, fmt, cast("FailOn | None", fail_on))


def _run(
    repo: Path,
    project: Project,
    rec: RecordFile,
    blocks: int,
    seed: int,
    loads: list[int],
    max_blocks: int | None,
    keep_going: bool,
    resume: bool,
    plan_id: str | None,
    given_root: Path | None,
    runs: int | str | None,
    pilot: int | None,
) -> Decided:
    # Longer than most: a plan's life in order (resume, or pilot and plan; run; link; decide), each
    # step reading only what the one before journalled, so a kill between any two loses nothing.
    from generator.base.problems import CommandError
    from generator.runner import session
    from generator.runner.finish import decide, resume_command
    from generator.runner.journal import State, read
    from generator.runner.powerplan import designed
    from generator.runner.resume import found_lines, reran_line

    if resume:
        state, journal = session.resume_state(project, rec, plan_id, say=_say)
        sys.stderr.write("".join(line + "\n" for line in found_lines(repo, state, journal)))
    else:
        # The pilot first, when asked for; then the plan, its power printed before any run.
        noise = _run_pilot(repo, project, rec, pilot, seed, loads, keep_going) if pilot is not None else None
        draft = session.new_plan(project, rec, blocks=blocks, seed=seed, loads=loads, max_blocks=max_blocks)
        lines, plan = designed(project, rec, draft, runs, seed, loads, max_blocks, noise)
        sys.stderr.write("".join(line + "\n" for line in lines))
        journal = session.start_journal(project, plan)
        state = State(plan, [])
    tried = set(state.attempts)  # the runs an earlier runner started: what a resume runs again
    again = resume_command(rec.slug, state.plan.id, given_root)
    parse = session.parser(project, state.plan.settings.format)
    outcome = _execute(repo, "plan", state, journal, parse, keep_going, f"; `{again}` goes on")
    if resume:
        sys.stderr.write(reran_line(outcome, tried) + "\n")
    if outcome.failed and not keep_going:
        raise CommandError(
            f"run {outcome.failed[-1]} failed (its log's last lines are above and in "
            f"{journal.path.relative_to(repo)}); nothing linked. `{again}` runs it again (the plan as it was "
            "made), or run again with --keep-going"
        )
    state = read(journal.path)
    if state.failed:
        # Kept going: say which runs failed; the results' notes name the blocks left out.
        sys.stderr.write(f"{len(state.failed)} run(s) failed: {', '.join(sorted(state.failed))}\n")
    labels = _link_or_say_how(repo, rec.slug, state, journal, given_root)
    if not labels:
        sys.stderr.write("no block was complete on both sides: nothing linked\n")
    return decide(repo, rec.slug, labels, outcome)


def _run_pilot(
    repo: Path, project: Project, rec: RecordFile, blocks: int, seed: int, loads: list[int], keep_going: bool
) -> Noise | None:
    """Run the pilot's blocks and read the noise they measured; its journal is under results/journal/pilot/."""
    from generator.base.problems import CommandError
    from generator.runner import session
    from generator.runner.journal import State, read
    from generator.runner.powerplan import pilot_noise, pilot_plan

    plan = pilot_plan(project, rec, blocks, seed, loads)
    journal = session.start_journal(project, plan)
    parse = session.parser(project, plan.settings.format)
    outcome = _execute(repo, "pilot", State(plan, []), journal, parse, keep_going, "", " during the pilot")
    if outcome.failed and not keep_going:
        raise CommandError(
            f"pilot run {outcome.failed[-1]} failed (its log's tail is in {journal.path.relative_to(repo)}); "
            "nothing else was run"
        )
    metric, _ = session.decided_metric(project, rec)
    return pilot_noise(repo, read(journal.path), parse, metric)


def _execute(
    repo: Path, what: str, state: State, journal: Journal, parse: Parse, keep_going: bool, then: str, during: str = ""
) -> Outcome:
    """The plan's runs, with its progress shown; on SIGINT or SIGTERM it says so and exits 130."""
    from generator.runner.execute import Interrupted, Runner

    sys.stderr.write(f"{what} {state.plan.id}: {len(state.plan.runs)} runs, journal {journal.path.relative_to(repo)}\n")
    runner = Runner(repo, state, journal, parse, keep_going=keep_going, progress=_progress(), say=_say)
    try:
        outcome = runner.execute()
    except Interrupted as why:
        sys.stderr.write(f"\nstopped by {why}{during}: every process it started is stopped{then}\n")
        sys.exit(130)
    _say("")
    return outcome


def _record(project: Project, ref: str) -> RecordFile:
    from generator.authoring.records import find_record
    from generator.base.problems import ProblemsFound, Report

    report = Report()
    path = find_record(project, report, ref)
    if report.problems:
        raise ProblemsFound(report)
    return next(r for r in project.records if r.path == path)


def _link_or_say_how(repo: Path, slug: str, state: State, journal: Journal, given_root: Path | None) -> list[str]:
    """`finish.link`; when it fails, the runs are journalled and kept: say so, and the exact command that links them."""
    from generator.base.problems import CommandError, ProblemsFound, format_report
    from generator.cli import os_error_text
    from generator.runner.finish import link, resume_command

    how = (
        f"the {len(state.done)} finished run(s) are journalled in {journal.path.relative_to(repo)} and kept; "
        f"nothing is linked yet. Once that is fixed, `{resume_command(slug, state.plan.id, given_root)}` "
        "links them (a run whose kept output is intact is not run again)"
    )
    try:
        return link(repo, slug, state, journal)
    except ProblemsFound as exc:
        sys.stderr.write(format_report(exc.report, "text"))
        raise CommandError(f"the record cannot be linked: {how}") from None
    except CommandError as exc:
        raise CommandError(f"{exc}; {how}") from None
    except OSError as exc:
        raise CommandError(f"{os_error_text(exc)}; {how}") from None


def _print_decided(slug: str, decided: Decided, fmt: str, fail_on: FailOn | None) -> None:
    """The decisions as text or one JSON object; with `--fail-on`, exit 3 when one fails the gate."""
    from generator.base.jsontext import dumps
    from generator.cli import gate
    from generator.views.verdict import comparison_json, row_line

    rows, looks = decided
    if fmt == "json":
        results = [
            {"result": label, "metric": metric, **comparison_json(row.comparison if row else None, row, fail_on)}
            for label, metric, row in rows
        ]
        failed = any(r.get("fails") for r in results)
        sys.stdout.write(
            dumps({"record": slug, "fail_on": fail_on, "failed": failed, "results": results, "sequential": looks})
            + "\n"
        )
    else:
        for label, metric, row in rows:
            sys.stdout.write((row_line(label, metric, row) if row else f"{label}: no comparison on `{metric}`") + "\n")
        for line in looks:
            sys.stdout.write(line + "\n")
    if fail_on is not None:
        gate(
            [
                f"{label}: {metric} {row.comparison.decision}"
                for label, metric, row in rows
                if row is not None and row.comparison is not None and row.comparison.fails(fail_on)
            ]
        )


def _say(text: str) -> None:
    """A line of its own: on a terminal the progress line is cleared first (an empty text just clears it)."""
    if sys.stderr.isatty():
        sys.stderr.write("\r\033[K")
    if text:
        sys.stderr.write(text + "\n")
    sys.stderr.flush()


def _progress() -> Callable[[int, int, PlannedRun, float | None], None]:
    terminal = sys.stderr.isatty()

    def show(done: int, total: int, run: PlannedRun, left: float | None) -> None:
        eta = f", about {int(left // 60)}:{int(left % 60):02d} left" if left is not None else ""
        text = f"run {run.index} of {total}: block {run.block}, arm {run.arm}, load {run.load}{eta}"
        if terminal:
            width = 20
            filled = width * done // max(total, 1)
            sys.stderr.write(f"\r\033[K[{'#' * filled}{'.' * (width - filled)}] {text}")
            sys.stderr.flush()
        else:
            sys.stderr.write(text + "\n")

    return show
