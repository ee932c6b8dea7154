"""Numbers in prose: `{{ record.result.metric.field }}` filled from the analysis, refused when it names nothing.

A verdict that quotes the change it rests on is filled with the analysis' own figure on every
page; one that names a record, result, metric or field that does not exist stops `check` and
the build at the reference's own line and column, and nothing is written.
"""

from __future__ import annotations

import math
import statistics
from pathlib import Path

import pytest
from scipy import stats

from generator.analysis.campaign import analyse
from generator.analysis.figures import lookup, reference_problems
from generator.checks.validate import require_project
from generator.views.prose import figure_text

from conftest import REPO, run_cli

OWN = [1280.0, 1292.0, 1275.0, 1288.0]
BASE = [1240.0, 1251.0, 1236.0, 1245.0]

RECORD = f"""\
title: Single batch overlap
tier: 1
status: proposed
hypothesis: Overlapping the MoE all-reduce with the next batch hides communication.
results:
  - label: concurrency 64
    concurrency: 64
    metrics:
      output_throughput: {OWN}
    baseline:
      output_throughput: {BASE}
verdict: >-
  Faster by {{{{ overlap.c64.output_throughput.change }}}} (interval
  {{{{ 10.c64.output_throughput.interval }}}}, {{{{overlap."concurrency 64".output_throughput.decision}}}}), from
  {{{{ overlap.c64.output_throughput.baseline_mean }}}} to {{{{ overlap.c64.output_throughput.mean }}}} tok/s.
"""


@pytest.fixture
def campaign(minimal: Path) -> Path:
    (minimal / "improvements" / "10-overlap.yaml").write_text(RECORD)
    return minimal


def test_the_page_quotes_the_analysis(campaign: Path) -> None:
    assert run_cli("check", "--root", str(campaign)).returncode == 0
    out = run_cli("build", "--root", str(campaign))
    assert out.returncode == 0, out.stderr
    page = next((campaign / "docs").rglob("*-overlap.md")).read_text()
    # Independently: the change of the means, and Welch's t interval of the ratio, with scipy.
    change = (statistics.fmean(OWN) / statistics.fmean(BASE) - 1) * 100
    ci = stats.ttest_ind([math.log(v) for v in OWN], [math.log(v) for v in BASE], equal_var=False)
    low, high = (math.expm1(x) * 100 for x in ci.confidence_interval(0.95))
    expected = (
        f"Faster by {change:+.1f}% (interval {low:+.1f}% to {high:+.1f}%, better), "
        f"from {statistics.fmean(BASE):.4g} to {statistics.fmean(OWN):.4g} tok/s."
    )
    assert expected in page
    assert "{{" not in page


def test_every_field_has_a_value_here(campaign: Path) -> None:
    from generator.analysis.figures import FIELDS

    analysis = analyse(require_project(campaign))
    for field in FIELDS:
        found = lookup(analysis, f"overlap.c64.output_throughput.{field}")
        assert not isinstance(found, str), (field, found)
        assert figure_text(found)
    cv = lookup(analysis, "overlap.c64.output_throughput.cv")
    assert not isinstance(cv, str) and cv.value == pytest.approx(statistics.stdev(OWN) / statistics.fmean(OWN) * 100)


@pytest.mark.parametrize(
    ("reference", "why"),
    [
        ("nothing.c64.output_throughput.change", "no record `nothing`"),
        ("overlap.c32.output_throughput.change", "has no result at concurrency 32"),
        ("overlap.r1.output_throughput.change", "a position is not a name"),
        ('overlap."concurrency 46".output_throughput.change', "no result labelled `concurrency 46` (did you mean"),
        ("overlap.c64.tpot_p99.mean", "has no metric `tpot_p99`"),
        ("overlap.c64.output_throughput.speedup", "no field `speedup`"),
        ("overlap.output_throughput.change", "four parts joined by dots"),
        ("baseline.c64.output_throughput.change", "the campaign baseline has no result at concurrency 64"),
    ],
)
def test_a_reference_to_nothing_stops_check_and_build(campaign: Path, reference: str, why: str) -> None:
    path = campaign / "improvements" / "10-overlap.yaml"
    path.write_text(RECORD + f"caveats:\n  - Also {{{{ {reference} }}}} here.\n")
    out = run_cli("check", "--root", str(campaign))
    assert out.returncode == 1
    # At the reference itself: the caveat's line, after "  - Also ".
    line = RECORD.count("\n") + 2
    assert f"improvements/10-overlap.yaml:{line}:10: error[unknown-reference]" in out.stderr
    assert why in out.stderr
    built = run_cli("build", "--root", str(campaign))
    assert built.returncode == 1 and "unknown-reference" in built.stderr
    assert not (campaign / "docs").exists()


