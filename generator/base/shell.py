"""Shell text as bash reads it, and the characters in it that a reader cannot see.

`check` used to read a `before:` step with Python's `shlex`, which is not bash's grammar:
`stubpre $'\\'' x'` is balanced for `shlex` and leaves bash inside an open quote, so the next
printed line's quotes toggle the wrong way and a quoted flag value runs as code. So the text
is read by bash itself, with `-n` (read, never run): what `check` accepts is what bash reads.

One bash process reads every text: for each one it forks a subshell that turns `-n` on and
`eval`s the text, so the text is parsed alone, as the only thing in the subshell, and nothing
in it runs (`-n` cannot be turned off again; `set +n` is itself not run). Forking costs about
0.5-0.8 ms a text where starting `bash -n` costs about 3 ms (measured on 1,000 steps);
identical texts are read once, and past `CHUNK` texts one process a core reads a share (601
texts: 0.55-0.70 s in one process, 0.25 s in two, on a loaded two-core machine). The texts
travel on stdin, NUL-separated, never as part of the code.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

# Runs under `bash --norc --noprofile`, with BASH_ENV unset: no start-up file runs either.
_DRIVER = r"""
while IFS= read -r -d '' text; do
  ( eval "set -n
$text" ) 2>&1
  printf '\0%s\0' "$?"
done
"""
# "bash: eval: line 3: syntax error ..." -> "syntax error ...": the line numbers count the
# driver's own `set -n` line, so they would mislead.
_PREFIX = re.compile(r"^.*?\bline \d+: ")
_AT_LINE = re.compile(r" at line \d+")
# A parse that never ends is not bash's answer; seconds for thousands of texts is.
TIMEOUT_S = 60
# Texts a process reads before another one is worth starting (about 3 ms against 0.5 ms a text).
CHUNK = 64


@dataclass(frozen=True)
class Reading:
    """What bash said reading one text alone: its exit status and its messages (warnings too)."""

    status: int
    messages: tuple[str, ...]

    @property
    def clean(self) -> bool:
        return self.status == 0 and not self.messages


def bash_path() -> str | None:
    return shutil.which("bash")


def bash_read(texts: Sequence[str]) -> list[Reading] | None:
    """Each text as bash reads it alone (`-n`); None when bash is missing or does not answer.

    One bash process reads them all; past `CHUNK` texts, one process a CPU core reads a share
    each, side by side (forking a subshell a text is the cost, and it parallelises)."""
    bash = bash_path()
    if bash is None:
        return None
    # bash cannot be given a NUL; `check` refuses one before this (a control character).
    unique = [t for t in dict.fromkeys(texts) if "\0" not in t]
    shares = max(1, min(os.cpu_count() or 1, len(unique) // CHUNK))
    chunks = [unique[i::shares] for i in range(shares)]
    if shares == 1:
        answers = [_read_chunk(bash, unique)]
    else:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(shares) as pool:
            answers = list(pool.map(lambda chunk: _read_chunk(bash, chunk), chunks))
    found: dict[str, Reading] = {}
    for answer in answers:
        if answer is None:
            return None
        found.update(answer)
    nul = Reading(2, ("the text holds a NUL character, which bash cannot be given",))
    return [found.get(t, nul) for t in texts]


def _bash(bash: str, script: str, args: list[str], functions: dict[str, str], stdin: bytes) -> bytes | None:
    """What `script` prints run by bash with `args`, no start-up file and `functions` imported
    from the environment; None when bash fails or does not answer in time."""
    env = {k: v for k, v in os.environ.items() if k not in ("BASH_ENV", "ENV") and not k.startswith("BASH_FUNC_")}
    # English messages, whatever the user's locale; bytes beyond ASCII are word characters either way.
    env["LC_ALL"] = "C"
    env.update((f"BASH_FUNC_{name}%%", "() {\n" + body + "\n}") for name, body in functions.items())
    try:
        done = subprocess.run(
            [bash, "--norc", "--noprofile", "-c", script, "bash", *args],
            input=stdin,
            capture_output=True,
            env=env,
            timeout=TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def _read_chunk(bash: str, texts: list[str]) -> dict[str, Reading] | None:
    out = _bash(bash, _DRIVER, [], {}, "".join(t + "\0" for t in texts).encode("utf-8", "surrogateescape"))
    parts = None if out is None else out.decode("utf-8", "replace").split("\0")
    if parts is None or len(parts) != 2 * len(texts) + 1:
        return None
    found: dict[str, Reading] = {}
    for i, text in enumerate(texts):
        said = tuple(_AT_LINE.sub("", _PREFIX.sub("", line)) for line in parts[2 * i].splitlines() if line.strip())
        # bash repeats the offending line in backquotes after a syntax error: not a message.
        said = tuple(m for m in said if not (m.startswith("`") and m.endswith("'")))
        found[text] = Reading(int(parts[2 * i + 1]), said)
    return found


_HINT = "a step is one complete command line, as in a script: close what it opens, or split it into steps"
_HEREDOC_HINT = (
    "a step is one line: pipe the text in (`printf '%s\\n' LINE | sudo tee FILE`) or use a here-string (`<<<`)"
)
_JOIN_HINT = "end the step without the backslash (write `\\\\` for a literal one)"


def step_problem(step: str, alone: Reading, joined: Reading | None) -> tuple[str, str] | None:
    """Why a `before:` step is not one complete command line, and a hint, from bash's readings of
    it alone and (for a step ending in a backslash) of it followed by a line `fi`; None when it is."""
    if not alone.clean:
        said = "; ".join(alone.messages) or f"bash reads it with status {alone.status}"
        if any("here-document" in m for m in alone.messages):
            said += " (a here-document reads the lines after it: it would take the launch line)"
            return f"bash does not read it as one complete command: {said}", _HEREDOC_HINT
        return f"bash does not read it as one complete command: {said}", _HINT
    # A final backslash escaping the newline joins the next printed line to this one. Read
    # with `fi` after it, a complete line makes bash stop at that `fi`; a joined one does not.
    if joined is not None and not any("unexpected token `fi'" in m for m in joined.messages):
        return "it ends in a backslash that joins the next printed line (the launch) to it", _JOIN_HINT
    return None


def joined_text(step: str) -> str | None:
    """The text that tells whether `step` continues onto the next line, when it might."""
    return step + "\nfi" if step.endswith("\\") else None


# --- text split into words ------------------------------------------------------------------------

_OPERATORS = frozenset(";&|<>()")


def words_problem(text: str) -> str | None:
    """Where bash would read `text` as more than words, though the tool splits it into words and
    prints each one quoted: an operator (`;`, `|`, `&&`, a redirection), a command it would run
    (`$(...)`, backticks, `<(...)`), ANSI-C quoting (`$'...'`, which `shlex` misreads), a
    comment, a brace expansion (`{a,b}`, `{1..4}`: an unquoted JSON object is one) or a `~` it
    would expand. The printed command would pass these as text, which the record did not mean.
    None when the text is plain words (quotes, escapes, `$NAME`; globs match no file as a rule)."""
    start, brace, spread = True, -1, False
    for i, c, where in _scan(text):
        two, at = text[i : i + 2], f"at character {i + 1}"
        if where == '"' and (c == "`" or two == "$("):
            return f"bash would run the command substitution {_shown(two)} {at}"
        if where:
            start = False
            continue
        if c in " \t\n":
            start, brace, spread = True, -1, False
        elif two in ("$'", '$"'):
            return f"`{two}` {at} is quoting bash reads otherwise than the tool (ANSI-C or locale quoting)"
        elif c == "`" or two in ("$(", "<(", ">("):
            return f"bash would run the command substitution {_shown(two)} {at}"
        elif c in _OPERATORS:
            op = two if two in ("&&", "||", ">>", "<<", ">&", "<&", "&>", ";;") else c
            return f"bash reads `{op}` {at} as an operator, not as part of a word"
        elif c == "#" and start:
            return f"bash reads the `#` {at} as the start of a comment"
        elif c == "~" and start:
            return f"bash would expand the `~` {at} to a home folder; write `$HOME` for yours"
        elif c == "{" and text[i - 1 : i] != "$":
            brace, spread = i, False
        elif brace >= 0 and (c == "," or two == ".."):
            spread = True
        elif c == "}" and brace >= 0 and spread:
            return f"bash would expand the braces at character {brace + 1} into several words"
        if not c.isspace():
            start = False
    return None


def _scan(text: str) -> Iterator[tuple[int, str, str]]:
    """Each character of `text` with where bash sees it: "" unquoted, "'" or '"' inside such
    quotes (the quotes themselves unquoted), "\\" escaped by a backslash."""
    quote, i = "", 0
    while i < len(text):
        c = text[i]
        if quote == "'" and c != "'":
            yield i, c, "'"
        elif c == "\\" and quote != "'":
            yield i, c, "\\"
            if i + 1 < len(text):
                yield i + 1, text[i + 1], "\\"
            i += 2
            continue
        elif quote == '"' and c != '"':
            yield i, c, '"'
        else:
            yield i, c, ""
            if c in "'\"":
                quote = "" if quote == c else c
        i += 1


def quoted_at(text: str, index: int) -> str | None:
    """Where bash reads the character at `index` of `text` otherwise than as plain unquoted text,
    in words ("inside double quotes", ...), or None. Words filled in there (quoted for the
    shell) would be read as text again, or as code: a `$(...)` in them runs inside double
    quotes, in backticks and in a here-document's body."""
    backticks = 0
    for i, c, where in _scan(text):
        if i >= index:
            if where == "'":
                return "inside single quotes"
            if where == '"':
                return "inside double quotes"
            if where == "\\":
                return "after a backslash"
            break
        if c == "`" and where in ("", '"'):
            backticks += 1
    if backticks % 2:
        return "inside backticks"
    heredoc = re.search(r"<<(?!<)", text[:index])
    if heredoc is not None and "\n" in text[heredoc.end() : index]:
        return "inside a here-document"
    return None


def _shown(two: str) -> str:
    return "a backtick" if two.startswith("`") else f"`{two}`"


# --- characters a reader cannot see -------------------------------------------------------------

# Controls (C0, C1, DEL), format characters (bidi overrides and isolates, zero-width ones, the
# soft hyphen, tags), line and paragraph separators, surrogates, and spaces other than U+0020
# (a no-break space looks like a word break and is none to bash).
_HIDDEN = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp", "Zs"})
_MAYBE = re.compile(r"[^\x20-\x7e]")


def hidden(ch: str) -> bool:
    return ch != " " and unicodedata.category(ch) in _HIDDEN


def first_hidden(text: str, allowed: str = "\t") -> tuple[int, str] | None:
    """The first character of `text` a reader cannot see (and `allowed` does not list), with
    its index; None when there is none."""
    for m in _MAYBE.finditer(text):
        ch = m.group()
        if ch not in allowed and hidden(ch):
            return m.start(), ch
    return None


def char_name(ch: str) -> str:
    name = unicodedata.name(ch, "")
    return f"U+{ord(ch):04X}" + (f" ({name})" if name else "")


def visible(text: str, allowed: str = "") -> str:
    """`text` with every character a reader cannot see written as its escape (`\\u202e`)."""

    def escape(m: re.Match[str]) -> str:
        ch = m.group()
        if ch in allowed or not hidden(ch):
            return ch
        code = ord(ch)
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"

    return _MAYBE.sub(escape, text)


# --- a script as bash parses it ---------------------------------------------------------------

# One function a text, imported from the environment and printed back by `declare -f`.
_CANON = r"""
for name in "$@"; do
  declare -f "$name" || printf 'not-read'
  printf '\0'
done
"""
# An environment string longer than this is refused by the kernel (MAX_ARG_STRLEN on Linux);
# the texts of one process stay well under the whole environment's limit too.
ENV_TEXT_MAX = 120_000
_ENV_BATCH = 1_000_000


def bash_parsed(texts: Sequence[str]) -> list[str | None] | None:
    """Each text as bash parses it, printed back in bash's own form (`declare -f` of a function
    whose body is the text): comments gone, every command on its lines, every word as bash
    reads it. None for a text bash does not read as one complete body; None for all when bash
    is missing or does not answer.

    Why a function imported from the environment: `set -n` reads without running but defines
    nothing, and a function defined by `eval` would run whatever follows a `}` the text closes
    early. bash imports `BASH_FUNC_<name>%%` only when the value is exactly one function
    definition (the Shellshock fix refuses anything after it), so a hostile text is refused
    there and nothing in it runs."""
    bash = bash_path()
    if bash is None:
        return None
    unique = list(dict.fromkeys(texts))
    found: dict[str, str | None] = {}
    batch: list[str] = []
    size = 0
    for text in [*unique, None]:
        if text is not None and ("\0" in text or len(text.encode("utf-8", "surrogateescape")) > ENV_TEXT_MAX):
            found[text] = None
            continue
        if batch and (text is None or size + len(text) > _ENV_BATCH):
            answer = _parse_batch(bash, batch)
            if answer is None:
                return None
            found.update(answer)
            batch, size = [], 0
        if text is not None:
            batch.append(text)
            size += len(text)
    return [found.get(t) for t in texts]


def _parse_batch(bash: str, texts: list[str]) -> dict[str, str | None] | None:
    names = [f"improvements_text_{i}" for i in range(len(texts))]
    out = _bash(bash, _CANON, names, dict(zip(names, texts, strict=True)), b"")
    parts = None if out is None else out.decode("utf-8", "surrogateescape").split("\0")
    if parts is None or len(parts) != len(texts) + 1:
        return None
    found: dict[str, str | None] = {}
    for name, text, part in zip(names, texts, parts, strict=False):
        head = f"{name} () \n{{ \n"
        found[text] = part[len(head) : -3] if part.startswith(head) and part.endswith("\n}\n") else None
    return found
