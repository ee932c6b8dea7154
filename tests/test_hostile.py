"""Hostile and broken record files: each gets one positioned line, exit 1, never a traceback.

All the files go into one campaign and one `improvements check` run, as they would after a bad
merge: every problem in every file is reported at once, each file's on its own line. The alias
bomb and deep nesting also run in a separate process that measures time and memory.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from generator.base.read import MAX_DEPTH, MAX_FILE_BYTES, MAX_LINE_CHARS, MAX_NODES

from conftest import REPO, run_cli

HEAD = b"title: Hostile\ntier: 1\nstatus: proposed\n"


def _bomb() -> bytes:
    # Nine levels of nine aliases each: 9**9 (387 million) strings once expanded.
    lines = [b'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        refs = ",".join([f"*{prev}"] * 9)
        lines.append(f"{name}: &{name} [{refs}]".encode())
    return b"\n".join(lines) + b"\n"


def _big() -> bytes:
    filler = b"# " + b"x" * 98 + b"\n"
    return HEAD + b"hypothesis: h\n" + filler * (MAX_FILE_BYTES // len(filler) + 1)


# file name -> (content, code, line, col, exact message)
CASES: dict[str, tuple[bytes, str, int, int, str]] = {
    "10-too-large.yaml": (
        _big(),
        "file-too-large",
        1,
        1,
        f"file is {len(_big()):,} bytes, over the limit of {MAX_FILE_BYTES:,}",
    ),
    "11-alias-bomb.yaml": (
        _bomb(),
        "yaml-alias-limit",
        # Reported where the expansion happens: the value of the first entry (f: 9**6 nodes)
        # whose aliases pass the limit.
        6,
        4,
        f"the document expands to more than {MAX_NODES:,} nodes",
    ),
    "12-not-utf8.yaml": (
        HEAD + "hypothesis: héllo ".encode() + b"\xff\n",
        "not-utf8",
        4,
        # Counted in characters like the parser's columns: é is two bytes but one column.
        19,
        "byte 0xff is not valid UTF-8",
    ),
    "13-latin1.yaml": (HEAD + b"hypothesis: caf\xe9\n", "not-utf8", 4, 16, "byte 0xe9 is not valid UTF-8"),
    "14-utf8-bom.yaml": (
        b"\xef\xbb\xbf" + HEAD + b"hypothesis: h\n",
        "byte-order-mark",
        1,
        1,
        "file starts with a UTF-8 byte-order mark",
    ),
    "15-utf16-le.yaml": (
        b"\xff\xfe" + (HEAD + b"hypothesis: h\n").decode().encode("utf-16-le"),
        "not-utf8",
        1,
        1,
        "file is UTF-16, not UTF-8",
    ),
    "16-utf16-be.yaml": (
        b"\xfe\xff" + (HEAD + b"hypothesis: h\n").decode().encode("utf-16-be"),
        "not-utf8",
        1,
        1,
        "file is UTF-16, not UTF-8",
    ),
    "17-nul.yaml": (HEAD + b"hypothesis: a\x00b\n", "nul-byte", 4, 14, "file contains a NUL byte"),
    "18-deep-flow.yaml": (
        # 10,000 levels, 100 brackets a line to stay under the line limit.
        HEAD + b"hypothesis:\n" + (b" " + b"[" * 100 + b"\n") * 100 + (b" " + b"]" * 100 + b"\n") * 100,
        "yaml-too-deep",
        # libyaml stops at its own limit of 1,000 levels (the 1,000th bracket, as the mapping
        # is a level too), long before the interpreter's stack.
        14,
        101,
        "nesting deeper than libyaml allows: exceeded maximum nesting depth",
    ),
    "19-deep-flow-map.yaml": (
        HEAD + b"hypothesis: " + b"{a: " * 2_400 + b"1" + b"}" * 2_400 + b"\n",
        # A flow mapping 2,400 deep does not fit on one line.
        "line-too-long",
        4,
        MAX_LINE_CHARS + 1,
        f"line is {12 + 2_400 * 5 + 1:,} characters, over the limit of {MAX_LINE_CHARS:,}",
    ),
    "44-deep-flow-map-lines.yaml": (
        HEAD + b"hypothesis:\n" + b" {a:\n" * 2_400 + b" 1" + b"}" * 2_400 + b"\n",
        "yaml-too-deep",
        1004,
        2,
        "nesting deeper than libyaml allows: exceeded maximum nesting depth",
    ),
    "20-deep-block-seq.yaml": (
        # Block sequences nest on one line: 4,900 levels in under MAX_LINE_CHARS.
        HEAD + b"hypothesis:\n" + b"- " * 4_900 + b"x\n",
        "yaml-too-deep",
        5,
        1999,
        "nesting deeper than libyaml allows: exceeded maximum nesting depth",
    ),
    "21-deep-block-map.yaml": (
        # Indented mappings one space deeper a line: 1,100 levels (10,000 would be 50 MB).
        HEAD + b"hypothesis:\n" + b"".join(b" " * i + b"k:\n" for i in range(1, 1_101)),
        "yaml-too-deep",
        1003,
        1001,
        "nesting deeper than libyaml allows: exceeded maximum nesting depth",
    ),
    "22-deep-within-libyaml.yaml": (
        # Deeper than the record format allows but within libyaml's limit: our own bound.
        HEAD + b"hypothesis: " + b"[" * 200 + b"]" * 200 + b"\n",
        "yaml-too-deep",
        4,
        13 + MAX_DEPTH,
        f"nesting is deeper than {MAX_DEPTH} levels",
    ),
    "23-long-line.yaml": (
        HEAD + b"hypothesis: " + b"x" * MAX_LINE_CHARS + b"\n",
        "line-too-long",
        4,
        MAX_LINE_CHARS + 1,
        f"line is {MAX_LINE_CHARS + 12:,} characters, over the limit of {MAX_LINE_CHARS:,}",
    ),
    "24-python-object.yaml": (
        HEAD + b"hypothesis: !!python/object/apply:os.system ['touch pwned']\n",
        "yaml-unsupported",
        4,
        13,
        "tag !!python/object/apply:os.system is not allowed",
    ),
    "25-python-name.yaml": (
        HEAD + b"hypothesis: !!python/name:os.system\n",
        "yaml-unsupported",
        4,
        13,
        "tag !!python/name:os.system is not allowed",
    ),
    "26-local-tag.yaml": (
        HEAD + b"hypothesis: !shell rm -rf /\n",
        "yaml-unsupported",
        4,
        13,
        "tag !shell is not allowed",
    ),
    "27-binary.yaml": (
        HEAD + b"hypothesis: !!binary aGVsbG8=\n",
        "yaml-unsupported",
        4,
        13,
        "tag !!binary is not allowed",
    ),
    "28-set.yaml": (HEAD + b"hypothesis: !!set {a, b}\n", "yaml-unsupported", 4, 13, "tag !!set is not allowed"),
    "29-merge-key.yaml": (
        b"x: &base {title: Hostile, tier: 1}\n<<: *base\nstatus: proposed\nhypothesis: h\n",
        "yaml-unsupported",
        2,
        1,
        "merge keys (<<) are not supported",
    ),
    "30-two-documents.yaml": (
        HEAD + b"hypothesis: h\n---\n" + HEAD + b"hypothesis: h\n",
        "multiple-documents",
        # The second document's first node, after the `---` on line 5.
        6,
        1,
        "file holds more than one YAML document",
    ),
    "31-list-key.yaml": (HEAD + b"hypothesis: h\n? [a, b]\n: 1\n", "yaml-unsupported", 5, 3, "complex mapping key"),
    "32-map-key.yaml": (HEAD + b"hypothesis: h\n{a: 1}: 2\n", "yaml-unsupported", 5, 1, "complex mapping key"),
    "33-tab.yaml": (
        HEAD + b"hypothesis:\n\tindented with a tab\n",
        "yaml-tab",
        5,
        1,
        "a tab character is used for indentation",
    ),
    "34-bad-date.yaml": (
        HEAD + b"hypothesis: h\ndate: 2024-02-30\n",
        "invalid-value",
        5,
        7,
        "`2024-02-30` is not a valid date",
    ),
    "35-huge-int.yaml": (
        HEAD + b"hypothesis: h\nresults:\n  - label: a\n    metrics: {output_throughput: " + b"9" * 5000 + b"}\n",
        "invalid-value",
        7,
        34,
        f"`{'9' * 40}...` is not a valid whole number",
    ),
    "36-bad-int-tag.yaml": (
        HEAD + b"hypothesis: h\ndate: !!int soon\n",
        "invalid-value",
        5,
        7,
        "`soon` is not a valid whole number",
    ),
    "37-control-char.yaml": (
        HEAD + b"hypothesis: ring \x07 the bell\n",
        "yaml-syntax",
        4,
        18,
        "unacceptable character #x0007: control characters are not allowed",
    ),
    "38-undefined-alias.yaml": (HEAD + b"hypothesis: *nowhere\n", "yaml-syntax", 4, 13, "found undefined alias"),
    "39-recursive-alias.yaml": (
        # libyaml lets an alias refer to its own anchor; building it stops at the depth bound.
        HEAD + b"hypothesis: &loop [*loop]\n",
        "yaml-too-deep",
        4,
        13,
        f"nesting is deeper than {MAX_DEPTH} levels",
    ),
    "40-empty.yaml": (b"", "empty-file", 1, 1, "file holds no YAML document"),
    "41-only-comments.yaml": (b"# nothing here yet\n", "empty-file", 1, 1, "file holds no YAML document"),
    "42-scalar-root.yaml": (
        b"just some text\n",
        "wrong-type",
        1,
        1,
        "the document must be a mapping, not the text `just some text`",
    ),
    "45-escape-in-text.yaml": (
        # A double-quoted escape gets a control character past the reader: `summary` would print
        # it to the terminal.
        b'title: "\\e[2J\\e]0;owned\\a"\ntier: 1\nstatus: proposed\nhypothesis: h\n',
        "invalid-value",
        1,
        8,
        "text holds the control character '\\x1b'",
    ),
    "43-unclosed-quote.yaml": (
        HEAD + b'hypothesis: "never closed\n',
        "yaml-syntax",
        5,
        1,
        "found unexpected end of stream while scanning a quoted scalar that starts at line 4, column 13",
    ),
}


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    root = tmp_path_factory.mktemp("hostile")
    (root / "improvements").mkdir()
    (root / "results").mkdir()
    shutil.copy(REPO / "improvements" / "campaign.yaml", root / "improvements")
    for name, (content, *_rest) in CASES.items():
        (root / "improvements" / name).write_bytes(content)
    proc = subprocess.run(
        [sys.executable, "-m", "generator", "check", "--format", "json"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    return root, proc


@pytest.mark.slow
def test_every_hostile_file_in_one_run(hostile_run: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    _root, proc = hostile_run
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    problems = json.loads(proc.stdout)
    by_file: dict[str, list[dict[str, object]]] = {}
    for p in problems:
        by_file.setdefault(str(p["path"]).removeprefix("improvements/"), []).append(p)
    assert sorted(by_file) == sorted(CASES), "every hostile file gets its problem, and only those files"
    for name, (_content, code, line, col, message) in CASES.items():
        assert len(by_file[name]) == 1, by_file[name]
        p = by_file[name][0]
        assert (p["code"], p["line"], p["col"], p["message"]) == (code, line, col, message), name


@pytest.mark.parametrize(
    "name", ["11-alias-bomb.yaml", "12-not-utf8.yaml", "18-deep-flow.yaml", "24-python-object.yaml"]
)
def test_text_output_is_one_line(tmp_path: Path, name: str) -> None:
    content, code, line, col, message = CASES[name]
    root = tmp_path / "c"
    (root / "improvements").mkdir(parents=True)
    (root / "results").mkdir()
    shutil.copy(REPO / "improvements" / "campaign.yaml", root / "improvements")
    (root / "improvements" / name).write_bytes(content)
    res = run_cli("check", cwd=root)
    assert res.returncode == 1
    assert "Traceback" not in res.stderr
    lines = res.stderr.splitlines()
    assert lines[0].startswith(f"improvements/{name}:{line}:{col}: error[{code}]: {message}"), lines
    assert lines[1:] == ["1 error(s), 0 warning(s)"]
    assert not (root / "pwned").exists()


# --- bounded time and memory -----------------------------------------------------------------

MEASURE = textwrap.dedent(
    """
    import json, resource, sys, tracemalloc
    from pathlib import Path
    from generator.base import read

    # Work counted, not timed: every node the builder makes (an alias counted each time it
    # is used), which is what an unbounded expansion multiplies.
    built = 0
    original = read._Builder.build

    def counted(self, node, depth):
        global built
        built += 1
        return original(self, node, depth)

    read._Builder.build = counted
    path = Path(sys.argv[1])
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()
    try:
        read.parse(read.read_text(path))
        outcome = "accepted"
    except read.YamlProblem as exc:
        outcome = exc.code
    _current, peak = tracemalloc.get_traced_memory()
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"outcome": outcome, "built": built, "peak": peak, "rss_growth_kb": after - before}))
    """
)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("11-alias-bomb.yaml", "yaml-alias-limit"),
        ("18-deep-flow.yaml", "yaml-too-deep"),
        ("20-deep-block-seq.yaml", "yaml-too-deep"),
        ("10-too-large.yaml", "file-too-large"),
    ],
)
def test_refused_with_bounded_time_and_memory(tmp_path: Path, name: str, code: str) -> None:
    path = tmp_path / name
    path.write_bytes(CASES[name][0])
    proc = subprocess.run(
        [sys.executable, "-c", MEASURE, str(path)], capture_output=True, text=True, timeout=60, cwd=REPO
    )
    assert proc.returncode == 0, proc.stderr  # no crash, no segfault
    stats = json.loads(proc.stdout)
    assert stats["outcome"] == code
    # Bounds on the work done, not on the time it took (which a busy machine stretches): the
    # builder stops at its node limit, where an unbounded expansion would build billions.
    assert stats["built"] <= MAX_NODES + 1, stats
    assert stats["peak"] < 50 * 1024 * 1024, stats
    assert stats["rss_growth_kb"] < 50 * 1024, stats


@pytest.mark.slow
@pytest.mark.parametrize("grown", [300, MAX_FILE_BYTES - 200, MAX_FILE_BYTES + 200])
def test_a_file_that_grows_after_its_size_is_read_is_read_to_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, grown: int
) -> None:
    """`read_text` asks for the size `stat` gave and a byte more, then for the rest up to the limit."""
    from generator.base.read import YamlProblem, read_text

    path = tmp_path / "grows.yaml"
    text = "a: 1\n" + ("#" * 99 + "\n") * (grown // 100)
    path.write_text(text, encoding="utf-8")
    real = Path.stat

    def stale(self: Path, *, follow_symlinks: bool = True) -> os.stat_result:
        found = real(self, follow_symlinks=follow_symlinks)
        if self != path:
            return found
        return os.stat_result((found.st_mode, *found[1:6], 5, *found[7:]))

    monkeypatch.setattr(Path, "stat", stale)
    if grown > MAX_FILE_BYTES:
        with pytest.raises(YamlProblem, match="over the limit"):
            read_text(path)
    else:
        assert read_text(path) == text


def test_pure_python_parser_fallback_does_not_overflow(tmp_path: Path) -> None:
    # Without libyaml (no C extension) PyYAML's composer recurses in Python; 10,000 levels
    # must still be a problem, not a RecursionError.
    path = tmp_path / "deep.yaml"
    path.write_bytes(CASES["18-deep-flow.yaml"][0])
    script = textwrap.dedent(
        f"""
        import yaml, generator.base.read as load
        for name in ("_Loader", "_ComposeLoader"):
            if hasattr(load, name):
                setattr(load, name, yaml.SafeLoader)
        try:
            load.parse(load.read_text(__import__("pathlib").Path({str(path)!r})))
        except load.YamlProblem as exc:
            print(exc.code)
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "yaml-too-deep"


