"""What `serve` keeps between its rebuilds so that an edit reaches the page quickly.

mkdocs' server loads the configuration again for every rebuild, and with it a new theme and a
new Jinja environment: every theme template was compiled again (Material's main.html and its
partials, the 404 page, the sitemap: half of a rebuild at 10 records), and the theme's folders,
thousands of icon files among them, were listed again. Both are kept in this process by `keep_theme`:

- The theme's compiled templates, in a table of this process keyed as Jinja
  keys its bytecode caches (template name and file) and checked against the source's checksum,
  so a changed template (a campaign's `custom_dir` override) is compiled again.
- The listing of the theme's folders that are not the campaign's own (an
  installed theme's files change only with a reinstall, which restarts nothing anyway). A
  folder inside the campaign repository is listed again on every rebuild.

Used by the plugin only under `serve`; a one-shot build compiles and lists once anyway.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import CodeType

import jinja2
from jinja2.bccache import Bucket
from mkdocs.config.defaults import MkDocsConfig

# Jinja's bucket key -> (the source's checksum, its code).
_COMPILED: dict[str, tuple[str, CodeType]] = {}
# A theme folder -> its template names, as jinja2.FileSystemLoader lists them.
_LISTED: dict[str, list[str]] = {}


class _Compiled(jinja2.BytecodeCache):
    """Compiled theme templates from this process's table."""

    def load_bytecode(self, bucket: Bucket) -> None:
        hit = _COMPILED.get(bucket.key)
        if hit is not None and hit[0] == bucket.checksum:
            bucket.code = hit[1]

    def dump_bytecode(self, bucket: Bucket) -> None:
        if bucket.code is not None:
            _COMPILED[bucket.key] = (bucket.checksum, bucket.code)


def keep_theme(config: MkDocsConfig, root: Path) -> None:
    """This rebuild's theme environment takes the templates compiled and the folders listed by the last one."""
    theme = config.theme
    get_env = theme.get_env
    campaign = root.resolve()

    def env() -> jinja2.Environment:
        made = get_env()
        if made.bytecode_cache is None:
            made.bytecode_cache = _Compiled()
        if type(made.loader) is jinja2.FileSystemLoader:
            made.loader = _Listed(made.loader, campaign)
        return made

    theme.get_env = env  # type: ignore[method-assign]


class _Listed(jinja2.FileSystemLoader):
    """jinja2.FileSystemLoader with the listing of folders outside the campaign kept."""

    def __init__(self, loader: jinja2.FileSystemLoader, campaign: Path) -> None:
        super().__init__(loader.searchpath, loader.encoding, loader.followlinks)
        self.campaign = campaign

    def list_templates(self) -> list[str]:
        found: set[str] = set()
        for folder in self.searchpath:
            kept = not Path(folder).resolve().is_relative_to(self.campaign)
            names = _LISTED.get(folder) if kept else None
            if names is None:
                names = _list(folder, self.followlinks)
                if kept:
                    _LISTED[folder] = names
            found.update(names)
        return sorted(found)


def _list(folder: str, followlinks: bool) -> list[str]:
    """One folder's templates, named as jinja2.FileSystemLoader.list_templates names them."""
    names: list[str] = []
    for dirpath, _dirs, filenames in os.walk(folder, followlinks=followlinks):
        for filename in filenames:
            name = os.path.join(dirpath, filename)[len(folder) :].strip(os.sep).replace(os.sep, "/")
            if name[:2] == "./":
                name = name[2:]
            names.append(name)
    return names
