"""`improvements serve`: preview the site, re-rendering when a record, result or template changes."""

from __future__ import annotations

from pathlib import Path

import click

from generator.cli import resolve_root, root_option


def _dev_addr(ctx: click.Context, param: click.Parameter, value: str) -> str:
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise click.BadParameter(f"{value!r} is not HOST:PORT, such as 127.0.0.1:8000", ctx, param)
    return value


@click.command(
    "serve",
    epilog="""\b
Examples:
  improvements serve                         # http://127.0.0.1:8000/
  improvements serve --dev-addr 0.0.0.0:8080 # reachable from other machines
  improvements serve --open                  # and open it in the browser

Edit a record under improvements/ or a file under results/ and the page reloads.
""",
)
@root_option
@click.option(
    "--dev-addr",
    "-a",
    default="127.0.0.1:8000",
    show_default=True,
    callback=_dev_addr,
    metavar="HOST:PORT",
    help="Address to serve the preview on.",
)
@click.option("--open", "open_browser", is_flag=True, help="Open the preview in the default browser.")
def command(root: Path | None, dev_addr: str, open_browser: bool) -> None:
    """Preview the site locally with live reload (mkdocs serve through the improvements plugin)."""
    from generator.site.build import serve_site

    serve_site(resolve_root(root), dev_addr, open_browser=open_browser)