# --- output that cannot rewrite the terminal ------------------------------------------------


@pytest.mark.slow  # fresh processes (a strict UTF-8 stream)
def test_control_characters_in_keys_and_names_are_escaped(tmp_path: Path) -> None:
    root = tmp_path / "c"
    (root / "improvements").mkdir(parents=True)
    (root / "results").mkdir()
    shutil.copy(REPO / "improvements" / "campaign.yaml", root / "improvements")
    # A double-quoted key may hold any character as an escape: here "clear screen" and a
    # right-to-left override that would reverse the rest of the line.
    (root / "improvements" / "01-escapes.yaml").write_bytes(
        HEAD + b'hypothesis: h\n"\\e[2J\\e]0;owned\\a": 1\n"evil\\u202Etxt.yaml": 2\n'
    )
    (root / "improvements" / "note\x1b[31m.txt").write_bytes(b"x")
    # A file name that is not UTF-8: Python holds its bytes as lone surrogates, which a strict
    # UTF-8 stream cannot write.
    os.close(os.open(os.fsencode(root / "improvements") + b"/\xff\xfe-latin.yaml", os.O_CREAT | os.O_WRONLY))
    for fmt in ("text", "github", "json"):
        res = run_cli("check", "--format", fmt, cwd=root, env={"PYTHONIOENCODING": "utf-8:strict"})
        assert res.returncode == 1
        assert "Traceback" not in res.stderr
        out = res.stderr + res.stdout
        assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
        if fmt == "json":  # the same characters as JSON escapes
            assert "\\u001b[2J\\u001b]0;owned\\u0007" in out
            assert "note\\u001b[31m.txt" in out
        else:
            assert "\\x1b[2J\\x1b]0;owned\\x07" in out
            assert "note\\x1b[31m.txt" in out
        assert "evil\\u202etxt.yaml" in out
        assert "\\udcff\\udcfe-latin.yaml" in out


