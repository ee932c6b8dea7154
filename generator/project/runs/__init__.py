"""Results from real benchmark files: parse, normalize, store, match and compare.

- `formats`: detection from the keys and normalization of each tool's output to a `Run`.
- `intake`: what is refused before parsing (non-regular files, oversize, lone surrogates, impossible counts).
- `parse`: a file to runs (JSON, appended JSON lines, console blocks), with redaction.
- `redact`: secrets out of everything that is written.
- `store`: results/runs/<id>.json and the raw evidence under results/raw/.
- `compare`: which baseline run a result is compared with, and what makes them not comparable.
"""

from generator.project.runs.run import Run

__all__ = ["Run"]
