"""`improvements import`: benchmark output files to runs under results/, linked from a record."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from generator.cli import resolve_root, root_option

if TYPE_CHECKING:
    from generator.base.problems import Problem
    from generator.project.load import Project
    from generator.project.runs.formats.mapped import Mapping
    from generator.project.runs.parse import ParsedFile
    from generator.project.runs.run import Run


@click.command(
    "import",
    epilog="""\b
Examples:
  improvements import sweep.jsonl --record mscclpp-all-reduce
  improvements import result.jsonl --record 04 --label "TP4 PP2"
  improvements import bench-c16.json bench-c64.json --baseline
  improvements import console.txt --record 02   # a pasted "Serving Benchmark Result" block
  improvements import A.jsonl --record 03 --format h200-harness   # campaign.yaml import_formats
""",
)
@root_option
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--record", "record_ref", metavar="SLUG|NN", help="Link the runs from this record's results.")
@click.option("--baseline", is_flag=True, help="Link the runs from the campaign baseline (campaign.yaml) instead.")
@click.option("--label", help="Result label (with several runs, each label also says its workload and load).")
@click.option(
    "--format",
    "format_name",
    metavar="NAME",
    help="Read the files as NAME, a format of campaign.yaml's `import_formats:` (another harness's keys).",
)
def command(
    root: Path | None,
    files: tuple[Path, ...],
    record_ref: str | None,
    baseline: bool,
    label: str | None,
    format_name: str | None,
) -> None:
    """Import benchmark output FILES as runs and link them from a record or the baseline.

    The format is read from the content: SGLang bench_serving JSONL (every generation),
    bench_one_batch and bench_one_batch_server result.jsonl, vLLM benchmark_serving.py and
    `vllm bench serve` JSON (single or appended), or a pasted console block. A file with
    many runs (a sweep) becomes many runs. Another harness's JSON, JSON lines or CSV is read
    with --format NAME, through the mapping campaign.yaml declares under `import_formats:`.

    Each run is written to results/runs/<id>.json (the id ends in a hash of its content, so
    importing the same file again changes nothing), the file itself is kept under
    results/raw/ with secrets such as api_key redacted, and a result `run: <id>` is appended
    to the record, keeping its comments. Every file is checked first: on any problem nothing
    is written.
    """
    # Longer than most: a command's steps in the order that keeps the user's files safe (check,
    # change, check the result, write); split up, that order would be harder to see.
    from generator.base.problems import ProblemsFound, Report, rel
    from generator.checks.validate import require_project

    if baseline and record_ref is not None:
        raise click.UsageError("give either --record SLUG or --baseline, not both")
    if not baseline and record_ref is None:
        raise click.UsageError("say where the runs go: --record SLUG|NN, or --baseline for the campaign baseline")
    if label is not None and not label.strip():
        raise click.UsageError("--label needs some text")

    repo = resolve_root(root)
    project = require_project(repo)
    target = project.campaign_file.path if baseline else _record_path(project, record_ref or "")

    mapping = _mapping(project, format_name) if format_name is not None else None
    parsed, problems = _read_all(list(files), mapping)
    if problems:
        raise ProblemsFound(Report(problems))

    runs = _unique_runs(parsed)
    text, added, problems = _link(project, target, runs, label, baseline)
    if problems:
        sys.stderr.write(
            f"{rel(target, repo)}: nothing imported; the edit would leave these problems "
            "(positions are in the edited text, not in the file as it is):\n"
        )
        raise ProblemsFound(Report(problems))

    _write_all(repo, target, text if added else None, parsed)

    shown = rel(target, repo)
    _warn_provenance(project, parsed)
    for p in parsed:
        if p.redacted:
            # Where, never what: the key path or line names the place, the value stays unsaid.
            sys.stderr.write(f"{p.shown}: redacted {len(p.redacted)} secret value(s) before writing\n")
            for where in p.redacted:
                sys.stderr.write(f"  {where}\n")
    if not added:
        sys.stdout.write(f"{len(runs)} run(s) already imported and linked from {shown}; nothing changed\n")
        return
    sys.stdout.write(f"imported {len(added)} run(s) from {len(parsed)} file(s), linked from {shown}:\n")
    for run, result_label in added:
        sys.stdout.write(f"  {run.id}  {result_label}\n")


def _warn_provenance(project: Project, parsed: list[ParsedFile]) -> None:
    """Say where a file names another model or engine than the campaign: imported all the same, it may be a mix-up."""
    from generator.project.runs.provenance import mismatches

    seen: set[tuple[str, str]] = set()
    for p in parsed:
        for run in p.runs:
            for key, what in mismatches(project.campaign, run):
                where = f"{p.shown}:{run.source.get('line', 1)}: {key}"
                if (where, what) not in seen:
                    seen.add((where, what))
                    sys.stderr.write(f"warning: {where}: {what} (improvements/campaign.yaml)\n")


def _write_all(repo: Path, target: Path, text: str | None, parsed: list[ParsedFile]) -> None:
    """Write every run, raw copy and the record, or, when any write fails, put back what was there."""
    from generator.authoring.edit import write_edited
    from generator.base.problems import rel
    from generator.project.runs import store

    folders = [f for f in (store.raw_dir(repo), store.runs_dir(repo), store.raw_dir(repo).parent) if not f.exists()]
    done: list[tuple[Path, bytes | None]] = []
    path = target
    try:
        for write in store.planned_writes(repo, parsed):
            path = write.path
            done.append((path, _old_bytes(path)))
            store.write_bytes(path, write.data)
        path = target
        if text is not None:
            write_edited(target, text)
    except OSError as exc:
        for old_path, old in reversed(done):
            with contextlib.suppress(OSError):
                if old is None:
                    old_path.unlink(missing_ok=True)
                else:
                    store.write_bytes(old_path, old)
        for folder in folders:
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise click.ClickException(
            f"cannot write {rel(path, repo)}: {exc.strerror or exc}; nothing was imported"
        ) from None


def _old_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes() if path.is_file() and not path.is_symlink() else None
    except OSError:
        return None


def _record_path(project: Project, ref: str) -> Path:
    from generator.base.problems import Report
    from generator.commands.status import find_record

    return find_record(project, Report(), ref)


def _mapping(project: Project, name: str) -> Mapping:
    """The campaign's own format `name`, or a usage error that lists the ones it declares."""
    from generator.base.problems import rel
    from generator.project.runs.formats.mapped import Mapping
    from generator.project.runs.formats.registry import FORMATS

    spec = project.campaign.import_formats.get(name)
    if spec is None:
        declared = ", ".join(f"`{n}`" for n in project.campaign.import_formats) or "none"
        why = (
            f"`{name}` is a built-in format, recognised from the content without --format"
            if name in FORMATS
            else f"campaign.yaml declares no import format `{name}`"
        )
        raise click.UsageError(f"{why}; import_formats declared: {declared}")
    shown = rel(project.campaign_file.path, project.root)
    return Mapping(name, spec, project.campaign.vocabulary(), shown, project.campaign_file.positions)


