"""Whether `build` has anything to do, decided from file bytes alone, before any heavy import.

A build writes into its manifest two digests: one of every input it was made from (each file
under improvements/, results/ and templates/, the generator's own code and templates, and the
versions of the libraries that shape its output), and one of the outputs it wrote. When both
still match, with the inputs hashed again and the outputs read back from disk, a new build
would write the same bytes, so it need not run: that check reads and hashes files and imports
nothing beyond the standard library (no pydantic, Jinja2 or chart code).

The outputs' digest is taken from their bytes. Only to skip reading them back, a build that
wrote them keeps, in the user's cache folder, each output's inode, size and modification and
change times beside that digest (`remember_outputs`): while every output still has all four, it
is the file that was hashed (any write, rename or replace changes its change time). A fresh clone
has no such record and reads its outputs, so its committed outputs are recognised as current
all the same. A digest that does not match only means the full build runs, which decides
everything afresh: this module can make a build faster, never different.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Mapping
from functools import cache
from pathlib import Path, PurePosixPath

# Bump when what the digests cover changes.
FORMAT = 3
INPUT_FOLDERS = ("improvements", "results", "templates")
MANIFEST_NAME = ".improvements-manifest.json"
DEFAULT_DOCS_ROOT = "docs"
# The distributions whose versions can change the bytes of a page or a chart: numpy draws the
# seeded simulations (a new release may draw other numbers from one seed) and scipy gives the
# intervals and tests every decision quotes.
SHAPING = ("jinja2", "markupsafe", "pyyaml", "pydantic", "pydantic_core", "numpy", "scipy")
_PACKAGE = Path(__file__).resolve().parent.parent


def find_root(start: Path | None = None) -> Path | None:
    """The repository root: the nearest folder at or above `start` with improvements/campaign.yaml."""
    here = (start or Path.cwd()).resolve()
    folders = (here, *here.parents)
    for folder in folders:
        if (folder / "improvements" / "campaign.yaml").is_file():
            return folder
    # Records without their campaign.yaml: loading reports `missing-campaign` precisely.
    for folder in folders:
        if any((folder / "improvements").glob("[0-9][0-9]*-*.yaml")):
            return folder
    return None


def _tree(h: hashlib.blake2b, folder: Path, shown: str, code: bool = False) -> None:
    """Every entry under `folder`, by name: files by their bytes, links by their target.

    In the package (`code`), bytecode is left out: Python writes it as it pleases.
    """
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        h.update(f"?{shown}\0".encode())
        return
    for entry in entries:
        if code and (entry.name == "__pycache__" or entry.name.endswith(".pyc")):
            continue
        name = f"{shown}/{entry.name}"
        if entry.is_symlink():
            h.update(f"L{name}\0{os.readlink(entry.path)}\0".encode("utf-8", "surrogateescape"))
        elif entry.is_dir():
            h.update(f"D{name}\0".encode("utf-8", "surrogateescape"))
            _tree(h, Path(entry.path), name, code)
        elif not entry.is_file():
            # A FIFO, socket or device: opening a FIFO waits for a writer that never comes, and
            # no build reads one (`check` says so where a record links it).
            h.update(f"S{name}\0".encode("utf-8", "surrogateescape"))
        else:
            try:
                with open(entry.path, "rb") as fh:
                    data = fh.read()
            except OSError:
                data = b"\0unreadable"
            h.update(f"F{name}\0{len(data)}\0".encode("utf-8", "surrogateescape"))
            h.update(data)


def _versions() -> list[str]:
    """Installed versions of SHAPING, from the dist-info folder names (importlib.metadata costs more)."""
    found: list[str] = []
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if name.endswith(".dist-info"):
                dist = name[: -len(".dist-info")].lower()
                if dist.split("-", 1)[0].replace(".", "_") in SHAPING:
                    found.append(dist)
    return sorted(set(found))


@cache
def code_digest() -> str:
    """The generator's code and shipped files, Python's version and the versions of what shapes its output.

    The one digest of the code: the manifest's input digest and the build cache's salt both use it.
    """
    h = hashlib.blake2b(digest_size=16)
    _tree(h, _PACKAGE, "generator", code=True)
    h.update(repr((FORMAT, sys.version_info[:3], _versions())).encode())
    return h.hexdigest()


def inputs_digest(root: Path) -> str:
    """A digest of everything a build of `root` reads."""
    h = hashlib.blake2b(digest_size=16)
    h.update(code_digest().encode())
    for name in INPUT_FOLDERS:
        h.update(f"\0{name}\0".encode())
        if (root / name).is_dir():
            _tree(h, root / name, name)
    # Records without `date:` are dated by their first commit: a commit that adds one changes the pages.
    from generator.base.gitdates import first_committed

    dates = first_committed(root, root / "improvements")
    # By string prefix: pathlib's relative_to, twice a record, was a tenth of a no-op build.
    inside = str(root.resolve()) + os.sep
    named = ((str(p), d) for p, d in dates.items())
    h.update(
        repr(
            sorted((p[len(inside) :].replace(os.sep, "/"), d.isoformat()) for p, d in named if p.startswith(inside))
        ).encode()
    )
    return h.hexdigest()


def file_digest(rel_path: str, content: bytes) -> bytes:
    """One output's part of the outputs' digest: its path, length and bytes."""
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{rel_path}\0{len(content)}\0".encode())
    h.update(content)
    return h.digest()


def combine(digests: Mapping[str, bytes]) -> str:
    """The outputs' digest from each output's `file_digest`, by path: a build that writes its
    outputs one at a time, in any order, keeps only these."""
    h = hashlib.blake2b(digest_size=16)
    for rel_path in sorted(digests):
        h.update(digests[rel_path])
    return h.hexdigest()


def outputs_digest(root: Path, files: list[str], data: Mapping[str, bytes | str] | None = None) -> str | None:
    """A digest of the outputs `files` (given as `data`, text as UTF-8, else read from disk); None if one is missing."""
    digests: dict[str, bytes] = {}
    for rel_path in files:
        if data is not None:
            given = data[rel_path]
            content = given.encode("utf-8") if isinstance(given, str) else given
        else:
            try:
                # O_NOFOLLOW: an output replaced by a link is not the file the build wrote.
                fd = os.open(root / rel_path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            except OSError:
                return None
            with os.fdopen(fd, "rb") as fh:
                content = fh.read()
        digests[rel_path] = file_digest(rel_path, content)
    return combine(digests)


def _docs_root(root: Path) -> str | None:
    """campaign.yaml's docs root (the series folder's parent), or None when it cannot be read."""
    try:
        import yaml

        data = yaml.load((root / "improvements" / "campaign.yaml").read_bytes(), Loader=yaml.CSafeLoader)
    except Exception:  # the full build reports whatever is wrong with it
        return None
    docs_dir = data.get("docs_dir", "docs/improvements") if isinstance(data, dict) else None
    if not isinstance(docs_dir, str) or not docs_dir:
        return None
    # As generator.views.paths.docs_root has it.
    series = PurePosixPath(docs_dir)
    return str(series.parent if len(series.parts) > 1 else series)


def up_to_date(root: Path) -> tuple[int | None, str]:
    """(the number of outputs when a build of `root` would change nothing, else None; the inputs' digest).

    The digest is handed to the build that follows, which would otherwise hash everything again.
    """
    inputs = inputs_digest(root)
    return _matching(root, inputs), inputs


def outputs_current(root: Path, inputs: str) -> bool:
    """Whether the outputs on disk are those a build of inputs with digest `inputs` writes."""
    return _matching(root, inputs) is not None


def _matching(root: Path, inputs: str) -> int | None:
    tried: set[str] = set()
    for docs in (DEFAULT_DOCS_ROOT, None):
        folder = docs if docs is not None else _docs_root(root)
        if folder is None or folder in tried:
            continue
        tried.add(folder)
        try:
            manifest = json.loads((root / folder / MANIFEST_NAME).read_bytes())
        except (OSError, ValueError):
            continue
        if not isinstance(manifest, dict) or manifest.get("inputs") != inputs:
            continue
        files = manifest.get("files")
        if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
            return None
        outputs = manifest.get("outputs")
        if outputs is not None and _seen(root) == (inputs, outputs, _signature(root, files)):
            return len(files)
        if outputs == outputs_digest(root, files):
            return len(files)
    return None


# The outputs as the last build left them (see the module's docstring), in the user's cache folder.
SEEN_NAME = "outputs-seen.json"


def _signature(root: Path, files: list[str]) -> str | None:
    """A digest of each output's inode, size, modification and change times; None if one is missing."""
    h = hashlib.blake2b(digest_size=16)
    for rel_path in sorted(files):
        try:
            st = os.lstat(root / rel_path)
        except OSError:
            return None
        h.update(f"{rel_path}\0{st.st_ino}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ctime_ns}\0".encode())
    return h.hexdigest()


def _seen_path(root: Path) -> Path | None:
    from generator.base.cachedir import cache_folder

    folder = cache_folder(root)
    return None if folder is None else folder / SEEN_NAME


def _seen(root: Path) -> tuple[str, str, str] | None:
    """(inputs, outputs, signature) as `remember_outputs` kept them, or None."""
    path = _seen_path(root)
    try:
        data = json.loads(path.read_bytes()) if path is not None else None
    except (OSError, ValueError):
        return None
    if not isinstance(data, list) or len(data) != 3 or not all(isinstance(x, str) for x in data):
        return None
    return (data[0], data[1], data[2])


def remember_outputs(root: Path, manifest: str) -> None:
    """After a build wrote `manifest`: keep its outputs' signature, if they are the bytes it digests.

    The outputs are read and hashed once more here, between two looks at their signature, so
    that a file changed while the build finished is never vouched for.
    """
    path = _seen_path(root)
    try:
        data = json.loads((root / manifest).read_bytes())
        inputs, outputs, files = data["inputs"], data["outputs"], data["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return
    if path is None or not isinstance(inputs, str) or not isinstance(outputs, str) or not isinstance(files, list):
        return
    before = _signature(root, files)
    if before is None or outputs_digest(root, files) != outputs or _signature(root, files) != before:
        return
    from generator.base.fsio import atomic_write

    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        atomic_write(path, json.dumps([inputs, outputs, before]))
    except OSError:
        return
