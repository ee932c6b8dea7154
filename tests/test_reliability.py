"""Issue 26: what `check` accepts always builds, launch commands cannot inject, I/O errors are one line.

Each case was found by the adversarial review; each test runs the real command on real files
and fails on the behaviour the issue describes (a traceback, a file created by a printed
command, a value accepted that later broke the build).
"""

from __future__ import annotations

import errno
import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from test_stack_campaign import CAMPAIGN, DP, make

from conftest import run_cli

BASH = shutil.which("bash")


def errors(root: Path) -> list[str]:
    out = run_cli("check", "--root", str(root), env={"COLUMNS": "300"})
    assert "Traceback" not in out.stderr, out.stderr
    return [line for line in out.stderr.splitlines() if "error[" in line]


def one(root: Path, where: str, code: str, words: str) -> None:
    found = errors(root)
    hits = [e for e in found if e.startswith(where) and f"error[{code}]" in e and words in e]
    assert hits, found


# --- names and values that reach a shell ---------------------------------------------------------


@pytest.mark.parametrize("name", ["A;touch PWNED;B", "A`touch PWNED`", "A$(touch PWNED)", "A\nB", "1A", "A-B"])
def test_an_env_name_that_is_not_an_identifier_is_a_positioned_error(tmp_path: Path, name: str) -> None:
    record = DP.replace("change:\n", f"change:\n  env: {{{json.dumps(name)}: '2'}}\n")
    root = make(tmp_path, {"05-dp-attention.yaml": record})
    one(root, "improvements/05-dp-attention.yaml:7:", "invalid-value", "is not a shell identifier")
    # `stack` checks first, so nothing is printed for a shell to run.
    out = run_cli("stack", "--root", str(root), "--format", "command")
    assert out.returncode == 1 and out.stdout == ""


def test_env_names_of_the_baseline_and_of_a_variant_are_checked_too(tmp_path: Path) -> None:
    root = make(tmp_path, {})
    campaign = root / "improvements" / "campaign.yaml"
    campaign.write_text(CAMPAIGN.replace("env: {NCCL_P2P_LEVEL: SYS}", "env: {'X;id': SYS}"))
    one(root, "improvements/campaign.yaml:11:", "invalid-value", "'X;id' is not a shell identifier")
    campaign.write_text(CAMPAIGN)
    variant = (
        DP.replace("status: adopted", "status: in-progress").replace("verdict: v\n", "")
        + "variants:\n  - label: a\n    outcome: diagnostic\n    change:\n      env: {'B C': '1'}\n"
    )
    (root / "improvements" / "05-dp-attention.yaml").write_text(variant)
    one(root, "improvements/05-dp-attention.yaml:16:", "invalid-value", "'B C' is not a shell identifier")


# Flag values as a record writes them (shell words), and the argv the engine must receive.
HOSTILE_FLAGS = {
    '--speculative-config \'{"method":"eagle3","num_steps":3}\'': [
        "--speculative-config",
        '{"method":"eagle3","num_steps":3}',
    ],
    "--served-model-name 'two words'": ["--served-model-name", "two words"],
    '--chat-template "it\'s"': ["--chat-template", "it's"],
    "--price '$5 and $(touch PWNED) and `touch PWNED`'": ["--price", "$5 and $(touch PWNED) and `touch PWNED`"],
    "--note 'line one\nline two'": ["--note", "line one\nline two"],
}
STUB = """#!/usr/bin/env python3
import json, os, sys
json.dump({"argv": sys.argv[1:], "env": dict(os.environ)}, open(os.environ["STUB_OUT"], "w"))
"""


