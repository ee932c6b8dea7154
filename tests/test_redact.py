"""Redaction: one rule set over every string of the raw copy and the parsed run.

Each listed place a credential hides is tried end to end (the secret must be absent from the
kept raw copy, the run file and everything printed), and Hypothesis buries a secret under a
random secret-like key, flag, header or environment entry inside random nested JSON.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.project.runs.parse import parse_file
from generator.project.runs.redact import REDACTED, is_secret_name, redact, redact_text
from generator.project.runs.store import run_text

from conftest import FIXTURES, run_cli

SECRET = "sk-live-HOSTILE-5e3b1f0a9c"
BASE = json.loads((FIXTURES / "import" / "sglang-bench-serving-2025.jsonl").read_text().splitlines()[0])

# (name, where the secret goes in a benchmark object, the key path import must report)
CASES: list[tuple[str, dict[str, Any], str]] = [
    ("server_info key", {"server_info": {"api_key": SECRET, "tp_size": 8}}, "server_info.api_key"),
    ("*_key", {"launch": {"openai_key": SECRET}}, "launch.openai_key"),
    ("authorization key", {"headers": {"Authorization": "Basic " + SECRET}}, "headers.Authorization"),
    ("password key", {"db": {"PASSWORD": SECRET}}, "db.PASSWORD"),
    ("argument list", {"argv": ["sglang", "--api-key", SECRET, "--tp", "8"]}, "argv[2]"),
    ("flag=value in a list", {"argv": ["vllm", f"--api-key={SECRET}"]}, "argv[1]"),
    ("flag value in text", {"cmd": f"vllm serve m --api-key {SECRET} --port 1"}, "cmd"),
    ("value on the next line", {"cmd": f"python -m sglang.launch_server \\\n  --api-key \\\n  {SECRET}"}, "cmd"),
    ("Authorization header", {"curl": f"curl -H 'Authorization: Bearer {SECRET}' http://h"}, "curl"),
    ("Basic header", {"log": f"Authorization: Basic {SECRET}"}, "log"),
    ("X-API-Key header", {"log": f"X-API-Key: {SECRET}\nAccept: */*"}, "log"),
    ("URL credentials", {"base_url": f"http://bench:{SECRET}@gpu:8000/v1"}, "base_url"),
    ("URL query", {"url": f"https://h/v1?model=m&token={SECRET}&x=1"}, "url"),
    ("environment string", {"env": f"HF_TOKEN={SECRET} CUDA_VISIBLE_DEVICES=0"}, "env"),
    ("name/value env list", {"env": [{"name": "HF_TOKEN", "value": SECRET}]}, "env[0].value"),
    ("key/value env list", {"env": [{"key": "OPENAI_API_KEY", "value": SECRET}]}, "env[0].value"),
    ("dict repr in a string", {"args": f"Namespace(x=1, extra={{'api_key': '{SECRET}'}})"}, "args"),
    ("JSON in a string", {"args": json.dumps({"admin_api_key": SECRET})}, "args"),
    ("header pair", {"headers": [["Authorization", f"Token {SECRET}"]]}, "headers[0][1]"),
    ("list under a secret key", {"api_keys": [SECRET]}, "api_keys[0]"),
]


@pytest.mark.parametrize(("name", "extra", "where"), CASES, ids=[c[0] for c in CASES])
def test_each_hiding_place_is_redacted_from_copy_and_run(tmp_path: Path, name: str, extra: dict, where: str) -> None:
    path = tmp_path / "bench.jsonl"
    path.write_text(json.dumps({**BASE, **extra}) + "\n")
    parsed, problems = parse_file(path, path.name)
    assert problems == [] and parsed is not None
    assert SECRET not in parsed.stored_text
    assert all(SECRET not in run_text(run) for run in parsed.runs)
    assert f"line 1: {where}" in parsed.redacted
    assert all(SECRET not in line for line in parsed.redacted)


def test_import_says_where_and_never_what(campaign: Path, tmp_path: Path) -> None:
    """End to end: every written file and every printed line is free of every secret."""
    path = tmp_path / "hostile.jsonl"
    lines = []
    for i, (_name, extra, _where) in enumerate(CASES):
        lines.append(json.dumps({**BASE, "max_concurrency": i + 1, **extra}))
    path.write_text("\n".join(lines) + "\n")
    r = run_cli("import", "--root", str(campaign), str(path), "--record", "02")
    assert r.returncode == 0, r.stderr
    assert SECRET not in r.stdout + r.stderr
    assert f"hostile.jsonl: redacted {len(CASES)} secret value(s) before writing" in r.stderr
    for i, (_name, _extra, where) in enumerate(CASES):
        assert f"  line {i + 1}: {where}\n" in r.stderr
    written = [p for p in (campaign / "results").rglob("*") if p.is_file()]
    assert any("raw" in p.parts for p in written) and any("runs" in p.parts for p in written)
    for p in written + list((campaign / "improvements").iterdir()):
        assert SECRET.encode() not in p.read_bytes(), p


def test_console_block_reports_lines(tmp_path: Path) -> None:
    text = (FIXTURES / "import" / "console-sglang.txt").read_text()
    path = tmp_path / "console.txt"
    path.write_text(f"$ python -m sglang.bench_serving --api-key {SECRET}\nAuthorization: Basic {SECRET}\n" + text)
    parsed, problems = parse_file(path, path.name)
    assert problems == [] and parsed is not None
    assert SECRET not in parsed.stored_text
    # Line 3 is the fixture's own first line, which carries `--api-key sk-console-...`.
    assert parsed.redacted == [f"line {n}: secret value(s) in the text" for n in (1, 2, 3)]


def test_a_key_given_twice_is_refused_without_its_values(tmp_path: Path) -> None:
    # JSON keeps the last of two equal keys, so the parsed object would hold no secret while the
    # text does; a key given twice is refused (which value was meant is unknown), and the
    # problem names the key, never a value.
    path = tmp_path / "dup.jsonl"
    body = json.dumps(BASE)[1:]
    path.write_text('{"api_key": "' + SECRET + '", "api_key": "", ' + body + "\n")
    parsed, problems = parse_file(path, path.name)
    assert parsed is None
    [problem] = problems
    assert (problem.code, problem.line, problem.col) == ("duplicate-key", 1, 2 + len('"api_key": "' + SECRET + '", '))
    assert "`api_key` twice" in problem.message and SECRET not in problem.text()


def test_results_and_look_alikes_are_kept() -> None:
    data = {
        "total_output_tokens": 163840,
        "eos_token_id": 2,
        "max_tokens": 512,
        "tokenizer_path": "zai-org/GLM-5-NVFP4",
        "enable_api_key_check": True,
        "hf_token": None,
        "api_key": "",
        "note": "Mean TTFT (ms): 812.4; Total input tokens: 1024; token_budget: 8192",
        "cmd": "--max-num-batched-tokens 8192 --tokenizer-mode auto",
        "url": "http://host:8000/v1?model=m",
    }
    assert redact(data) == (data, [])
    assert redact_text("---------------Inter-token Latency----------------")[1] == 0


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("api_key", True),
        ("OPENAI_API_KEY", True),
        ("X-API-Key", True),
        ("apiKey", True),
        ("ssh_private_key", True),
        ("Authorization", True),
        ("Proxy-Authorization", True),
        ("hf_token", True),
        ("client_secret", True),
        ("db_password", True),
        ("basic_auth", True),
        ("total_output_tokens", False),
        ("tokenizer", False),
        ("key", False),
        ("keyboard", False),
        ("max_tokens", False),
    ],
)
def test_secret_names(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret


# --- Hypothesis: a secret anywhere, under any disguise ------------------------------------------

_SECRET_KEYS = ["api_key", "API_KEY", "admin_api_key", "hf_token", "HF_TOKEN", "Authorization", "password",
                "client_secret", "X-API-Key", "aws_access_key", "openaiKey", "db_passwd"]  # fmt: skip
_FLAGS = ["--api-key", "--hf-token", "--admin-api-key", "--password", "--secret"]
_HEADERS = ["Authorization: Bearer {}", "Authorization: Basic {}", "X-API-Key: {}", "Proxy-Authorization: Token {}"]
_ENVS = ["HF_TOKEN", "OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN"]

secrets = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_", min_size=12, max_size=30
).map(lambda s: "sk" + s)
filler_text = st.text(alphabet="abcdefghij klmnop-_.:/0123456789", max_size=20)
scalars = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | filler_text
filler_keys = st.sampled_from(["model", "tp_size", "note", "args", "dataset", "tokens", "output_len", "items"])
nested = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(filler_keys, inner, max_size=4),
    max_leaves=12,
)


@st.composite
def hidden(draw: st.DrawFn, secret: str) -> tuple[str, Any]:
    """One secret in one of the listed disguises, and which disguise."""
    kind = draw(st.sampled_from(["key", "flag-list", "flag-text", "flag-next-line", "header", "env", "env-list",
                                 "url", "query", "repr"]))  # fmt: skip
    key, flag, env = draw(st.sampled_from(_SECRET_KEYS)), draw(st.sampled_from(_FLAGS)), draw(st.sampled_from(_ENVS))
    sep = draw(st.sampled_from([" ", "=", "\n", " \\\n  "]))
    payload = {
        "key": {key: secret},
        "flag-list": ["serve", "m", flag, secret, "--port", "30000"],
        "flag-text": f"python -m sglang.launch_server {flag}{sep}{secret} --tp 8",
        "flag-next-line": f"{flag} \\\n    {secret}",
        "header": draw(st.sampled_from(_HEADERS)).format(secret),
        "env": f"{env}={secret} python bench.py",
        "env-list": [{"name": env, "value": secret}],
        "url": f"https://user:{secret}@host:8000/v1",
        "query": f"https://host/v1?a=1&{draw(st.sampled_from(['token', 'api_key', 'access_token']))}={secret}",
        "repr": str({key: secret, "tp": 8}),
    }[kind]
    return kind, payload


def _bury(tree: Any, payload: Any, path: list[int]) -> Any:
    """`payload` placed inside `tree` at a position chosen by `path`."""
    if not path or not isinstance(tree, dict | list) or not tree:
        return {"wrapper": [tree, payload]} if path and path[0] % 2 else [payload, tree]
    if isinstance(tree, dict):
        key = list(tree)[path[0] % len(tree)]
        return {**tree, key: _bury(tree[key], payload, path[1:])}
    i = path[0] % len(tree)
    return [*tree[:i], _bury(tree[i], payload, path[1:]), *tree[i + 1 :]]


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), tree=nested, path=st.lists(st.integers(0, 50), max_size=6))
def test_a_buried_secret_never_survives(data: st.DataObject, tree: Any, path: list[int]) -> None:
    secret = data.draw(secrets)
    kind, payload = data.draw(hidden(secret))
    doc = _bury(tree, payload, path)
    clean, found = redact(doc)
    assert secret not in json.dumps(clean)
    assert found and all(secret not in where for where in found)
    if kind != "env-list":
        # The second pass over the kept copy: the document as JSON text, cleaned by the text rules alone.
        text, n = redact_text(json.dumps(doc))
        assert n and secret not in text


@pytest.mark.slow
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(data=st.data(), path=st.lists(st.integers(0, 50), max_size=4))
def test_a_buried_secret_never_reaches_the_kept_copy_or_the_run(
    tmp_path: Path, data: st.DataObject, path: list[int]
) -> None:
    secret = data.draw(secrets)
    extra = data.draw(nested)
    obj = {**BASE, "extra": _bury(extra, data.draw(hidden(secret))[1], path)}
    file = tmp_path / "bench.jsonl"
    file.write_text(json.dumps(obj) + "\n")
    parsed, problems = parse_file(file, file.name)
    assert problems == [] and parsed is not None
    assert secret not in parsed.stored_text
    assert all(secret not in run_text(run) for run in parsed.runs)
    assert parsed.redacted and all(secret not in where for where in parsed.redacted)
    assert REDACTED in parsed.stored_text


def test_a_log_redacted_piece_by_piece_is_redacted_as_a_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Pieces of 64 bytes: every kind of secret lands across a piece's end somewhere in the file.
    import generator.project.runs.redact as redact_module

    monkeypatch.setattr(redact_module, "_PIECE", 64)
    lines = []
    for i in range(120):
        lines.append(f"step {i}: total_output_tokens: {i} tokens/s")
        lines += {
            0: ["--api-key \\", "  sk-PLANTEDkey"],
            1: ["Authorization: Bearer PLANTEDbearer"],
            2: ["fetch https://me:PLANTEDpw@host/x?token=PLANTEDq"],
            3: ["HF_TOKEN=hf_PLANTEDtoken", "--hf-token", "hf_PLANTEDnext"],
            4: ["password:", "", "  PLANTEDnextline"],
        }[i % 5]
    data = ("\n".join(lines) + "\n").encode() + b"\xff not UTF-8, no newline"
    log = tmp_path / "server.log"
    log.write_bytes(data)
    count = redact_module.redact_file(log)
    whole, expected = redact_module.redact_text(data.decode("utf-8", errors="surrogateescape"))
    assert count == expected > 0
    assert log.read_bytes() == whole.encode("utf-8", errors="surrogateescape")
    assert b"PLANTED" not in log.read_bytes() and log.read_bytes().endswith(b"\xff not UTF-8, no newline")
    clean = tmp_path / "clean.log"
    clean.write_bytes(b"nothing secret\n")
    before = clean.stat().st_ino
    assert redact_module.redact_file(clean) == 0 and clean.stat().st_ino == before  # untouched


def test_the_kept_copy_is_the_whole_text_pass_and_names_each_line(tmp_path: Path) -> None:
    # The kept copy is built value by value; it must be what one pass of the text rules over the
    # whole file gives, with each redaction named at its own line (values counted from the one before).
    plain = dict(BASE)
    in_text = {**BASE, "launch": f"python -m sglang.launch_server --api-key {SECRET} --port 30000"}
    in_url = {**BASE, "endpoint": f"http://user:{SECRET}@10.0.0.1:30000/v1?token={SECRET}"}
    keyed = {**BASE, "server_info": {"api_key": SECRET, "tp_size": 8}}
    lines = [
        json.dumps(plain),
        json.dumps(in_text),
        "",
        json.dumps(keyed, indent=2),
        json.dumps(plain),
        json.dumps(in_url),
    ]
    path = tmp_path / "bench.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    parsed, problems = parse_file(path, "bench.jsonl")
    assert problems == [] and parsed is not None
    assert SECRET not in parsed.stored_text
    keyed_line = 4  # the indented object starts after the blank line
    after = keyed_line + len(json.dumps(keyed, indent=2).splitlines())
    assert [r.source["line"] for r in parsed.runs] == [1, 2, keyed_line, after, after + 1]
    assert f"line {keyed_line}: server_info.api_key" in parsed.redacted
    assert any(note.startswith("line 2: ") for note in parsed.redacted)
    assert any(note.startswith(f"line {after + 1}: ") for note in parsed.redacted)
    # Whole-file text pass over the copy with each secret-holding object written again.
    rewritten = [
        line if SECRET not in line else json.dumps(redact(json.loads(line))[0], ensure_ascii=False)
        for line in lines[:3]
    ]
    expected_text = "\n".join([*rewritten, json.dumps(redact(keyed)[0], ensure_ascii=False), *lines[4:5]])
    expected_text += "\n" + json.dumps(redact(in_url)[0], ensure_ascii=False) + "\n"
    assert parsed.stored_text == redact_text(expected_text)[0]
    # A run's kept copy is named by the digest of the kept text.
    assert parsed.stored_sha256 == hashlib.sha256(parsed.stored_text.encode("utf-8")).hexdigest()
