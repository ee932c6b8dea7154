"""What `--resume` may pick up: the plan the journals say is unfinished, the record's own, its outputs verified.

A plan is chosen by what its journal says (linked since it was last resumed, or not), never by
the time in its id: a clock set back makes an older id of a newer plan. The plan must be the
record's whose run lock is held (its slug, its record's file name, its folder), so a journal
copied or renamed under another record's name cannot make one record's runner run and link
another's plan. Every output a `done` run kept is checked against the SHA-256 the journal
recorded before anything reads it again: one that changed (or is gone) is discarded, moved
aside (`<name>.changed-<SHA-256 prefix>`), and its run is run again, and the runner says so.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from generator.base.problems import CommandError, UsageProblem, rel
from generator.model.record import FILENAME_RE
from generator.runner.journal import JOURNAL_DIR, PLAN_ID_RE, Journal, State, journal_path, journals, read
from generator.runner.plan import Plan

if TYPE_CHECKING:
    from generator.runner.execute import Outcome


def _read(root: Path, path: Path) -> State:
    try:
        return read(path)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CommandError(f"{rel(path, root)}: cannot be read as a journal: {exc}") from None


def _progress(state: State) -> str:
    return f"{len(state.done)} of {len(state.plan.runs)} runs done, {'linked' if state.linked else 'not linked'}"


def pick(root: Path, slug: str, plan_id: str | None) -> tuple[Path, State]:
    """The journal `--resume` goes on with: `plan_id`'s, else the one unfinished plan of `slug`.

    With none unfinished, the newest (by its id) is resumed: it runs what failed and links the same.
    """
    if plan_id is not None:
        if not PLAN_ID_RE.fullmatch(plan_id):
            raise UsageProblem(f"`{plan_id}` is not a plan id (like 20261202T093349Z-054277)")
        path = journal_path(root, slug, plan_id)
        if not path.is_file():
            known = ", ".join(p.name[len(slug) + 1 : -len(".jsonl")] for p in journals(root, slug)) or "none"
            raise UsageProblem(f"no journal of plan {plan_id} of `{slug}` under {JOURNAL_DIR}/ (plans: {known})")
        return path, _read(root, path)
    try:
        found = [(p, _read(root, p)) for p in journals(root, slug)]
    except CommandError as exc:
        raise CommandError(f"{exc}; resume another plan of `{slug}` with --plan ID") from None
    if not found:
        raise UsageProblem(f"no journal of `{slug}` under {JOURNAL_DIR}/ to resume")
    unfinished = [(p, s) for p, s in found if not s.linked]
    if len(unfinished) > 1:
        listed = "; ".join(f"{s.plan.id} ({_progress(s)})" for _, s in unfinished)
        raise UsageProblem(
            f"{len(unfinished)} plans of `{slug}` are unfinished: {listed}. Say which with --plan ID "
            f"(`improvements run {slug} --resume --plan {unfinished[-1][1].plan.id}`)"
        )
    return unfinished[0] if unfinished else found[-1]


def check_plan(root: Path, slug: str, record: Path, path: Path, plan: Plan) -> None:
    """Refuse a plan that is not the locked record's own: its slug, id, folder and record file name."""
    problems = []
    if plan.slug != slug:
        problems.append(f"its plan is of `{plan.slug}`")
    if path.name != f"{plan.slug}-{plan.id}.jsonl":
        problems.append(f"its plan's id is {plan.id!r}")
    if plan.workdir != f"{JOURNAL_DIR}/{slug}-{plan.id}":
        problems.append(f"its plan keeps its outputs in {plan.workdir!r}")
    name = FILENAME_RE.match(PurePosixPath(plan.record).name)
    if (
        name is None
        or name["slug"] != slug
        or PurePosixPath(plan.record).parent != PurePosixPath(rel(record.parent, root))
    ):
        problems.append(f"its plan links into {plan.record!r}, not a file of `{slug}`")
    if problems:
        raise CommandError(
            f"{rel(path, root)} is not a plan of `{slug}` ({'; '.join(problems)}): not resumed, nothing run. "
            "A journal is resumed only under its own record's name, as `improvements run` wrote it"
        )


