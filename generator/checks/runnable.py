"""What `improvements run` makes of a campaign's text, checked before it prints or runs any of it.

- A label the dry run prints in a comment (the campaign baseline's, a variant's) and the `run:`
  settings it prints or runs (`ready.log`, `ready.url`, `format`) are one line of visible text:
  a line break would end the comment and start a command line of its own in the printed script
  (`invisible-character`). `bench.command` and `versions:` may span lines (bash runs them as
  scripts), but hide nothing either.
- The benchmark template gives `{command}` where bash reads words (`shell-syntax`): the arm's
  launch is filled in as quoted words, and inside quotes, backticks or a here-document those
  quotes are text again, so a flag value such as `'$(touch x)'` would run. So would a template
  that hands the words to `eval` or `sh -c`, which read them as code once more.
- The names the runner makes file names from (a record's slug, a variant's label as its arm's
  name) fit a file name with what the runner adds around them (`bad-filename`).
- `improvements run` cannot run a change's `inside:` steps, its own `image:` or its own
  `container:` start (it starts no container: how one is entered is not recorded): said where the
  change names them, a warning here, since a record
  measured elsewhere is still right; `run` refuses such an arm with the same problem as an error.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from generator.base.problems import Problem, Severity, rel
from generator.base.read import Path_
from generator.base.shell import char_name, first_hidden, quoted_at
from generator.model.record import Change
from generator.model.runconfig import PLACEHOLDER_RE, RUNNER_NAME_MAX, arm_name
from generator.project.load import Loaded, Project
from generator.project.schema_errors import dotted

_ONE_LINE_HINT = "write it on one line, without a tab or any character a reader cannot see (retype it)"
_WRAP_HINT = (
    "give {command} as words where bash reads words (`harness --out {output} -- {command}`); to run it "
    "through a shell, pass the words as arguments: bash -c 'cd /work && exec \"$@\"' bash {command}"
)


def runnable_problems(project: Project) -> list[Problem]:
    """Every text `improvements run` would print or run that is not safe as it stands."""
    out: list[Problem] = []
    cf = project.campaign_file
    if cf.model is None:
        return out
    for loaded, loc, text in _one_line_texts(project):
        found = first_hidden(text, "")
        if found is not None:
            out.append(_hidden(project, loaded, loc, text, *found))
    run = project.campaign.run
    if run is None:
        return out
    for loc, text in [(("run", "bench", "command"), run.bench.command)] + [
        (("run", "versions", name), command) for name, command in run.versions.items()
    ]:
        found = first_hidden(text, "\t\n")
        if found is not None:
            out.append(_hidden(project, cf, loc, text, *found))
    out += _template_problems(project, run.bench.command)
    out += _name_problems(project)
    out += not_runnable(project, "warning")
    return out


def _one_line_texts(project: Project) -> Iterator[tuple[Loaded, Path_, str]]:
    cf = project.campaign_file
    yield cf, ("baseline", "label"), project.campaign.baseline.label
    run = project.campaign.run
    if run is not None:
        yield cf, ("run", "format"), run.format
        if run.ready is not None and run.ready.log is not None:
            yield cf, ("run", "ready", "log"), run.ready.log
        if run.ready is not None and run.ready.url is not None:
            yield cf, ("run", "ready", "url"), run.ready.url
    for rec in project.records:
        for i, variant in enumerate(rec.record.variants):
            yield rec, ("variants", i, "label"), variant.label


def _hidden(project: Project, loaded: Loaded, loc: Path_, text: str, index: int, ch: str) -> Problem:
    if ch in "\n\r":
        why = "where a line break would end a comment and start a command line of its own"
        what = "a line break"
    else:
        why = "where what a reader sees would not be what is there"
        what = f"{char_name(ch)}, which a reader cannot see,"
    msg = f"`{dotted(loc)}` holds {what} at character {index + 1}: `improvements run` prints it in its script, {why}"
    return _problem(project, loaded, loc, "invisible-character", msg, _ONE_LINE_HINT)


# `eval {command}`, `sh -c {command}`, `bash -lc {command}`: the words are read as shell code once more.
_REREAD = re.compile(r"(?:^|[\s;&|(])(?:eval|(?:\S*/)?(?:ba|da|z|k)?sh(?:\s+-[A-Za-z]+)*?\s+-[A-Za-z]*c)\s+$")


def _template_problems(project: Project, template: str) -> list[Problem]:
    out: list[Problem] = []
    for m in PLACEHOLDER_RE.finditer(template):
        if m.group(1) != "command":
            continue
        where = quoted_at(template, m.start())
        if where is None and _REREAD.search(template[: m.start()]):
            where = "after `eval` or a shell's `-c`, which read the words as shell code again"
        if where is not None:
            msg = (
                f"`run.bench.command`: {{command}} at character {m.start() + 1} is {where}: the launch is "
                "filled in as quoted words, and there a flag value such as '$(touch x)' would run"
            )
            out.append(
                _problem(project, project.campaign_file, ("run", "bench", "command"), "shell-syntax", msg, _WRAP_HINT)
            )
    return out


def _name_problems(project: Project) -> list[Problem]:
    """Slugs and arms' names the runner makes file names from, longer than they may be."""
    out: list[Problem] = []
    for rec in project.records:
        size = len(rec.slug.encode())
        if size > RUNNER_NAME_MAX:
            msg = (
                f"the slug `{rec.slug[:40]}...` has {size} bytes: `improvements run` names its journal and "
                f"its files after it, and takes at most {RUNNER_NAME_MAX} (a file name may have 255)"
            )
            hint = f"shorten the slug by at least {size - RUNNER_NAME_MAX} characters"
            out.append(Problem(rel(rec.path, project.root), 1, 1, "bad-filename", msg, hint))
        for i, variant in enumerate(rec.record.variants):
            name = arm_name(variant.label)
            if len(name.encode()) > RUNNER_NAME_MAX:
                msg = (
                    f"`variants[{i}].label` makes the arm name `{name[:40]}...` of {len(name.encode())} bytes: "
                    f"`improvements run` names its outputs and logs after it, and takes at most {RUNNER_NAME_MAX}"
                )
                hint = f"shorten the label (at most {RUNNER_NAME_MAX} letters and digits; the value can say more)"
                out.append(_problem(project, rec, ("variants", i, "label"), "bad-filename", msg, hint))
    return out


