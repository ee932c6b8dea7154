"""Held property: after any sequence of edits, an incremental build writes a clean build's bytes.

The campaign is the shipped example (examples/h200-decode: imported runs, `baseline_from`, the
campaign's baseline and decision rule) plus two small records of inline numbers, one owning a
blocker that an example record names and one reading the other's result as its baseline, so an
edit reaches other records' pages in every way a page depends on another record's.

Each seeded sequence applies random edits of every kind below, one at a time. After each edit the
same campaign is built again incrementally: through `improvements build` in this process with the
user cache folder of the builds before it, or, every other sequence, with one `BuildCache` kept in
memory between builds as `serve` keeps it. A copy of the inputs is then built with an empty cache
folder, and every file under docs/ (pages, charts, downloads, the manifest) must be the same bytes.
Override templates (templates/record.md.j2 and _summary_row.md.j2) quote figures in their own
text, which no page model holds, and one edit kind changes them; another upgrades numpy or scipy,
whose versions salt every entry of the build cache (`base.stamp.SHAPING`).
CI runs 3 sequences of 5 edits, which take every kind at least once;
IMPROVEMENTS_PROPERTY_SEQUENCES=N (and _EDITS=M) runs more.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from generator.authoring.edit import Document

from conftest import REPO, run_cli

# Slow: every edit is followed by an incremental build and a clean one.
pytestmark = pytest.mark.slow

SEQUENCES = int(os.environ.get("IMPROVEMENTS_PROPERTY_SEQUENCES", "3"))
EDITS = int(os.environ.get("IMPROVEMENTS_PROPERTY_EDITS", "5"))

BLOCKED = """\
title: Flash decoding kernels (a test record)
tier: 3
status: blocked
date: 2026-12-01
hypothesis: Splitting the KV sequence across blocks may raise batch-1 decode throughput.
blockers:
  - id: no-flash-wheel
    title: No flash-attn wheel for this torch
    error: "ImportError: flash_attn_2_cuda"
    cause: The wheel is built against another torch version.
    status: open
results:
  - label: inline, batch 1
    concurrency: 1
    metrics:
      output_throughput: 61.5
      tpot_median: 16.2
    baseline:
      output_throughput: 56.5
      tpot_median: 17.6
"""

READER = """\
title: Flash decoding on top of the kernels (a test record)
tier: 3
status: in-progress
date: 2026-12-01
hypothesis: Reading the kernels' record as its baseline, a second step may add a little more.
results:
  - label: inline, batch 1
    concurrency: 1
    baseline_from: {record: flash-decoding-kernels, result: "inline, batch 1"}
    metrics:
      output_throughput: 63.0
      tpot_median: 15.9
"""

# Inline numbers against a baseline computed from another record's imported runs.
INLINE_ON_RUNS = """\
title: Inline numbers on SDPA's runs (a test record)
tier: 3
status: in-progress
date: 2026-12-01
hypothesis: Read against SDPA's imported runs, an inline number may show a change.
results:
  - label: inline on runs, batch 1
    concurrency: 1
    baseline_from: {record: sdpa-attention, result: "512/128, batch 1"}
    metrics:
      output_throughput: 63.0
      tpot_median: 15.9
"""


def outputs(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted((root / "docs").rglob("*")) if p.is_file()}


def cli(*args: str, root: Path) -> None:
    res = run_cli(*args, "--root", str(root))
    assert res.returncode == 0, (args, res.stdout, res.stderr)


def clean_build(root: Path, scratch: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, bytes]:
    """What a build of a copy of `root`'s inputs writes, with no outputs and an empty cache folder."""
    copy = scratch / "clean"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(root, copy, ignore=lambda folder, names: ["docs"] if Path(folder) == root else [])
    cache_home = scratch / "clean-cache"
    shutil.rmtree(cache_home, ignore_errors=True)
    with monkeypatch.context() as m:
        m.setenv("XDG_CACHE_HOME", str(cache_home))
        cli("build", "-q", root=copy)
    return outputs(copy)


def records(root: Path) -> list[Path]:
    return sorted((root / "improvements").glob("[0-9]*.yaml"))


def slug(path: Path) -> str:
    return path.stem.split("-", 1)[1]


