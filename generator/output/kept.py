"""The analysis and output paths of the last build, kept for the next build of the same inputs.

A site build renders the docs (`improvements build --site`), then the mkdocs plugin asks for
them again in the same or the next process: the kept build answers it without loading or
analysing anything, while the inputs and the outputs on disk are still those it was made from.
"""

from __future__ import annotations

from pathlib import Path

from generator.analysis.campaign import Analysis
from generator.base import incremental, stamp

# The analysis and outputs of the last kept build, in the user's cache folder (a pickle, like the
# build cache, and for the same reason never in a repository): a first line naming what they
# were built from, then the pickle, so that a file of other inputs is not unpickled at all.
_KEPT = "analysis.pickle"


def _header(build_cache: incremental.BuildCache, inputs: str) -> bytes:
    return f"{build_cache.salt} {inputs}\n".encode()


def load(build_cache: incremental.BuildCache, root: Path, inputs: str) -> tuple[Analysis, list[str]] | None:
    """The kept build of these very inputs, when the outputs on disk are still the ones it wrote.

    The inputs' digest covers every input and the generator's code, the salt the template
    overrides, and the outputs are hashed again from disk: a build would compute and write
    nothing else, and writes nothing now.
    """
    if build_cache.folder is None:
        return None
    import pickle

    header = _header(build_cache, inputs)
    try:
        with (build_cache.folder / _KEPT).open("rb") as fh:
            if fh.readline() != header or not stamp.outputs_current(root, inputs):
                return None
            analysis, files = pickle.load(fh)
    except Exception:  # missing, old or damaged: the build runs
        return None
    if not isinstance(analysis, Analysis) or not isinstance(files, list):
        return None
    return analysis, files


def keep(build_cache: incremental.BuildCache, inputs: str, analysis: Analysis, files: list[str]) -> None:
    if build_cache.folder is None:
        return
    import pickle

    from generator.base.fsio import atomic_write

    # Keeping the analysis only saves the next site build its work: a value that cannot be
    # pickled (a mapping proxy, a lambda) or a full disk costs that saving, never the build.
    try:
        payload = pickle.dumps((analysis, files), protocol=pickle.HIGHEST_PROTOCOL)
        build_cache.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        atomic_write(build_cache.folder / _KEPT, _header(build_cache, inputs) + payload)
    except (OSError, pickle.PicklingError, TypeError, AttributeError, RecursionError):
        return