@pytest.mark.skipif(BASH is None, reason="needs bash")
def test_stack_command_runs_under_bash_with_exactly_the_records_words(tmp_path: Path) -> None:
    flags = ", ".join(json.dumps(f) for f in HOSTILE_FLAGS)
    env = {"JSON_CFG": '{"a": [1, 2]}', "SPACED": "a b  c", "QUOTES": 'it\'s "q"', "DOLLAR": "$(touch PWNED)`id`"}
    record = DP.replace(
        'flags: ["--enable-dp-attention", "--dp-size 8"]', f"flags: [{flags}]\n  env: {json.dumps(env)}"
    )
    campaign = CAMPAIGN.replace("python -m sglang.launch_server", "fake-engine serve")
    root = make(tmp_path, {"05-dp-attention.yaml": record})
    (root / "improvements" / "campaign.yaml").write_text(campaign)
    assert errors(root) == []
    out = run_cli("stack", "--root", str(root), "--format", "command")
    assert out.returncode == 0, out.stderr
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stub = bin_dir / "fake-engine"
    stub.write_text(f"#!{sys.executable}\n" + STUB.split("\n", 1)[1])
    stub.chmod(stub.stat().st_mode | stat.S_IXUSR)
    work = tmp_path / "work"
    work.mkdir()
    result = tmp_path / "argv.json"
    run_env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "STUB_OUT": str(result), "MODEL_PATH": "/m o"}
    for script in (out.stdout, run_cli("stack", "--root", str(root)).stdout):
        result.unlink(missing_ok=True)
        subprocess.run([BASH, "-c", script], cwd=work, env=run_env, check=True)
        seen = json.loads(result.read_text())
        words = ["serve", "--model-path", "/m o", "--tp-size", "8", "--max-running-requests", "1024"]
        for argv in HOSTILE_FLAGS.values():
            words += argv
        assert seen["argv"] == words
        assert {k: seen["env"].get(k) for k in [*env, "NCCL_P2P_LEVEL"]} == {**env, "NCCL_P2P_LEVEL": "SYS"}
        assert list(work.iterdir()) == [], "a value ran as a command"
    # The words the engine got are the records' own, split as `check` splits them.
    assert {f: shlex.split(f) for f in HOSTILE_FLAGS} == HOSTILE_FLAGS


# --- numbers as written ---------------------------------------------------------------------------

SIZES = "outside the sizes a number may have (1e-15 to 1e15) (hint: check the number and its unit)"
NUMBER_CASES = [
    # (file, old text, new text, line:col, the whole problem after its place)
    (
        "campaign",
        "tiers:",
        "slo: {tpot_p99: 1e-320}\ntiers:",
        "20:17",
        f"error[invalid-value]: `tpot_p99` is 9.99989e-321, {SIZES}",
    ),
    (
        "campaign",
        "tiers:",
        "slo: {tpot_p99: true}\ntiers:",
        "20:17",
        "error[wrong-type]: `tpot_p99` is true, which is not a number (hint: write the number)",
    ),
    (
        "campaign",
        "count: 8",
        'count: "8"',
        "4:27",
        "error[wrong-type]: `count` is the text '8', not a number (hint: write the number without quotes)",
    ),
    (
        "campaign",
        "tiers:",
        "decision: {primary_metric: output_throughput, min_effect: true}\ntiers:",
        "20:59",
        "error[wrong-type]: `min_effect` is true, which is not a number (hint: write the number)",
    ),
    (
        "record",
        "{output_throughput: 138.3}",
        '{output_throughput: "50"}',
        "11:34",
        "error[wrong-type]: `output_throughput` is the text '50', not a number (hint: write the number without quotes)",
    ),
    (
        "record",
        "{output_throughput: 138.3}",
        "{output_throughput: -5}",
        "11:34",
        "error[invalid-value]: `output_throughput` is negative; a tok/s value cannot be "
        "(hint: check the sign, or define a metric of your own in campaign.yaml)",
    ),
    # In range as written, out of range once converted: the message says what was written.
    (
        "record",
        "    metrics: {output_throughput: 138.3}\n    baseline: {output_throughput: 100}",
        "    units: {ttft_p99: s}\n    metrics: {ttft_p99: 1e14}\n    baseline: {ttft_p99: 1}",
        "12:25",
        f"error[invalid-value]: `ttft_p99` is 1e+17 (written 100000000000000.0), {SIZES}",
    ),
]


