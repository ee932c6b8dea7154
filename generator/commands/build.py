"""`improvements build`: render the series, summary, blockers and home page (and the site)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from generator.cli import resolve_root, root_option


@click.command(
    "build",
    epilog="""\b
Examples:
  improvements build                     # write docs/ from the records
  improvements build --site              # and build the static site into site/
  improvements build --site --site-dir /tmp/site
  improvements build --zensical          # the same site, built with Zensical
""",
)
@root_option
@click.option("--site", "with_site", is_flag=True, help="Also build the static site with mkdocs.")
@click.option(
    "--site-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where --site puts the site (default: mkdocs.yml's site_dir, usually site/).",
)
@click.option(
    "--zensical", "with_zensical", is_flag=True, help="Also build the static site, with Zensical instead of mkdocs."
)
@click.option("--quiet", "-q", is_flag=True, help="Print nothing when the build succeeds.")
def command(root: Path | None, with_site: bool, site_dir: Path | None, quiet: bool, with_zensical: bool) -> None:
    """Render every record through the shared template into docs/; exit 1, writing nothing, on any error."""
    if with_site and with_zensical:
        raise click.UsageError("--site and --zensical build the same site folder; give one")
    if site_dir is not None and not (with_site or with_zensical):
        raise click.UsageError("--site-dir needs --site or --zensical")
    repo = resolve_root(root)
    inputs = None
    if not (with_site or with_zensical):
        from generator.base.stamp import up_to_date

        # Decided from file bytes before pydantic, Jinja2 or the charts are imported.
        count, inputs = up_to_date(repo)
        if count is not None:
            if not quiet:
                sys.stdout.write(f"{count} file(s): 0 written, {count} unchanged, 0 removed\n")
            return
    from generator.output.render import build

    if with_site:
        from generator.site.build import refuse_foreign_site

        # Before anything is written: mkdocs empties the site folder it builds into.
        refuse_foreign_site(repo, site_dir)
    try:
        # With a site to build, the mkdocs plugin (or Zensical's set-up) asks for the same
        # analysis again: kept, it is not computed twice.
        result = build(repo, inputs, keep=with_site or with_zensical)
    except OSError as exc:
        # A full disk or a read-only folder: the previous outputs are kept (see generator.base.generated).
        raise click.ClickException(f"cannot write the outputs: {exc}") from None
    if not quiet:
        out = sys.stdout
        for path in result.written:
            out.write(f"wrote {path}\n")
        for path in result.removed:
            out.write(f"removed {path}\n")
        for path in result.released:
            out.write(f"left {path}: it no longer carries the generated header, so it is yours now\n")
        out.write(
            f"{len(result.files)} file(s): {len(result.written)} written, "
            f"{len(result.unchanged)} unchanged, {len(result.removed)} removed\n"
        )
    if with_site or with_zensical:
        from generator.site.build import build_site
        from generator.site.zensical import build_zensical

        built = build_zensical(repo, site_dir) if with_zensical else build_site(repo, site_dir)
        if not quiet:
            sys.stdout.write(
                f"site built in {built}: open {built / 'index.html'}"
                " (search needs a web server: `improvements serve`)\n"
            )
