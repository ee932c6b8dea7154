"""Imported benchmark runs: `formats/` reads each tool's files (one module per tool behind one
registry, and campaign.yaml's own mappings), `intake` refuses what must not be read, `parse`
turns a file into runs with redaction (`redact`), `provenance` keeps where they were measured,
`store` keeps them under results/, and `run` is the `Run` they all produce."""
