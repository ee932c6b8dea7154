"""The campaign's one frontier: every configuration, one statistic, capacity on the SLO's line.

Expected numbers are worked out independently: interactivity as 1000 / the worst repetition's
p99 TPOT (numpy), capacity where the worst p99 first reaches the limit, by numpy's linear
interpolation of throughput against p99 TPOT on the breaking segment.
"""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path, PurePosixPath

import numpy as np
import pytest

from generator.analysis.campaign import analyse
from generator.analysis.frontier import Configuration, FrontierPoint
from generator.analysis.frontier import unshared as frontier_alone
from generator.checks.validate import require_project
from generator.views.frontier import frontier_svg, frontier_view

from conftest import FIXTURES, REPO, run_cli

SVG = "{http://www.w3.org/2000/svg}"
# Per load: throughput repetitions, p99 TPOT repetitions (ms). The limit, 50 ms, falls between 32 and 64.
LOADS = {
    16: ([1000, 1020, 980], [30, 32, 31]),
    32: ([1800, 1790, 1810], [40, 44, 42]),
    64: ([2600, 2610, 2590], [60, 58, 62]),
}


def _result(load: int, workload: str, values: tuple[list[int], list[int]]) -> list[str]:
    thr, p99 = values
    metrics = {"output_throughput": thr, "tpot_p99": p99, "tpot_median": [x - 10 for x in p99]}
    return [
        f"  - label: {workload} c{load}",
        f"    concurrency: {load}",
        f"    workload: {{dataset: {workload}, input_len: 1024, output_len: 256}}",
        f"    metrics: {json.dumps(metrics)}",
        f"    baseline: {json.dumps({'output_throughput': [t - 100 for t in thr], 'tpot_p99': p99})}",
    ]


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("frontier") / "repo"
    shutil.copytree(FIXTURES / "render", root)
    path = root / "improvements" / "campaign.yaml"
    path.write_text(path.read_text() + "slo:\n  tpot_p99: 50\n")
    lines = ["title: Two workloads", "tier: 2", "status: in-progress", "hypothesis: Faster under load.", "results:"]
    for load, values in LOADS.items():
        lines += _result(load, "random", values)
    for load, values in list(LOADS.items())[:2]:
        lines += _result(load, "sharegpt", values)
    (root / "improvements" / "09-two-workloads.yaml").write_text("\n".join(lines) + "\n")
    return root


def test_points_and_capacity_share_the_slos_statistic(campaign: Path) -> None:
    f = analyse(require_project(campaign)).frontier
    assert f is not None and f.statistic == "tpot_p99" and f.repeated and f.gpus == 2
    assert f.slo == ("tpot_p99", 50, 20)
    mine = [c for c in f.configurations if c.slug == "two-workloads"]
    # One series per workload: no line joins the two.
    assert [(c.workload.split(",")[0], len(c.points)) for c in mine] == [("random", 3), ("sharegpt", 2)]
    random = mine[0]
    # The repetitions' mean p99, the statistic capacity reads (issue 36: the worst of n shrinks with n).
    p99 = np.array([np.mean(p99) for _thr, p99 in LOADS.values()], dtype=float)
    mean = np.array([np.mean(thr) for thr, _p99 in LOADS.values()])
    assert [p.interactivity for p in random.points] == pytest.approx(list(1000 / p99))
    assert [p.throughput for p in random.points] == pytest.approx(list(mean / 2))
    assert {p.n for p in random.points} == {3}
    # Capacity: the mean p99 reaches 50 ms between 32 (42) and 64 (60): throughput there by numpy.
    expected = float(np.interp(50, p99[1:], mean[1:]))
    assert random.capacity == pytest.approx((1000 / 50, expected / 2))


def test_the_chart_names_every_point_and_rings_the_capacity(campaign: Path) -> None:
    analysis = analyse(require_project(campaign))
    svg = frontier_svg(analysis)
    assert svg is not None
    root = ET.fromstring(svg)
    titles = [t.text or "" for t in root.iter(f"{SVG}title")]
    point = [t for t in titles if t.startswith("09 two-workloads, random") and ", c=" in t]
    assert len(point) == 3 and all(
        re.search(r", c=\d+: .* tok/s per GPU at .* n=3, decision against its baseline: ", t) for t in point
    )
    assert any("capacity under the SLO" in t for t in titles)
    assert root.find(f".//{SVG}g[@class='capacity']") is not None
    ok = run_cli("build", "--root", str(campaign))
    assert ok.returncode == 0, ok.stderr
    for page in ("index.md", "summary.md"):
        text = (campaign / "docs" / page).read_text()
        assert "## Every configuration on one frontier" in text and "](plots/frontier.svg)" in text
        assert '??? info "The chart\'s numbers"' in text
        assert "    | 09 two-workloads, random, input 1024 tokens, output 256 tokens | c=16 |" in text


