"""Reading a campaign from disk: discovery, loading, schema errors, imported runs, baseline matching."""