@pytest.mark.parametrize(("where", "old", "new", "place", "problem"), NUMBER_CASES)
def test_numbers_are_finite_in_range_and_typed_as_written(
    tmp_path: Path, where: str, old: str, new: str, place: str, problem: str
) -> None:
    root = make(tmp_path, {"05-dp-attention.yaml": DP})
    name = "campaign.yaml" if where == "campaign" else "05-dp-attention.yaml"
    path = root / "improvements" / name
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    assert errors(root) == [f"improvements/{name}:{place}: {problem}"]
    build = run_cli("build", "--root", str(root))
    assert build.returncode == 1 and "Traceback" not in build.stderr


def test_builds_on_a_rejected_record_or_one_slug_twice(tmp_path: Path) -> None:
    rejected = DP.replace("status: adopted", "status: rejected")
    other = DP.replace("title: DP attention", "title: Other").replace("builds_on", "x")
    twice = other.replace("hypothesis: h", "hypothesis: h\nbuilds_on: [dp-attention]")
    root = make(tmp_path, {"05-dp-attention.yaml": rejected, "06-other.yaml": twice})
    one(root, "improvements/06-other.yaml:5:", "invalid-value", "which is rejected")
    (root / "improvements" / "05-dp-attention.yaml").write_text(DP)
    (root / "improvements" / "06-other.yaml").write_text(
        other.replace("hypothesis: h", "hypothesis: h\nbuilds_on: [dp-attention, dp-attention]")
    )
    one(root, "improvements/06-other.yaml:5:", "invalid-value", "named twice")


SWEEP = """\
title: Chunk sweep
tier: 1
status: in-progress
hypothesis: h
sweep: {parameter: --chunked-prefill-size, metric: METRIC}
variants:
  - label: small
    value: 4096
    outcome: rejected
    results:
      - {label: s, concurrency: 1, metrics: {output_throughput: 120}, baseline: {output_throughput: 100}}
  - label: large
    value: VALUE
    outcome: retained
    results:
      - {label: l, concurrency: 1, metrics: {output_throughput: 130}, baseline: {output_throughput: 100}}
"""


def test_two_variants_with_one_value_and_a_sweep_metric_nobody_measures(tmp_path: Path) -> None:
    good = SWEEP.replace("METRIC", "output_throughput").replace("VALUE", "8192")
    root = make(tmp_path, {"01-chunk-sweep.yaml": good})
    assert errors(root) == []
    path = root / "improvements" / "01-chunk-sweep.yaml"
    path.write_text(good.replace("value: 8192", "value: 4096"))
    one(root, "improvements/01-chunk-sweep.yaml:13:", "invalid-value", "has the value of variant `small`")
    path.write_text(SWEEP.replace("METRIC", "ttft_p99").replace("VALUE", "8192"))
    one(root, "improvements/01-chunk-sweep.yaml:5:", "invalid-value", "no variant measures `ttft_p99`")


@pytest.mark.parametrize("digits", ["٠١", "０１"])
def test_record_numbers_are_ascii_digits(tmp_path: Path, digits: str) -> None:
    root = make(tmp_path, {f"{digits}-dp-attention.yaml": DP})
    one(root, f"improvements/{digits}-dp-attention.yaml:1:1", "bad-filename", "")
    out = run_cli("status", "--root", str(root), digits, "in-progress")
    assert out.returncode in (1, 2) and "Traceback" not in out.stderr


# --- graphs: long chains, many adopted records ----------------------------------------------------


def _chain(root: Path, n: int) -> None:
    for i in range(1, n + 1):
        lines = [f"title: R {i}", "tier: 1", "status: adopted", "hypothesis: h", "verdict: v"]
        if i > 1:
            lines.append(f"builds_on: [r{i - 1}]")
        lines += ["change:", f'  flags: ["--flag-{i} {i}"]', "results:", "  - label: a", "    concurrency: 1"]
        lines.append(f"    metrics: {{output_throughput: {100 + i}}}")
        lines.append(
            f"    baseline_from: {{record: r{i - 1}, result: a}}" if i > 1 else "    baseline: {output_throughput: 100}"
        )
        (root / "improvements" / f"{i:04d}-r{i}.yaml").write_text("\n".join(lines) + "\n")