def edit_yaml(path: Path, change: Callable[[object], None]) -> None:
    doc = Document.from_path(path)
    change(doc.data)
    path.write_text(doc.text(), encoding="utf-8")


def owner_of(root: Path, text: str) -> Path:
    return next(p for p in records(root) if text in p.read_text(encoding="utf-8"))


def run_files(root: Path, rec: Path, label: str | None = None) -> list[Path]:
    """The run files a record's results (or its result `label`) read."""
    results = Document.from_path(rec).data.get("results", [])
    names = [str(r) for res in results if label in (None, res["label"]) for r in res.get("run", [])]
    return [root / "results" / "runs" / f"{name}.json" for name in names]


def set_run_metric(path: Path, rng: random.Random) -> None:
    """An imported run's metric as a re-import of a changed raw file would leave it.

    `check` compares nothing in a run file with its raw file's digest (that digest is of the raw
    bytes, kept to show they are what was imported), so a changed value checks clean.
    """
    run = json.loads(path.read_text(encoding="utf-8"))
    name = rng.choice(sorted(run["metrics"]))
    run["metrics"][name]["value"] = round(run["metrics"][name]["value"] * rng.uniform(0.8, 1.25), 6)
    path.write_text(json.dumps(run, indent=2, sort_keys=True) + "\n", encoding="utf-8")


# Each edit takes the campaign and the sequence's random source, and changes the inputs once.


def named(root: Path, rng: random.Random) -> Path:
    """A record, half the time one another file names: an edit of it reaches other pages."""
    texts = {p: p.read_text(encoding="utf-8") for p in (root / "improvements").glob("*.yaml")}
    read = [p for p in records(root) if any(slug(p) in text for q, text in texts.items() if q != p)]
    return rng.choice(read if read and rng.random() < 0.5 else records(root))


def edit_text(root: Path, rng: random.Random) -> None:
    rec = named(root, rng)
    field = rng.choice(["hypothesis", "verdict", "title"])
    words = " ".join(rng.choice(["launch", "graph", "cache", "kernel", "step", "batch"]) for _ in range(6))

    def change(data: object) -> None:
        assert isinstance(data, dict)
        data[field] = f"Edited {field}: {words} ({rng.randrange(10**6)})."

    edit_yaml(rec, change)


def edit_metric(root: Path, rng: random.Random) -> None:
    """An inline number; the blocked record's is the baseline another record reads."""
    rec = rng.choice([p for p in records(root) if "metrics" in (Document.from_path(p).data.get("results") or [{}])[0]])

    def change(data: object) -> None:
        assert isinstance(data, dict)
        metrics = data["results"][0]["metrics"]
        name = rng.choice(sorted(metrics))
        metrics[name] = round(float(metrics[name]) * rng.uniform(0.8, 1.25), 2)

    edit_yaml(rec, change)


def edit_campaign_baseline(root: Path, rng: random.Random) -> None:
    """A run of the campaign's baseline, which every record without a baseline of its own reads."""
    campaign = Document.from_path(root / "improvements" / "campaign.yaml").data
    names = [str(r) for res in campaign["baseline"]["results"] for r in res.get("run", [])]
    set_run_metric(root / "results" / "runs" / f"{rng.choice(names)}.json", rng)


def edit_baseline_from(root: Path, rng: random.Random) -> None:
    """A run of the result that other records name in `baseline_from`."""
    runs = run_files(root, owner_of(root, "title: SDPA attention"), "512/128, batch 1")
    set_run_metric(rng.choice(runs), rng)


def edit_blocker(root: Path, rng: random.Random) -> None:
    rec = owner_of(root, "id: no-flash-wheel")

    def change(data: object) -> None:
        assert isinstance(data, dict)
        blocker = data["blockers"][0]
        if rng.random() < 0.5:
            blocker["title"] = f"No flash-attn wheel for torch {rng.randrange(100)}"
        else:
            blocker["cause"] = f"The wheel is built against torch 2.{rng.randrange(20)}."

    edit_yaml(rec, change)


