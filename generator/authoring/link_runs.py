"""Linking imported runs from a record or the baseline: the edited text, its check, and writing
every run, raw copy and the record together or not at all.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from generator.base.problems import CommandError, UsageProblem

if TYPE_CHECKING:
    from generator.base.problems import Problem
    from generator.project.load import Project
    from generator.project.runs.formats.mapped_facts import Mapping
    from generator.project.runs.parse import ParsedFile
    from generator.project.runs.run import Run


def write_all(repo: Path, target: Path, text: str | None, parsed: list[ParsedFile]) -> None:
    """Write every run, raw copy and the record, or, when any write fails, put back what was there.

    Every file is written to a temporary beside it first and the temporaries flushed to disk
    together (one sync for many, `fsio.sync_written`): one fsync per run file cost more than the
    rest of a 100,000-run import. Only then is each moved into place.
    """
    from generator.authoring.edit import write_edited
    from generator.base import fsio
    from generator.base.problems import rel
    from generator.project.runs import store

    folders = [f for f in (store.raw_dir(repo), store.runs_dir(repo), store.raw_dir(repo).parent) if not f.exists()]
    staged: list[tuple[Path, Path]] = []
    done: list[tuple[Path, bytes | None]] = []
    path = target
    try:
        for write in store.planned_writes(repo, parsed):
            path = write.path
            path.parent.mkdir(parents=True, exist_ok=True)
            staged.append((path, fsio.write_temp(path, write.data, sync=False)))
        fsio.sync_written([tmp for _path, tmp in staged])
        for path, tmp in staged:
            done.append((path, _old_bytes(path)))
            os.replace(tmp, path)
        path = target
        if text is not None:
            write_edited(target, text)
    except OSError as exc:
        for _path, tmp in staged:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
        for old_path, old in reversed(done):
            with contextlib.suppress(OSError):
                if old is None:
                    old_path.unlink(missing_ok=True)
                else:
                    store.write_bytes(old_path, old)
        for folder in folders:
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise CommandError(f"cannot write {rel(path, repo)}: {exc.strerror or exc}; nothing was imported") from None


def _old_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes() if path.is_file() and not path.is_symlink() else None
    except OSError:
        return None


def campaign_mapping(project: Project, name: str) -> Mapping:
    """The campaign's own format `name`, or a usage error that lists the ones it declares."""
    from generator.base.problems import rel
    from generator.project.runs.formats.mapped_facts import Mapping
    from generator.project.runs.formats.registry import FORMATS

    spec = project.campaign.import_formats.get(name)
    if spec is None:
        declared = ", ".join(f"`{n}`" for n in project.campaign.import_formats) or "none"
        why = (
            f"`{name}` is a built-in format, recognised from the content without --format"
            if name in FORMATS
            else f"campaign.yaml declares no import format `{name}`"
        )
        raise UsageProblem(f"{why}; import_formats declared: {declared}")
    shown = rel(project.campaign_file.path, project.root)
    return Mapping(name, spec, project.campaign.vocabulary(), shown, project.campaign_file.positions, project.root)


def read_all(files: Iterable[Path], mapping: Mapping | None = None) -> tuple[list[ParsedFile], list[Problem]]:
    """Parse every file before anything is written, so one bad file stops the whole import.

    `files` may be a progress bar over the paths: each is taken as it is parsed.
    """
    from generator.project.runs.formats.mapped import parse_mapped
    from generator.project.runs.parse import parse_file
    from generator.project.runs.store import attach_sources

    parsed: list[ParsedFile] = []
    problems: list[Problem] = []
    for path in files:
        result, found = (
            parse_file(path, str(path), once=True) if mapping is None else parse_mapped(path, str(path), mapping)
        )
        problems += found
        if result is not None:
            attach_sources(result)
            parsed.append(result)
    return parsed, problems


def unique_runs(parsed: list[ParsedFile]) -> list[Run]:
    seen: dict[str, Run] = {}
    for p in parsed:
        for run in p.runs:
            seen.setdefault(run.id, run)
    return list(seen.values())