def _read_all(files: list[Path], mapping: Mapping | None = None) -> tuple[list[ParsedFile], list[Problem]]:
    """Parse every file before anything is written, so one bad file stops the whole import."""
    from generator.project.runs.formats.mapped import parse_mapped
    from generator.project.runs.parse import parse_file
    from generator.project.runs.store import attach_sources

    parsed: list[ParsedFile] = []
    problems: list[Problem] = []
    show = len(files) > 1 and sys.stderr.isatty()
    with click.progressbar(files, label="Reading benchmark files", file=sys.stderr, hidden=not show) as bar:
        for path in bar:
            result, found = parse_file(path, str(path)) if mapping is None else parse_mapped(path, str(path), mapping)
            problems += found
            if result is not None:
                attach_sources(result)
                parsed.append(result)
    return parsed, problems


def _unique_runs(parsed: list[ParsedFile]) -> list[Run]:
    seen: dict[str, Run] = {}
    for p in parsed:
        for run in p.runs:
            seen.setdefault(run.id, run)
    return list(seen.values())


def _link(
    project: Project, target: Path, runs: list[Run], label: str | None, baseline: bool
) -> tuple[str, list[tuple[Run, str]], list[Problem]]:
    """The target file's new text with a result per new run, the runs added, and any problems."""
    from dataclasses import replace

    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    from generator.authoring.edit import Document, set_key, styled_like
    from generator.model.record import Baseline, Record
    from generator.project.matching import configuration

    doc = Document.from_path(target)
    container: Any = doc.data["baseline"] if baseline else doc.data
    order = list((Baseline if baseline else Record).model_fields)
    results = container.get("results")
    if results is None:
        results = CommentedSeq()
        set_key(container, "results", results, order)
    known = {**project.runs, **{run.id: run for run in runs}}
    linked = {rid for item in results if isinstance(item, dict) for rid in _ids(item.get("run"))}
    labels = {str(item.get("label")) for item in results if isinstance(item, dict)}
    new = [run for run in runs if run.id not in linked]
    # Repetitions are samples: a run of a configuration that a result already holds joins it,
    # and new runs of one configuration become one result, on either side of a comparison.
    groups: dict[Any, Any] = {}
    for item in results:
        ids = _ids(item.get("run")) if isinstance(item, dict) else []
        if ids and ids[0] in known:
            groups.setdefault(configuration(known[ids[0]]), item)
    fresh = [run for run in new if configuration(run) not in groups]
    distinct = len({configuration(run) for run in fresh})
    trailing = _take_trailing_comment(results) if fresh else None
    added: list[tuple[Run, str]] = []
    for run in new:
        item = groups.get(configuration(run))
        if item is not None:
            _append_run(item, run.id)
            added.append((run, str(item.get("label"))))
            continue
        base = label.strip() if label else run.describe()
        if label and distinct > 1:
            base = f"{base}, {run.describe()}"
        chosen, n = base, 2
        while chosen in labels:
            chosen, n = f"{base} ({n})", n + 1
        labels.add(chosen)
        item = CommentedMap([("label", styled_like(None, chosen)), ("run", run.id)])
        results.append(item)
        groups[configuration(run)] = item
        added.append((run, chosen))
    if trailing is not None:
        last = results[-1]["run"]
        if isinstance(last, CommentedSeq):
            # After a list of repetitions the gap goes after its last id, not between `run:` and the list.
            last.ca.items[len(last) - 1] = [trailing, None]
        else:
            results[-1].ca.items["run"] = [None, None, trailing, None]
    text = doc.text()
    if not added:
        return text, added, []
    # The runs are not written yet: the edited file is checked as if they were.
    pending = replace(project, runs={**project.runs, **{run.id: run for run in runs}})
    problems = _check(pending, target, text, baseline)
    return text, added, [p for p in problems if p.severity == "error"]


