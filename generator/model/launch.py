"""The launch command in force: the campaign baseline with a sequence of records' changes applied.

Pure functions on plain frozen dataclasses, so the validation, analysis and page layers share one
computation and a caller converts its pydantic records once (`Step.from_change`).

Rules (the format guide repeats them):

- Order: a step comes after every step it `builds_on`; among steps free to go next, the lowest
  number goes first. `builds_on` naming a slug that is not among the steps is reported in
  `Stack.unresolved` and otherwise ignored. A cycle is returned as a `Cycle` (its slugs), never
  half-applied, one at a time (the first `graphlib` finds; with it fixed, the next shows).
- Applying one step is `model.apply_change`: the step's flags and `remove_flags` drop every
  occurrence of those flags (with their values), then its flags are appended. So one step on the
  baseline gives exactly `apply_change`'s tokens.
- Conflicts: two steps that set the same flag to different tokens, set the same environment
  variable to different values, or where one removes a flag the other sets, or that both replace
  the base command differently. Overriding the *baseline's* value is never a conflict (that is
  what a change is for). When B builds on A, directly or through other steps, B knowingly
  supersedes A: B's value wins and nothing is reported. Without that relation the later step in
  stack order wins in the tokens, so the output is still deterministic, and the clash is reported.
- A step's `base_command` replaces the campaign command as the base; every step's flags apply on
  top of it, the last such step in stack order deciding (`Stack.base_from`).
- Quoting: `command` is `shlex.join`'s quoting except for `$NAME` and `${NAME...}` references,
  which stay double-quoted so the shell expands them (`--model-path "$MODEL_PATH"`) without word
  splitting. The campaign writes `$MODEL_PATH` for values it did not record, so a quoted literal
  would be wrong. The price: a `$` that was single-quoted in the source is expanded too, because
  `shlex.split` does not keep quoting; records have no reason to pass a literal `$NAME`.
- Lines: the folded YAML block (`>-`) joins the written lines of the baseline, so they cannot be
  recovered; the display puts the program on the first line and each option on its own line.
"""

from __future__ import annotations

import functools
import graphlib
import heapq
import itertools
import re
import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from generator.model.record import Change, ContainerStart

ConflictKind = Literal["flag", "env", "remove", "base-command"]
LineKind = Literal["env", "baseline", "added", "changed", "removed"]


@dataclass(frozen=True)
class Step:
    """One record's change, as the stack needs it."""

    slug: str
    number: int
    builds_on: tuple[str, ...] = ()
    # (flag, value as shell words: `Flag.shell_value`, so a mapping's value is one word).
    flags: tuple[tuple[str, str | None], ...] = ()
    remove_flags: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    base_command: str | None = None
    # Host commands run before the launch, as written (`Change.before`).
    before: tuple[str, ...] = ()
    # Commands run inside the container before the launch (`Change.inside`), and its own image.
    inside: tuple[str, ...] = ()
    image: str | None = None
    container: tuple[str, ...] = ()  # how the container starts, a line each (`container_lines`)

    @property
    def label(self) -> str:
        return f"{self.number:02d}-{self.slug}"

    @classmethod
    def from_change(cls, slug: str, number: int, builds_on: Iterable[str], change: Change | None) -> Step:
        if change is None:
            return cls(slug, number, tuple(builds_on))
        return cls(
            slug=slug,
            number=number,
            builds_on=tuple(builds_on),
            flags=tuple((f.flag, f.shell_value()) for f in change.flags),
            remove_flags=tuple(change.remove_flags),
            env=tuple(change.env.items()),
            base_command=change.base_command,
            before=tuple(change.before),
            inside=tuple(change.inside),
            image=change.image,
            container=container_lines(change.container),
        )


def container_lines(c: ContainerStart | None) -> tuple[str, ...]:
    """A change's container start, a line each: `docker run` options as words, `-v` per volume, each file."""
    out = [words(_split_value(o)) for o in c.options] + [words(["-v", v.option()]) for v in c.volumes] if c else []
    return (*out, *(f"file {f.path} ({f.digest or 'its text on the record page'})" for f in (c.files if c else ())))


@dataclass(frozen=True)
class Cycle:
    """Steps that build on each other in a circle, starting with the lowest-numbered."""

    slugs: tuple[str, ...]