def edit_campaign(root: Path, rng: random.Random) -> None:
    def change(data: object) -> None:
        assert isinstance(data, dict)
        what = rng.choice(["goal", "alpha", "min_effect"])
        if what == "goal":
            data["goals"][0]["target"] = rng.choice([60, 150, 250, 400])
        elif what == "alpha":
            data["decision"]["alpha"] = rng.choice([0.01, 0.05, 0.1])
        else:
            data["decision"]["min_effect"] = rng.choice([0, 1, 5, 20])

    edit_yaml(root / "improvements" / "campaign.yaml", change)


def edit_launch(root: Path, rng: random.Random) -> None:
    """The change of a record another builds on (`builds_on`): the launch of the other changes."""
    rec = owner_of(root, "title: SDPA attention")

    def change(data: object) -> None:
        assert isinstance(data, dict)
        data["change"]["env"] = {"SDPA_EDIT": str(rng.randrange(10**6))}

    edit_yaml(rec, change)


def edit_run(root: Path, rng: random.Random) -> None:
    set_run_metric(rng.choice(sorted((root / "results" / "runs").glob("*.json"))), rng)


def edit_rename(root: Path, rng: random.Random) -> None:
    rec = named(root, rng)
    taken = {int(p.name.split("-", 1)[0]) for p in records(root)}
    free = rng.choice([n for n in range(1, 30) if n not in taken])
    if rng.random() < 0.5:
        cli("renumber", slug(rec), str(free), root=root)
    else:
        rec.rename(rec.with_name(f"{free:02d}-{slug(rec)}.yaml"))


def edit_delete(root: Path, rng: random.Random) -> None:
    """A record no other file names (its slug nowhere else, an override template included, nor a
    shared blocker it defines), so the campaign still builds."""
    named = [*(root / "improvements").glob("*.yaml"), *(root / "templates").glob("*.j2")]
    texts = {p: p.read_text(encoding="utf-8") for p in named}

    def is_named(p: Path) -> bool:
        ids = re.findall(r"\bid: (\S+)", texts[p])
        return any(slug(p) in text or any(f"ref: {i}" in text for i in ids) for q, text in texts.items() if q != p)

    free = [p for p in records(root) if not is_named(p)]
    if free:
        rng.choice(free).unlink()
    else:
        edit_text(root, rng)


# Figures an override template quotes in its own text, in no page model: a build that kept a page
# by its model alone would keep the old figure after a run or an inline number changed.
QUOTED = [
    "flash-decoding-kernels.c1.output_throughput.change",
    "flash-decoding-kernels.c1.tpot_median.change",
    "flash-decoding-on-top.c1.tpot_median.change",
    "inline-on-runs.c1.output_throughput.change",
    "sdpa-attention.c256.output_throughput.ratio",
    "baseline.c32.tpot_p99.min",
]


def write_overrides(root: Path, rng: random.Random) -> None:
    """The campaign's own record page and summary row: the shipped ones with figures quoted in
    the template's text, through the prose filter, as a campaign's override may quote them."""
    from generator.output.templates import PACKAGE_TEMPLATES

    folder = root / "templates"
    folder.mkdir(exist_ok=True)
    for name, filt in (("record.md.j2", "inline"), ("_summary_row.md.j2", "cell")):
        quoted = ", ".join("{% raw %}{{ " + q + " }}{% endraw %}" for q in rng.sample(QUOTED, len(QUOTED) - 1))
        line = f"{{% set quoted %}}Quoted ({rng.randrange(100)}): {quoted}{{% endset %}}{{{{ quoted|{filt} }}}}"
        shipped = (PACKAGE_TEMPLATES / name).read_text(encoding="utf-8").rstrip("\n")
        if name.startswith("_"):
            # The row is one table line: the figures go into its blockers cell's text.
            text = shipped.replace("none{% endif %} |", "none{% endif %} " + line + " |")
            assert text != shipped
        else:
            text = f"{shipped}\n\n{line}\n"
        (folder / name).write_text(text, encoding="utf-8")


def edit_template(root: Path, rng: random.Random) -> None:
    """An override template's own text: other figures quoted, or the overrides taken away."""
    if (root / "templates").is_dir() and rng.random() < 0.25:
        shutil.rmtree(root / "templates")
    else:
        write_overrides(root, rng)


# The extra library version the code's digest reads in this process (`versions`, below).
UPGRADED = ["numpy-0"]