@pytest.mark.slow  # 600 records, checked and stacked
def test_a_chain_of_600_records_checks_and_stacks_without_recursion(tmp_path: Path) -> None:
    root = make(tmp_path, {})
    _chain(root, 600)
    assert errors(root) == []
    out = run_cli("stack", "--root", str(root), "--format", "json")
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout)["command"].endswith("--flag-600 600")


def test_conflicts_are_found_by_name_not_by_pairs() -> None:
    from generator.model.launch import Step, apply_steps

    # 2,000 steps that all agree on one flag and one variable, and two that disagree: the index
    # pairs only those that differ, so this is linear, and finds exactly the real clashes.
    steps = [Step(f"s{i}", i, flags=(("--same", "1"), (f"--own-{i}", None)), env=(("V", "1"),)) for i in range(2000)]
    steps += [Step("odd", 3000, flags=(("--same", "2"),)), Step("envy", 3001, env=(("V", "2"),))]
    found = apply_steps("serve --same 0", {}, steps)
    assert not isinstance(found, type(None))
    conflicts = found.conflicts  # type: ignore[union-attr]
    assert sum(1 for c in conflicts if c.kind == "flag" and c.slug_b == "odd") == 2000
    assert sum(1 for c in conflicts if c.kind == "env" and c.slug_b == "envy") == 2000
    assert len(conflicts) == 4000


# --- temporary names ------------------------------------------------------------------------------


def test_a_229_character_slug_builds(tmp_path: Path) -> None:
    # The page's name is within the limit; the temporary file it is written through once was not.
    root = make(tmp_path, {})
    slug = "-".join(["abcdefghi"] * 23)[:229].rstrip("-")
    out = run_cli("new", "--root", str(root), "Long", "--tier", "1", "--hypothesis", "h", "--slug", slug)
    assert out.returncode == 0, out.stderr
    assert errors(root) == []
    build = run_cli("build", "--root", str(root))
    assert build.returncode == 0, build.stderr
    assert any(len(p.name) > 240 for p in (root / "docs" / "improvements").iterdir())


@pytest.mark.parametrize("length", [248, 252])
def test_new_refuses_a_slug_whose_page_or_file_name_cannot_be_written(tmp_path: Path, length: int) -> None:
    root = make(tmp_path, {})
    slug = "-".join(["abcdefghi"] * 30)[:length].rstrip("-")
    before = sorted((root / "improvements").iterdir())
    out = run_cli("new", "--root", str(root), "Long", "--tier", "1", "--hypothesis", "h", "--slug", slug)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "the slug is too long" in out.stderr
    assert sorted((root / "improvements").iterdir()) == before


def test_temporaries_a_killed_build_left_are_swept_by_the_next(tmp_path: Path) -> None:
    root = make(tmp_path, {"05-dp-attention.yaml": DP})
    assert run_cli("build", "--root", str(root)).returncode == 0
    docs = root / "docs" / "improvements"
    left = [docs / ".improvements-tmp-abc123", root / "docs" / ".improvements-tmp-x.md.zz"]
    for path in left:
        path.write_text("half a page")
    (root / "improvements" / "05-dp-attention.yaml").write_text(DP.replace("DP attention", "DP attention 2"))
    assert run_cli("build", "--root", str(root)).returncode == 0
    assert [p for p in left if p.exists()] == []


# --- I/O errors are one line ----------------------------------------------------------------------


def _full_disk(*_args: object, **_kwargs: object) -> None:
    raise OSError(errno.ENOSPC, "No space left on device", "improvements/x")