def not_runnable(project: Project, severity: Severity) -> list[Problem]:
    """Every change with `inside:` steps, its own `image:` or `container:` start, which `run` cannot run."""
    out: list[Problem] = []
    for rec in project.records:
        if rec.record.change is not None:
            out += change_not_runnable(project, rec, ("change",), rec.record.change, severity)
        for i, v in enumerate(rec.record.variants):
            if v.change is not None:
                out += change_not_runnable(project, rec, ("variants", i, "change"), v.change, severity)
    return out


def change_not_runnable(project: Project, rec: Loaded, at: Path_, change: Change, severity: Severity) -> list[Problem]:
    """The change's `inside:`, `image:` and `container:`, each a problem where it is written: the
    runner would drop them."""
    out: list[Problem] = []
    whats = {
        "inside": "the steps this change runs inside the container",
        "image": "this change's own image",
        "container": "this change's own container start (`docker run` options, volumes, mounted files)",
    }
    for key, what in whats.items():
        if getattr(change, key):
            msg = (
                f"`{dotted((*at, key))}`: `improvements run` cannot run {what}: it runs every arm on the host, "
                "since how the container is entered is not recorded, and without them it would measure "
                "another launch than the record shows"
            )
            hint = "run it by hand and `improvements import` the result, or make the change without it"
            out.append(_problem(project, rec, (*at, key), "not-runnable", msg, hint, severity))
    return out


def _problem(
    project: Project, loaded: Loaded, loc: Path_, code: str, msg: str, hint: str, severity: Severity = "error"
) -> Problem:
    line, col = loaded.positions.of(loc)
    return Problem(rel(loaded.path, project.root), line, col, code, msg, hint, severity)