def edit_versions(root: Path, rng: random.Random) -> None:
    """numpy or scipy upgraded under the campaign: a new salt for every entry of the build cache."""
    from generator.base import stamp

    UPGRADED[0] = f"{rng.choice(('numpy', 'scipy'))}-{rng.randrange(10**6)}"
    stamp.code_digest.cache_clear()


@pytest.fixture
def versions(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The libraries' versions as `base.stamp` reads them, with the one `edit_versions` set."""
    from generator.base import stamp

    real = stamp._versions
    monkeypatch.setattr(stamp, "_versions", lambda: [*real(), UPGRADED[0]])
    stamp.code_digest.cache_clear()
    yield
    monkeypatch.undo()
    stamp.code_digest.cache_clear()


def edit_new(root: Path, rng: random.Random) -> None:
    n = rng.randrange(10**6)
    cli(
        "new",
        f"Idea {n} from the property test",
        "--tier",
        str(rng.choice([1, 2, 3])),
        "--hypothesis",
        f"Edit {n} may change nothing at all.",
        "--date",
        "2026-12-02",
        root=root,
    )


EDIT_KINDS: dict[str, Callable[[Path, random.Random], None]] = {
    "text": edit_text,
    "metric": edit_metric,
    "baseline of the campaign": edit_campaign_baseline,
    "baseline_from": edit_baseline_from,
    "blocker": edit_blocker,
    "campaign": edit_campaign,
    "launch": edit_launch,
    "run": edit_run,
    "rename": edit_rename,
    "delete": edit_delete,
    "new": edit_new,
    "template": edit_template,
    "versions": edit_versions,
}


def make_campaign(root: Path, sixth: str = INLINE_ON_RUNS) -> Path:
    """The H200 example with the records the edits need; `sixth` is record 06's text."""
    shutil.copytree(REPO / "examples" / "h200-decode", root, ignore=shutil.ignore_patterns("docs"))
    folder = root / "improvements"
    (folder / "04-flash-decoding-kernels.yaml").write_text(BLOCKED, encoding="utf-8")
    (folder / "05-flash-decoding-on-top.yaml").write_text(READER, encoding="utf-8")
    (folder / "06-inline-on-runs.yaml").write_text(sixth, encoding="utf-8")
    # An example record names the shared blocker too.
    third = next(folder.glob("03-*.yaml"))
    third.write_text(third.read_text(encoding="utf-8") + "blockers:\n  - ref: no-flash-wheel\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_campaign(tmp_path_factory.mktemp("template") / "campaign")


def plan(seed: int) -> list[str]:
    """The sequence's edit kinds: every kind is met within a few sequences, in random order."""
    kinds = sorted(EDIT_KINDS)
    rng = random.Random(seed)
    slots = range(seed * EDITS, (seed + 1) * EDITS)
    # The first sequences together take every kind once (3 of 5 edits in CI take all 13); later
    # ones, in a long run, draw kinds at random.
    chosen = [kinds[s] if s < len(kinds) else rng.choice(kinds) for s in slots]
    rng.shuffle(chosen)
    return chosen


@pytest.mark.parametrize("seed", range(SEQUENCES))
def test_incremental_builds_write_what_clean_builds_write(
    seed: int, template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, versions: None
) -> None:
    from generator.base.incremental import BuildCache
    from generator.output import render

    root = tmp_path / "campaign"
    shutil.copytree(template, root)
    rng = random.Random(seed)
    if seed != 2:
        # Override templates quoting figures from the start, so that later edits of a run or a
        # number meet them; the third sequence starts with the shipped templates alone.
        write_overrides(root, rng)
    kept = BuildCache(root) if seed % 2 else None

    def incremental() -> None:
        if kept is None:
            cli("build", "-q", root=root)
        else:
            render.build(root, build_cache=kept)

    incremental()
    for step, kind in enumerate(plan(seed)):
        EDIT_KINDS[kind](root, rng)
        incremental()
        after = outputs(root)
        clean = clean_build(root, tmp_path, monkeypatch)
        assert sorted(after) == sorted(clean), f"seed {seed}, edit {step} ({kind})"
        differ = [path for path in clean if after[path] != clean[path]]
        assert not differ, f"seed {seed}, edit {step} ({kind}): stale {differ}"