def test_the_shipped_examples_quote_no_number_of_their_own_by_hand() -> None:
    # Every reference in both shipped campaigns names a figure (check is clean), and pages hold
    # none left unfilled.
    for root in (REPO, REPO / "examples" / "h200-decode"):
        out = run_cli("check", "--root", str(root))
        assert out.returncode == 0 and "unknown-reference" not in out.stderr, out.stderr
    analysis = analyse(require_project(REPO / "examples" / "h200-decode"))
    figure = lookup(analysis, "sdpa-attention.c256.output_throughput.ratio")
    assert not isinstance(figure, str)
    own, base = analysis.records[0].results[-1].samples["output_throughput"]
    # The "x" is the change's own estimate (the geometric means' ratio), not the arithmetic
    # means' (issue 50: "1.63x eager's (+61.5%)" put 1.625 beside a geometric +61.5%).
    geometric = math.exp(statistics.fmean(map(math.log, own)) - statistics.fmean(map(math.log, base)))
    assert figure.value == pytest.approx(geometric, rel=1e-12)
    change = lookup(analysis, "sdpa-attention.c256.output_throughput.change")
    assert not isinstance(change, str) and isinstance(change.value, float)
    assert figure.value == pytest.approx(1 + change.value / 100, rel=1e-12)
    means = lookup(analysis, "sdpa-attention.c256.output_throughput.means_ratio")
    assert not isinstance(means, str)
    assert means.value == pytest.approx(statistics.fmean(own) / statistics.fmean(base), rel=1e-12)


def test_braces_in_shell_text_are_no_reference(campaign: Path) -> None:
    # Shell steps, flag values and environment hold Go templates and the like; only prose is
    # scanned, so these pass while a bad reference in the change's note is still found.
    path = campaign / "improvements" / "10-overlap.yaml"
    path.write_text(
        RECORD
        + "change:\n"
        + "  before:\n    - docker ps --format '{{.Names}}' | grep -q sglang || true\n"
        + "  inside:\n    - echo '{{ nothing.c64.x.y }}'\n"
        + '  flags:\n    - flag: --json-model-override-args\n      value: \'{"a": "{{.b}}"}\'\n'
        + "  env:\n    note: '{{ nothing }}'\n"
        + "  note: Also {{ nothing.c64.output_throughput.change }}.\n"
    )
    problems = reference_problems(analyse(require_project(campaign)))
    assert [(p.code, p.line) for p in problems] == [("unknown-reference", RECORD.count("\n") + 11)]


def _override(campaign: Path, text: str) -> Path:
    # The shipped record template with a line of the campaign's own at its end.
    shipped = (REPO / "generator" / "templates" / "record.md.j2").read_text(encoding="utf-8")
    path = campaign / "templates" / "record.md.j2"
    path.parent.mkdir()
    path.write_text(shipped + text, encoding="utf-8")
    return path


def test_a_figure_an_override_template_quotes_is_filled(campaign: Path) -> None:
    # The template's own text quotes a figure (a string handed to `inline`), and a `{% raw %}`
    # block inside a filter does too; Jinja's own `{{ }}` expressions are not references.
    _override(
        campaign,
        '\n{{ "Headline: {{ overlap.c64.output_throughput.mean }} tok/s" | inline }}\n'
        "{% filter inline %}{% raw %}Change {{ 10.c64.output_throughput.change }}{% endraw %}{% endfilter %}\n",
    )
    out = run_cli("check", "--root", str(campaign))
    assert out.returncode == 0 and "unknown-reference" not in out.stderr, out.stderr
    assert run_cli("build", "--root", str(campaign)).returncode == 0
    page = next((campaign / "docs").rglob("*-overlap.md")).read_text()
    assert f"Headline: {statistics.fmean(OWN):.4g} tok/s" in page
    assert f"Change {(statistics.fmean(OWN) / statistics.fmean(BASE) - 1) * 100:+.1f}%" in page


def test_a_reference_to_nothing_in_an_override_template_stops_check_and_build(campaign: Path) -> None:
    shipped_lines = (REPO / "generator" / "templates" / "record.md.j2").read_text(encoding="utf-8").count("\n")
    _override(campaign, '\n{{ "Headline: {{ overlap.c32.output_throughput.mean }}" | inline }}\n')
    out = run_cli("check", "--root", str(campaign))
    assert out.returncode == 1
    # At the reference itself: the line after the shipped text, after `{{ "Headline: `.
    assert f"templates/record.md.j2:{shipped_lines + 2}:15: error[unknown-reference]" in out.stderr, out.stderr
    assert "has no result at concurrency 32" in out.stderr
    built = run_cli("build", "--root", str(campaign))
    assert built.returncode == 1 and "unknown-reference" in built.stderr
    assert not (campaign / "docs").exists()