# --- paths that leave the repository --------------------------------------------------------


def _record_with_source(source: str) -> bytes:
    result = f"results:\n  - label: a\n    metrics: {{output_throughput: 1}}\n    source: {source}\n"
    return HEAD + b"hypothesis: h\n" + result.encode()


def test_sources_that_leave_results_are_refused(tmp_path: Path) -> None:
    outside = tmp_path / "secret.json"
    outside.write_text("{}")
    root = tmp_path / "c"
    (root / "improvements").mkdir(parents=True)
    (root / "results" / "sub").mkdir(parents=True)
    shutil.copy(REPO / "improvements" / "campaign.yaml", root / "improvements")
    (root / "results" / "ok.json").write_text("{}")
    (root / "results" / "link.json").symlink_to(outside)
    (root / "results" / "linked-dir").symlink_to(tmp_path)
    (root / "results" / "sub" / "up.json").symlink_to("../../../secret.json")
    (root / "results" / "loop-a").symlink_to("loop-b")
    (root / "results" / "loop-b").symlink_to("loop-a")
    (root / "notes.json").write_text("{}")
    sources = {
        "01-dotdot.yaml": ("../secret.json", "path-outside", "source `../secret.json` leaves results/"),
        "02-absolute.yaml": (str(outside), "path-outside", f"source `{outside}` leaves results/"),
        "03-symlink.yaml": (
            "results/link.json",
            "path-outside",
            "source `results/link.json` resolves outside results/ (through a symlink?)",
        ),
        "04-symlinked-dir.yaml": (
            "results/linked-dir/secret.json",
            "path-outside",
            "source `results/linked-dir/secret.json` resolves outside results/ (through a symlink?)",
        ),
        "05-relative-symlink.yaml": (
            "results/sub/up.json",
            "path-outside",
            "source `results/sub/up.json` resolves outside results/ (through a symlink?)",
        ),
        "06-inside-repo-not-results.yaml": (
            "notes.json",
            "path-outside",
            "source `notes.json` resolves outside results/ (through a symlink?)",
        ),
        "07-dotdot-back-in.yaml": ("results/../results/ok.json", "path-outside", "leaves results/"),
        "08-loop.yaml": ("results/loop-a", "missing-source", "source `results/loop-a` does not exist"),
        # Refused as text first; the source check would refuse it too.
        "09-nul.yaml": ('"results/ok.json\\0.txt"', "invalid-value", "text holds the control character '\\x00'"),
        "10-too-long.yaml": ("results/" + "a" * 5000, "missing-source", "does not exist"),
    }
    for name, (source, _code, _msg) in sources.items():
        (root / "improvements" / name).write_bytes(_record_with_source(source))
    (root / "improvements" / "11-fine.yaml").write_bytes(_record_with_source("results/ok.json"))
    res = run_cli("check", "--format", "json", cwd=root)
    assert res.returncode == 1, res.stderr
    assert "Traceback" not in res.stderr
    errors = [p for p in res.json() if p["severity"] == "error"]  # type: ignore[union-attr, index]
    got = {str(p["path"]).removeprefix("improvements/"): p for p in errors}
    assert sorted(got) == sorted(sources)
    for name, (_source, code, fragment) in sources.items():
        assert got[name]["code"] == code, got[name]
        assert fragment in str(got[name]["message"]), got[name]
        assert (got[name]["line"], got[name]["col"]) == (8, 13), got[name]
        if "resolves outside" in fragment:
            assert got[name]["hint"] == "keep benchmark files under results/ so they travel with the records"
        elif "leaves results/" in fragment:
            assert got[name]["hint"] == "give a path under results/, such as results/runs/x.json"


