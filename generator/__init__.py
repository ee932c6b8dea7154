"""improvements: one YAML record per optimization idea, rendered into a series, a summary and a site."""
