"""The `improvements` command line.

Each command lives in its own module under `generator.commands` and is imported only when
it runs, so `improvements --help` never pays for scipy, Jinja2 or mkdocs. The top-level help
does not even import click (most of what it cost): `run` prints it with `top_help`, which
lays it out the way click does (tests/test_cli_docs.py compares the two at every width), and
the click group is built on first use of `main` or `root_option`.
"""

from __future__ import annotations

import functools
import io
import os
import sys

# typing and pathlib cost more than the rest of the top-level help: names for the checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any, TypeVar

    import click

    _F = TypeVar("_F", bound=Callable[..., Any])

    main: click.Group

    def root_option(f: _F) -> _F: ...


# name -> (module under generator.commands, one-line help). The help is here so that
# listing commands imports none of them.
COMMANDS: dict[str, tuple[str, str]] = {
    "check": ("check", "Validate the campaign: every problem in every file, with its position."),
    "build": ("build", "Render the series, summary and home page (and the site with --site)."),
    "serve": ("serve", "Preview the site, re-rendering when a record or result changes."),
    "summary": ("summary", "Print the tier-ranked summary table."),
    "stack": ("stack", "Print the launch command in force: the baseline with every adopted change."),
    "import": ("import_", "Import benchmark output files as runs and link them from a record."),
    "run": ("run", "Run a record's comparison: arms in randomized blocks, journalled, linked, decided."),
    "init": ("init", "Start a campaign: campaign.yaml, mkdocs.yml, pre-commit and CI, nothing overwritten."),
    "new": ("new", "Start a new record with the next free number."),
    "status": ("status", "Change a record's status in place, keeping its comments."),
    "renumber": ("renumber", "Move a record to another number, or close the gaps."),
    "schema": ("schema", "Print the JSON Schema of records and campaign.yaml."),
    "export": ("export", "Export every record with its computed summary as JSON."),
    "report": ("report", "Write the whole campaign as one markdown document, for a pull request."),
    "compare": ("compare", "Compare two benchmark files (or two sets) and decide, without a campaign."),
}

# Exit statuses, the same for every command: 0 done; 1 problems found (the report says which),
# or an error; 2 a usage error; 3 a `--fail-on` gate failed (`run`, `compare`: a comparison
# decided as the gate refuses, docs/guide/workflow.md, "Gating a pull request"); 130 interrupted.
EXIT_PROBLEMS = 1
EXIT_USAGE = 2
EXIT_GATE = 3

EPILOG = """\b
Examples:
  improvements check                     validate every record
  improvements new "MSCCL++ all-reduce" --tier 1 --hypothesis "..."
  improvements build --site              render the series and build the site
  improvements summary --format markdown
"""


DESCRIPTION = "Keep one YAML record per optimization idea; render the series, summary and site."
# The options click adds to the group, as its help lists them.
OPTIONS = (("--version", "Show the version and exit."), ("-h, --help", "Show this message and exit."))


@functools.cache
def _click_objects() -> tuple[click.Group, Any]:
    """The click group and the `--root` option every command takes, built once, on first use."""
    import importlib
    from pathlib import Path

    import click

    class LazyGroup(click.Group):
        def list_commands(self, ctx: click.Context) -> list[str]:
            return sorted(COMMANDS)

        def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
            entry = COMMANDS.get(cmd_name)
            if entry is None:
                return None
            module = importlib.import_module(f"generator.commands.{entry[0]}")
            command: click.Command = module.command
            if command.callback is not None and not getattr(command.callback, "_speaks_click", False):
                command.callback = _speaking_click(command.callback)
            return command

        def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
            rows = [(name, COMMANDS[name][1]) for name in self.list_commands(ctx)]
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    @click.group(
        cls=LazyGroup, help=DESCRIPTION, epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"]}
    )
    @click.version_option(package_name="improvements", prog_name="improvements")
    def group() -> None:
        pass

    option = click.option(
        "--root",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help="Campaign repository (default: the nearest folder above with improvements/campaign.yaml).",
    )
    return group, option


def _speaking_click(callback: Callable[..., Any]) -> Callable[..., Any]:
    """`callback` with the library's exceptions turned into click's, the one place this happens.

    Inside the callback, so click still attaches the command's context to a usage error (its
    usage line and `Try ... -h`), under `run` and under the tests' CliRunner alike.
    """
    import click

    from generator.base.problems import CommandError, UsageProblem

    @functools.wraps(callback)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return callback(*args, **kwargs)
        except UsageProblem as exc:
            raise click.UsageError(str(exc)) from None
        except CommandError as exc:
            raise click.ClickException(str(exc)) from None
        except BrokenPipeError:
            raise  # the reader went away (`| head`): `run` ends quietly
        except OSError as exc:
            # A full disk, a read-only folder, a file gone: one line, whichever command and step.
            raise click.ClickException(os_error_text(exc)) from None

    wrapper._speaks_click = True  # type: ignore[attr-defined]
    return wrapper


def os_error_text(exc: OSError) -> str:
    """An OSError as one line: what failed on which file, without Python's repr of it."""
    from generator.base.problems import printable

    why = exc.strerror or str(exc) or type(exc).__name__
    names = [str(n) for n in (exc.filename, exc.filename2) if n is not None]
    where = " -> ".join(names)
    return printable(f"{where}: {why}" if where else why)


def __getattr__(name: str) -> Any:
    # `main` and `root_option` are click objects, made when first asked for, so that a process
    # that only prints the top-level help never imports click.
    if name == "main":
        return _click_objects()[0]
    if name == "root_option":
        return _click_objects()[1]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _wrap(text: str, width: int, indent: str = "", subsequent: str | None = None) -> list[str]:
    """click's wrap_text of one paragraph, for text without escape sequences."""
    import textwrap

    wrapper = textwrap.TextWrapper(
        width,
        initial_indent=indent,
        subsequent_indent=indent if subsequent is None else subsequent,
        replace_whitespace=False,
    )
    return wrapper.wrap(text.expandtabs())


