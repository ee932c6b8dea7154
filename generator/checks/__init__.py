"""Every rule across files: what `check` reports before anything is computed."""