def split_arms(runs: list[Run], key: str, value: str) -> tuple[list[Run], list[Run]]:
    """(the result's runs, the baseline's) of one file holding both arms, by a setting's value."""
    base = [r for r in runs if _same_setting(r.settings.get(key), value)]
    if not base:
        seen = sorted({_setting_text(r.settings.get(key)) for r in runs})
        shown = ", ".join(f"`{v}`" for v in seen) if any(seen) else "none: no run records it"
        raise UsageProblem(f"--baseline-where {key}={value}: no run has {key} `{value}` (the values found: {shown})")
    if len(base) == len(runs):
        raise UsageProblem(f"--baseline-where {key}={value}: every run has it, so none is left for the result")
    return [r for r in runs if r not in base], base


def _setting_text(v: Any) -> str:
    return "" if v is None else str(v)


def _same_setting(v: Any, value: str) -> bool:
    """Whether a run's setting is `value`: as text, or as numbers when both read as one (a file's
    `4.0` is the `4` typed on the command line)."""
    text = _setting_text(v)
    if text == value:
        return True
    a, b = _number(text), _number(value)
    return a is not None and a == b


def _number(text: str) -> float | None:
    try:
        x = float(text)
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def _counterparts(run: Run, base: list[Run], key: str) -> list[Run]:
    """The baseline arm's runs measured like `run` in every setting but `key`, the names and the date."""
    from generator.project.comparable import NAME_KEYS

    skip = {key, *NAME_KEYS, "date"}

    def same(r: Run) -> dict[str, Any]:
        return {k: v for k, v in r.settings.items() if k not in skip}

    return [b for b in base if b.kind == run.kind and same(b) == same(run)]


def link(
    project: Project,
    target: Path,
    runs: list[Run],
    label: str | None,
    baseline: bool,
    baseline_where: tuple[str, str] | None = None,
) -> tuple[str, list[tuple[Run, str]], list[Problem]]:
    """The target file's new text with a result per new run, the runs added, and any problems.

    With `baseline_where` (a setting and its value), the runs that have it are the baseline's
    arm: each result names its counterparts (same settings but that one) as `baseline_run`.

    Over 60 lines: one edit of one document (split the arms, append a result per new run, name
    each one's baseline, check the edited text), each step reading what the one before wrote.
    """
    from dataclasses import replace

    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    from generator.authoring.edit import Document, set_key, styled_like
    from generator.model.campaign import Baseline
    from generator.model.record import Record
    from generator.project.matching import configuration

    every = runs
    arms: list[Run] = []
    if baseline_where is not None:
        runs, arms = split_arms(runs, *baseline_where)
    doc = Document.from_path(target)
    container: Any = doc.data["baseline"] if baseline else doc.data
    order = list((Baseline if baseline else Record).model_fields)
    results = container.get("results")
    created = results is None
    if results is None:
        results = CommentedSeq()
        set_key(container, "results", results, order)
    known = {**project.runs, **{run.id: run for run in every}}
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
    trailing = take_trailing_comment(results) if fresh else None
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
    if baseline_where is not None:
        _name_baselines(groups, new, arms, baseline_where[0])
    put_trailing_comment(results, trailing)
    text = doc.text()
    if created and added:
        text = results_at_placeholder(text)
    if not added:
        return text, added, []
    # The runs are not written yet: the edited file is checked as if they were.
    pending = replace(project, runs={**project.runs, **{run.id: run for run in every}})
    problems = check_linked(pending, target, text, baseline)
    return text, added, [p for p in problems if p.severity == "error"]


def _name_baselines(groups: dict[Any, Any], new: list[Run], arms: list[Run], key: str) -> None:
    """Each new run's result names its baseline arm's counterparts as `baseline_run` (one id or a list)."""
    from ruamel.yaml.comments import CommentedSeq

    from generator.authoring.edit import set_key
    from generator.model.result import Result
    from generator.project.matching import configuration

    for run in new:
        item = groups[configuration(run)]
        found = _counterparts(run, arms, key)
        if not found:
            raise UsageProblem(
                f"run `{run.id}` ({run.describe()}) has no baseline run with the same settings but `{key}`"
            )
        ids = [b.id for b in found]
        set_key(item, "baseline_run", ids[0] if len(ids) == 1 else CommentedSeq(ids), list(Result.model_fields))