@dataclass(frozen=True)
class Conflict:
    name: str  # the flag or environment variable ("" for base-command)
    kind: ConflictKind
    slug_a: str  # the earlier step in stack order
    slug_b: str
    value_a: str | None  # None: removed
    value_b: str | None


@dataclass(frozen=True)
class Line:
    text: str  # shell-quoted, as in `command`
    kind: LineKind
    source: str | None = None  # the step's label, None for the baseline
    replaces: str | None = None  # "changed": the baseline's text; "removed": what was removed

    def display(self) -> str:
        if self.kind == "removed":
            return f"# removed: {self.text}  (by {self.source})"
        if self.source is None:
            return self.text
        note = f"  # from {self.source}"
        if self.replaces is not None:
            note += f" (was: {self.replaces})"
        return self.text + note


@dataclass(frozen=True)
class Stack:
    tokens: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    lines: tuple[Line, ...]
    order: tuple[str, ...]  # the steps' labels, in the order applied
    conflicts: tuple[Conflict, ...] = ()
    unresolved: tuple[tuple[str, str], ...] = ()  # (step slug, builds_on slug not among the steps)
    absent: tuple[tuple[str, str], ...] = ()  # (step slug, flag it removes that was not there)
    base_from: str | None = None  # the slug whose base_command replaced the campaign command
    # (step label, host command) run before the launch, in stack order; a command two steps
    # both list runs once, where it first comes.
    before: tuple[tuple[str, str], ...] = ()
    # The same for the commands run inside the container, and (step label, image) of the last
    # step that names its own image: the image in force (None: the campaign engine's).
    inside: tuple[tuple[str, str], ...] = ()
    image: tuple[str, str] | None = None
    container: tuple[tuple[str, str], ...] = ()  # (step label, line) of the container's start, likewise

    @property
    def command(self) -> str:
        """One line a POSIX shell runs: environment assignments, then the command."""
        assigns = [assignment(name, value) for name, value in self.env]
        return " ".join([*env_prefix(n for n, _ in self.env), *assigns, *(quote(t) for t in self.tokens)])

    def text(self) -> str:
        return "\n".join(line.display() for line in self.lines)

    def script(self) -> str:
        """`command` over several lines, one option per line, joined by backslash-newlines."""
        # `lines` holds the environment, then the words of `tokens` grouped as `command` quotes them.
        shown = [line.text for line in self.lines if line.kind != "removed"]
        return " \\\n    ".join([*env_prefix(n for n, _ in self.env), *shown])


# The names a POSIX shell assigns; `check` refuses any other environment name (`invalid-value`),
# since `A;touch x;B=2` printed before a command would run `touch`.
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# `$NAME`, `${NAME}` and the `${NAME:-default}` family; nothing that runs code (`$(...)`, backticks).
_VAR = re.compile(r"\$(?:[A-Za-z_][A-Za-z0-9_]*|\{[A-Za-z_][A-Za-z0-9_]*(?::?[-=?+][^}\"'`$\\]*)?\})")


# Memoised: every record stacked on a step prints its tokens again.
@functools.lru_cache(maxsize=65536)
def quote(token: str) -> str:
    """`shlex.quote`, except that variable references stay expandable.

    Literal parts are single-quoted and references double-quoted, side by side: inside double
    quotes `shlex` and the shell disagree on backslashes, so nothing else goes in them.
    """
    parts: list[str] = []
    pos = 0
    for m in _VAR.finditer(token):
        if m.start() > pos:
            parts.append(shlex.quote(token[pos : m.start()]))
        parts.append(f'"{m.group()}"')
        pos = m.end()
    if pos < len(token) or not parts:
        parts.append(shlex.quote(token[pos:]))
    return "".join(parts)


def assignment(name: str, value: str) -> str:
    """`NAME=value` as a shell reads it, the value through `quote`.

    `check` refuses a name that is not an identifier; should one get here all the same, the
    whole assignment is quoted as one word (for env(1), see `env_prefix`), so it stays data.
    """
    if ENV_NAME.fullmatch(name):
        return f"{name}={quote(value)}"
    return quote(f"{name}={value}")


