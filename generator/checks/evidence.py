"""The kept raw file of every linked run: there, a regular file, and still the bytes the run recorded.

A run names its evidence (`source.file` under results/raw/, with `stored_sha256`); its page
links that file and the site publishes it only while its bytes still hash to what the import
recorded. A copy deleted, edited or replaced by a link kept `check` clean, and the site build
then failed on a dangling link, after it had already rewritten the site. Checked here, it is an
error at the result that links the run, before anything is written.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

from generator.base.fsio import link_in_path, read_regular
from generator.base.problems import Problem, rel
from generator.base.read import Positions
from generator.model.result import Result
from generator.project.load import Project
from generator.project.runs.run import Run

RAW_PREFIX = "results/raw/"


def evidence_problems(project: Project) -> list[Problem]:
    """A problem at each result linking a run whose kept raw file is missing, not regular, or changed."""
    verdicts: dict[str, str | None] = {}
    out: list[Problem] = []
    for shown, pos, loc, result in _places(project):
        for k, rid in enumerate(result.run_ids):
            run = project.runs.get(rid)
            if run is None:
                continue  # `unknown-run`
            if rid not in verdicts:
                verdicts[rid] = _refused(project, run)
            why = verdicts[rid]
            if why is None:
                continue
            at = (*loc, "run") if isinstance(result.run, str) else (*loc, "run", k)
            out.append(
                Problem(
                    shown,
                    *pos.of(at),
                    "evidence-mismatch",
                    f"run `{rid}`: its kept raw file {why}",
                    "restore it from version control (`git checkout -- results/raw`), or remove the result "
                    "and import the benchmark file again",
                )
            )
    return out


def _places(project: Project) -> Iterator[tuple[str, Positions, tuple[str | int, ...], Result]]:
    cf = project.campaign_file
    for i, result in enumerate(project.campaign.baseline.results):
        yield rel(cf.path, project.root), cf.positions, ("baseline", "results", i), result
    for rec in project.records:
        shown = rel(rec.path, project.root)
        for i, result in enumerate(rec.record.results):
            yield shown, rec.positions, ("results", i), result
        for v, variant in enumerate(rec.record.variants):
            for i, result in enumerate(variant.results):
                yield shown, rec.positions, ("variants", v, "results", i), result


def _refused(project: Project, run: Run) -> str | None:
    stored, digest = run.source.get("file"), run.source.get("stored_sha256")
    if not isinstance(stored, str) or not stored.startswith(RAW_PREFIX) or not isinstance(digest, str):
        return None  # a run imported before raw files were kept names none
    if link_in_path(project.root, stored) is not None:
        return f"`{stored}` is a symbolic link; evidence is the importer's own copy"
    try:
        data = read_regular(project.root, stored)
    except OSError as exc:
        return f"`{stored}` cannot be read: {exc.strerror or exc}"
    if data is None:
        exists = (project.root / stored).exists()
        return f"`{stored}` is not a regular file" if exists else f"`{stored}` does not exist"
    if hashlib.sha256(data).hexdigest() != digest:
        return f"`{stored}` no longer holds the bytes the import kept (its sha256 differs)"
    return None