def test_template_override_symlinked_outside_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "c"
    shutil.copytree(REPO / "improvements", root / "improvements")
    (root / "results").mkdir()
    outside = tmp_path / "evil.md.j2"
    outside.write_text("{{ project }}\n")
    (root / "templates").mkdir()
    (root / "templates" / "record.md.j2").symlink_to(outside)
    res = run_cli("build", cwd=root)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    assert (
        "templates/record.md.j2:1:1: error[path-outside]: template `templates/record.md.j2` resolves outside the "
        "repository" in res.stderr
    )
    assert not (root / "docs").exists()


@pytest.mark.parametrize(
    "template",
    [
        # Reaching Python's internals from a template would run any code at build time.
        "{{ ''.__class__.__mro__[1].__subclasses__() }}",
        "{{ cycler.__init__.__globals__.os.system('touch pwned') }}",
        "{{ self._TemplateReference__context }}",
        "{{ lipsum.__globals__['os'].system('touch pwned') }}",
    ],
)
def test_template_override_cannot_reach_python(tmp_path: Path, template: str) -> None:
    root = tmp_path / "c"
    shutil.copytree(REPO / "improvements", root / "improvements")
    (root / "results").mkdir()
    (root / "templates").mkdir()
    (root / "templates" / "record.md.j2").write_text(template + "\n")
    res = run_cli("build", cwd=root)
    assert "Traceback" not in res.stderr
    assert not (root / "pwned").exists()
    assert res.returncode == 1, res.stdout + res.stderr
    assert re.search(r"templates/record\.md\.j2:\d+:1: error\[bad-template\]", res.stderr), res.stderr