def env_prefix(names: Iterable[str]) -> list[str]:
    """`["env"]` when a name is not an identifier: a shell does not take a quoted assignment, env(1) does."""
    return [] if all(ENV_NAME.fullmatch(n) for n in names) else ["env"]


def words(tokens: Iterable[str]) -> str:
    """Tokens as one line of shell words, each through `quote`."""
    return " ".join(quote(t) for t in tokens)


def split_command(command: str) -> list[str]:
    """The command's words as a shell reads them: a backslash-newline joins lines."""
    return shlex.split(command.replace("\\\n", ""))


def order_steps(steps: Sequence[Step]) -> tuple[Step, ...] | Cycle:
    """Steps after what they build on, the lowest number first among the free."""
    by_slug = _index(steps)
    # Kahn's order by hand: graphlib's own bookkeeping per node made a chain of n records n²
    # with a large constant (600 took 10 s); graphlib still finds and names a cycle below.
    waiting: dict[str, int] = {}
    after: dict[str, list[str]] = {}
    for s in steps:
        deps = {d for d in s.builds_on if d in by_slug}
        waiting[s.slug] = len(deps)
        for d in deps:
            after.setdefault(d, []).append(s.slug)
    free = [(s.number, s.slug) for s in steps if not waiting[s.slug]]
    heapq.heapify(free)
    found: list[Step] = []
    while free:
        _, slug = heapq.heappop(free)
        found.append(by_slug[slug])
        for nxt in after.get(slug, ()):
            waiting[nxt] -= 1
            if not waiting[nxt]:
                heapq.heappush(free, (by_slug[nxt].number, nxt))
    if len(found) == len(by_slug):
        return tuple(found)
    graph = {s.slug: [d for d in s.builds_on if d in by_slug] for s in sorted(steps, key=lambda s: s.number)}
    sorter = graphlib.TopologicalSorter(graph)
    try:
        sorter.prepare()
    except graphlib.CycleError as err:
        return _cycle(list(err.args[1]), by_slug)
    ready: list[tuple[int, str]] = []
    out: list[Step] = []
    while sorter.is_active():
        for slug in sorter.get_ready():
            heapq.heappush(ready, (by_slug[slug].number, slug))
        _, slug = heapq.heappop(ready)
        out.append(by_slug[slug])
        sorter.done(slug)
    return tuple(out)


def chain(slug: str, steps: Sequence[Step] | Mapping[str, Step]) -> tuple[Step, ...] | Cycle:
    """The step `slug` and everything it builds on, transitively, in stack order.

    `steps` may be given already indexed by slug: a caller that asks for every record's chain
    indexes them once, not once a record.
    """
    by_slug = steps if isinstance(steps, Mapping) else _index(steps)
    wanted: set[str] = set()
    todo = [slug]
    while todo:
        s = todo.pop()
        if s in wanted or s not in by_slug:
            continue
        wanted.add(s)
        todo.extend(by_slug[s].builds_on)
    return order_steps([by_slug[s] for s in wanted])


def apply_steps(command: str, env: Mapping[str, str], steps: Sequence[Step]) -> Stack | Cycle:
    """The baseline `command` and `env` with every step applied in stack order."""
    ordered = order_steps(steps)
    if isinstance(ordered, Cycle):
        return ordered
    return apply_ordered(command, env, ordered)