@pytest.mark.parametrize(
    ("target", "args"),
    [
        ("generator.base.fsio.create_exclusive", ["new", "Idea", "--tier", "1", "--hypothesis", "h"]),
        ("generator.authoring.edit.atomic_write", ["status", "05", "in-progress"]),
        ("generator.authoring.scaffold.write_all", ["init", "SUB", "--no-input"]),
        ("generator.output.render.build", ["renumber", "05", "7"]),
        ("generator.base.fsio.atomic_write", ["export", "--output", "SUB/x.json"]),
        ("generator.base.fsio.atomic_write", ["report", "--output", "SUB/x.md"]),
        ("generator.base.fsio.write_temp", ["build"]),
    ],
)
def test_a_full_disk_is_one_line_in_every_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, args: list[str]
) -> None:
    import importlib

    module, name = target.rsplit(".", 1)
    # A moved function fails here, never skips: a skip would hide that the disk is no longer full.
    patched = importlib.import_module(module)
    assert callable(getattr(patched, name, None)), f"{target} moved; patch where the command now writes"
    monkeypatch.setattr(patched, name, _full_disk)
    root = make(tmp_path, {"05-dp-attention.yaml": DP.replace("status: adopted", "status: proposed")})
    args = [a.replace("SUB", str(tmp_path / "fresh")) for a in args]
    extra = [] if args[0] == "init" else ["--root", str(root)]
    out = run_cli(args[0], *extra, *args[1:])
    assert "Traceback" not in out.stderr, out.stderr
    assert out.returncode == 1, (out.stdout, out.stderr)
    assert "No space left on device" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr


# --- evidence files -------------------------------------------------------------------------------


@pytest.mark.parametrize("damage", ["deleted", "altered", "linked", "folder", "fifo"])
def test_a_damaged_raw_file_is_a_positioned_error_before_anything_is_built(tmp_path: Path, damage: str) -> None:
    from conftest import BENCH

    root = make(tmp_path, {"05-dp-attention.yaml": DP.replace("status: adopted", "status: proposed")})
    out = run_cli("import", "--root", str(root), str(BENCH / "vllm-benchmark-serving-legacy.json"), "--record", "05")
    assert out.returncode == 0, out.stderr
    assert errors(root) == []
    [raw] = (root / "results" / "raw").iterdir()
    if damage == "deleted":
        raw.unlink()
    elif damage == "altered":
        raw.write_bytes(raw.read_bytes() + b" ")
    elif damage == "linked":
        copy = tmp_path / "copy.json"
        copy.write_bytes(raw.read_bytes())
        raw.unlink()
        raw.symlink_to(copy)
    elif damage == "folder":
        raw.unlink()
        raw.mkdir()
    else:
        raw.unlink()
        os.mkfifo(raw)
    # The result's `run:` is the last line the import added to the record.
    line = len((root / "improvements" / "05-dp-attention.yaml").read_text().splitlines())
    [run_id] = (p.stem for p in (root / "results" / "runs").glob("*.json"))
    why = {
        "deleted": "does not exist",
        "altered": "no longer holds the bytes the import kept (its sha256 differs)",
        "linked": "is a symbolic link; evidence is the importer's own copy",
        "folder": "cannot be read: Is a directory",
        "fifo": "is not a regular file",
    }[damage]
    assert errors(root) == [
        f"improvements/05-dp-attention.yaml:{line}:10: error[evidence-mismatch]: "
        f"run `{run_id}`: its kept raw file `results/raw/{raw.name}` {why} (hint: restore it from version control "
        "(`git checkout -- results/raw`), or remove the result and import the benchmark file again)"
    ]
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    build = run_cli("build", "--root", str(root))
    assert build.returncode == 1 and "evidence-mismatch" in build.stderr
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before