def unended(state: State) -> list[tuple[str, int]]:
    """(run key, attempt) of every attempt that started and has no end: a killed runner's."""
    ended = {(str(e.get("run")), e.get("attempt")) for e in state.events if e.get("event") == "end"}
    return [
        (str(e["run"]), int(e["attempt"]))
        for e in state.events
        if e.get("event") == "start" and (str(e.get("run")), e.get("attempt")) not in ended
    ]


@dataclass(frozen=True)
class Discarded:
    run: str
    path: str
    why: str
    moved_to: str | None


def sha256_of(path: Path) -> str | None:
    """The file's SHA-256, read a piece at a time; None when it is not a regular file there."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return None
        return hashlib.file_digest(fh, "sha256").hexdigest()


def mismatches(root: Path, state: State) -> list[tuple[str, str, str, str | None]]:
    """(run key, output path, why, its SHA-256 now) for every kept output that is not what its run wrote."""
    out: list[tuple[str, str, str, str | None]] = []
    for key, end in state.done.items():
        for output in end.get("outputs", []):
            where = str(output.get("path"))
            found = sha256_of(root / where)
            if found is None:
                out.append((key, where, "is gone", None))
            elif found != output.get("sha256"):
                was = str(output.get("sha256"))[:12]
                out.append(
                    (key, where, f"changed since its run wrote it (SHA-256 {found[:12]}, journalled {was})", found)
                )
    return out


def discard_changed(root: Path, state: State, journal: Journal) -> list[Discarded]:
    """Journal each run whose kept output changed as discarded (a resume runs it again), its file moved aside."""
    done: list[Discarded] = []
    for key, where, why, digest in mismatches(root, state):
        path = root / where
        moved: str | None = None
        if digest is not None:
            # Kept, not overwritten by the run's new output: whoever changed it may want it.
            aside = path.with_name(f"{path.name}.changed-{digest[:12]}")
            os.replace(path, aside)
            moved = rel(aside, root)
        journal.append("discarded", run=key, output=where, why=f"{where} {why}", moved_to=moved)
        state.done.pop(key, None)
        state.failed[key] = {"why": f"{where} {why}"}
        done.append(Discarded(key, where, why, moved))
    return done


def found_lines(repo: Path, state: State, journal: Journal) -> list[str]:
    """What `--resume` found in the journal, and what of the plan it found running and stopped."""
    plan = state.plan
    left = [r for r in plan.runs if r.key not in state.done]
    again = [r.key for r in left if r.key in state.attempts]
    where = journal.path.relative_to(repo)
    done = len(plan.runs) - len(left)
    text = f"resume: plan {plan.id} ({where}): {done} of {len(plan.runs)} runs done, {len(left)} left"
    if again:
        why = [f"{k} ({state.failed[k].get('why')})" if k in state.failed else f"{k} (never ended)" for k in again]
        text += f"; run again, as started before and not ended well: {', '.join(why)}"
    lines = [text]
    # resume_state journalled what it stopped: read from there, the one record of it.
    events = read(journal.path).events
    resumed: dict[str, Any] = next((e for e in reversed(events) if e.get("event") == "resumed"), {})
    groups = [str(g) for g in resumed.get("stopped_leftover_groups") or []]
    if groups:
        lines.append(
            f"resume: stopped {len(groups)} process group(s) a killed runner of this plan left: {', '.join(groups)}"
        )
    else:
        lines.append("resume: no process of this plan was left running")
    return lines


def reran_line(outcome: Outcome, tried: set[str]) -> str:
    """What a resume ran, and which of those runs an earlier runner had started."""
    ran = outcome.completed + outcome.failed
    reran = [k + (" (failed again)" if k in outcome.failed else "") for k in ran if k in tried]
    text = f"resume: ran {len(ran)} run(s)"
    text += f"; reran {', '.join(reran)}" if reran else "; none had been started before"
    return text
