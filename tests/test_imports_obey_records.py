"""Imported numbers obey the rules of typed ones, and no input gives a traceback (issue 34).

An adversarial review found imports that stored what a record typed by hand refuses (-5 tok/s,
a 1e-320 s latency, `1_000`, Arabic-Indic digits, 2026-13-45, a key given twice), inputs that
ended in a traceback (a 400-digit integer, 1e308 s, the path `x.²`, `units` on summary
statistics), and `check` rules that refused what the guide describes (a diagnostic variant at
the retained value) or said one thing ten times.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from generator.base.problems import Report
from generator.checks.validate import load_project
from generator.model.result import About, Range, Result, Statistics

from conftest import BENCH, FIXTURES, run_cli

FORMATS = """
import_formats:
  harness:
    metrics:
      output_throughput: tok_s
      ttft_p99: {path: ttft_p99_s, unit: s}
    settings:
      concurrency: conc
      date: when
  listed:
    metrics:
      output_throughput: x.²
    settings:
      concurrency: conc
  rated:
    metrics:
      output_throughput: tok_s
    settings:
      request_rate: rate
"""

RECORD = """\
title: SDPA attention instead of eager
tier: 1
status: proposed
hypothesis: The decode steps are launch-bound.
"""


@pytest.fixture
def repo(minimal: Path) -> Path:
    campaign = minimal / "improvements" / "campaign.yaml"
    campaign.write_text(campaign.read_text() + FORMATS)
    (minimal / "improvements" / "01-sdpa.yaml").write_text(RECORD)
    return minimal


def _import(root: Path, name: str, text: str, fmt: str | None = "harness"):
    path = root / name
    path.write_text(text, encoding="utf-8")
    return run_cli("import", "--root", str(root), str(path), "--record", "1", *(["--format", fmt] if fmt else []))


def _refused(root: Path, out, code: str, where: str, *words: str) -> str:
    """The import failed with one positioned problem of `code` and wrote nothing."""
    assert out.returncode == 1, out.stdout + out.stderr
    assert "Traceback" not in out.stderr
    lines = [line for line in out.stderr.splitlines() if f"error[{code}]" in line]
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith(where), lines[0]
    assert "(hint: " in lines[0]
    for word in words:
        assert word in lines[0], lines[0]
    assert not (root / "results" / "runs").exists()
    assert (root / "improvements" / "01-sdpa.yaml").read_text() == RECORD
    return lines[0]


ROW = '{{"tok_s": {tok}, "ttft_p99_s": {ttft}, "conc": 8, "when": "{when}"}}\n'


def _row(tok: str = "100", ttft: str = "0.2", when: str = "2026-03-05") -> str:
    return ROW.format(tok=tok, ttft=ttft, when=when)


@pytest.mark.parametrize(
    ("text", "code", "words"),
    [
        # A 400-digit integer overflowed a float (OverflowError).
        (_row(tok="1" + "0" * 400), "invalid-value", ("`tok_s`", "expected a finite number")),
        # Finite in seconds, infinite in milliseconds: checked after the conversion.
        (_row(ttft="1e308"), "invalid-value", ("`ttft_p99_s`", "is inf (s -> ms)", "1e-15 to 1e15")),
        # The same numbers typed in a record are refused.
        (_row(tok="-5"), "invalid-value", ("`tok_s`", "-5", "cannot be negative")),
        (_row(ttft="1e-320"), "invalid-value", ("`ttft_p99_s`", "1e-15 to 1e15")),
        (_row(when="2026-13-45"), "invalid-value", ("2026-13-45", "no calendar has")),
        (_row(when="2026-02-30"), "invalid-value", ("2026-02-30",)),
    ],
    ids=["400-digits", "1e308-seconds", "negative-throughput", "1e-320-seconds", "month-13", "february-30"],
)
def test_an_imported_number_obeys_the_typed_rules(repo: Path, text: str, code: str, words: tuple[str, ...]) -> None:
    _refused(repo, _import(repo, "bench.jsonl", text), code, f"{repo / 'bench.jsonl'}:1:1:", *words)


def test_a_possible_date_and_the_same_numbers_in_range_are_imported(repo: Path) -> None:
    # The control: the refusals above are the values, not the file.
    out = _import(repo, "bench.jsonl", _row(when="2024-02-29"))
    assert out.returncode == 0, out.stderr
    assert len(list((repo / "results" / "runs").glob("*.json"))) == 1


@pytest.mark.parametrize("cell", ["1_000", "١٠٠٠", "１０００", "infinity", "0x3e8", "1" + "0" * 5000])
def test_a_csv_cell_is_a_number_only_in_plain_ascii_decimal(repo: Path, cell: str) -> None:
    text = f"tok_s,ttft_p99_s,conc,when\n{cell},0.2,8,2026-03-05\n"
    _refused(repo, _import(repo, "bench.csv", text), "invalid-value", f"{repo / 'bench.csv'}:2:1:", "`tok_s`")


def test_a_plain_csv_number_is_read(repo: Path) -> None:
    out = _import(repo, "bench.csv", "tok_s,ttft_p99_s,conc,when\n1000,2.5e-1,8,2026-03-05\n")
    assert out.returncode == 0, out.stderr
    [run] = (repo / "results" / "runs").glob("*.json")
    assert '"value": 1000.0' in run.read_text() and '"value": 250.0' in run.read_text()


def test_a_key_given_twice_in_json_is_refused_where_it_is_given_again(repo: Path) -> None:
    text = _row() + '{"tok_s": 100,\n "conc": 8, "ttft_p99_s": 0.2, "tok_s": 9987.78, "when": "2026-03-05"}\n'
    line = _refused(repo, _import(repo, "bench.jsonl", text), "duplicate-key", f"{repo / 'bench.jsonl'}:3:32:")
    assert "`tok_s` twice" in line


def test_a_key_given_twice_in_a_built_in_format_is_refused(repo: Path) -> None:
    text = (BENCH / "vllm-benchmark-serving-legacy.json").read_text()
    twice = text.replace('"max_concurrency": 16,', '"max_concurrency": 16, "max_concurrency": 64,', 1)
    assert twice != text
    _refused(repo, _import(repo, "vllm.json", twice, None), "duplicate-key", f"{repo / 'vllm.json'}:1:", "twice")


def test_a_column_named_twice_in_a_csv_header_is_refused(repo: Path) -> None:
    text = "tok_s,ttft_p99_s,conc,tok_s,when\n100,0.2,8,200,2026-03-05\n"
    line = _refused(repo, _import(repo, "bench.csv", text), "duplicate-key", f"{repo / 'bench.csv'}:1:23:")
    assert "`tok_s` twice (column 4)" in line


def test_a_path_with_a_digit_python_reads_but_json_does_not_is_no_index(repo: Path) -> None:
    # `'²'.isdigit()` is true and `int('²')` raises: the path `x.²` into a list was a traceback.
    out = _import(repo, "bench.jsonl", '{"x": [5, 6, 7], "conc": 8}\n', "listed")
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "error[import-missing-key]" in out.stderr and "`x.²`" in out.stderr


@pytest.mark.parametrize(
    ("metric", "value"),
    [("output_throughput", "-5"), ("ttft_p99", "1e-320"), ("request_throughput", "1e300")],
)
def test_a_built_in_format_obeys_the_same_rules(repo: Path, metric: str, value: str) -> None:
    text = (BENCH / "vllm-benchmark-serving-legacy.json").read_text()
    key = {"ttft_p99": "p99_ttft_ms"}.get(metric, metric)
    start = text.index(f'"{key}": ') + len(f'"{key}": ')
    end = min(i for i in (text.index(",", start), text.index("}", start)) if i >= 0)
    changed = text[:start] + value + text[end:]
    _refused(repo, _import(repo, "vllm.json", changed, None), "invalid-value", f"{repo / 'vllm.json'}:1:1:", key)


def test_a_built_in_format_refuses_an_impossible_date(repo: Path) -> None:
    text = (BENCH / "vllm-benchmark-serving-legacy.json").read_text().replace("20260428-120317", "20261345-120317")
    _refused(repo, _import(repo, "vllm.json", text, None), "invalid-value", f"{repo / 'vllm.json'}:1:1:", "20261345")


@pytest.mark.parametrize("rate", ["1" + "0" * 400, "-1" + "0" * 400, '"1e999"', "0", "-3"])
def test_a_request_rate_is_above_0_as_in_a_record(repo: Path, rate: str) -> None:
    # A 400-digit rate was an OverflowError; `"1e999"` read as unlimited; 0 and -3 were kept.
    out = _import(repo, "bench.jsonl", f'{{"tok_s": 100, "rate": {rate}}}\n', "rated")
    _refused(repo, out, "invalid-value", f"{repo / 'bench.jsonl'}:1:1:", "`rate`", "requests per second")


@pytest.mark.parametrize(
    ("rate", "stored"), [('"inf"', "inf"), ("Infinity", "inf"), ("2.5", 2.5), ('"trace"', "trace")]
)
def test_a_request_rate_that_is_one_is_kept(repo: Path, rate: str, stored: object) -> None:
    out = _import(repo, "bench.jsonl", f'{{"tok_s": 100, "rate": {rate}}}\n', "rated")
    assert out.returncode == 0, out.stderr
    [run] = (repo / "results" / "runs").glob("*.json")
    assert json.loads(run.read_text())["settings"]["request_rate"] == stored


CONSOLE = FIXTURES / "import" / "console-sglang.txt"


def _console_line(label: str, value: str) -> str:
    lines = CONSOLE.read_text().splitlines(keepends=True)
    i = next(i for i, line in enumerate(lines) if line.startswith(label + ":"))
    lines[i] = f"{label}:".ljust(41) + value + "\n"
    return "".join(lines)


def test_a_console_value_is_read_by_the_same_digits_rule(repo: Path) -> None:
    # `int` of 5,000 digits raised ValueError (a traceback); `float('٩٠٠')` is 900.
    huge = _import(repo, "huge.txt", _console_line("Total input tokens", "1" + "0" * 5000), None)
    assert huge.returncode == 0 and "Traceback" not in huge.stderr, huge.stderr
    shutil.rmtree(repo / "results")
    (repo / "results").mkdir()
    (repo / "improvements" / "01-sdpa.yaml").write_text(RECORD)
    out = _import(repo, "arabic.txt", _console_line("Output token throughput (tok/s)", "٩٠٠"), None)
    assert out.returncode == 0, out.stderr
    [run] = (repo / "results" / "runs").glob("*.json")
    assert "output_throughput" not in json.loads(run.read_text())["metrics"]
    assert "total_throughput" in json.loads(run.read_text())["metrics"]


@pytest.mark.parametrize(("key", "value"), [("metric", -5.0), ("metric", 1e-320), ("date", "2026-13-45")])
def test_a_run_file_edited_past_the_rules_is_a_check_error(repo: Path, key: str, value: object) -> None:
    assert _import(repo, "bench.jsonl", _row()).returncode == 0
    [run_file] = (repo / "results" / "runs").glob("*.json")
    data = json.loads(run_file.read_text())
    if key == "metric":
        data["metrics"]["output_throughput"]["value"] = value
    else:
        data["settings"]["date"] = value
    run_file.write_text(json.dumps(data))
    out = run_cli("check", "--root", str(repo))
    assert out.returncode == 1 and "Traceback" not in out.stderr
    [line] = [ln for ln in out.stderr.splitlines() if "error[" in ln]
    assert line.startswith("improvements/01-sdpa.yaml:7:8: error[unknown-run]: "), line
    assert f"results/runs/{run_file.name}: the harness run" in line, line
    assert line.endswith(" (hint: import the benchmark file again to rewrite it)"), line


def test_a_mistyped_run_id_is_pointed_at_the_imported_one(repo: Path) -> None:
    assert _import(repo, "bench.jsonl", _row()).returncode == 0
    [run_file] = (repo / "results" / "runs").glob("*.json")
    record = repo / "improvements" / "01-sdpa.yaml"
    record.write_text(record.read_text().replace(run_file.stem, run_file.stem[:-1] + "x"))
    out = run_cli("check", "--root", str(repo))
    assert [ln for ln in out.stderr.splitlines() if "error[" in ln] == [
        f"improvements/01-sdpa.yaml:7:8: error[unknown-run]: no imported run has id `{run_file.stem[:-1]}x` "
        f"(hint: did you mean `{run_file.stem}`?)"
    ]


# --- check: units on every value shape, one error for one mistake -------------------------------


def test_units_convert_every_value_shape() -> None:
    result = Result.model_validate(
        {
            "label": "a",
            "units": {"ttft_p99": "s", "itl_p99": "s", "tpot_p99": "s", "e2e_latency_median": "s", "ttft_median": "s"},
            "metrics": {
                "ttft_p99": {"mean": 1.5, "sd": 0.25, "n": 3},
                "itl_p99": {"value": 2, "about": True},
                "tpot_p99": {"min": 1, "max": 2},
                "e2e_latency_median": [1, 2],
                "ttft_median": {"mean": 0.5, "n": 4},
            },
        }
    )
    m = result.metrics
    assert m["ttft_p99"] == Statistics(mean=1500, sd=250, n=3)
    assert m["ttft_median"] == Statistics(mean=500, n=4)
    assert m["itl_p99"] == About(value=2000, about=True)
    assert m["tpot_p99"] == Range(min=1000, max=2000)
    assert m["e2e_latency_median"] == [1000, 2000]


def _check(root: Path, results: str) -> list[str]:
    (root / "improvements" / "01-sdpa.yaml").write_text(RECORD + results)
    out = run_cli("check", "--root", str(root))
    assert "Traceback" not in out.stderr
    return [line for line in out.stderr.splitlines() if "error[" in line]


def test_check_loads_statistics_in_seconds(repo: Path) -> None:
    errors = _check(
        repo,
        "results:\n  - label: a\n    units: {ttft_p99: s}\n    metrics:\n"
        "      ttft_p99: {mean: 1.5, sd: 0.25, n: 3}\n      itl_p99: {value: 2, about: true}\n",
    )
    assert errors == []
    # A conversion that carries a mean past the sizes a measurement may have is said where it is written.
    errors = _check(
        repo, "results:\n  - label: a\n    units: {ttft_p99: s}\n    metrics:\n      ttft_p99: {mean: 1e14, n: 3}\n"
    )
    assert len(errors) == 1 and errors[0].endswith("(hint: check the number and its unit)")
    assert "01-sdpa.yaml:9:24: error[invalid-value]: `mean` is 1e+17" in errors[0]


def test_statistics_with_n_0_is_one_error(repo: Path) -> None:
    errors = _check(repo, "results:\n  - label: a\n    metrics:\n      output_throughput: {mean: 1000, sd: 10, n: 0}\n")
    # Not also "not a range" and "not an approximate number", each key twice: ten lines, nine wrong.
    assert len(errors) == 1, errors
    assert errors[0].endswith(
        ":8:50: error[invalid-value]: `results[0].metrics.output_throughput.n` is 0; expected a number of at least 1"
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("{mean: 1, sd: 2}", ["missing-field]: required field `n` is missing"]),
        ("{mean: 1, sdd: 2, n: 3}", ["unknown-key]: unknown key `sdd`"]),
        ("{min: 3, max: 2}", ["min (3) is greater than max (2)"]),
    ],
)
def test_a_mapping_is_judged_as_the_shape_it_was_meant_as(repo: Path, value: str, expected: list[str]) -> None:
    errors = _check(repo, f"results:\n  - label: a\n    metrics:\n      output_throughput: {value}\n")
    assert len(errors) == len(expected), errors
    for error, want in zip(errors, expected, strict=True):
        assert want in error


def test_about_must_be_a_boolean(repo: Path) -> None:
    errors = _check(repo, "results:\n  - label: a\n    metrics:\n      output_throughput: {value: 5, about: 'yes'}\n")
    assert len(errors) == 1
    assert "error[wrong-type]: `about` is 'yes', not true or false" in errors[0]
    assert (
        _check(repo, "results:\n  - label: a\n    metrics:\n      output_throughput: {value: 5, about: true}\n") == []
    )


def _problems(root: Path) -> list[str]:
    report = Report()
    load_project(root, report)
    return [p.text() for p in report.problems if p.severity == "error"]


def test_the_primary_metric_is_not_its_own_guardrail(repo: Path) -> None:
    campaign = repo / "improvements" / "campaign.yaml"
    text = campaign.read_text()
    campaign.write_text(
        text.replace(
            "  primary_metric: output_throughput\n",
            "  primary_metric: output_throughput\n  guardrails: {ttft_p99: 10, output_throughput: 5}\n",
        )
    )
    [error] = _problems(repo)
    assert (
        "campaign.yaml:" in error and "`output_throughput` is the primary metric and one of its own guardrails" in error
    )
    campaign.write_text(text)
    (repo / "improvements" / "01-sdpa.yaml").write_text(
        RECORD + "expected:\n  metric: ttft_p99\n  guardrails: {ttft_p99: 5}\n"
    )
    [error] = _problems(repo)
    assert "01-sdpa.yaml:7:16: error[invalid-value]: `ttft_p99` is the primary metric" in error


VARIANTS = """\
sweep: {parameter: --max-running-requests}
variants:
  - label: cap 64
    value: 64
    outcome: retained
    results: [{label: a, metrics: {output_throughput: 1000}}]
  - label: isolation at cap 64
    value: 64
    outcome: %s
%s    results: [{label: a, metrics: {output_throughput: 1100}}]
"""
SETUP = "    setup: {hardware: {gpu: NVIDIA H200, count: 2}}\n"


@pytest.mark.parametrize(
    ("outcome", "setup", "refused"),
    [("diagnostic", SETUP, False), ("diagnostic", "", False), ("rejected", SETUP, False), ("rejected", "", True)],
    ids=["diagnostic-own-setup", "diagnostic", "own-setup", "candidate"],
)
def test_a_variant_beside_the_values_may_share_one(repo: Path, outcome: str, setup: str, refused: bool) -> None:
    (repo / "improvements" / "01-sdpa.yaml").write_text(RECORD + VARIANTS % (outcome, setup))
    found = [p for p in _problems(repo) if "has the value of variant" in p]
    assert len(found) == int(refused), _problems(repo)
    if refused:
        assert "`outcome: diagnostic`" in found[0] and "leave `value` out" in found[0]
