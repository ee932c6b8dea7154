"""What the improvements plugin supplies to a site whose mkdocs.yml leaves it out.

A campaign's mkdocs.yml can be two lines (`site_name`, `plugins: [improvements]`): the theme
and its palettes, search and tags, the markdown extensions the pages are written for, flat
.html pages and strict link checks come from here, each only where mkdocs.yml says nothing.
Like `site`, imported only by the plugin and the commands that build the site.
"""

from __future__ import annotations

import copy
import io
import logging
from typing import Any

from mkdocs.config.defaults import MkDocsConfig

STYLESHEET = "stylesheets/improvements.css"
# Sorting and filtering of the summary table: a plain script, shipped with the site.
SCRIPT = "javascripts/improvements.js"
TAGS_PAGE = "tags.md"

THEME_DEFAULTS: dict[str, Any] = {
    # System fonts: the default loads Roboto from Google Fonts, which a site read offline (or
    # behind a strict proxy) cannot reach.
    "font": False,
    "icon": {"logo": "material/speedometer"},
    "palette": [
        {
            "media": "(prefers-color-scheme: light)",
            "scheme": "default",
            "primary": "indigo",
            "accent": "indigo",
            "toggle": {"icon": "material/weather-night", "name": "Switch to dark mode"},
        },
        {
            "media": "(prefers-color-scheme: dark)",
            "scheme": "slate",
            "primary": "indigo",
            "accent": "light blue",
            "toggle": {"icon": "material/weather-sunny", "name": "Switch to light mode"},
        },
    ],
    "features": [
        # Only the open branch of the navigation goes into each page: with hundreds of records
        # a full sidebar on every page makes the site grow with the square of the record count.
        "navigation.prune",
        "navigation.top",
        "navigation.footer",
        "navigation.tracking",
        "search.suggest",
        "search.highlight",
        "content.code.copy",
        "toc.follow",
    ],
}
# Split on punctuation too, so "fullgraph" finds torch.compile(fullgraph=True).
SEARCH_DEFAULTS: dict[str, Any] = {"separator": r'[\s\-_,:!=\[\]()"`/.]+|(?!\b)(?=[A-Z][a-z])|&[lg]t;'}
# The extensions the generated pages are written for (admonitions, attribute lists, tables, ...).
MARKDOWN_DEFAULTS: list[tuple[str, dict[str, Any]]] = [
    ("abbr", {}),
    ("admonition", {}),
    ("attr_list", {}),
    ("def_list", {}),
    ("footnotes", {}),
    ("md_in_html", {}),
    ("tables", {}),
    ("toc", {"permalink": True}),
    ("pymdownx.details", {}),
    ("pymdownx.highlight", {"anchor_linenums": True}),
    ("pymdownx.inlinehilite", {}),
    ("pymdownx.superfences", {}),
    ("pymdownx.tasklist", {"custom_checkbox": True}),
]


def user_settings(config: MkDocsConfig) -> dict[str, Any]:
    """The top-level settings mkdocs.yml (and any file it inherits) spells out, before mkdocs' defaults.

    Read again from the file: the validated config no longer tells a default from a setting
    (and `user_configs`, which does, is deprecated).
    """
    from mkdocs.utils.yaml import get_yaml_loader, yaml_load

    if not config.config_file_path:
        return {}
    with open(config.config_file_path, "rb") as fd:
        data = fd.read()
        if b"INHERIT" in data:  # the file it inherits from can change on its own: read both again
            fd.seek(0)
            return yaml_load(fd, get_yaml_loader(config=config))
    # `serve` loads the configuration again for every rebuild; the same bytes parse the same way.
    key = (config.config_file_path, data)
    if key not in _SETTINGS:
        _SETTINGS.clear()
        _SETTINGS[key] = yaml_load(io.BytesIO(data), get_yaml_loader(config=config))
    return copy.deepcopy(_SETTINGS[key])


_SETTINGS: dict[tuple[str, bytes], dict[str, Any]] = {}


def apply_defaults(config: MkDocsConfig, user: dict[str, Any], startup: dict[str, Any] | None = None) -> None:
    """Fill in what mkdocs.yml leaves out; anything it does say is kept as it is."""
    from mkdocs.theme import Theme

    raw_theme = user.get("theme")
    if raw_theme is None:
        config.theme = Theme(name="material", **copy.deepcopy(THEME_DEFAULTS))
        # Plugins were loaded for mkdocs' own theme: its search cannot feed Material's search box.
        _drop_plugin(config, "search")
    elif config.theme.name == "material":
        given = raw_theme if isinstance(raw_theme, dict) else {}
        for key, value in THEME_DEFAULTS.items():
            if key not in given:
                config.theme[key] = copy.deepcopy(value)
    if config.theme.name == "material":
        if not has_plugin(config, "search"):
            _add_plugin(config, "search", SEARCH_DEFAULTS, startup)
        if not has_plugin(config, "tags"):
            _add_plugin(config, "tags", {}, startup)
    if "markdown_extensions" not in user:
        for name, options in MARKDOWN_DEFAULTS:
            if name not in config.markdown_extensions:
                config.markdown_extensions.append(name)
            if options:
                config.mdx_configs.setdefault(name, copy.deepcopy(options))
    if "use_directory_urls" not in user:
        # summary.html rather than summary/: the built site then also reads straight from disk.
        config.use_directory_urls = False
    if "validation" not in user:
        # Strict builds then fail on a link to a missing page or #heading, or an absolute link.
        links = config.validation.links
        links.not_found = links.anchors = links.absolute_links = links.unrecognized_links = logging.WARNING
    if STYLESHEET not in config.extra_css:
        config.extra_css.append(STYLESHEET)
    if SCRIPT not in [str(s) for s in config.extra_javascript]:
        config.extra_javascript.append(SCRIPT)


def _plugin_names(config: MkDocsConfig) -> set[str]:
    # "material/search" and "search #2" are both the search plugin.
    return {name.split(" #")[0].rsplit("/", 1)[-1] for name in config.plugins}


def has_plugin(config: MkDocsConfig, name: str) -> bool:
    return name in _plugin_names(config)


def _add_plugin(
    config: MkDocsConfig, name: str, options: dict[str, Any], startup: dict[str, Any] | None = None
) -> None:
    """Load a plugin the way mkdocs.yml's `plugins:` would (the theme's own first: material/NAME)."""
    from mkdocs.config.config_options import Plugins

    # mkdocs has no public way to load a plugin from inside another; its own `plugins:` option
    # does it, reached through the private schema (pinned in tests/test_mkdocs_private.py).
    option = dict(config._schema)["plugins"]
    assert isinstance(option, Plugins)
    full, plugin = option.load_plugin_with_namespace(name, copy.deepcopy(options))
    if config.plugins.get(full) is not plugin:
        config.plugins[full] = plugin
    if hasattr(plugin, "on_startup"):
        plugin.on_startup(**(startup or {"command": "build", "dirty": False}))


def _drop_plugin(config: MkDocsConfig, name: str) -> None:
    for key in [k for k in config.plugins if k.split(" #")[0] == name]:
        plugin = config.plugins.pop(key)
        # Unhook its handlers in place: the `config` event is being run over one of these lists,
        # and this handler runs first, so removing later entries skips none of the others.
        for methods in config.plugins.events.values():
            methods[:] = [m for m in methods if getattr(m, "__self__", None) is not plugin]