def test_docs_dir_outside_the_repository_is_refused(tmp_path: Path) -> None:
    for docs_dir in ("../outside/improvements", str(tmp_path / "abs" / "improvements")):
        root = tmp_path / "c"
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(REPO / "improvements", root / "improvements")
        (root / "results").mkdir()
        campaign = root / "improvements" / "campaign.yaml"
        campaign.write_text(campaign.read_text(encoding="utf-8") + f"docs_dir: {docs_dir}\n", encoding="utf-8")
        res = run_cli("build", cwd=root)
        assert res.returncode == 1, res.stdout + res.stderr
        assert "Traceback" not in res.stderr
        assert "error[path-outside]" in res.stderr
        assert not (tmp_path / "outside").exists() and not (tmp_path / "abs").exists()


def test_docs_folder_symlinked_outside_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "c"
    shutil.copytree(REPO / "improvements", root / "improvements")
    (root / "results").mkdir()
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (root / "docs").symlink_to(outside)
    res = run_cli("build", cwd=root)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    assert "resolves outside the repository" in res.stderr
    assert list(outside.iterdir()) == []


# --- benchmark files given to `import` -------------------------------------------------------

HOSTILE_BENCH: dict[str, tuple[bytes, str]] = {
    "deep.json": (b"[" * 100_000 + b"]" * 100_000, "the JSON nests deeper than Python can read"),
    "deep-object.json": (b'{"a":' * 50_000 + b"1" + b"}" * 50_000, "the JSON nests deeper than Python can read"),
    "huge-int.json": (b'{"output_throughput": ' + b"9" * 5000 + b"}", "the JSON holds a number too long to read"),
    "binary.json": (b"\x00\x01\x02\xff", "file is not UTF-8 text"),
    "empty.json": (b"", "file is empty"),
    "escapes.txt": (b"\x1b[2J\x1b]0;owned\x07 Serving Benchmark Result", "file is neither JSON"),
    "cut.jsonl": (b'{"backend": "sglang", "output_throughput": 1', "is cut off"),
}


