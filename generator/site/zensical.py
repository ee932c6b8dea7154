"""`improvements build --zensical`: the same site built with Zensical instead of mkdocs.

Zensical reads mkdocs.yml but runs no mkdocs plugin, so what the improvements plugin adds at
build time must be on disk for it: the navigation with its tier sections, the theme and
markdown defaults, the stylesheet, the tags page, the kept raw files and the runner's journals. This module works
them out with the plugin's own code (mkdocs' config loaded, the plugin's `on_config`, the same
`base_nav`/`tier_nav` and file lists), writes them with a copy of the rendered docs/ into a
staging folder outside the repository, and runs `zensical build` there; the site is moved
into the site folder under the same rule as `build --site` (only a folder we built is emptied).
Nothing is written into docs/ or next to mkdocs.yml.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from importlib.resources import files as package_files
from pathlib import Path
from typing import Any

import click
import yaml

from generator.site.build import _config_file, mark_site, refuse_foreign_site_dir
from generator.site.defaults import SCRIPT, SEARCH_DEFAULTS, STYLESHEET, TAGS_PAGE, has_plugin, user_settings
from generator.site.plugin import ImprovementsPlugin, base_nav, render_for_site, tier_nav

# Top-level mkdocs.yml settings Zensical reads, copied as mkdocs resolved them.
_PASSED = ("site_name", "site_description", "site_author", "site_url", "repo_url", "repo_name", "copyright")


def available() -> bool:
    import importlib.util

    return importlib.util.find_spec("zensical") is not None


def zensical_config(root: Path) -> tuple[dict[str, Any], dict[str, bytes], Path]:
    """The Zensical configuration (mkdocs.yml's format), the extra docs files by docs path, and the site folder."""
    from mkdocs.config import load_config

    from generator.views.evidence import published_raw_files
    from generator.views.journal import published_journal_files
    from generator.views.paths import docs_root

    config = load_config(config_file=str(_config_file(root)))
    config = config.plugins.on_config(config)
    plugin = next((p for p in config.plugins.values() if isinstance(p, ImprovementsPlugin)), None)
    if plugin is None:
        raise click.ClickException(f"{root / 'mkdocs.yml'} does not list the improvements plugin")
    analysis = render_for_site(root)
    project = analysis.project
    nav = base_nav(project, config) if plugin.default_nav else config.nav
    config.nav = nav
    nav = tier_nav(project, config, plugin.config.nav_after, plugin.config.section_size)
    user = user_settings(config)
    theme_keys = ["name", *(user.get("theme") or {}), "font", "icon", "palette", "features"]
    theme = {k: config.theme[k] for k in dict.fromkeys(theme_keys) if k != "name" and k in config.theme}
    out: dict[str, Any] = {k: config[k] for k in _PASSED if config.get(k)}
    out.update(
        {
            "docs_dir": "docs",
            "site_dir": "site",
            "use_directory_urls": config.use_directory_urls,
            "theme": {"name": config.theme.name, **theme},
            "extra_css": list(config.extra_css),
            "extra_javascript": [str(s) for s in config.extra_javascript],
            "extra": dict(config.extra),
            "markdown_extensions": [
                {name: config.mdx_configs[name]} if config.mdx_configs.get(name) else name
                for name in config.markdown_extensions
            ],
            "plugins": _plugins(config, user),
        }
    )
    if nav is not None:
        out["nav"] = nav
    site = package_files("generator").joinpath("templates", "site")
    extra: dict[str, bytes] = {
        STYLESHEET: site.joinpath("improvements.css").read_bytes(),
        SCRIPT: site.joinpath("improvements.js").read_bytes(),
    }
    if has_plugin(config, "tags"):
        extra[TAGS_PAGE] = site.joinpath("tags.md").read_bytes()
    docs = Path(config.docs_dir).resolve()
    folder = (project.root / docs_root(project)).resolve().relative_to(docs).as_posix()
    prefix = "" if folder == "." else folder + "/"
    extra.update({prefix + path: data for path, data in published_raw_files(project).items()})
    # The runner's journals and kept files the record pages link, as the mkdocs plugin publishes them.
    extra.update({prefix + path: data for path, data in published_journal_files(analysis).items()})
    return out, extra, Path(config.site_dir)


def _plugins(config: Any, user: dict[str, Any]) -> list[Any]:
    """mkdocs.yml's plugins with their options, less this one, plus the search and tags the plugin adds."""
    out: list[Any] = []
    for entry in user.get("plugins") or []:
        name = next(iter(entry)) if isinstance(entry, dict) else entry
        if str(name).split(" #")[0].rsplit("/", 1)[-1] != "improvements":
            out.append(entry)
    given = {str(next(iter(e)) if isinstance(e, dict) else e).rsplit("/", 1)[-1] for e in out}
    if "search" not in given and has_plugin(config, "search"):
        out.append({"search": dict(SEARCH_DEFAULTS)})
    if "tags" not in given and has_plugin(config, "tags"):
        out.append("tags")
    return out


def _copy_docs(src: Path, dest: Path) -> None:
    # Regular files and folders only: a link in docs/ is not followed out of the repository.
    for dirpath, dirnames, filenames in os.walk(src):
        here = Path(dirpath)
        dirnames[:] = [d for d in dirnames if not (here / d).is_symlink()]
        target = dest / here.relative_to(src)
        target.mkdir(parents=True, exist_ok=True)
        for name in filenames:
            path = here / name
            if path.is_file() and not path.is_symlink() and not name.startswith(".improvements"):
                shutil.copyfile(path, target / name)


def build_zensical(root: Path, site_dir: Path | None = None) -> Path:
    """Build the site with Zensical into `site_dir` (default: mkdocs.yml's site_dir); return it."""
    if not available():
        raise click.ClickException("Zensical is not installed: `pip install zensical`, then build again")
    config, extra, default_site = zensical_config(root)
    target = (site_dir or default_site).resolve()
    refuse_foreign_site_dir(root, target, None if site_dir else f"site_dir {default_site} (mkdocs.yml)")
    with tempfile.TemporaryDirectory(prefix="improvements-zensical-") as tmp:
        stage = Path(tmp)
        _copy_docs(root / "docs", stage / "docs")
        for rel_path, data in extra.items():
            path = stage / "docs" / rel_path
            if not path.exists():  # the campaign's own file of that name wins, as on the mkdocs site
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
        (stage / "mkdocs.yml").write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True), "utf-8")
        proc = subprocess.run(
            [sys.executable, "-m", "zensical", "build", "--strict", "-f", str(stage / "mkdocs.yml")],
            cwd=stage,
            capture_output=True,
            text=True,
        )
        built = stage / "site"
        if proc.returncode != 0 or not built.is_dir():
            raise click.ClickException(f"site not built by Zensical:\n{(proc.stdout + proc.stderr).strip()}")
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(built, target)
    mark_site(target)
    return target
