"""Views to files: templates rendered, the export, the report."""