def _paragraphs(text: str, width: int, indent: str) -> list[str]:
    """click's wrap_text keeping paragraphs: blank lines part them, a \\b line keeps one unwrapped."""
    out: list[str] = []
    for block in text.split("\n\n"):
        lines = block.splitlines()
        if not lines:
            continue
        extra = indent + " " * (len(lines[0]) - len(lines[0].lstrip()))
        if lines[0].strip() == "\b":
            out += [extra + line for line in lines[1:]]
        else:
            out += _wrap(" ".join(line.lstrip() for line in lines), width, extra)
        out.append("")
    return out[:-1]


def _definitions(rows: tuple[tuple[str, str], ...], width: int) -> list[str]:
    """click's write_dl at an indent of 2: the terms padded to the longest, the texts wrapped beside."""
    first = min(max(len(term) for term, _ in rows), 30) + 2
    out = []
    for term, text in rows:
        lines = _wrap(text, max(width - first - 2, 10))
        out.append("  " + term + " " * (first - len(term)) + lines[0])
        out += [" " * (first + 2) + line for line in lines[1:]]
    return out


def _terminal_width() -> int:
    """The width click's help formatter picks: shutil.get_terminal_size's, without importing shutil."""
    forced = getattr(sys.modules.get("click.formatting"), "FORCED_WIDTH", None)
    if isinstance(forced, int):
        return forced
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns or 80  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 80
    return max(min(columns, 80) - 2, 50)


def top_help(width: int) -> str:
    """`improvements --help` as click prints it at `width`, made without click."""
    commands = tuple((name, COMMANDS[name][1]) for name in sorted(COMMANDS))
    lines = [
        *_wrap("[OPTIONS] COMMAND [ARGS]...", width, "Usage: improvements ", " " * len("Usage: improvements ")),
        "",
        *_paragraphs(DESCRIPTION, width, "  "),
        "",
        "Options:",
        *_definitions(OPTIONS, width),
        "",
        "Commands:",
        *_definitions(commands, width),
        "",
        *_paragraphs(EPILOG.strip("\n"), width, "  "),
    ]
    return "\n".join(lines) + "\n"


def resolve_root(root: Path | None) -> Path:
    """The campaign repository to work on, or a usage error saying how to point at one."""
    import click

    from generator.base.stamp import find_root

    if root is not None:
        # A folder of records without campaign.yaml is still a campaign, a broken one: loading
        # it reports `missing-campaign` with the rest of its problems.
        if not (root / "improvements").is_dir():
            raise click.UsageError(f"{root} has no improvements/ folder")
        return root.resolve()
    found = find_root()
    if found is None:
        raise click.UsageError(
            "no improvements/campaign.yaml here or in any folder above; "
            "run from a campaign repository, pass --root DIR, or start one with `improvements init`"
        )
    return found


def emit(text: str, output: Path | None) -> None:
    """A command's result to standard output, or atomically to --output FILE.

    Every command with `--output` writes through here, so all refuse the same way to write
    through a symbolic link (which would replace or overwrite whatever it points at): a
    positioned `output-conflict`, exit 1, nothing written.
    """
    if output is None:
        sys.stdout.write(text)
        return
    import click

    from generator.base.fsio import atomic_write
    from generator.base.problems import Problem, ProblemsFound, Report

    if output.is_symlink():
        message = f"`{output}` is a symbolic link; the output is not written through it"
        hint = "remove the link, or name the file it points at"
        raise ProblemsFound(Report([Problem(str(output), 1, 1, "output-conflict", message, hint)]))
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(output, text)
    except OSError as exc:
        raise click.ClickException(f"cannot write {output}: {exc.strerror or exc}") from None
    sys.stderr.write(f"wrote {output}\n")


def gate(failed: list[str]) -> None:
    """End with `EXIT_GATE` when a `--fail-on` gate failed, naming what failed it."""
    if failed:
        for what in failed:
            sys.stderr.write(f"fail-on: {what}\n")
        sys.exit(EXIT_GATE)


def run() -> None:
    """Entry point: problems found exit 1 with the report, usage errors exit 2, a failed
    `--fail-on` gate 3, never a traceback."""
    # Records, JSON and markdown are UTF-8 whatever the locale says, so output is the same bytes
    # everywhere and a C locale cannot turn an arrow in a record into a UnicodeEncodeError.
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.encoding.lower().replace("-", "") != "utf8":
            stream.reconfigure(encoding="utf-8")
    if sys.argv[1:] in (["--help"], ["-h"]):
        sys.stdout.write(top_help(_terminal_width()))
        sys.exit(0)
    import click

    from generator.base.problems import ProblemsFound, format_report

    try:
        _click_objects()[0].main(prog_name="improvements", standalone_mode=False)
    except ProblemsFound as exc:
        sys.stderr.write(format_report(exc.report, "text"))
        sys.exit(EXIT_PROBLEMS)
    except click.exceptions.Abort:
        sys.stderr.write("Aborted.\n")
        sys.exit(1)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.UsageError as exc:
        exc.show()
        sys.exit(EXIT_USAGE)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        sys.stderr.write("Interrupted.\n")
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(0)
    except OSError as exc:
        # Outside any command's own handling (reading the arguments, writing the output).
        sys.stderr.write(f"Error: {os_error_text(exc)}\n")
        sys.exit(1)
    else:
        sys.exit(0)