def test_hostile_benchmark_files_are_refused_without_writing(tmp_path: Path) -> None:
    root = tmp_path / "c"
    shutil.copytree(REPO / "improvements", root / "improvements")
    (root / "results").mkdir()
    before = {p: p.read_bytes() for p in (root / "improvements").iterdir()}
    for name, (content, fragment) in HOSTILE_BENCH.items():
        (tmp_path / name).write_bytes(content)
        res = run_cli("import", str(tmp_path / name), "--record", "01", cwd=root)
        assert res.returncode == 1, (name, res.stderr)
        assert "Traceback" not in res.stderr, name
        assert "\x1b" not in res.stderr and "\x07" not in res.stderr
        first = res.stderr.splitlines()[0]
        assert re.match(rf".*{re.escape(name)}:\d+:\d+: error\[import-(unrecognised|truncated)\]: ", first), first
        assert fragment in first, first
    assert list((root / "results").iterdir()) == []
    assert {p: p.read_bytes() for p in (root / "improvements").iterdir()} == before


# --- the build cache ---------------------------------------------------------------------------

PLANT = """
import os, pickle, sys

class Payload:
    def __reduce__(self):
        return (os.system, ("touch " + sys.argv[2],))

with open(sys.argv[1], "wb") as f:
    pickle.dump({"salt": Payload(), "entries": {}}, f)
"""