def _ids(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value] if isinstance(value, list) else []


def _append_run(item: Any, rid: str) -> None:
    """Add a repetition to a result's `run`, turning a single id into a list of ids."""
    from ruamel.yaml.comments import CommentedSeq

    current = item.get("run")
    if isinstance(current, list):
        current.append(rid)
        return
    seq = CommentedSeq([current, rid])
    # A comment after the single id (a trailing blank line) moves to the end of the list.
    slot = item.ca.items.pop("run", None)
    item["run"] = seq
    if slot and len(slot) > 2 and slot[2] is not None:
        seq.ca.items[1] = [slot[2], None]


def _take_trailing_comment(results: Any) -> Any:
    """Detach the blank lines or comment after the last result, to put them after the new ones.

    ruamel keeps what follows a list item (the blank line before the next key) on that item's
    last key; appending after it would leave the new results below the gap.
    """
    from ruamel.yaml.scalarstring import FoldedScalarString, LiteralScalarString

    if not results or not hasattr(results[-1], "ca") or not results[-1]:
        return None
    last = results[-1]
    key = list(last)[-1]
    if isinstance(last[key], dict | list):
        return None
    slot = last.ca.items.get(key)
    if not slot or len(slot) < 3 or slot[2] is None:
        return None
    token = slot[2]
    slot[2] = None
    # After a plain value the token starts with that line's own newline; a block scalar (| or >)
    # keeps its newline inside the value, so the moved token must bring one of its own.
    if isinstance(last[key], LiteralScalarString | FoldedScalarString):
        token.value = "\n" + token.value
    return token


def _check(project: Project, target: Path, text: str, baseline: bool) -> list[Problem]:
    from generator.commands.status import check_edited

    if not baseline:
        return check_edited(project, target, text)
    from dataclasses import replace

    from generator.base.problems import Report, rel
    from generator.checks.validate import cross_check
    from generator.model.record import Campaign
    from generator.project.load import load_text, record_files

    shown = rel(target, project.root)
    report = Report()
    loaded = load_text(target, text, Campaign, shown, report)
    if loaded.model is None:
        return report.problems
    candidate = replace(project, campaign=loaded.model, campaign_file=loaded)
    files, _strays = record_files(project.improvements_dir)
    return [p for p in cross_check(candidate, files) if p.path == shown]
