"""Text printed for a shell: read by bash's own grammar, with nothing in it a reader cannot see.

- A `before:` step is printed as written, one a line, before the launch line, so it must be
  one line that bash reads completely on its own: no line break, no here-document, no open
  quote, bracket or compound command, no trailing `&&`, `|` or line-joining backslash
  (`shell-syntax`). bash itself reads each step (`base.shell`), in one process for the
  campaign, and the whole script `stack --format command` prints is read too.
- A command or a flag's value in the string form is split into words and printed each quoted:
  an operator (`;`, `|`, `&&`, a redirection), a command substitution (`$(...)`, backticks,
  `<(...)`), `$'...'`, a comment, braces or a `~` bash would expand would be passed as text
  where bash would act on them, so it is refused too (`shell-syntax`), with the quoting that
  says "text" as the hint.
- Every text a launch command is made of (`before:` steps, flag values, environment values,
  the base commands, the container image) holds no control, bidi, zero-width or unusual space
  character (`invisible-character`): what a reader sees on the page is then what runs.
- Without bash on PATH the steps cannot be read as bash reads them: one warning says so
  (`shell-syntax`, at the first step), and the rest of `check` goes on: the printed script
  needs bash to run anyway, so the warning shows wherever it could matter.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from generator.base.problems import Problem, Severity, rel
from generator.base.read import Path_
from generator.base.shell import (
    bash_read,
    char_name,
    first_hidden,
    joined_text,
    step_problem,
    visible,
    words_problem,
)
from generator.model.launch import Cycle, Step, apply_steps
from generator.model.record import Change, Setup
from generator.project.load import Loaded, Project
from generator.project.schema_errors import dotted


@dataclass(frozen=True)
class _Text:
    loaded: Loaded
    loc: Path_
    text: str
    # "step": a `before:` step, printed as written; "words": split into words, each printed
    # quoted (a command, a flag's value in the string form); "literal": one word or a value.
    kind: Literal["step", "words", "literal"]

    @property
    def step(self) -> bool:
        return self.kind == "step"


def shell_problems(project: Project) -> list[Problem]:
    """Every shell text of the campaign that bash would not read as printed, or that hides a character."""
    out: list[Problem] = []
    steps: list[_Text] = []
    for t in _texts(project):
        # A line break is whitespace in words (quoted where it is not), and ends a step's line.
        found = first_hidden(t.text, "\t" if t.step else "\t\n")
        if found is not None:
            out.append(_invisible(project, t, *found))
        elif t.step:
            steps.append(t)
        elif t.kind == "words" and (why := words_problem(t.text)) is not None:
            msg = f"`{dotted(t.loc)}`: {why}; the printed command would pass it to the program as text"
            out.append(_problem(project, t, "shell-syntax", msg, _WORDS_HINT))
    if not steps:
        return out
    # The whole script only when every text in it is one bash may be given (no hidden character).
    script = _stack_script(project) if not out else None
    texts = [t.text for t in steps] + [j for t in steps if (j := joined_text(t.text))]
    readings = bash_read([*texts, *([script] if script is not None else [])])
    if readings is None:
        first = steps[0]
        msg = "bash was not found (or did not answer), so `before:` steps were not read as bash reads them"
        hint = "install bash, which runs the printed launch script, and run `check` again"
        return [*out, _problem(project, first, "shell-syntax", msg, hint, "warning")]
    by_text = dict(zip(texts, readings, strict=False))
    for t in steps:
        joined = joined_text(t.text)
        problem = step_problem(t.text, by_text[t.text], by_text[joined] if joined else None)
        if problem is not None:
            why, hint = problem
            out.append(_problem(project, t, "shell-syntax", f"`{dotted(t.loc)}`: {why}", hint))
    if script is not None and not readings[-1].clean and not out:
        # Each step alone is complete, so this is the generator's own fault: said, never hidden.
        msg = "the printed launch script is not read cleanly by bash: " + "; ".join(readings[-1].messages)
        out.append(_problem(project, steps[0], "shell-syntax", msg, "please report this"))
    return out


_WORDS_HINT = (
    "quote it ('...') if it is text for the program; a command to run first belongs in `before:`, "
    "and a flag written as a mapping passes its `value` as one argument, exactly as written"
)


def _texts(project: Project) -> Iterator[_Text]:
    campaign = project.campaign_file
    if campaign.model is not None:
        c = project.campaign
        yield _Text(campaign, ("baseline", "command"), c.baseline.command, "words")
        yield from (_Text(campaign, ("baseline", "env", k), v, "literal") for k, v in c.baseline.env.items())
        if c.engine.image:
            yield _Text(campaign, ("engine", "image"), c.engine.image, "literal")
    for rec in project.records:
        r = rec.record
        if r.change is not None:
            yield from _change_texts(rec, ("change",), r.change)
        if r.setup is not None:
            yield from _setup_texts(rec, ("setup",), r.setup)
        for i, v in enumerate(r.variants):
            if v.change is not None:
                yield from _change_texts(rec, ("variants", i, "change"), v.change)
            if v.setup is not None:
                yield from _setup_texts(rec, ("variants", i, "setup"), v.setup)


def _change_texts(rec: Loaded, at: Path_, change: Change) -> Iterator[_Text]:
    yield from (_Text(rec, (*at, "before", i), step, "step") for i, step in enumerate(change.before))
    yield from (_Text(rec, (*at, "inside", i), step, "step") for i, step in enumerate(change.inside))
    if change.image:
        yield _Text(rec, (*at, "image"), change.image, "literal")
    for i, flag in enumerate(change.flags):
        if flag.value is None:
            continue
        if flag.literal:
            yield _Text(rec, (*at, "flags", i, "value"), flag.value, "literal")
        else:
            yield _Text(rec, (*at, "flags", i), flag.value, "words")
    yield from (_Text(rec, (*at, "env", k), v, "literal") for k, v in change.env.items())
    if change.base_command:
        yield _Text(rec, (*at, "base_command"), change.base_command, "words")


def _setup_texts(rec: Loaded, at: Path_, setup: Setup) -> Iterator[_Text]:
    if setup.base_command:
        yield _Text(rec, (*at, "base_command"), setup.base_command, "words")
    if setup.engine is not None and setup.engine.image:
        yield _Text(rec, (*at, "engine", "image"), setup.engine.image, "literal")


def _stack_script(project: Project) -> str | None:
    """What `stack --format command` prints for every record's change (adopted or not: the
    script only has to be read, and every step should be), or None without a campaign."""
    if project.campaign_file.model is None:
        return None
    # One step a slug: a duplicate slug is its own error, and the stack takes each slug once.
    by_slug = {r.slug: r for r in project.records}
    steps = [Step.from_change(r.slug, r.number, (), r.record.change) for r in by_slug.values()]
    found = apply_steps(project.campaign.baseline.command, project.campaign.baseline.env, steps)
    if isinstance(found, Cycle):  # not without `builds_on`; kept for the type
        return None
    return "".join(line + "\n" for _label, line in found.before) + found.command + "\n"


def _invisible(project: Project, t: _Text, index: int, ch: str) -> Problem:
    if ch == "\n":
        msg = f"`{dotted(t.loc)}` holds a line break (character {index + 1}): a step is one line"
        hint = "write each command as its own step, in order"
        return _problem(project, t, "shell-syntax", msg, hint)
    shown = t.text if len(t.text) <= 60 else t.text[max(0, index - 20) : index + 20]
    msg = (
        f"`{dotted(t.loc)}` holds {char_name(ch)}, which a reader cannot see, at character {index + 1} of "
        f"`{visible(shown)}`: printed for a shell, what the page shows would not be what runs"
    )
    return _problem(project, t, "invisible-character", msg, "delete it (retype the text around it)")


def _problem(project: Project, t: _Text, code: str, msg: str, hint: str, severity: Severity = "error") -> Problem:
    line, col = t.loaded.positions.of(t.loc)
    return Problem(rel(t.loaded.path, project.root), line, col, code, msg, hint, severity)