def test_shipped_campaigns_have_a_frontier() -> None:
    glm = analyse(require_project(REPO)).frontier
    # No TPOT anywhere: each user's share of the throughput, said on the axis.
    assert glm is not None and glm.statistic == "throughput / concurrency" and glm.slo is None
    h200 = analyse(require_project(REPO / "examples" / "h200-decode")).frontier
    assert h200 is not None and h200.statistic == "tpot_p99" and h200.left_out == 0
    kinds = {c.label: c.kind for c in h200.configurations}
    assert kinds == {
        "baseline": "baseline",
        "01 sdpa-attention": "record",
        "02 static-cache-compile (the stack)": "stack",
        "03 fp32-matmul-high": "record",
    }
    (stack,) = [c for c in h200.configurations if c.kind == "stack"]
    assert stack.capacity is not None and stack.capacity[0] == pytest.approx(100)


def test_the_export_holds_the_frontier(campaign: Path) -> None:
    data = run_cli("export", "--root", str(campaign)).json()
    f = data["frontier"]  # type: ignore[index]
    assert f["statistic"] == "tpot_p99" and f["slo"] == ["tpot_p99", 50.0, 20.0]
    labels = [c["label"] for c in f["configurations"]]
    assert labels.count("09 two-workloads") == 2


def test_a_points_n_is_a_statistics_own(tmp_path: Path) -> None:
    # Published means with their n ({mean, sd, n} or {mean, min, max, n}) are n repetitions, not one.
    root = tmp_path / "repo"
    shutil.copytree(FIXTURES / "render", root)
    lines = ["title: Means", "tier: 2", "status: in-progress", "hypothesis: Faster.", "results:"]
    for load, n in ((16, 5), (32, 7)):
        lines += [
            f"  - label: c{load}",
            f"    concurrency: {load}",
            f"    metrics: {{output_throughput: {{mean: {load * 60}, sd: 9, n: {n}, min: 1, max: 9999}},",
            "      tpot_median: 20}",
        ]
    (root / "improvements" / "09-means.yaml").write_text("\n".join(lines) + "\n")
    f = analyse(require_project(root)).frontier
    assert f is not None
    [mine] = [c for c in f.configurations if c.slug == "means"]
    assert [p.n for p in mine.points] == [5, 7]


def test_the_runner_frontier_draws_each_record_beside_its_baseline_at_its_load() -> None:
    # The campaign baseline has no results of its own: each record measured it in its blocks.
    f = analyse(require_project(REPO / "examples" / "h200-runner")).frontier
    assert f is not None and f.mixed_loads
    by_label = {c.label: c for c in f.configurations}
    baseline = by_label["baseline"]
    assert [(p.load_text, p.measured_by) for p in baseline.points] == [("c=64", "03"), ("c=256", "01")]
    # 02 was compared with 01 at batch 64: 01's curve holds that point, measured in 02's blocks.
    sdpa = by_label["01 sdpa-attention"]  # 04 is adopted too: the stack is 01 and 04
    assert [(p.load_text, p.measured_by) for p in sdpa.points] == [("c=64", "02"), ("c=256", None)]
    for c in f.configurations:
        loads = [p.load for p in c.points]
        assert loads == sorted(set(loads))  # one point per load, in load order
        if c.kind != "baseline":
            # Every record's own points sit at a load where what it was compared with was measured.
            compared = baseline if c.label != "02 static-cache" else sdpa
            assert {p.load_text for p in c.points} <= {p.load_text for p in compared.points}
    assert f.alone == ()


def test_a_frontier_says_which_loads_and_what_it_cannot_compare() -> None:
    view = frontier_view(analyse(require_project(REPO / "examples" / "h200-runner")), {}, PurePosixPath("."))
    assert view is not None and view.loads == ["c=64", "c=256"] and view.alone == []
    # A configuration measured at one load is a point named by it, not a curve.
    assert {"02 static-cache (c=64 only)", "03 null-control (c=64 only)"} <= {r.configuration for r in view.rows}

    def config(label: str, *loads: float) -> Configuration:
        return Configuration(
            label, "record", None, "w", None, tuple(FrontierPoint(x, f"c={x:g}", 1.0, 1.0, 1, None) for x in loads)
        )

    # SDPA at 256 and the others at 64: SDPA is compared with nothing.
    found = (config("baseline", 64), config("static", 64), config("sdpa", 256))
    assert frontier_alone(found) == ("sdpa",)