@pytest.mark.slow
def test_a_cache_file_planted_in_the_repository_is_not_unpickled(tmp_path: Path) -> None:
    # .improvements-cache/ is where the cache lived once, in the repository, where a commit can
    # put any file; a pickle runs code when loaded, so nothing in a checkout is read as a cache.
    root = tmp_path / "c"
    shutil.copytree(REPO / "improvements", root / "improvements")
    (root / "results").mkdir()
    (root / ".improvements-cache").mkdir()
    pwned = tmp_path / "pwned"
    planted = root / ".improvements-cache" / "entries.pickle"
    subprocess.run([sys.executable, "-c", PLANT, str(planted), str(pwned)], check=True)
    res = run_cli("build", "--quiet", cwd=root)
    assert res.returncode == 0, res.stderr
    assert not pwned.exists(), "a pickle from the repository was loaded"
    # The build's own cache (in the user's cache folder) is still used by a second build.
    again = run_cli("build", cwd=root)
    assert again.returncode == 0 and "0 written" in again.stdout, again.stdout
    assert not pwned.exists()


# --- numbers that are not measurements -------------------------------------------------------

NON_FINITE = b"""title: Not numbers
tier: 2
status: in-progress
hypothesis: h
results:
  - label: nan
    metrics: {output_throughput: .nan, ttft_p99: .inf}
    baseline: {output_throughput: 1e309, ttft_p99: -.inf}
  - label: huge
    metrics: {output_throughput: 1e308}
expected:
  metric: output_throughput
  gain: .NaN
"""