def test_a_campaign_baseline_runs_evidence_is_checked_at_the_campaign_file(tmp_path: Path) -> None:
    from conftest import BENCH

    root = make(tmp_path, {"05-dp-attention.yaml": DP})
    out = run_cli("import", "--root", str(root), str(BENCH / "vllm-benchmark-serving-legacy.json"), "--baseline")
    assert out.returncode == 0, out.stderr
    [raw] = (root / "results" / "raw").iterdir()
    raw.unlink()
    [run_id] = (p.stem for p in (root / "results" / "runs").glob("*.json"))
    lines = (root / "improvements" / "campaign.yaml").read_text().splitlines()
    [(line, col)] = [(n, text.index(run_id) + 1) for n, text in enumerate(lines, 1) if f"run: {run_id}" in text]
    assert errors(root) == [
        f"improvements/campaign.yaml:{line}:{col}: error[evidence-mismatch]: run `{run_id}`: its kept raw file "
        f"`results/raw/{raw.name}` does not exist (hint: restore it from version control "
        "(`git checkout -- results/raw`), or remove the result and import the benchmark file again)"
    ]


def test_a_fifo_where_a_build_reads_never_hangs_it(tmp_path: Path) -> None:
    # A build hashes results/ and the campaign's templates/; opening a FIFO waits for a writer.
    root = make(tmp_path, {"05-dp-attention.yaml": DP})
    (root / "templates").mkdir()
    for folder in ("results", "templates"):
        os.mkfifo(root / folder / "stray")
    out = run_cli("build", "--root", str(root))
    assert out.returncode == 0, out.stderr
    assert (root / "docs" / "index.md").is_file()


def test_a_fifo_for_a_run_file_is_an_unknown_run_not_a_hang(tmp_path: Path) -> None:
    from conftest import BENCH

    root = make(tmp_path, {"05-dp-attention.yaml": DP.replace("status: adopted", "status: proposed")})
    out = run_cli("import", "--root", str(root), str(BENCH / "vllm-benchmark-serving-legacy.json"), "--record", "05")
    assert out.returncode == 0, out.stderr
    [run_file] = (root / "results" / "runs").glob("*.json")
    run_file.unlink()
    os.mkfifo(run_file)
    line = len((root / "improvements" / "05-dp-attention.yaml").read_text().splitlines())
    assert errors(root) == [
        f"improvements/05-dp-attention.yaml:{line}:10: error[unknown-run]: results/runs/{run_file.name} is not a "
        "regular file (hint: import the benchmark file again to rewrite it)"
    ]


@pytest.mark.parametrize("kept", ["no digest", "not under results/raw"])
def test_a_run_that_names_no_kept_copy_has_no_evidence_to_check(tmp_path: Path, kept: str) -> None:
    # Runs imported before raw files were kept name none: nothing to restore, nothing refused.
    from conftest import BENCH

    root = make(tmp_path, {"05-dp-attention.yaml": DP.replace("status: adopted", "status: proposed")})
    out = run_cli("import", "--root", str(root), str(BENCH / "vllm-benchmark-serving-legacy.json"), "--record", "05")
    assert out.returncode == 0, out.stderr
    [raw] = (root / "results" / "raw").iterdir()
    raw.unlink()
    assert [e for e in errors(root) if "evidence-mismatch" in e]
    [run_file] = (root / "results" / "runs").glob("*.json")
    data = json.loads(run_file.read_text())
    if kept == "no digest":
        del data["source"]["stored_sha256"]
    else:
        data["source"]["file"] = f"results/{raw.name}"
    run_file.write_text(json.dumps(data, indent=2))
    assert errors(root) == []


# --- the site folder ------------------------------------------------------------------------------


@pytest.mark.mkdocs
def test_a_first_site_build_interrupted_midway_is_recovered_by_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import mkdocs.commands.build

    from conftest import copy_campaign

    root = copy_campaign(tmp_path / "repo", with_docs=True)
    site = tmp_path / "site"
    real = mkdocs.commands.build.build

    def killed(config: object, **kwargs: object) -> None:
        (site / "index.html").write_text("half")
        raise OSError(errno.ENOSPC, "No space left on device", str(site / "assets"))

    monkeypatch.setattr(mkdocs.commands.build, "build", killed)
    out = run_cli("build", "--root", str(root), "--site", "--site-dir", str(site))
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "No space left on device" in out.stderr and len(out.stderr.strip().splitlines()) == 1
    monkeypatch.setattr(mkdocs.commands.build, "build", real)
    again = run_cli("build", "--root", str(root), "--site", "--site-dir", str(site))
    assert again.returncode == 0, again.stderr
    assert (site / "index.html").read_text() != "half"