# The commented `# results:` example that `init` and `new` write, with its indented lines: once
# real results are linked it only misleads (it sat above the imported ones).
_PLACEHOLDER = re.compile(r"(?m)^([ \t]*)# results:.*\n(?:\1#(?: {2,}|\t).*\n)*")


def results_at_placeholder(text: str) -> str:
    """`text` whose new `results:` block (which ruamel puts after the key before it, often the
    last, below the starter's commented keys) takes the place of the commented `# results:`
    placeholder, where the starter says results go; without the placeholder, it is unchanged.

    Moved only when the moved text holds the same data: otherwise the block stays where
    ruamel put it (still valid, only further down).
    """
    from generator.base.read import YamlProblem, parse

    found = _PLACEHOLDER.search(text)
    if found is None:
        return text
    dropped = text[: found.start()] + text[found.end() :]
    indent = found.group(1)
    lines = dropped.splitlines(keepends=True)
    head = next((i for i, line in enumerate(lines) if line.rstrip("\r\n") == f"{indent}results:"), None)
    at = dropped[: found.start()].count("\n")
    if head is None or head == at:
        return dropped
    end = head + 1
    while end < len(lines) and (
        lines[end].startswith((f"{indent} ", f"{indent}\t", f"{indent}-")) and lines[end].strip()
    ):
        end += 1
    block = lines[head:end]
    rest = lines[:head] + lines[end:]
    # Above the placeholder (after a key the user uncommented), the block's lines leave first.
    at = at - len(block) if head < at else at
    moved = "".join(rest[:at] + block + rest[at:])
    try:
        if parse(moved)[0] != parse(dropped)[0]:
            return dropped
    except YamlProblem:
        return dropped
    return moved


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


def take_trailing_comment(results: Any) -> Any:
    """Detach the blank lines or comment after the last result, to put them after the new ones.

    ruamel keeps what follows a list item (the blank line before the next key) on that item's
    last key; appending after it would leave the new results below the gap.
    """
    from ruamel.yaml.scalarstring import FoldedScalarString, LiteralScalarString

    if not results or not hasattr(results[-1], "ca") or not results[-1]:
        return None
    last = results[-1]
    key = list(last)[-1]
    value = last[key]
    if isinstance(value, list) and value and not isinstance(value[-1], dict | list) and hasattr(value, "ca"):
        # A list of repetitions (`run: [...]`): what follows sits on its last id.
        slot = value.ca.items.get(len(value) - 1)
        if not slot or slot[0] is None:
            return None
        token = slot[0]
        slot[0] = None
        return token
    if isinstance(value, dict | list):
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


def put_trailing_comment(results: Any, token: Any) -> None:
    """Put what `_take_trailing_comment` took (the gap and the starter's comments below the list)
    after the new last result: the list stays whole, above them."""
    from ruamel.yaml.comments import CommentedSeq
    from ruamel.yaml.scalarstring import FoldedScalarString, LiteralScalarString

    if token is None or not results or not hasattr(results[-1], "ca") or not results[-1]:
        return
    last = results[-1]
    key = list(last)[-1]
    value = last[key]
    if isinstance(value, CommentedSeq) and value:
        # After a list of repetitions the gap goes after its last id, not between `run:` and the list.
        value.ca.items[len(value) - 1] = [token, None]
        return
    if isinstance(value, LiteralScalarString | FoldedScalarString) and token.value.startswith("\n"):
        # A block scalar keeps its newline inside the value: the token must not add another.
        token.value = token.value[1:]
    last.ca.items[key] = [None, None, token, None]


def check_linked(project: Project, target: Path, text: str, baseline: bool) -> list[Problem]:
    from generator.authoring.records import check_edited

    if not baseline:
        return check_edited(project, target, text)
    from dataclasses import replace

    from generator.base.problems import Report, rel
    from generator.checks.validate import cross_check
    from generator.model.campaign import Campaign
    from generator.project.load import load_text, record_files

    shown = rel(target, project.root)
    report = Report()
    loaded = load_text(target, text, Campaign, shown, report)
    if loaded.model is None:
        return report.problems
    candidate = replace(project, campaign=loaded.model, campaign_file=loaded)
    files, _strays = record_files(project.improvements_dir)
    return [p for p in cross_check(candidate, files) if p.path == shown]