EXTREMES = b"""title: Zeros and extremes
tier: 2
status: adopted
hypothesis: h
verdict: v
expected: {metric: output_throughput, gain: -1e15}
results:
  - label: zero
    concurrency: 1
    metrics: {output_throughput: 0, ttft_p99: 0}
    baseline: {output_throughput: 0, ttft_p99: 0}
  - label: huge
    concurrency: 2
    metrics: {output_throughput: 1e15, ttft_p99: 1e-15}
    baseline: {output_throughput: 1e-15, ttft_p99: 1e15}
  - label: repeated
    concurrency: 3
    metrics: {output_throughput: [1e15, 1e15, 0]}
    baseline: {output_throughput: [0, 0]}
  - label: range
    concurrency: 4
    metrics: {output_throughput: {min: 0, max: 1e15}}
    baseline: {output_throughput: {min: 0, max: 0}}
"""


def test_non_finite_numbers_are_refused_at_check(tmp_path: Path) -> None:
    root = tmp_path / "c"
    (root / "improvements").mkdir(parents=True)
    (root / "results").mkdir()
    shutil.copy(REPO / "improvements" / "campaign.yaml", root / "improvements")
    (root / "improvements" / "01-not-numbers.yaml").write_bytes(NON_FINITE)
    res = run_cli("check", cwd=root)
    assert res.returncode == 1 and "Traceback" not in res.stderr
    lines = [ln.removeprefix("improvements/01-not-numbers.yaml:") for ln in res.stderr.splitlines()]
    assert lines == [
        "7:34: error[invalid-value]: `results[0].metrics.output_throughput` is nan; a measurement is a finite number",
        "7:50: error[invalid-value]: `results[0].metrics.ttft_p99` is inf; a measurement is a finite number",
        # YAML 1.2 reads 1e309 (no dot) as a number, which is infinite.
        "8:35: error[invalid-value]: `results[0].baseline.output_throughput` is inf; a measurement is a finite number",
        "8:52: error[invalid-value]: `results[0].baseline.ttft_p99` is -inf; a measurement is a finite number",
        "10:34: error[invalid-value]: `results[1].metrics.output_throughput` is 1e+308; expected a number of at most "
        "1e+15",
        "13:9: error[invalid-value]: `expected.gain` is nan; a measurement is a finite number",
        "6 error(s), 0 warning(s)",
    ]


def test_zeros_and_extremes_render_without_a_traceback(tmp_path: Path) -> None:
    root = tmp_path / "c"
    shutil.copytree(REPO / "improvements", root / "improvements")
    (root / "results").mkdir()
    (root / "improvements" / "90-extremes.yaml").write_bytes(EXTREMES)
    for args in (("check",), ("build",), ("summary",), ("summary", "--format", "json"), ("export",)):
        res = run_cli(*args, cwd=root)
        assert res.returncode == 0, (args, res.stderr[-3000:])
        assert "Traceback" not in res.stderr