def test_a_folder_without_the_marker_is_refused_with_the_command_that_recovers_it(tmp_path: Path) -> None:
    root = make(tmp_path, {})
    site = tmp_path / "old site"
    site.mkdir()
    (site / "index.html").write_text("an old site")
    out = run_cli("build", "--root", str(root), "--site", "--site-dir", str(site))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert f"`rm -rf -- '{site.resolve()}' && improvements build --site`" in out.stderr


def test_a_read_only_site_folder_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from generator.site import build as site_build

    def read_only(folder: Path) -> None:
        raise OSError(errno.EROFS, "Read-only file system", str(folder / site_build.SITE_MARKER))

    monkeypatch.setattr(site_build, "mark_site", read_only)
    root = make(tmp_path, {})
    (root / "mkdocs.yml").write_text("site_name: x\nplugins: [improvements]\n")
    out = run_cli("build", "--root", str(root), "--site", "--site-dir", str(tmp_path / "ro"))
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr
    assert "Read-only file system" in out.stderr and len(out.stderr.strip().splitlines()) == 1


# --- what a terminal is sent ----------------------------------------------------------------------


@pytest.mark.parametrize("char", ["\u202e", "\u200b", "\u200d", "\u2066", "\ufeff"])
def test_summary_escapes_bidi_and_zero_width_characters_in_titles(tmp_path: Path, char: str) -> None:
    record = DP.replace("title: DP attention", f"title: {json.dumps('DP' + char + 'attention')}")
    root = make(tmp_path, {"05-dp-attention.yaml": record})
    out = run_cli("summary", "--root", str(root))
    assert out.returncode == 0, out.stderr
    assert char not in out.stdout
    assert "DP" + char.encode("unicode_escape").decode("ascii") + "attention" in out.stdout


# --- serve ----------------------------------------------------------------------------------------


def _get(url: str) -> str:
    import urllib.request

    with urllib.request.urlopen(url, timeout=20) as response:  # a hang fails here
        return str(response.read().decode("utf-8"))


def _until(predicate: object, seconds: float) -> bool:
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.5)
    return False


@pytest.mark.slow
@pytest.mark.mkdocs
def test_serve_keeps_serving_the_last_good_site_with_the_problem_shown(tmp_path: Path) -> None:
    import socket

    from conftest import REPO, copy_campaign

    root = copy_campaign(tmp_path / "repo", with_docs=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/"
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    cmd = [sys.executable, "-m", "generator", "serve", "--root", str(root), "--dev-addr", f"127.0.0.1:{port}"]
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:

        def up() -> bool:
            try:
                return "<html" in _get(url)
            except OSError:
                return False

        assert _until(up, 120), "serve never answered"
        record = next((root / "improvements").glob("01-*.yaml"))
        good = record.read_text()
        record.write_text(good.replace("tier: 1", "tier: 9", 1))
        assert _until(lambda: "A record is invalid" in _get(url), 120), "the problem was never shown"
        page = _get(url)
        assert "tier" in page and "<html" in page
        record.write_text(good)
        assert _until(lambda: "A record is invalid" not in _get(url), 120), "the note stayed after the fix"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.parametrize(
    ("value", "text"),
    [(1e30, "1" + "0" * 30), (1.23456e17, "123500000000000000"), (-2.5e20, "-25" + "0" * 19), (106.4, "106")],
)
def test_extreme_numbers_print_without_float_noise(value: float, text: str) -> None:
    from generator.model.quantity import fmt_number, fmt_whole

    # An extreme ratio (1e15 over 1e-15) once printed the binary float's digits: 1000000000000000019884624838656x.
    assert fmt_whole(value) == text
    if abs(value) >= 1e15:
        assert fmt_number(value) == text
