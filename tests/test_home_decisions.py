"""The home page states the decisions (issue 49): each decided record's change, interval and
word in its first screen, the baseline's own figures where records measured it, and every
regression of a record beside its decision, marked by a word as well as a colour."""

from __future__ import annotations

import re
from functools import cache

import pytest

from generator.analysis.campaign import analyse
from generator.checks.validate import require_project
from generator.output.render import render_files

from conftest import REPO

# Slow: renders two shipped campaigns whole.
pytestmark = pytest.mark.slow


@cache
def home(example: str) -> str:
    return render_files(analyse(require_project(REPO / "examples" / example)))["docs/index.md"]


def first_screen(text: str) -> str:
    """The glance block: what the home page shows before its description."""
    found = re.search(r'<div class="improvements-glance" markdown>(.*?)</div>', text, re.S)
    assert found is not None
    return found.group(1)


def decisions(glance: str) -> dict[str, str]:
    """Each record's decision in the glance's "Decisions" line, by its number."""
    (line,) = [x for x in glance.splitlines() if x.startswith("**Decisions**")]
    return {part.split(" ", 1)[0]: part for part in line.split(": ", 1)[1].removeprefix("[").split(" · [")}


def test_the_runner_home_gives_each_decision_with_its_interval() -> None:
    found = decisions(first_screen(home("h200-runner")))
    assert sorted(found) == ["01", "02", "03", "04"]
    assert ">better</span>, Output token throughput +61.5%, interval +15.4% to +126.1%" in found["01"]
    assert "concurrency 256" in found["01"]
    assert ">inconclusive</span>" in found["02"] and "-0.2%" in found["02"]
    assert ">better</span>" in found["04"] and "+18.7%" in found["04"]


def test_the_runner_home_shows_the_baseline_its_records_measured() -> None:
    text = home("h200-runner")
    assert "No baseline results were recorded." not in text
    baseline = text[text.index("## Baseline") : text.index("## Tiers")]
    # Record 01's 6 eager launches at batch 256 and the null control's 5 at 64.
    assert re.search(r"\[01 SDPA[^\n]*concurrency 256: Output token throughput 8749 ± \S+ \(n=6\) tok/s", baseline)
    assert re.search(r"\[03 [^\n]*concurrency 64: Output token throughput 2887 ± \S+ \(n=5\) tok/s", baseline)


def test_a_regression_sits_beside_its_headline_marked_in_words() -> None:
    glance = first_screen(home("h200-decode"))
    line = decisions(glance)["02"]
    assert ">better</span>" in line
    assert '<span class="improvements-worse">worse elsewhere: Time to first token (median) +54.4%' in line
    assert "worse elsewhere" not in decisions(glance)["01"] + decisions(glance)["03"]
    # Before the launch command: on the first screen of a laptop, not below a code block.
    assert glance.index("worse elsewhere") < glance.index("**The launch command in force**")


def test_the_gains_chart_and_the_frontier_name_the_regression() -> None:
    files = render_files(analyse(require_project(REPO / "examples" / "h200-decode")))
    gains = files["docs/plots/summary-gains.svg"]
    # In the warning colour (class flag) and in words, on 02's bar only.
    assert gains.count('class="flag small"> · worse elsewhere</text>') == 1
    assert "(idea C) (output_throughput, concurrency 1, input 512 output 128, tier 2): +414.0%" in gains
    assert "tier 2): +414.0% (interval +258.1% to +637.8%), better, worse elsewhere" in gains
    frontier = files["docs/plots/frontier.svg"]
    assert "02 static-cache-compile (the stack), worse elsewhere</text>" in frontier
    assert (
        "c=8: 2135 tok/s per GPU" in frontier
        and "better; worse elsewhere: Time to first token (median) +54.4%" in frontier
    )


def test_a_record_page_carries_the_caveats_the_home_gives_for_its_command() -> None:
    files = render_files(analyse(require_project(REPO / "examples" / "h200-decode")))
    home = first_screen(files["docs/index.md"])
    caveats = [line for line in home.splitlines() if line.startswith("- **Caveat**: ")]
    assert any("Run it from data/" in c for c in caveats)
    for name, text in files.items():
        if name.startswith("docs/improvements/") and name.endswith(".md"):
            command = text[text.index("### Launch command") : text.index("## Results")]
            for c in caveats:
                assert c in command, (name, c)
