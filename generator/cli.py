"""The `improvements` command line.

Each command lives in its own module under `generator.commands` and is imported only when
it runs, so `improvements --help` never pays for pandas, scipy or mkdocs.
"""

from __future__ import annotations

import functools
import importlib
import io
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

# name -> (module under generator.commands, one-line help). The help is here so that
# listing commands imports none of them.
COMMANDS: dict[str, tuple[str, str]] = {
    "check": ("check", "Validate the campaign: every problem in every file, with its position."),
    "build": ("build", "Render the series, summary and home page (and the site with --site)."),
    "serve": ("serve", "Preview the site, re-rendering when a record or result changes."),
    "summary": ("summary", "Print the tier-ranked summary table."),
    "stack": ("stack", "Print the launch command in force: the baseline with every adopted change."),
    "import": ("import_", "Import benchmark output files as runs and link them from a record."),
    "init": ("init", "Start a campaign: campaign.yaml, mkdocs.yml, pre-commit and CI, nothing overwritten."),
    "new": ("new", "Start a new record with the next free number."),
    "status": ("status", "Change a record's status in place, keeping its comments."),
    "renumber": ("renumber", "Move a record to another number, or close the gaps."),
    "schema": ("schema", "Print the JSON Schema of records and campaign.yaml."),
    "export": ("export", "Export every record with its computed summary as JSON."),
    "report": ("report", "Write the whole campaign as one markdown document, for a pull request."),
}

EPILOG = """\b
Examples:
  improvements check                     validate every record
  improvements new "MSCCL++ all-reduce" --tier 1 --hypothesis "..."
  improvements build --site              render the series and build the site
  improvements summary --format markdown
"""


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


def _speaking_click(callback: Callable[..., Any]) -> Callable[..., Any]:
    """`callback` with the library's exceptions turned into click's, the one place this happens.

    Inside the callback, so click still attaches the command's context to a usage error (its
    usage line and `Try ... -h`), under `run` and under the tests' CliRunner alike.
    """
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


@click.group(cls=LazyGroup, epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="improvements", prog_name="improvements")
def main() -> None:
    """Keep one YAML record per optimization idea; render the series, summary and site."""


root_option = click.option(
    "--root",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Campaign repository (default: the nearest folder above with improvements/campaign.yaml).",
)


def resolve_root(root: Path | None) -> Path:
    """The campaign repository to work on, or a usage error saying how to point at one."""
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
    """A command's result to standard output, or atomically to --output FILE."""
    if output is None:
        sys.stdout.write(text)
        return
    from generator.base.fsio import atomic_write

    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(output, text)
    except OSError as exc:
        raise click.ClickException(f"cannot write {output}: {exc.strerror or exc}") from None
    sys.stderr.write(f"wrote {output}\n")


def run() -> None:
    """Entry point: problems found exit 1 with the report, usage errors exit 2, never a traceback."""
    from generator.base.problems import ProblemsFound, format_report

    # Records, JSON and markdown are UTF-8 whatever the locale says, so output is the same bytes
    # everywhere and a C locale cannot turn an arrow in a record into a UnicodeEncodeError.
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.encoding.lower().replace("-", "") != "utf8":
            stream.reconfigure(encoding="utf-8")
    try:
        main.main(prog_name="improvements", standalone_mode=False)
    except ProblemsFound as exc:
        sys.stderr.write(format_report(exc.report, "text"))
        sys.exit(1)
    except click.exceptions.Abort:
        sys.stderr.write("Aborted.\n")
        sys.exit(1)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.UsageError as exc:
        exc.show()
        sys.exit(2)
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