def apply_ordered(command: str, env: Mapping[str, str], ordered: tuple[Step, ...]) -> Stack:
    """`apply_steps` of steps already in stack order (what `chain` and `order_steps` return)."""
    base = next((s for s in reversed(ordered) if s.base_command), None)
    base_command = base.base_command if base is not None and base.base_command else command
    # The command so far, in order: an insertion-ordered table of groups (removing one keeps the
    # others' order) and the keys under each option name, so that a step costs what it changes,
    # not the length of the command (a chain of n records was n³: 600 took a minute).
    live: dict[int, _Group] = {}
    by_name: dict[str, list[int]] = {}
    serial = itertools.count()

    def add(group: _Group) -> None:
        key = next(serial)
        live[key] = group
        if group.name is not None:
            by_name.setdefault(group.name, []).append(key)

    for tokens in _groups(split_command(base_command)):
        add(_Group(tokens, None))
    base_text: dict[str, str] = {g.name: words(g.tokens) for g in live.values() if g.name is not None}
    lines: list[Line] = []
    final_env = dict(env)
    env_source: dict[str, str] = {}
    absent: list[tuple[str, str]] = []
    for step in ordered:
        set_names = {f for f, _ in step.flags}
        removed = sorted(k for name in set(step.remove_flags) - set_names for k in by_name.get(name, ()))
        lines += [Line(words(live[k].tokens), "removed", step.label) for k in removed]
        absent += [(step.slug, f) for f in step.remove_flags if not by_name.get(f)]
        for name in set(step.remove_flags) | set_names:
            for k in by_name.pop(name, ()):
                del live[k]
        for flag, value in step.flags:
            add(_Group(_flag_tokens(flag, value), step.label))
        for name, value in step.env:
            final_env[name] = value
            env_source[name] = step.label
    groups = list(live.values())
    lines = [*_env_lines(final_env, env, env_source), *_command_lines(groups, base_text), *lines]
    by_slug = _index(ordered)
    return Stack(
        tokens=tuple(t for g in groups for t in g.tokens),
        env=tuple(final_env.items()),
        lines=tuple(lines),
        order=tuple(s.label for s in ordered),
        conflicts=tuple(_conflicts(ordered, by_slug)),
        unresolved=tuple((s.slug, d) for s in ordered for d in s.builds_on if d not in by_slug),
        absent=tuple(absent),
        base_from=base.slug if base else None,
        before=_lines_of(ordered, lambda step: step.before),
        inside=_lines_of(ordered, lambda step: step.inside),
        container=_lines_of(ordered, lambda step: step.container),
        image=next(((s.label, s.image) for s in reversed(ordered) if s.image), None),
    )


def _lines_of(ordered: Sequence[Step], of: Callable[[Step], tuple[str, ...]]) -> tuple[tuple[str, str], ...]:
    seen: set[str] = set()
    out: list[tuple[str, str]] = []
    for step in ordered:
        for line in of(step):
            if line not in seen:
                seen.add(line)
                out.append((step.label, line))
    return tuple(out)


@dataclass
class _Group:
    """An option with its values (or a run of leading words), and the step that added it."""

    tokens: list[str]
    source: str | None
    name: str | None = field(init=False)

    def __post_init__(self) -> None:
        first = self.tokens[0]
        self.name = first.split("=", 1)[0] if first.startswith("-") else None


def _groups(tokens: list[str]) -> list[list[str]]:
    # The same boundaries as `model.apply_change`: an option's values run until the next option,
    # and `--flag=value` carries its value with it.
    out: list[list[str]] = []
    for tok in tokens:
        starts = tok.startswith("-") or not out or (out[-1][0].startswith("-") and "=" in out[-1][0])
        if starts:
            out.append([tok])
        else:
            out[-1].append(tok)
    return out


def _env_lines(env: Mapping[str, str], base: Mapping[str, str], source: Mapping[str, str]) -> list[Line]:
    lines = []
    for name, value in env.items():
        was = assignment(name, base[name]) if name in source and name in base else None
        lines.append(Line(assignment(name, value), "env", source.get(name), was))
    return lines


def _command_lines(groups: list[_Group], base_text: Mapping[str, str]) -> list[Line]:
    # The program and anything before the first long option share the first line.
    head = 0
    while head < len(groups) and groups[head].source is None and not (groups[head].name or "").startswith("--"):
        head += 1
    lines = [Line(words([t for g in groups[:head] for t in g.tokens]), "baseline")] if head else []
    for g in groups[head:]:
        if g.source is None:
            lines.append(Line(words(g.tokens), "baseline"))
        elif g.name is not None and g.name in base_text:
            lines.append(Line(words(g.tokens), "changed", g.source, base_text[g.name]))
        else:
            lines.append(Line(words(g.tokens), "added", g.source))
    return lines


