"""Stage 0: bytes and YAML with positions, problems, file-system writes, the cache and the stamp; knows no campaign."""
