"""What `check` accepts, `build`, `export` and `summary` handle: each record that once passed
`check` and then crashed a later command with a traceback, and the wrong messages found with
them (issue 15). Each case is a class of input, fixed where the class starts (the reader, the
model, a page), and the fix is tested on the listed case and a neighbour."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import REPO, run_cli

HEAD = "title: T\ntier: 2\nstatus: proposed\nhypothesis: H\n"


def _campaign(tmp_path: Path, body: str, name: str = "90-x.yaml") -> Path:
    root = tmp_path / "c"
    (root / "improvements").mkdir(parents=True)
    (root / "results").mkdir()
    shutil.copy(REPO / "improvements" / "campaign.yaml", root / "improvements" / "campaign.yaml")
    (root / "improvements" / name).write_text(HEAD + body, encoding="utf-8")
    return root


def _every_command(root: Path) -> dict[str, str]:
    """check, build, export and summary as JSON all succeed without a traceback; their outputs."""
    out = {}
    for args in (("check",), ("build",), ("export", "-o", "x.json"), ("summary", "--format", "json")):
        res = run_cli(*args, cwd=root)
        assert "Traceback" not in res.stderr, (args, res.stderr[-2000:])
        assert res.returncode == 0, (args, res.stderr[-2000:])
        out[args[0]] = res.stdout
    return out


def _check_problems(root: Path) -> list[str]:
    res = run_cli("check", cwd=root)
    assert "Traceback" not in res.stderr, res.stderr
    assert res.returncode == 1, res.stderr
    return [ln for ln in res.stderr.splitlines() if "error[" in ln]


RESULT = "results:\n  - label: x\n    concurrency: 4\n    request_rate: {rate}\n    metrics: {{output_throughput: 5}}\n"


@pytest.mark.parametrize(
    ("rate", "shown"), [("trace", "trace replay"), ("inf", "unlimited"), (".inf", "unlimited"), ("2.5", "2.5 req/s")]
)
def test_every_request_rate_check_accepts_builds(tmp_path: Path, rate: str, shown: str) -> None:
    root = _campaign(tmp_path, RESULT.format(rate=rate))
    _every_command(root)
    page = next((root / "docs" / "improvements").glob("*-90-x.md")).read_text()
    assert f"- Request rate: {shown}" in page
    # `.inf` and `inf` are one spelling downstream, and the export is valid JSON.
    data = json.loads((root / "x.json").read_text())
    written = data["records"][0]["record"]["results"][0]["request_rate"]
    assert written == {".inf": "inf", "2.5": 2.5}.get(rate, rate)


@pytest.mark.parametrize("rate", ["-3", "0", ".nan", "-.inf"])
def test_a_request_rate_that_is_not_a_rate_is_refused(tmp_path: Path, rate: str) -> None:
    (line,) = _check_problems(_campaign(tmp_path, RESULT.format(rate=rate)))
    assert ":8:19: error[invalid-value]: `results[0].request_rate`" in line
    assert "greater than 0" in line or "finite" in line


@pytest.mark.parametrize(
    ("flags", "col", "message"),
    [
        ("  flags:\n    - '--foo \"bar'\n", 7, 'the " at character 1 of `"bar` is never closed'),
        ("  base_command: 'python -m sglang \"x'\n", 17, 'the " at character 18 of `python -m sglang "x`'),
        ("  flags:\n    - '--foo bar\\'\n", 7, "ends in a lone backslash"),
    ],
)
def test_unbalanced_quotes_are_a_check_error(tmp_path: Path, flags: str, col: int, message: str) -> None:
    (line,) = _check_problems(_campaign(tmp_path, "change:\n" + flags))
    assert f":{col}: error[invalid-value]" in line.split("90-x.yaml:")[1][:30] and message in line, line


def test_an_unbalanced_quote_in_the_baseline_command_is_a_check_error(tmp_path: Path) -> None:
    root = _campaign(tmp_path, "")
    campaign = root / "improvements" / "campaign.yaml"
    text = campaign.read_text()
    start = text.index("\n  command:")
    campaign.write_text(text[:start] + "\n  command: 'python \"x'" + text[text.index("\n  command_reconstructed") :])
    (line,) = _check_problems(root)
    assert "campaign.yaml" in line and "`baseline.command`" in line and "is never closed" in line


@pytest.mark.parametrize(
    ("body", "expect"),
    [
        (
            "results:\n  - label: x\n    concurrency: " + "9" * 400 + "\n    metrics: {output_throughput: 5}\n",
            "`results[0].concurrency` is a number of 400 digits; expected a number of at most 1e+15",
        ),
        (
            "results:\n  - label: x\n    metrics: {output_throughput: 5}\n    baseline: {output_throughput: 5e-324}\n",
            "is too close to zero to compare with",
        ),
        (
            "results:\n  - label: x\n    metrics: {output_throughput: true}\n",
            "`results[0].metrics.output_throughput` must be a number, not the boolean `true`",
        ),
        (
            "results:\n  - label: x\n    concurrency: true\n    metrics: {output_throughput: 5}\n",
            "`results[0].concurrency` must be a number, not the boolean `true`",
        ),
    ],
)
def test_extreme_and_boolean_numbers_are_refused_with_what_was_found(tmp_path: Path, body: str, expect: str) -> None:
    (line,) = _check_problems(_campaign(tmp_path, body))
    assert expect in line, line


def test_the_extremes_check_accepts_build(tmp_path: Path) -> None:
    body = (
        "results:\n"
        "  - {label: a, concurrency: 1, metrics: {output_throughput: 1e15}, baseline: {output_throughput: 1e-15}}\n"
        "  - {label: b, concurrency: 1000000000000000, metrics: {output_throughput: 1e-15}, "
        "baseline: {output_throughput: 1e15}}\n"
    )
    _every_command(_campaign(tmp_path, body))


def test_math_in_a_title_is_text(tmp_path: Path) -> None:
    body = "results:\n" + "".join(
        f"  - {{label: c{c}, concurrency: {c}, metrics: {{output_throughput: {c}}}, "
        "baseline: {output_throughput: 1}}\n"
        for c in (1, 2, 4)
    )
    root = _campaign(tmp_path, body.replace("label: c1", "label: '$x^2$ \\\\frac{a}{b}'"))
    (root / "improvements" / "90-x.yaml").write_text(
        (root / "improvements" / "90-x.yaml").read_text().replace("title: T", "title: 'A $x^2$ and $$ title'")
    )
    _every_command(root)
    svgs = "".join(p.read_text() for p in (root / "docs").rglob("*.svg"))
    assert "$x^2$" in svgs or "$x^2$" in "".join(p.read_text() for p in (root / "docs").rglob("*.md"))


def test_a_template_that_raises_is_a_positioned_problem(tmp_path: Path) -> None:
    root = _campaign(tmp_path, "")
    (root / "templates").mkdir()
    source = (REPO / "generator" / "templates" / "record.md.j2").read_text()
    (root / "templates" / "record.md.j2").write_text("line one\n{{ 1 // 0 }}\n" + source)
    res = run_cli("build", cwd=root)
    assert res.returncode == 1 and "Traceback" not in res.stderr
    assert "templates/record.md.j2:2:1: error[bad-template]: template `record.md.j2`: ZeroDivisionError" in res.stderr
    assert not (root / "docs").exists()


def test_a_slug_too_long_for_its_page_is_refused_at_check(tmp_path: Path) -> None:
    # The record's own name fits (250 bytes); its page's name, with the series before it, would not.
    slug = "-".join(["slug"] * 49)[:242]
    root = _campaign(tmp_path, "", name=f"90-{slug}.yaml")
    (line,) = _check_problems(root)
    assert f"improvements/90-{slug}.yaml:1:1: error[bad-filename]: the record's page would be named" in line
    assert "over the 255 a file name may have" in line and "shorten the slug by at least" in line


def test_a_file_name_with_a_trailing_newline_is_not_a_record(tmp_path: Path) -> None:
    root = _campaign(tmp_path, "", name="90-x.yaml\n")
    (line,) = _check_problems(root)
    assert "error[bad-filename]" in line
    res = run_cli("build", cwd=root)
    assert res.returncode == 1 and "Traceback" not in res.stderr


@pytest.mark.parametrize(
    ("line_text", "expect"),
    [
        ("on: 3\n", "5:1: error[unknown-key]: unknown key `on`"),
        ("true: 3\n", "5:1: error[unknown-key]: unknown key `true`"),
        ("~: 3\n", "5:1: error[unknown-key]: unknown key `~`"),
    ],
)
def test_keys_are_reported_as_written(tmp_path: Path, line_text: str, expect: str) -> None:
    (line,) = _check_problems(_campaign(tmp_path, line_text))
    assert expect in line, line


@pytest.mark.parametrize(
    ("tier", "expect"),
    [
        ("yes", "`tier` is 'yes'; expected 1, 2 or 3"),
        ("true", "`tier` must be 1, 2 or 3, not the boolean `true`"),
        ("on", "`tier` is 'on'; expected 1, 2 or 3"),
    ],
)
def test_a_tier_is_a_number_not_a_boolean(tmp_path: Path, tier: str, expect: str) -> None:
    root = _campaign(tmp_path, "")
    path = root / "improvements" / "90-x.yaml"
    path.write_text(path.read_text().replace("tier: 2", f"tier: {tier}"))
    (line,) = _check_problems(root)
    assert ":2:7: error[" in line and expect in line, line


def test_text_that_looks_like_a_date_or_a_yaml_1_1_value_is_the_text_written(tmp_path: Path) -> None:
    root = _campaign(tmp_path, "verdict: no\ncaveats: [on, 010, '1:30', 1:30]\n")
    path = root / "improvements" / "90-x.yaml"
    path.write_text(path.read_text().replace("title: T", "title: 2024-01-01"))
    _every_command(root)
    data = json.loads((root / "x.json").read_text())["records"][0]["record"]
    assert data["title"] == "2024-01-01" and data["verdict"] == "no"
    # 010 is ten in YAML 1.2 (eight in 1.1); 1:30 is text (ninety in 1.1).
    assert data["caveats"] == ["on", "10", "1:30", "1:30"]


def test_a_date_that_does_not_exist_says_so(tmp_path: Path) -> None:
    (line,) = _check_problems(_campaign(tmp_path, "date: 2024-02-30\n"))
    assert ":5:7: error[invalid-value]: `2024-02-30` is not a valid date" in line


def test_non_finite_campaign_details_are_valid_json_and_said_so(tmp_path: Path) -> None:
    root = _campaign(tmp_path, "")
    campaign = root / "improvements" / "campaign.yaml"
    text = campaign.read_text()
    campaign.write_text(text.replace("\n  details:\n", "\n  details:\n    sm_clock: .nan\n    limit: .inf\n", 1))
    out = _every_command(root)
    data = json.loads((root / "x.json").read_text())
    # The first `details:` in the shipped campaign.yaml is the model's.
    details = data["campaign"]["model"]["details"]
    assert (details["limit"], details["sm_clock"]) == ("inf", "nan")
    assert data["non_finite"] == ["campaign.model.details.limit", "campaign.model.details.sm_clock"]
    json.loads(out["summary"])


REFERENCES = (
    "references:\n"
    "  - {title: a, url: x.md}\n"
    "  - {title: b, url: ../y}\n"
    "  - {title: c, url: /z}\n"
    "  - {title: d, url: 'x.md#part'}\n"
    "  - {title: e, url: 'sub/'}\n"
    "  - {title: f, url: a/../../../outside.md}\n"
    "  - {title: g, url: '../summary.md#top'}\n"
)
GOOD_REFERENCES = (
    "references:\n"
    "  - {title: summary, url: ../summary.md}\n"
    "  - {title: blockers, url: '../blockers.md'}\n"
    "  - {title: itself, url: glb5improvement-90-x.md}\n"
    "  - {title: a note, url: ../notes/kept.md}\n"
    "  - {title: web, url: 'https://example.org/a'}\n"
)


def test_reference_links_the_strict_site_build_refuses_are_check_errors(tmp_path: Path) -> None:
    lines = _check_problems(_campaign(tmp_path, REFERENCES))
    assert [ln.split("90-x.yaml:")[1].split(": error")[0] for ln in lines] == [f"{n}:21" for n in range(6, 13)]
    assert "`references[0].url` `x.md` points at `docs/improvements/x.md`, which is not a page" in lines[0]
    assert "`references[2].url` `/z` is an absolute path" in lines[2]
    assert "`references[5].url` `a/../../../outside.md` leads outside docs/" in lines[5]
    assert "`references[6].url` `../summary.md#top` names an anchor (`#top`)" in lines[6]


@pytest.mark.mkdocs
def test_reference_links_check_accepts_build_a_strict_site(tmp_path: Path) -> None:
    root = _campaign(tmp_path, GOOD_REFERENCES)
    (root / "docs" / "notes").mkdir(parents=True)
    (root / "docs" / "notes" / "kept.md").write_text("# Kept\n")
    (root / "mkdocs.yml").write_text("site_name: Links\nplugins: [improvements]\n")
    assert run_cli("check", cwd=root).returncode == 0
    res = run_cli("build", "--site", cwd=root)
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr[-2000:]