def _conflicts(ordered: Sequence[Step], by_slug: Mapping[str, Step]) -> list[Conflict]:
    # Pairs that touch one flag, variable or base command with different values, found through an
    # index by name: every pair of steps would cost n² (2,000 adopted records: 28 s).
    settings = [_settings(s) for s in ordered]
    touched: dict[tuple[str, str], dict[object, list[int]]] = {}
    for i, step in enumerate(ordered):
        for name, tokens in settings[i].items():
            touched.setdefault(("flag", name), {}).setdefault(tuple(tokens), []).append(i)
        for name in step.remove_flags:
            touched.setdefault(("flag", name), {}).setdefault(None, []).append(i)
        for name, value in step.env:
            touched.setdefault(("env", name), {}).setdefault(value, []).append(i)
        if step.base_command:
            touched.setdefault(("base", ""), {}).setdefault(step.base_command, []).append(i)
    pairs: set[tuple[int, int]] = set()
    for groups in touched.values():
        # Steps that agree on a name never clash on it: only pairs across two values count.
        for first, second in itertools.combinations(groups.values(), 2):
            pairs.update((min(i, j), max(i, j)) for i in first for j in second if i != j)
    out: list[Conflict] = []
    for i, j in sorted(pairs):
        a, b = ordered[i], ordered[j]
        if not _builds_on(b, a.slug, by_slug):
            out.extend(_clashes(a, b, settings[i], settings[j]))
    return out


def _clashes(a: Step, b: Step, sets_a: Mapping[str, list[str]], sets_b: Mapping[str, list[str]]) -> list[Conflict]:
    out: list[Conflict] = []
    for name in sets_a.keys() & sets_b.keys():
        if sets_a[name] != sets_b[name]:
            out.append(Conflict(name, "flag", a.slug, b.slug, words(sets_a[name]), words(sets_b[name])))
    for name in sorted(set(a.remove_flags) & sets_b.keys()):
        out.append(Conflict(name, "remove", a.slug, b.slug, None, words(sets_b[name])))
    for name in sorted(sets_a.keys() & set(b.remove_flags)):
        out.append(Conflict(name, "remove", a.slug, b.slug, words(sets_a[name]), None))
    env_a, env_b = dict(a.env), dict(b.env)
    for name in env_a.keys() & env_b.keys():
        if env_a[name] != env_b[name]:
            out.append(Conflict(name, "env", a.slug, b.slug, env_a[name], env_b[name]))
    if a.base_command and b.base_command and a.base_command != b.base_command:
        out.append(Conflict("", "base-command", a.slug, b.slug, a.base_command, b.base_command))
    return sorted(out, key=lambda c: (c.kind, c.name))


def _settings(step: Step) -> dict[str, list[str]]:
    # A flag given twice in one step keeps both occurrences, as `apply_change` appends both.
    out: dict[str, list[str]] = {}
    for flag, value in step.flags:
        out.setdefault(flag, []).extend(_flag_tokens(flag, value))
    return out


# Memoised: a step's values are split again for every record stacked on it (shlex is slow).
@functools.lru_cache(maxsize=8192)
def _split_value(value: str) -> tuple[str, ...]:
    return tuple(shlex.split(value))


def _flag_tokens(flag: str, value: str | None) -> list[str]:
    return [flag] if value is None else [flag, *_split_value(value)]


def _builds_on(step: Step, slug: str, by_slug: Mapping[str, Step]) -> bool:
    """Whether `step` builds on `slug`, directly or through other steps (a walk, never recursion)."""
    seen: set[str] = set()
    todo = list(step.builds_on)
    while todo:
        s = todo.pop()
        if s == slug:
            return True
        if s in seen or s not in by_slug:
            continue
        seen.add(s)
        todo.extend(by_slug[s].builds_on)
    return False


def _index(steps: Sequence[Step]) -> dict[str, Step]:
    by_slug: dict[str, Step] = {}
    for s in steps:
        if s.slug in by_slug:
            raise ValueError(f"step {s.slug!r} given twice")
        by_slug[s.slug] = s
    return by_slug


def _cycle(found: list[str], by_slug: Mapping[str, Step]) -> Cycle:
    # graphlib repeats the first node at the end; start at the lowest number so the report is stable.
    ring = found[:-1] if len(found) > 1 and found[0] == found[-1] else found
    start = min(range(len(ring)), key=lambda i: by_slug[ring[i]].number)
    return Cycle(tuple(ring[start:] + ring[:start]))
