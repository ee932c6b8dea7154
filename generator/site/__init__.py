"""The static site: the mkdocs plugin, `build --site`, `serve`, defaults, Zensical."""
